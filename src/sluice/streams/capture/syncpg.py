"""Synchronous capture on PostgreSQL: a deferred trigger enqueues each row LCR in the
writer's transaction, at its commit.

**Names** as asynchronous capture maps them (:mod:`.decode`): schema ``hr`` / table
``employees`` / column ``region_id`` are owner ``HR``, object ``EMPLOYEES``, column
``REGION_ID``; a name with an upper-case letter keeps its spelling.  Tables in any
schema of the store's database can be captured.

**Per change**, for each capture of the table, a ``CONSTRAINT TRIGGER … DEFERRABLE
INITIALLY DEFERRED FOR EACH ROW`` runs a PL/pgSQL function (so ``psql`` or any
other writer is captured) when the writer's transaction commits, in the order the
changes were made:

1. the capture's rules, compiled to SQL (:mod:`.syncrules`); a change they reject
   leaves nothing;
2. the commit SCN: the first LCR of a transaction takes the next ``SLUICE_SCN``
   number — the row stays locked until that COMMIT, so numbers follow commit order,
   exactly as a Sluice session's commit takes it (:mod:`sluice.store.pgsession`) —
   and the transaction's other LCRs reuse it (a transaction-local setting,
   ``sluice.sync_cscn``).  Because the trigger is deferred, the lock is held only
   from the commit's start, not from the first change;
3. one queue-table row per subscriber (SEQ from the table's identity, a random
   message id, state READY, persistent), and a NOTIFY on the queue table's channel
   so that waiting dequeuers wake, and the queue's enqueue total (``SLUICE_QUEUE_STATS``,
   the writer's server process's row: :mod:`sluice.store.stats`) gains the message;
4. the notification outbox rows its registrations are owed.

**The writer's session**: the tag is the hexadecimal text of the setting
``sluice.tag`` (``SET sluice.tag = '02'``, or ``set_config('sluice.tag', '02', true)``
for one transaction: :func:`sluice.streams.capture.tag_transaction` does that); the
transaction id is PostgreSQL's (``txid_current()``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...errors import ora
from ...store.stats import STATS_TABLE, captured_sql
from .decode import column_type, oracle_name, pg_name
from .syncrules import TriggerColumns, compile_update_rules

__all__ = ["PgTable", "find_table", "trigger_ddl", "drop_ddl"]

_OPS = ("INSERT", "UPDATE", "DELETE")
_CHUNK = 90      # PostgreSQL functions take at most 100 arguments


@dataclass(frozen=True)
class PgTable:
    owner: str                   # the LCR's owner / object name (Oracle spelling)
    name: str
    schema: str                  # as PostgreSQL knows them
    table: str
    columns: tuple[tuple[str, str, str], ...]    # (PostgreSQL name, type, ANYDATA type)
    unsupported: tuple[tuple[str, str], ...]     # (column, type) capture cannot represent

    @property
    def qualified(self) -> str:
        return f"{_ident(self.schema)}.{_ident(self.table)}"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def find_table(conn: Any, owner: str, name: str) -> PgTable:
    """:raises: ORA-00942 when there is no such table (a name is taken in the mapping's
    spelling: ``odd tab`` is not the table PostgreSQL calls ``odd tab``, whose Oracle name is
    ``ODD TAB``)."""
    schema, table = pg_name(owner), pg_name(name)
    if (oracle_name(schema), oracle_name(table)) != (owner, name):
        raise ora(942, f"{owner}.{name}")
    rows = conn.execute(
        "SELECT a.attname, format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), NULL) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p') ORDER BY a.attnum",
        (schema, table)).fetchall()
    if not rows:
        raise ora(942, f"{owner}.{name}")
    columns, unsupported = [], []
    for col, pg_type in rows:
        kind = column_type(pg_type)
        if kind is None:
            unsupported.append((col, pg_type))
        else:
            columns.append((col, pg_type, kind[0]))
    return PgTable(oracle_name(schema), oracle_name(table), schema, table, tuple(columns), tuple(unsupported))


_INTEGERS = ("smallint", "integer", "bigint", "oid")


def _value_sql(v: str, pg_type: str, kind: str) -> str:
    """The value as :mod:`sluice.streams.lcrcodec` stores it, as jsonb."""
    if pg_type in _INTEGERS:
        return f"to_jsonb({v}::bigint)"
    if pg_type == "boolean":
        return f"to_jsonb(CASE WHEN {v} THEN 1 WHEN NOT {v} THEN 0 END)"
    if kind in ("SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE"):
        return f"to_jsonb({v})"
    if kind == "SYS.RAW":
        return f"to_jsonb(encode({v}, 'hex'))"
    if pg_type == "timestamp with time zone":
        return (f"to_jsonb(to_char({v} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') || '+00:00')")
    if kind in ("SYS.DATE", "SYS.TIMESTAMP"):
        return f"to_jsonb(to_char({v}::timestamp, 'YYYY-MM-DD\"T\"HH24:MI:SS.US'))"
    return f"to_jsonb({v}::text)"      # NUMBER (numeric: decimal text), character types


def _text_sql(v: str, pg_type: str, kind: str) -> str:
    """The value as the rules' LCR row holds it (:mod:`sluice.rules.compile.typed.lcrschema`)."""
    if pg_type == "boolean":
        return f"(CASE WHEN {v} THEN '1' WHEN NOT {v} THEN '0' END)"
    if kind == "SYS.RAW":
        return f"upper(encode({v}, 'hex'))"
    if pg_type == "timestamp with time zone":
        return f"to_char({v} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"
    if kind in ("SYS.DATE", "SYS.TIMESTAMP"):
        return f"to_char({v}::timestamp, 'YYYY-MM-DD HH24:MI:SS.US')"
    return f"({v})::text"


