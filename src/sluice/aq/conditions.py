"""Dequeue conditions (``deqoptions.condition``) on the rules engine's condition language.

Seed 003 "Dequeue Methods": a dequeue condition is "expressed in terms of
message properties or message content and is similar in syntax to the WHERE
clause of a SQL query".  Names a condition may use:

* message properties — the columns of the queue table: ``priority``,
  ``corrid``, ``msgid``, ``enq_time``, ``delay``, ``expiration``,
  ``retry_count``, ``sender_name``, … (optionally prefixed ``tab.``);
* the payload — ``tab.user_data`` and its attributes
  ``tab.user_data.price`` (object types; keys of a JSON payload).

Unknown names raise ORA-00904 when the condition is compiled.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

from ..errors import ora
from ..store.base import MessageRecord, QueueInfo
from .. import objtypes as ot
from .. import rules

_NOT_FOUND = object()

# column -> how to read it from a MessageRecord
_PROPERTIES: dict[str, Callable[[MessageRecord], Any]] = {
    "PRIORITY": lambda r: r.priority,
    "CORRID": lambda r: r.corrid,
    "CORR_ID": lambda r: r.corrid,
    "MSGID": lambda r: r.msgid,
    "MSG_ID": lambda r: r.msgid,
    "STATE": lambda r: r.state,
    "Q_NAME": lambda r: r.q_name,
    "ENQ_TIME": lambda r: dt.datetime.fromtimestamp(r.enq_time),
    "ENQ_UID": lambda r: r.enq_uid,
    "ENQ_TID": lambda r: r.enq_tid,
    "DELAY": lambda r: None if r.delay is None else dt.datetime.fromtimestamp(r.delay),
    "EXPIRATION": lambda r: r.expiration,
    "RETRY_COUNT": lambda r: r.retry_count,
    "EXCEPTION_QUEUE": lambda r: r.exception_queue,
    "EXCEPTION_QSCHEMA": lambda r: r.exception_qschema,
    "SENDER_NAME": lambda r: r.sender_name,
    "SENDER_ADDRESS": lambda r: r.sender_address,
    "SENDER_PROTOCOL": lambda r: r.sender_protocol,
    "ORIGINAL_MSGID": lambda r: r.original_msgid,
    "CSCN": lambda r: r.cscn,
}


class _Row:
    """What a compiled condition evaluates against: a record and its lazily decoded payload."""

    __slots__ = ("record", "_codec", "_payload")

    def __init__(self, record: MessageRecord, codec) -> None:
        self.record = record
        self._codec = codec
        self._payload = _NOT_FOUND

    @property
    def payload(self) -> Any:
        if self._payload is _NOT_FOUND:
            self._payload = self._codec.decode(self.record.user_data)
        return self._payload


def _attribute(value: Any, name: str) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and k.upper() == name:
                return v
        return None
    return ot.contents(getattr(value, name, None))     # (a LOB attribute: its contents)


class _DequeueResolver:
    def __init__(self, queue: QueueInfo, codec) -> None:
        self.queue = queue
        self.objtype = codec.objtype

    def identifier(self, path: tuple[str, ...]) -> Callable[[_Row], Any]:
        parts = list(path)
        if parts and parts[0] == "TAB":
            parts = parts[1:]
        if len(parts) == 1 and parts[0] in _PROPERTIES:
            get = _PROPERTIES[parts[0]]
            return lambda row: get(row.record)
        if parts and parts[0] == "USER_DATA":
            attrs = parts[1:]
            self._check_attributes(attrs, ".".join(path))
            if not attrs:
                return lambda row: row.payload

            def read(row: _Row) -> Any:
                v = row.payload
                for a in attrs:
                    v = _attribute(v, a)
                return v
            return read
        raise ora(904, ".".join(f'"{p}"' for p in path))

    def _check_attributes(self, attrs: list[str], text: str) -> None:
        t = self.objtype
        for a in attrs:
            if t is None:
                return  # JSON / ANYDATA payloads: keys are not declared
            found = next((x for x in t.attributes if x.name == a), None)
            if found is None:
                raise ora(904, text)
            t = found.type if isinstance(found.type, ot.DbObjectType) else None

    def bind(self, name: str) -> Callable[[_Row], Any]:
        raise ora(904, f":{name}")


# message properties the SQL compilers can read straight from the queue table, with their
# Oracle kinds (dates are stored as POSIX seconds, not the compilers' DATE: Python handles them)
_SQL_PROPERTIES = {"PRIORITY": "NUMBER", "CORRID": "CHAR", "CORR_ID": "CHAR", "STATE": "NUMBER",
                   "Q_NAME": "CHAR", "ENQ_UID": "CHAR", "ENQ_TID": "CHAR", "EXPIRATION": "NUMBER",
                   "RETRY_COUNT": "NUMBER", "EXCEPTION_QUEUE": "CHAR", "EXCEPTION_QSCHEMA": "CHAR",
                   "SENDER_NAME": "CHAR", "SENDER_ADDRESS": "CHAR", "SENDER_PROTOCOL": "NUMBER",
                   "CSCN": "NUMBER"}
_NUMERIC = ("DB_TYPE_NUMBER", "DB_TYPE_BINARY_DOUBLE", "DB_TYPE_BINARY_FLOAT")
_TEXT = ("DB_TYPE_VARCHAR", "DB_TYPE_CHAR", "DB_TYPE_NVARCHAR", "DB_TYPE_NCHAR", "DB_TYPE_CLOB")


def _sql_names(codec) -> dict:
    """Names a dequeue condition may use, for the SQL compilers: the properties, and
    the scalar attributes of an object payload (stored as JSON, see objtypes.to_storage)."""
    from ..rules.compile.sql.compiler import json_get
    # columns in lower case: the compilers quote them, and PostgreSQL folds the
    # unquoted names the tables were created with to lower case
    names: dict = {}
    for col, kind in _SQL_PROPERTIES.items():
        physical = {"CORR_ID": "corrid"}.get(col, col.lower())
        names[col] = (physical, kind)
        names["TAB." + col] = (physical, kind)
    if codec.objtype is not None:
        names["TAB.USER_DATA"] = names["USER_DATA"] = ("user_data", "CHAR")

        def walk(t, path):
            for a in t.attributes:
                if isinstance(a.type, ot.DbObjectType):
                    if not a.type.iscollection:
                        walk(a.type, path + (a.name,))
                    continue
                type_name = getattr(a.type, "name", "")
                kind = "NUMBER" if type_name in _NUMERIC else "CHAR" if type_name in _TEXT else None
                if kind is not None:   # dates and raw values stay with the Python compiler
                    node = json_get("user_data", path + (a.name,), kind)
                    dotted = ".".join(path + (a.name,))
                    names["TAB.USER_DATA." + dotted] = names["USER_DATA." + dotted] = node
        walk(codec.objtype, ())
    return names


def compile_sql_condition(text: str, queue: QueueInfo, codec, dialect: str,
                          cache: dict) -> tuple[str, list] | None:
    """The condition as SQL over the queue table (``?`` placeholders), or None when the
    rules engine cannot express it in SQL (the store then tests it in Python)."""
    key = ("sql", dialect, queue.table.qt_id, queue.table.payload_type, text)
    if key in cache:
        return cache[key]
    from ..rules.compile.typed.ir import NotCompilable
    from ..rules.compile.typed.resolvers import MappingResolver
    from ..rules.compile.sql.compiler import compile_sql
    try:
        compiled = compile_sql(text, MappingResolver(_sql_names(codec)), dialect)
    except (NotCompilable, Exception):   # anything the SQL path cannot take: Python does it
        cache[key] = None
        return None
    sql = compiled.sql
    if dialect == "postgresql":   # the shared SQL writes placeholders as ? (see pgconn)
        sql = sql.replace("%s", "?").replace("%%", "%")
    result = (sql, list(compiled.params)) if not any(p is not q for p, q in
                                                     zip(compiled.params, compiled.raw_params)) \
        else None
    if result is None:            # SYSDATE in the condition: parameters differ per run
        result = (sql, compiled)  # resolved by the caller
    cache[key] = result
    return result


def compile_dequeue_condition(text: str, queue: QueueInfo, codec,
                              cache: dict) -> Callable[[MessageRecord], bool]:
    """A predicate on message records; compiled once per (queue table, condition)."""
    key = (queue.table.qt_id, queue.table.payload_type, text)
    pred = cache.get(key)
    if pred is None:
        test = rules.compile_condition(text, _DequeueResolver(queue, codec))

        def pred(record: MessageRecord, _test=test, _codec=codec) -> bool:
            return _test(_Row(record, _codec)) is True
        cache[key] = pred
    return pred
