"""Synchronous capture on SQLite: triggers that enqueue row LCRs in the writer's transaction.

The captured tables live in the store's own file (a trigger cannot write into another
attached database).  **Names**: ``HR.EMPLOYEES`` is the table named ``"HR.EMPLOYEES"`` if
the file has one (as Sluice names its own tables there), else the table ``employees``:
the file is one schema, whose tables are captured under the owner the rules name, their
object name the table name upper-cased (SQLite names are case-insensitive, as unquoted
Oracle names are); column names are upper-cased too.  One physical table is captured
under one owner.

**Per change**, for each capture of the table, an ``AFTER INSERT / UPDATE / DELETE …
FOR EACH ROW WHEN <the capture's rules>`` trigger (plain SQL: no Sluice function, so a
plain ``sqlite3`` writer fires it as well) does, inside the writer's transaction:

1. ``SLUICE_SCN``: the next commit SCN.  SQLite has one writer at a time and the
   counter row is written in the writer's transaction, so the numbers follow commit
   order (:mod:`sluice.store.sqlitesession` does the same at its commits); each LCR
   takes its own number, which keeps a transaction's LCRs together and in order.
2. ``SLUICE_SYNC_STATE``: message sequence numbers and the message id.  The store's
   own SEQ numbers come from a counter in its lock file, which SQL cannot reach; the
   triggers number from :data:`SYNC_SEQ_BASE` up, a range the store's counter never
   reaches (``raise_seq_floor`` ignores it), and never reuse a number.
3. one queue-table row per subscriber of the queue (a multi-consumer ANYDATA queue),
   state READY, persistent, the LCR stored as :mod:`sluice.streams.lcrcodec`'s
   document.  Subscribers with a rule or a third-party protocol, and buffered-only
   ones, get no record: their rules are dequeue conditions the trigger cannot run;
4. the queue's enqueue total (``SLUICE_QUEUE_STATS``, :mod:`sluice.store.stats`) gains
   the message, when a record of it was written;
5. the notification outbox rows its registrations are owed (delivered by a Sluice
   process's notification dispatcher, which looks at the outbox every second).

**The writer's session** (``SLUICE_SYNC_SESSION``): SQLite has neither session
variables nor transaction ids in SQL.  A writer that wants its changes tagged
(DBMS_STREAMS.SET_TAG) or kept as one transaction inserts one row at the start of
its transaction and deletes it before COMMIT (:func:`open_session` /
:func:`close_session`); every LCR then carries that row's TAG and TXN.  Without the
row an LCR has no tag and a transaction id of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...errors import ora
from ...store.locks import TRIGGER_SEQ_BASE
from ...store.sqlschema import SYNC_SESSION_DDL, quote
from ...store.stats import STATS_TABLE, captured_sql
from .syncrules import TriggerColumns, compile_update_rules

__all__ = ["SYNC_SEQ_BASE", "SqliteTable", "find_table", "trigger_ddl", "drop_ddl", "open_session",
           "close_session", "SQLITE_DDL"]

SYNC_SEQ_BASE = TRIGGER_SEQ_BASE     # (below 2**40: SEQ is part of a record lock's file offset)
_OPS = {"INSERT": "I", "UPDATE": "U", "DELETE": "D"}

SQLITE_DDL = [
    f"""CREATE TABLE IF NOT EXISTS SLUICE_SYNC_STATE (
        ID INTEGER PRIMARY KEY, SEQ INTEGER NOT NULL, MSGID BLOB)""",
    f"INSERT INTO SLUICE_SYNC_STATE (ID, SEQ) VALUES (1, {SYNC_SEQ_BASE}) ON CONFLICT DO NOTHING",
    SYNC_SESSION_DDL,
]


@dataclass(frozen=True)
class SqliteTable:
    """A captured SQLite table: its physical name and columns ``(name, declared type)``."""

    owner: str
    name: str                    # the LCR's object name (upper case)
    physical: str                # as SQLite knows it
    columns: tuple[tuple[str, str], ...]


def find_table(conn: Any, owner: str, name: str) -> SqliteTable:
    """The table ``owner.name`` of the store's file: a table named ``"OWNER.NAME"`` (as
    Sluice names its own tables there), else a table ``NAME``.  Sluice's own tables are not
    captured.  :raises: ORA-00942 when there is none."""
    own = {r[0].upper() for r in conn.execute(
        "SELECT OWNER || '.' || NAME FROM AQ_QUEUE_TABLES")}
    for candidate in (f"{owner}.{name}", name):
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND upper(name) = upper(?)",
                            (candidate,)).fetchall()
        if len(rows) != 1:
            continue
        physical = rows[0][0]
        if physical.upper() in own or physical.upper().startswith(("SLUICE_", "AQ_")) or \
                ("." in physical and candidate == name):
            break
        cols = tuple((r[1].upper(), (r[2] or "").upper())
                     for r in conn.execute(f"PRAGMA table_info({quote(physical)})"))
        return SqliteTable(owner, name.upper() if candidate == name else name, physical, cols)
    raise ora(942, f"{owner}.{name}")


def _family(declared: str) -> str:
    """SQLite's affinity rules (in their order), with Oracle's date types picked out."""
    if "INT" in declared:
        return "NUMBER"
    if "CLOB" in declared:
        return "CLOB"
    if "CHAR" in declared or "TEXT" in declared:
        return "VARCHAR2"
    if "BLOB" in declared or "RAW" in declared or not declared:
        return "ANY"
    if "REAL" in declared or "FLOA" in declared or "DOUB" in declared:
        return "BINARY_DOUBLE"
    if "TIMESTAMP" in declared or "DATETIME" in declared:
        return "TIMESTAMP"
    if "DATE" in declared:
        return "DATE"
    return "NUMBER"


_DATE_FORMAT = {"DATE": "%Y-%m-%d %H:%M:%S", "TIMESTAMP": "%Y-%m-%d %H:%M:%f"}


def _type_sql(v: str, family: str) -> str:
    """The ANYDATA type of the value ``v`` (SQLite types each value, not the column)."""
    number = "'SYS.BINARY_DOUBLE'" if family == "BINARY_DOUBLE" else "'SYS.NUMBER'"
    if family in _DATE_FORMAT:
        text = f"CASE WHEN datetime({v}) IS NOT NULL THEN 'SYS.{family}' ELSE 'SYS.VARCHAR2' END"
    else:
        text = "'SYS.CLOB'" if family == "CLOB" else "'SYS.VARCHAR2'"
    declared = {"ANY": "'SYS.RAW'", "CLOB": "'SYS.CLOB'", "VARCHAR2": "'SYS.VARCHAR2'",
                "DATE": "'SYS.DATE'", "TIMESTAMP": "'SYS.TIMESTAMP'"}.get(family, number)
    return (f"CASE typeof({v}) WHEN 'integer' THEN {number} WHEN 'real' THEN {number} "
            f"WHEN 'blob' THEN 'SYS.RAW' WHEN 'text' THEN {text} ELSE {declared} END")


def _value_sql(v: str, family: str) -> str:
    """The value as the stored LCR document writes it (see :mod:`sluice.streams.lcrcodec`):
    NUMBER an integer or decimal text, BINARY_DOUBLE a JSON number, RAW hex, dates ISO."""
    real = v if family == "BINARY_DOUBLE" else f"CAST({v} AS TEXT)"
    text = v
    if family in _DATE_FORMAT:
        text = f"coalesce(strftime('{_DATE_FORMAT[family]}', {v}), {v})"
    return (f"CASE typeof({v}) WHEN 'blob' THEN lower(hex({v})) WHEN 'real' THEN {real} "
            f"WHEN 'integer' THEN {v if family != 'BINARY_DOUBLE' else v + ' * 1.0'} "
            f"WHEN 'text' THEN {text} END")


def _text_sql(v: str, family: str) -> str:
    """The value as the rules' LCR row holds it (:mod:`sluice.rules.compile.typed.lcrschema`)."""
    text = f"coalesce(datetime({v}), {v})" if family in _DATE_FORMAT else v
    return (f"CASE typeof({v}) WHEN 'blob' THEN upper(hex({v})) WHEN 'text' THEN {text} "
            f"ELSE CAST({v} AS TEXT) END")