def _chunked(function: str, args: list[str], empty: str) -> str:
    """``function(args…)`` in pieces joined with jsonb's ``||`` (100 arguments at most)."""
    if not args:
        return empty
    step = _CHUNK - _CHUNK % 2
    return " || ".join(f"{function}({', '.join(args[i:i + step])})" for i in range(0, len(args), step))


def _units(side: str | None, table: PgTable) -> str:
    if side is None:
        return "'[]'::jsonb"
    items = [f"jsonb_build_array({_lit(oracle_name(c))}, {_lit(kind)}, {_value_sql(f'{side}.{_ident(c)}', t, kind)})"
             for c, t, kind in table.columns]
    return _chunked("jsonb_build_array", items, "'[]'::jsonb")


def _map(side: str | None, table: PgTable, of: str) -> str:
    if side is None:
        return "NULL::jsonb"
    pairs = []
    for c, t, kind in table.columns:
        pairs += [_lit(oracle_name(c)), _text_sql(f"{side}.{_ident(c)}", t, kind) if of == "values" else _lit(kind)]
    return _chunked("jsonb_build_object", pairs, "'{}'::jsonb")


def names(capture: str, table: PgTable) -> tuple[str, str]:
    """(trigger, function) names of ``capture`` on ``table``."""
    digest = hashlib.sha1(f"{capture}\0{table.schema}\0{table.table}".encode()).hexdigest()[:16]
    return f"sluice$sync_{digest}", f"sluice$sync_{digest}"


