"""The record types of DBMS_AQ as ``conn.gettype`` gives them (python-oracledb binds PL/SQL
records): ``conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T")`` (``SYS.`` prefix allowed),
``ENQUEUE_OPTIONS_T``, ``DEQUEUE_OPTIONS_T`` (and ``DBMS_AQ.AQ$_RECIPIENT_LIST_T``, the
table of ``SYS.AQ$_AGENT`` a message's ``RECIPIENT_LIST`` is).  Their objects bind to DBMS_AQ.ENQUEUE /
DEQUEUE, and a ``cursor.var()`` of one gets DEQUEUE's message properties back.

Fields are Oracle's, in Oracle's order, with two left out: ``SIGNATURE`` (AQ$_SIG_PROP,
non-repudiation, which Sluice does not keep) and ``USER_PROPERTY`` (SYS.ANYDATA, which
has no object type here).  BINARY_INTEGER and PLS_INTEGER fields are INTEGER
(python-oracledb reports DB_TYPE_BINARY_INTEGER; Sluice's object attributes have
NUMBER only); name fields are wide enough for a qualified 128-character name.
"""

from __future__ import annotations

from functools import lru_cache

from ..objtypes import DbObjectType, build_record_type
from .dbms_aq import DequeueOptionsT, EnqueueOptionsT, MessagePropertiesT

_NAME = "VARCHAR2(261)"      # [schema.]name, each up to 128 characters

_SPECS = {
    "MESSAGE_PROPERTIES_T": (MessagePropertiesT, [
        ("PRIORITY", "INTEGER"), ("DELAY", "INTEGER"), ("EXPIRATION", "INTEGER"),
        ("CORRELATION", "VARCHAR2(128)"), ("ATTEMPTS", "INTEGER"),
        ("RECIPIENT_LIST", "SYS.AQ$_RECIPIENT_LIST_T"), ("EXCEPTION_QUEUE", _NAME),
        ("ENQUEUE_TIME", "DATE"), ("STATE", "INTEGER"), ("SENDER_ID", "SYS.AQ$_AGENT"),
        ("ORIGINAL_MSGID", "RAW(16)"), ("TRANSACTION_GROUP", "VARCHAR2(30)"),
        ("DELIVERY_MODE", "INTEGER")]),
    "ENQUEUE_OPTIONS_T": (EnqueueOptionsT, [
        ("VISIBILITY", "INTEGER"), ("RELATIVE_MSGID", "RAW(16)"), ("SEQUENCE_DEVIATION", "INTEGER"),
        ("TRANSFORMATION", _NAME), ("DELIVERY_MODE", "INTEGER")]),
    "DEQUEUE_OPTIONS_T": (DequeueOptionsT, [
        ("CONSUMER_NAME", "VARCHAR2(128)"), ("DEQUEUE_MODE", "INTEGER"), ("NAVIGATION", "INTEGER"),
        ("VISIBILITY", "INTEGER"), ("WAIT", "INTEGER"), ("MSGID", "RAW(16)"),
        ("CORRELATION", "VARCHAR2(128)"), ("DEQ_CONDITION", "VARCHAR2(4000)"),
        ("TRANSFORMATION", _NAME), ("DELIVERY_MODE", "INTEGER")]),
}
# DBMS_AQ's own collection a record field names (a PL/SQL table of agents)
_COLLECTIONS = [("AQ$_RECIPIENT_LIST_T", "TABLE", "SYS.AQ$_AGENT")]


@lru_cache(maxsize=None)
def _record_type(name: str) -> DbObjectType:
    cls, fields = _SPECS[name]
    return build_record_type("SYS", "DBMS_AQ", name, fields, cls, _COLLECTIONS)


def record_type(name: str) -> DbObjectType | None:
    """The record type ``name`` names (``DBMS_AQ.X`` or ``SYS.DBMS_AQ.X``, any case), or
    None when it names none of them (another kind of name, or an unknown record: the
    caller's lookup goes on and ends in ORA-04043)."""
    parts = name.upper().split(".") if isinstance(name, str) else []
    if parts[:1] == ["SYS"]:
        parts = parts[1:]
    if len(parts) != 2 or parts[0] != "DBMS_AQ":
        return None
    if parts[1] == "AQ$_RECIPIENT_LIST_T":     # the collection MESSAGE_PROPERTIES_T names
        return _record_type("MESSAGE_PROPERTIES_T").attributes[5].type
    return _record_type(parts[1]) if parts[1] in _SPECS else None