def _units(side: str, table: SqliteTable) -> str:
    items = []
    for col, declared in table.columns:
        v, fam = f"{side}.{quote(col)}", _family(declared)
        items.append(f"json_array({_lit(col)}, {_type_sql(v, fam)}, {_value_sql(v, fam)})")
    return "json_array(" + ", ".join(items) + ")"


def _map(side: str | None, table: SqliteTable, of: str) -> str:
    if side is None:
        return "NULL"
    pairs = []
    for col, declared in table.columns:
        v, fam = f"{side}.{quote(col)}", _family(declared)
        pairs.append(f"{_lit(col)}, " + (_text_sql(v, fam) if of == "values" else _type_sql(v, fam)))
    return "json_object(" + ", ".join(pairs) + ")"


_TAG = "(SELECT TAG FROM SLUICE_SYNC_SESSION LIMIT 1)"
_SESSION_TXN = "(SELECT TXN FROM SLUICE_SYNC_SESSION LIMIT 1)"


def trigger_name(capture: str, table: str, op: str) -> str:
    digest = hashlib.sha1(f"{capture}\0{table}".encode()).hexdigest()[:12]
    return f"SLUICE$SYNC_{digest}_{_OPS[op]}"


def trigger_ddl(capture: str, queue: tuple[str, str], queue_table: str, capture_user: str,
                source_database: str, table: SqliteTable, rules: list[tuple[str, str, str | None]],
                refusals: list[tuple[str, str]] = (), evaluation: list[tuple[str, str]] = (),
                qid: int = 0) -> list[str]:
    """``CREATE TRIGGER`` statements (one per command type) of ``capture`` on ``table``;
    ``queue_table`` is the physical (quoted) name of the queue's table, ``qid`` the queue's
    id (its totals); ``rules``:
    ``(name, condition, STREAMS$_ROW_SUBSET)``; ``refusals``: ``(condition, error)`` of
    the capture user's right to enqueue (:func:`~..clientrights.capture_user_refusals`),
    the first that holds aborting the writer's statement with its error; ``evaluation``:
    likewise of its right to evaluate the rule set (:func:`~..clientrights.rule_set_refusals`),
    asked first and of every change, whatever the rules would say of it."""
    refuse = "".join(f"SELECT RAISE(ABORT, {_lit(error)}) WHERE {condition}; "
                     for condition, error in [*evaluation, *refusals])
    refused = " OR ".join(f"({condition})" for condition, _ in evaluation)
    q_owner, q_name = queue
    subscribers = (
        "SELECT NAME AS K, json_extract(SPEC, '$.name') AS NAME, json_extract(SPEC, '$.address') AS ADDRESS, "
        "nullif(coalesce(json_extract(SPEC, '$.protocol'), 0), 0) AS PROTOCOL FROM SLUICE_CATALOG "
        f"WHERE KIND = 'SUBSCRIBER' AND OWNER = {_lit(q_owner + '.' + q_name)} "
        "AND json_extract(SPEC, '$.rule') IS NULL AND coalesce(json_extract(SPEC, '$.delivery_mode'), 1) <> 2 "
        "AND coalesce(json_extract(SPEC, '$.protocol'), 0) NOT BETWEEN 128 AND 255")
    out = []
    for op in _OPS:
        new = None if op == "DELETE" else "NEW"
        old = None if op == "INSERT" else "OLD"
        columns = TriggerColumns.for_change(table.owner, table.name, op, source_database, _TAG, _SESSION_TXN,
                                            lambda side, of: _map(side, table, of))
        m = compile_update_rules(rules if op == "UPDATE" else [(n, c, None) for n, c, _ in rules],
                                 "sqlite", columns)
        when = m.any("0") if not refused else f"{refused} OR ({m.any('0')})"
        scn = "SC.SCN"
        txn = f"coalesce({_SESSION_TXN}, 'SQLITE.' || SC.SCN)"
        cmd, old_units = f"'{op}'", _units(old, table) if old else "json_array()"
        new_units = _units(new, table) if new else "json_array()"
        if m.migrates:     # an UPDATE that moved the row into or out of a subset
            cmd = (f"CASE WHEN {m.keep or '0'} THEN 'UPDATE' WHEN {m.to_insert or '0'} THEN 'INSERT' "
                   f"ELSE 'DELETE' END")
            old_units = f"json(CASE WHEN M.CMD = 'INSERT' THEN '[]' ELSE {old_units} END)"
            new_units = f"json(CASE WHEN M.CMD = 'DELETE' THEN '[]' ELSE {new_units} END)"
        doc = (f"json_object('$type', 'SYS.LCR$_ROW_RECORD', 'value', json_object("
               f"'db', {_lit(source_database)}, 'cmd', M.CMD, 'own', {_lit(table.owner)}, "
               f"'obj', {_lit(table.name)}, 'tag', (SELECT lower(hex(TAG)) FROM SLUICE_SYNC_SESSION "
               f"WHERE length(TAG) > 0 LIMIT 1), 'txn', {txn}, "
               f"'scn', {scn}, 'cscn', {scn}, 'time', strftime('%Y-%m-%dT%H:%M:%f', 'now'), "
               f"'old', {old_units}, 'new', {new_units}))")
        # the subscribers are read once: the INSERT numbers its rows from the counter, and
        # the counter then moves past them (changes(): the rows the trigger's INSERT wrote;
        # none: no message, MSGID NULL for what follows)
        out.append(
            f"CREATE TRIGGER {quote(trigger_name(capture, table.name, op))} AFTER {op} ON "
            f"{quote(table.physical)} FOR EACH ROW WHEN {when} BEGIN {refuse}"
            f"UPDATE SLUICE_SCN SET SCN = SCN + 1 WHERE ID = 1; "
            f"UPDATE SLUICE_SYNC_STATE SET MSGID = randomblob(16) WHERE ID = 1; "
            f"INSERT INTO {queue_table} (SEQ, Q_NAME, MSGID, PRIORITY, STATE, CSCN, ENQ_TIME, ENQ_UID, "
            f"ENQ_TID, CONSUMER_NAME, ADDRESS, PROTOCOL, DELIVERY_MODE, SENDER_NAME, USER_DATA) "
            f"SELECT ST.SEQ + row_number() OVER (ORDER BY S.K), {_lit(q_name)}, ST.MSGID, 1, 0, "
            f"{scn}, (julianday('now') - 2440587.5) * 86400.0, {_lit(capture_user)}, "
            f"{txn}, S.NAME, S.ADDRESS, S.PROTOCOL, 1, {_lit(capture)}, {doc} "
            f"FROM SLUICE_SYNC_STATE ST, SLUICE_SCN SC, (SELECT {cmd} AS CMD) M, ({subscribers}) S "
            f"WHERE ST.ID = 1 AND SC.ID = 1; "
            f"UPDATE SLUICE_SYNC_STATE SET SEQ = SEQ + changes(), "
            f"MSGID = CASE WHEN changes() > 0 THEN MSGID END WHERE ID = 1; "
            f"{_counted(qid)}; {_notifications(queue, queue_table)} END")
    return out