def trigger_ddl(store_schema: str, capture: str, queue: tuple[str, str], queue_table: str, channel: str,
                capture_user: str, source_database: str, table: PgTable,
                rules: list[tuple[str, str, str | None]], refusals: list[tuple[str, str]] = (),
                evaluation: list[tuple[str, str]] = (), qid: int = 0) -> list[str]:
    """The trigger function (in the store's schema) and the deferred constraint trigger
    (``qid``: the queue's id, its totals);
    ``rules``: ``(name, condition, STREAMS$_ROW_SUBSET)``; ``refusals``: ``(condition,
    error)`` of the capture user's right to enqueue (:func:`~..clientrights.capture_user_refusals`),
    the first that holds failing the writer's COMMIT with its error (SQLSTATE 42501);
    ``evaluation``: likewise of its right to evaluate the rule set
    (:func:`~..clientrights.rule_set_refusals`), asked first, before the rules."""
    s = _ident(store_schema)
    trigger, function = names(capture, table)
    q_owner, q_name = queue
    branches = []
    for op in _OPS:
        new = None if op == "DELETE" else "NEW"
        old = None if op == "INSERT" else "OLD"
        columns = TriggerColumns.for_change(table.owner, table.name, op, source_database, "v_tag", "v_txn",
                                            lambda side, of: _map(side, table, of))
        m = compile_update_rules(rules if op == "UPDATE" else [(n, c, None) for n, c, _ in rules],
                                 "postgresql", columns)
        branch = (f"IF TG_OP = '{op}' THEN v_ok := {m.keep or 'FALSE'}; v_old := {_units(old, table)}; "
                  f"v_new := {_units(new, table)}; ")
        if m.to_insert is not None:     # the row moved into a subset: an INSERT of the new row
            branch += (f"IF v_ok IS NOT TRUE AND ({m.to_insert}) THEN v_ok := TRUE; v_cmd := 'INSERT'; "
                       f"v_old := '[]'; END IF; ")
        if m.to_delete is not None:     # out of it: a DELETE of the old row
            branch += (f"IF v_ok IS NOT TRUE AND ({m.to_delete}) THEN v_ok := TRUE; v_cmd := 'DELETE'; "
                       f"v_new := '[]'; END IF; ")
        branches.append(branch)
    branches_sql = " ELS".join(branches)
    refuse, evaluate = (
        "".join(f"IF {condition} THEN RAISE EXCEPTION USING MESSAGE = {_lit(error)}, ERRCODE = '42501'; "
                f"END IF; " for condition, error in checks) for checks in (refusals, evaluation))
    count_setting = f"sluice.sync_n_{int(qid)}"
    body = f"""
DECLARE
  v_tag bytea := decode(nullif(current_setting('sluice.tag', true), ''), 'hex');
  v_txn text := txid_current()::text;
  v_ok boolean;
  v_cmd text := TG_OP;
  v_old jsonb;
  v_new jsonb;
  v_state text := current_setting('sluice.sync_cscn', true);
  v_scn bigint;
  v_msgid bytea := uuid_send(gen_random_uuid());
  v_doc text;
  v_count text;
BEGIN
  {evaluate}
  {branches_sql}END IF;
  IF v_ok IS NOT TRUE THEN RETURN NULL; END IF;
  {refuse}
  IF v_state IS NOT NULL AND split_part(v_state, ':', 1) = v_txn THEN
    v_scn := split_part(v_state, ':', 2)::bigint;
  ELSE
    UPDATE {s}.SLUICE_SCN SET SCN = SCN + 1 WHERE ID = 1 RETURNING SCN INTO v_scn;
    PERFORM set_config('sluice.sync_cscn', v_txn || ':' || v_scn, true);
    PERFORM pg_notify({_lit(channel)}, 'm');
  END IF;
  v_doc := jsonb_build_object('$type', 'SYS.LCR$_ROW_RECORD', 'value', jsonb_build_object(
    'db', {_lit(source_database)}, 'cmd', v_cmd, 'own', {_lit(table.owner)}, 'obj', {_lit(table.name)},
    'tag', CASE WHEN length(v_tag) > 0 THEN encode(v_tag, 'hex') END, 'txn', v_txn, 'scn', v_scn,
    'cscn', v_scn, 'time', to_char(clock_timestamp(), 'YYYY-MM-DD"T"HH24:MI:SS.US'),
    'old', v_old, 'new', v_new))::text;
  INSERT INTO {s}.{queue_table} (Q_NAME, MSGID, PRIORITY, STATE, CSCN, ENQ_TIME, ENQ_UID, ENQ_TID,
                                 CONSUMER_NAME, ADDRESS, PROTOCOL, DELIVERY_MODE, SENDER_NAME, USER_DATA)
  SELECT {_lit(q_name)}, v_msgid, 1, 0, v_scn, extract(epoch FROM clock_timestamp()), {_lit(capture_user)},
         v_txn, SPEC::jsonb ->> 'name', SPEC::jsonb ->> 'address',
         nullif(coalesce((SPEC::jsonb ->> 'protocol')::int, 0), 0), 1, {_lit(capture)}, v_doc
  FROM {s}.SLUICE_CATALOG
  WHERE KIND = 'SUBSCRIBER' AND OWNER = {_lit(q_owner + '.' + q_name)}
    AND SPEC::jsonb ->> 'rule' IS NULL AND coalesce((SPEC::jsonb ->> 'delivery_mode')::int, 1) <> 2
    AND coalesce((SPEC::jsonb ->> 'protocol')::int, 0) NOT BETWEEN 128 AND 255
  ORDER BY NAME;
  -- one message more for the queue's enqueue total, if a subscriber took it: counted in a
  -- transaction-local setting, written once per transaction (COUNTED_TABLE's trigger)
  IF FOUND THEN
    v_count := current_setting({_lit(count_setting)}, true);
    IF v_count IS NULL OR split_part(v_count, ':', 1) IS DISTINCT FROM v_txn THEN
      -- the count first: under SET CONSTRAINTS ALL IMMEDIATE the row's trigger fires at once
      v_count := set_config({_lit(count_setting)}, v_txn || ':1', true);
      INSERT INTO {s}.{COUNTED_TABLE} (QID) VALUES ({int(qid)});
    ELSE
      v_count := set_config({_lit(count_setting)}, v_txn || ':' || (split_part(v_count, ':', 2)::bigint + 1), true);
    END IF;
  END IF;
  -- the notifications the records owe (sluice.store.sqlnotify; sluice.aq.queue.owe_notifications)
  INSERT INTO {s}.SLUICE_NOTIFICATIONS (REG_ID, MSGID, QUEUE, CONSUMER_NAME, DELIVERY_MODE, PAYLOAD, CREATED)
  SELECT R.SPEC::jsonb ->> 'id', M.MSGID, {_lit(q_owner + '.' + q_name)}, M.CONSUMER_NAME, 1, NULL, M.ENQ_TIME
  FROM {s}.SLUICE_CATALOG R JOIN {s}.{queue_table} M ON M.MSGID = v_msgid
  WHERE R.KIND = 'REGISTRATION' AND R.OWNER = {_lit(q_owner + '.' + q_name)}
    AND (R.SPEC::jsonb ->> 'consumer' IS NULL
         OR (R.SPEC::jsonb ->> 'consumer' = M.CONSUMER_NAME AND M.ADDRESS IS NULL));
  RETURN NULL;
END"""
    # SECURITY DEFINER: the function writes the store's tables as the store's owner, so a
    # writer needs no privilege on them (the capture user's privileges, in Oracle's terms)
    return [*counted_ddl(store_schema),
            f"CREATE OR REPLACE FUNCTION {s}.{_ident(function)}() RETURNS trigger LANGUAGE plpgsql "
            f"SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $sluice$ {body} $sluice$",
            f"DROP TRIGGER IF EXISTS {_ident(trigger)} ON {table.qualified}",
            f"CREATE CONSTRAINT TRIGGER {_ident(trigger)} AFTER INSERT OR UPDATE OR DELETE ON "
            f"{table.qualified} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
            f"EXECUTE FUNCTION {s}.{_ident(function)}()"]


COUNTED_TABLE = "SLUICE_SYNC_COUNTED"


def counted_ddl(store_schema: str) -> list[str]:
    """What writes a transaction's captured LCRs into the queues' enqueue totals
    (:mod:`sluice.store.stats`) once per transaction and queue: the first LCR a transaction
    enqueues into a queue inserts a row into :data:`COUNTED_TABLE`, whose deferred trigger
    is queued behind every LCR trigger of the commit, so it fires after the last of them;
    it adds the count the LCR triggers kept in the transaction-local setting
    ``sluice.sync_n_<qid>`` (``txid:n``) to the writer's server process's row (one UPSERT
    per transaction, as a session's commit does: a row updated per LCR keeps a version per
    update until the commit), clears the setting and deletes the row — which no commit
    ever leaves behind (an UNLOGGED table: nothing of it goes to the WAL)."""
    s = _ident(store_schema)
    counted = _ident("sluice$sync_counted")
    now = "extract(epoch FROM clock_timestamp())"
    body = f"""
DECLARE
  v text := current_setting('sluice.sync_n_' || NEW.QID, true);
BEGIN
  IF v IS NOT NULL AND split_part(v, ':', 1) = txid_current()::text THEN
    {captured_sql(f"{s}.{STATS_TABLE}", "NEW.QID", "pg_backend_pid()", "split_part(v, ':', 2)::bigint", now)};
  END IF;
  PERFORM set_config('sluice.sync_n_' || NEW.QID, '', true);
  DELETE FROM {s}.{COUNTED_TABLE} WHERE QID = NEW.QID;
  RETURN NULL;
END"""
    return [f"CREATE UNLOGGED TABLE IF NOT EXISTS {s}.{COUNTED_TABLE} (QID bigint NOT NULL)",
            f"CREATE OR REPLACE FUNCTION {s}.{counted}() RETURNS trigger LANGUAGE plpgsql "
            f"SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $sluice$ {body} $sluice$",
            f"DO $sluice$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'sluice$sync_counted' "
            f"AND tgrelid = '{s}.{COUNTED_TABLE}'::regclass) THEN CREATE CONSTRAINT TRIGGER {counted} "
            f"AFTER INSERT ON {s}.{COUNTED_TABLE} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
            f"EXECUTE FUNCTION {s}.{counted}(); END IF; END $sluice$"]


def catalog_table(store_schema: str) -> str:
    """The store's catalog table as a trigger function names it."""
    return f"{_ident(store_schema)}.SLUICE_CATALOG"


def drop_ddl(store_schema: str, capture: str, table: PgTable) -> list[str]:
    trigger, function = names(capture, table)
    return [f"DROP TRIGGER IF EXISTS {_ident(trigger)} ON {table.qualified}",
            f"DROP FUNCTION IF EXISTS {_ident(store_schema)}.{_ident(function)}()"]