def _counted(qid: int) -> str:
    """The queue's enqueue total (:mod:`sluice.store.stats`, SID 0 as every SQLite writer's)
    gains the message, if the trigger wrote any record of it (else the state row's MSGID is
    NULL)."""
    return captured_sql(STATS_TABLE, str(int(qid)), "0", "1", "(julianday('now') - 2440587.5) * 86400.0",
                        "FROM SLUICE_SYNC_STATE WHERE ID = 1 AND MSGID IS NOT NULL")


def _notifications(queue: tuple[str, str], queue_table: str) -> str:
    """The notification outbox rows (``SLUICE_NOTIFICATIONS``, :mod:`sluice.store.sqlnotify`)
    the new records owe: a registration on the queue hears of every record, a consumer's
    registration of that consumer's (as :func:`sluice.aq.queue.owe_notifications` decides);
    no payload (an ANYDATA queue).  Read registrations first: usually there are none."""
    qualified = _lit(f"{queue[0]}.{queue[1]}")
    return (f"INSERT INTO SLUICE_NOTIFICATIONS (REG_ID, MSGID, QUEUE, CONSUMER_NAME, DELIVERY_MODE, "
            f"PAYLOAD, CREATED) SELECT json_extract(R.SPEC, '$.id'), M.MSGID, {qualified}, M.CONSUMER_NAME, 1, "
            f"NULL, M.ENQ_TIME FROM SLUICE_CATALOG R, {queue_table} M "
            f"WHERE R.KIND = 'REGISTRATION' AND R.OWNER = {qualified} "
            f"AND M.MSGID = (SELECT MSGID FROM SLUICE_SYNC_STATE WHERE ID = 1) "
            f"AND (json_extract(R.SPEC, '$.consumer') IS NULL OR "
            f"(json_extract(R.SPEC, '$.consumer') = M.CONSUMER_NAME AND M.ADDRESS IS NULL));")


def drop_ddl(capture: str, table: str) -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {quote(trigger_name(capture, table, op))}" for op in _OPS]


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def open_session(conn: Any, tag: bytes | None = None) -> None:
    """For a writer on an SQLite store (``sqlite3`` connection, inside its transaction):
    the changes it makes until :func:`close_session` carry ``tag`` and one transaction id."""
    conn.execute("DELETE FROM SLUICE_SYNC_SESSION")
    conn.execute("INSERT INTO SLUICE_SYNC_SESSION (TAG) VALUES (?)", (tag or None,))


def close_session(conn: Any) -> None:
    """Before the writer's COMMIT: the row must not outlive its transaction."""
    conn.execute("DELETE FROM SLUICE_SYNC_SESSION")
