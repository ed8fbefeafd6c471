"""A capture process's source: a PostgreSQL database read through logical decoding.

Oracle's capture process mines the redo log (seed 001, "Staging and Propagation" —
captured LCRs); PostgreSQL's counterpart is logical decoding of the write-ahead log
through a replication slot with the wal2json output plugin (``setup.sh`` installs
``postgresql-15-wal2json`` and sets ``wal_level = logical``).  One slot per capture
process, created by CREATE_CAPTURE and dropped by DROP_CAPTURE.  The slot keeps
the log from its confirmed position on: an SCN in Sluice is a log sequence number
(``0/16B3748`` is ``(0 << 32) | 0x16B3748``).

Reading never consumes: :meth:`Source.peek` decodes whole transactions from the
slot's confirmed position (``pg_logical_slot_peek_changes``), the capture enqueues
and commits them with its position in its store, and only then
:meth:`Source.advance` moves the slot (``pg_replication_slot_advance``).

DDL is not in the decoded log, so an event trigger (``ddl_command_end`` and
``sql_drop``) writes a transactional logical-decoding message ``sluice.ddl`` with
the statement into the DDL's own transaction; a tag (DBMS_STREAMS.SET_TAG) is a
``sluice.tag`` message (:func:`emit_tag`).  The trigger is database-wide and is
installed once; it only writes while a Sluice slot exists in the database.
"""

from __future__ import annotations

import json
import re
from typing import Any

import psycopg
from psycopg import errors as pgerr

from ...errors import DatabaseError, ora
from ...store.pgconn import is_disconnect, translate
from .slotstream import SlotStream, int_to_lsn, lsn_to_int

__all__ = ["Source", "check_wal_level", "lsn_to_int", "int_to_lsn", "emit_tag", "SLOT_PREFIX",
           "DDL_PREFIX", "TAG_PREFIX"]

SLOT_PREFIX = "sluice_"
DDL_PREFIX = "sluice.ddl"
TAG_PREFIX = "sluice.tag"
PLUGIN = "wal2json"
_DDL_FUNCTION = "public.sluice_capture_ddl"
# wal2json writes values with the decoding session's output functions: each setting they
# read is set (a database's or role's own default — bytea_output = escape — would otherwise
# change the text the decoder reads)
_OUTPUT_SETTINGS = ("SET DateStyle = ISO; SET TimeZone = 'UTC'; SET IntervalStyle = iso_8601; "
                    "SET extra_float_digits = 3; SET bytea_output = hex")
_SETUP_LOCK = "sluice:capture:ddl-trigger"


def check_wal_level(value: str | None) -> None:
    """Logical decoding needs ``wal_level = logical``.  :raises: ORA-01325 naming it."""
    if value != "logical":
        raise ora(1325, f"the PostgreSQL source has wal_level = {value or 'unknown'}; a capture "
                        f"process reads the write-ahead log by logical decoding, which needs "
                        f"wal_level = logical and the wal2json plugin (run setup.sh: it installs "
                        f"postgresql-15-wal2json, sets wal_level = logical and restarts the server)")


def source_error(e: psycopg.Error, display: str, process: str = "") -> DatabaseError:
    """The Oracle error for a failure talking to the source."""
    if isinstance(e, pgerr.UndefinedObject) and "replication slot" in str(e):
        return slot_missing(str(e))
    if isinstance(e, pgerr.ConfigurationLimitExceeded):
        return ora(20, "max_replication_slots: drop unused replication slots or raise it")
    if isinstance(e, pgerr.InsufficientPrivilege):
        return ora(1031)
    if isinstance(e, pgerr.ObjectInUse):     # a slot another process is reading
        return ora(54)
    err = translate(e, None)
    if err.code == 900 and not is_disconnect(e):   # "invalid SQL statement" says nothing here
        msg = e.diag.message_primary if getattr(e, "diag", None) else str(e)
        return ora(26744, f'"{process}"' if process else "", f"the source {display}", msg)
    return err


def slot_missing(detail: str) -> DatabaseError:
    return ora(1291, f"{detail} — the changes after the capture's last position are no longer "
                     f"available; DROP_CAPTURE and CREATE_CAPTURE to capture from now on")


def emit_tag(connection: Any, tag: bytes | None) -> None:
    """Give the changes that follow in the current transaction of ``connection`` (a psycopg
    connection or cursor on the source database) the Streams tag ``tag`` (None: no tag) —
    what DBMS_STREAMS.SET_TAG does to a session's redo in Oracle.  The tag is a
    transactional logical-decoding message, so it belongs to that transaction only."""
    connection.execute("SELECT pg_logical_emit_message(true, %s, %s)",
                       (TAG_PREFIX, tag.hex() if tag else ""))


# The event trigger: one message per DDL statement, never an error that stops the DDL.
_IDENTITY_GUARD = "sluice.capture_sets_identity"
_DDL_TRIGGER_SQL = f"""
CREATE OR REPLACE FUNCTION {_DDL_FUNCTION}() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  r record;
  obj_schema text; obj_name text; base_schema text; base_name text; obj_type text;
  seen jsonb; query_key text; n int;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name LIKE '{SLOT_PREFIX}%'
                 AND database = current_database() AND plugin = '{PLUGIN}') THEN
    RETURN;
  END IF;
  -- the ALTERs below are this trigger's own work, not the user's DDL: no message for them
  IF current_setting('{_IDENTITY_GUARD}', true) = 'on' THEN RETURN; END IF;
  IF TG_EVENT = 'ddl_command_end' AND TG_TAG IN ('CREATE TABLE', 'ALTER TABLE') THEN
    -- A partition created in or attached to a table that logs whole old rows (a subset
    -- rule's REPLICA IDENTITY FULL, Oracle's supplemental logging of every column) logs
    -- them too: PostgreSQL does not pass the setting down, Oracle's table-level logging
    -- covers every partition, later ones included.
    BEGIN
      PERFORM set_config('{_IDENTITY_GUARD}', 'on', true);
      FOR r IN SELECT DISTINCT pn.nspname AS s, pc.relname AS t
                 FROM pg_event_trigger_ddl_commands() c
                 CROSS JOIN LATERAL pg_partition_tree(c.objid) pt
                 JOIN pg_class pc ON pc.oid = pt.relid
                 JOIN pg_namespace pn ON pn.oid = pc.relnamespace
                WHERE c.classid = 'pg_class'::regclass AND pc.relkind IN ('r', 'p')
                  AND pc.relreplident <> 'f'
                  AND EXISTS (SELECT 1 FROM pg_partition_ancestors(pt.relid) a
                                JOIN pg_class ac ON ac.oid = a.relid
                               WHERE a.relid <> pt.relid AND ac.relreplident = 'f') LOOP
        EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY FULL', r.s, r.t);
      END LOOP;
      PERFORM set_config('{_IDENTITY_GUARD}', 'off', true);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'Sluice capture did not log whole old rows of a new partition: %', SQLERRM;
    END;
  END IF;
  BEGIN   -- a failure here must never stop the DDL (this block is a subtransaction)
  IF TG_EVENT = 'sql_drop' THEN
    IF TG_TAG NOT LIKE 'DROP %' THEN RETURN; END IF;   -- ALTER … DROP …: ddl_command_end has it
    SELECT o.object_type AS object_type, o.schema_name AS schema_name,
           o.object_name AS object_name, o.address_names AS address_names
      INTO r FROM pg_event_trigger_dropped_objects() o
     WHERE o.original AND NOT o.is_temporary LIMIT 1;
    IF NOT FOUND THEN RETURN; END IF;
    obj_type := r.object_type; obj_schema := r.schema_name;
    obj_name := coalesce(r.object_name, r.address_names[array_length(r.address_names, 1)]);
    IF obj_type = 'table' THEN base_schema := obj_schema; base_name := obj_name; END IF;
  ELSE
    SELECT c.classid, c.objid, c.object_type, c.schema_name, c.object_identity INTO r
      FROM pg_event_trigger_ddl_commands() c
     ORDER BY (c.command_tag = TG_TAG) DESC, (c.object_type = 'table') DESC LIMIT 1;
    IF NOT FOUND THEN RETURN; END IF;
    obj_type := r.object_type; obj_schema := r.schema_name; obj_name := r.object_identity;
    IF r.classid = 'pg_class'::regclass THEN
      SELECT n.nspname, c.relname INTO obj_schema, obj_name
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = r.objid;
      IF obj_type LIKE 'table%' THEN
        base_schema := obj_schema; base_name := obj_name;
      ELSIF obj_type = 'index' THEN
        SELECT n.nspname, c.relname INTO base_schema, base_name
          FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.indexrelid = r.objid;
      END IF;
    ELSIF r.classid = 'pg_trigger'::regclass THEN
      SELECT t.tgname, n.nspname, c.relname INTO obj_name, base_schema, base_name
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE t.oid = r.objid;
    ELSIF r.classid = 'pg_constraint'::regclass THEN
      SELECT k.conname, n.nspname, c.relname INTO obj_name, base_schema, base_name
        FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE k.oid = r.objid;
    ELSIF r.classid = 'pg_proc'::regclass THEN
      SELECT p.proname INTO obj_name FROM pg_proc p WHERE p.oid = r.objid;
    ELSIF r.classid = 'pg_namespace'::regclass THEN
      SELECT n.nspname INTO obj_name FROM pg_namespace n WHERE n.oid = r.objid;
      obj_schema := obj_name;
    ELSIF r.classid = 'pg_type'::regclass THEN
      SELECT t.typname INTO obj_name FROM pg_type t WHERE t.oid = r.objid;
    END IF;
  END IF;
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'Sluice capture did not record this DDL: %', SQLERRM;
    RETURN;
  END;
  -- n: this is the n-th TG_TAG event of the client's query string, which may hold several
  -- statements (sluice.streams.capture.ddltext picks the n-th); counted per session, as a
  -- COMMIT inside the string ends the transaction but not the string
  BEGIN
    query_key := md5(current_query()) || statement_timestamp()::text;
    seen := nullif(current_setting('sluice.ddl_seen', true), '')::jsonb;
    IF seen IS NULL OR seen->>'' IS DISTINCT FROM query_key THEN
      seen := jsonb_build_object('', query_key);
    END IF;
    n := coalesce((seen->>TG_TAG)::int, 0) + 1;
    PERFORM set_config('sluice.ddl_seen', (seen || jsonb_build_object(TG_TAG, n))::text, false);
  EXCEPTION WHEN OTHERS THEN
    n := NULL;
  END;
  IF obj_schema LIKE 'pg\\_temp%' OR obj_schema = 'pg_toast' THEN RETURN; END IF;
  -- outside the subtransaction above: the message belongs to the DDL's own transaction
  PERFORM pg_logical_emit_message(true, '{DDL_PREFIX}', json_build_object(
    'tag', TG_TAG, 'n', n, 'otype', upper(obj_type), 'schema', obj_schema, 'name', obj_name,
    'bschema', base_schema, 'bname', base_name, 'ddl', current_query(),
    'cur', current_schema(), 'user', session_user)::text);
END
$fn$"""


class Source:
    """The connection of one capture process (or administrator) to its source database."""

    def __init__(self, conninfo: str, display: str, exclude_schema: str | None,
                 process: str = "") -> None:
        self.conninfo = conninfo
        self.process = process
        self.display = display
        self.exclude_schema = exclude_schema
        self.raw: psycopg.Connection | None = None
        self.notices: list[str] = []
        self._options: list[str] | None = None
        self.stream: SlotStream | None = None     # the capture's decoding session (peek)

    # -- the connection ------------------------------------------------------------
    def connect(self) -> "Source":
        if self.raw is None or self.raw.closed:
            try:
                raw = psycopg.connect(self.conninfo, autocommit=True)
                raw.execute(_OUTPUT_SETTINGS)
            except psycopg.Error as e:
                raise source_error(e, self.display, self.process) from None
            raw.add_notice_handler(self._notice)
            self.raw = raw
        return self

    def close(self) -> None:
        self.release()
        if self.raw is not None:
            try:
                self.raw.close()
            finally:
                self.raw = None

    def __enter__(self) -> "Source":
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _notice(self, diag: Any) -> None:
        if diag.severity_nonlocalized in ("WARNING",) or diag.severity in ("WARNING",):
            self.notices.append(diag.message_primary or "")

    def _run(self, sql: str, params: Any = None) -> list[tuple]:
        self.connect()
        try:
            cur = self.raw.execute(sql, params)
            return cur.fetchall() if cur.description else []
        except psycopg.Error as e:
            err = source_error(e, self.display, self.process)
            if is_disconnect(e):
                self.close()
            raise err from None

    # -- facts ---------------------------------------------------------------------
    def check_logical(self) -> None:
        check_wal_level(self._run("SHOW wal_level")[0][0])

    def database_name(self) -> str:
        return self._run("SELECT current_database()")[0][0]

    def schema_exists(self, schema: str) -> bool:
        return bool(self._run("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)))

    def table_columns(self, schema: str, table: str) -> list[tuple[str, str]] | None:
        """``(column, data type)`` of a table in column order (information_schema's type
        names: ``integer``, ``character varying`` …), None when there is no such table."""
        rows = self._run("SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a "
                         "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p') "
                         "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum", (schema, table))
        if rows:
            return [(r[0], r[1]) for r in rows]
        exists = self._run("SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')",
                           (schema, table))
        return [] if exists else None

    def replica_identity_full(self, schema: str, table: str) -> None:
        """Log whole old rows of the table (Oracle's unconditional supplemental log group
        of every column), unless it does already.  A partitioned table's rows are logged by
        its partitions, which PostgreSQL does not give the setting of their table: each
        partition gets it too (those it has now; the DDL trigger gives it to one created or
        attached later)."""
        rows = self._run("WITH t AS (SELECT c.oid FROM pg_class c JOIN pg_namespace n "
                         "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s) "
                         "SELECT pn.nspname, p.relname FROM pg_class p "
                         "JOIN pg_namespace pn ON pn.oid = p.relnamespace "
                         "WHERE (p.oid IN (SELECT oid FROM t) "   # (a plain table has no tree)
                         "OR p.oid IN (SELECT relid FROM t, pg_partition_tree(t.oid))) "
                         "AND p.relreplident <> 'f' ORDER BY p.oid", (schema, table))
        for s, t in rows:
            self._run(f"ALTER TABLE {_ident(s)}.{_ident(t)} REPLICA IDENTITY FULL")

    def partition_roots(self) -> dict[tuple[str, str], tuple[str, str]]:
        """``{(schema, partition): (schema, table)}``: each partition of a partitioned table
        (at any level) and the table at the top.  PostgreSQL logs a change to a partitioned
        table as a change to the partition that holds the row; Oracle's LCR names the table."""
        return {(r[0], r[1]): (r[2], r[3]) for r in self._run(_PARTITIONS)}

    def partition_root(self, schema: str, table: str) -> tuple[str, str] | None:
        """The partitioned table ``schema.table`` is a partition of (at the top), or None."""
        rows = self._run(_PARTITIONS + " AND n.nspname = %s AND c.relname = %s", (schema, table))
        return (rows[0][2], rows[0][3]) if rows else None

    def current_lsn(self) -> int:
        return lsn_to_int(self._run("SELECT pg_current_wal_lsn()::text")[0][0])

    def slot(self, name: str) -> tuple[int, int] | None:
        """``(restart LSN, confirmed LSN)`` of the slot, None when it does not exist.
        :raises: ORA-01291 when a slot of that name exists for another plugin or database."""
        rows = self._run("SELECT plugin, database = current_database(), restart_lsn::text, "
                         "confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
                         (name,))
        if not rows:
            return None
        plugin, same_db, restart, confirmed = rows[0]
        if plugin != PLUGIN or not same_db:
            raise slot_missing(f'replication slot "{name}" belongs to another database or plugin')
        return lsn_to_int(restart), lsn_to_int(confirmed)

    def store_schemas(self) -> list[str]:
        """The schemas of the database that hold a Sluice store (its SLUICE_META table)."""
        return [r[0] for r in self._run("SELECT n.nspname FROM pg_class c JOIN pg_namespace n "
                                        "ON n.oid = c.relnamespace WHERE c.relname = 'sluice_meta' "
                                        "AND c.relkind IN ('r', 'p')")]

    # -- the slot ------------------------------------------------------------------
    def create_slot(self, name: str) -> int:
        """Create the slot; returns its consistent point (the first SCN it can give)."""
        row = self._run("SELECT lsn::text FROM pg_create_logical_replication_slot(%s, %s)",
                        (name, PLUGIN))
        return lsn_to_int(row[0][0])

    def drop_slot(self, name: str) -> bool:
        """Drop the slot if it exists.  :raises: ORA-00054 while a process reads it."""
        return bool(self._run("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                              "WHERE slot_name = %s", (name,)))

    def options(self) -> list[str]:
        """wal2json's options: one JSON object per change (format 2) with transaction
        boundaries, ids, LSNs, commit times and types; Sluice's messages only; never the
        tables of a Sluice store — the capture's own (its enqueues would feed the capture
        with itself) nor any other store's in the database (another site's queues, as a
        destination queue of this very capture's propagation: each LCR enqueued and
        dequeued there would be decoded, written as JSON and read again, though no rule
        may capture them — Oracle's capture does not capture its dictionary's and queues'
        tables either).  The stores are those of the database when the capture starts."""
        if self._options is None:
            opts = list(WAL2JSON_OPTIONS)
            stores = set(self.store_schemas())
            if self.exclude_schema:
                stores.add(self.exclude_schema)
            if stores:
                opts += ["filter-tables", ",".join(_escape(s) + ".*" for s in sorted(stores))]
            self._options = opts
        return self._options

    def peek(self, slot: str, max_changes: int, upto_lsn: int | None = None,
             hold: int | None = None) -> tuple[list[str], list[str]]:
        """Decoded rows (JSON text) of the whole transactions after the slot's confirmed
        position (committed before ``upto_lsn``), stopping after the one that brings the
        count past ``max_changes``; and the warnings wal2json raised meanwhile (a change it
        could not decode) — read from the slot's stream (:mod:`.slotstream`: each WAL record
        decoded once, not once per call).  With ``hold``, the first part of a transaction
        of more rows than that when it comes first (:attr:`partial`; :meth:`spilled` once
        the caller has put it away).  :raises: ORA-00054 while another process reads the
        slot."""
        if self.stream is None or self.stream.slot != slot:
            self.release()
            self.stream = SlotStream(self.conninfo, slot, self.options(), _OUTPUT_SETTINGS,
                                     lambda e: source_error(e, self.display, self.process),
                                     lambda: lsn_to_int(self._run("SELECT pg_current_wal_flush_lsn()::text")[0][0]),
                                     lambda: self._slot_state(slot))
        return self.stream.peek(max_changes, upto_lsn, hold)

    @property
    def partial(self) -> bool:
        """The last :meth:`peek` gave the first part of a transaction, not whole ones."""
        return self.stream is not None and self.stream.partial

    def spilled(self, count: int) -> None:
        """The first ``count`` rows (a part) are put away: the stream forgets them."""
        self.stream.spilled(count)

    def _slot_state(self, slot: str) -> tuple[int | None, int]:
        rows = self._run("SELECT active_pid, confirmed_flush_lsn::text FROM pg_replication_slots "
                         "WHERE slot_name = %s", (slot,))
        return (rows[0][0], lsn_to_int(rows[0][1])) if rows else (None, 1 << 64)

    def release(self) -> None:
        """Let the slot go until the next peek (another process may read or drop it)."""
        if self.stream is not None:
            self.stream.close()

    def peek_sql(self, slot: str, max_changes: int, upto_lsn: int | None = None) -> tuple[list[str], list[str]]:
        """:meth:`peek` by ``pg_logical_slot_peek_changes``: a decoding session of its own,
        from the slot's restart position (all the WAL since is decoded again)."""
        opts = self.options()
        placeholders = ", ".join(["%s"] * len(opts))
        self.notices = []
        rows = self._run(f"SELECT data FROM pg_logical_slot_peek_changes(%s, %s::pg_lsn, %s, "
                         f"{placeholders})",
                         (slot, None if upto_lsn is None else int_to_lsn(upto_lsn), max_changes, *opts))
        return [r[0] for r in rows], list(self.notices)

    def advance(self, slot: str, lsn: int) -> None:
        """Confirm the slot's position: through the open stream, else by
        ``pg_replication_slot_advance`` (which decodes from the restart position again)."""
        if self.stream is not None and self.stream.open and self.stream.slot == slot:
            try:
                self.stream.advance(lsn)
                return
            except DatabaseError:
                pass        # the session ended under it: the slot is advanced the other way
        self._run("SELECT pg_replication_slot_advance(%s, %s::pg_lsn)", (slot, int_to_lsn(lsn)))

    # -- DDL --------------------------------------------------------------------------
    def install_ddl_trigger(self) -> None:
        """The event triggers that turn DDL into ``sluice.ddl`` messages (idempotent).  A
        source user who is no superuser (a capture needs only the REPLICATION attribute)
        cannot create them: they must be there already (a superuser's capture made them).
        :raises: ORA-01031 when they are not."""
        self.connect()
        try:
            if not self.raw.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
                                    ).fetchone()[0]:
                have = self.raw.execute("SELECT count(*) FROM pg_event_trigger "
                                        "WHERE evtname IN ('sluice_capture_ddl', 'sluice_capture_drop')"
                                        ).fetchone()[0]
                if have == 2:
                    return
                err = ora(1031)
                raise type(err)(f"{err}: the source user of {self.display} is no superuser and the "
                                f"DDL event triggers are not installed: create one capture as a "
                                f"superuser first (only a superuser may create event triggers)", 1031)
        except psycopg.Error as e:
            raise source_error(e, self.display, self.process) from None
        try:
            with self.raw.transaction():
                self.raw.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_SETUP_LOCK,))
                self.raw.execute(_DDL_TRIGGER_SQL)
                have = {r[0] for r in self.raw.execute(
                    "SELECT evtname FROM pg_event_trigger WHERE evtname LIKE 'sluice_capture_%'")}
                if "sluice_capture_ddl" not in have:
                    self.raw.execute(f"CREATE EVENT TRIGGER sluice_capture_ddl ON ddl_command_end "
                                     f"EXECUTE FUNCTION {_DDL_FUNCTION}()")
                if "sluice_capture_drop" not in have:
                    self.raw.execute(f"CREATE EVENT TRIGGER sluice_capture_drop ON sql_drop "
                                     f"EXECUTE FUNCTION {_DDL_FUNCTION}()")
        except psycopg.Error as e:
            raise source_error(e, self.display, self.process) from None

    def remove_ddl_trigger_if_unused(self) -> None:
        """Drop the event triggers once no Sluice slot is left in the database."""
        self.connect()
        try:
            with self.raw.transaction():
                self.raw.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_SETUP_LOCK,))
                left = self.raw.execute(
                    "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE %s "
                    "AND database = current_database()", (SLOT_PREFIX + "%",)).fetchone()[0]
                if not left:
                    self.raw.execute("DROP EVENT TRIGGER IF EXISTS sluice_capture_ddl")
                    self.raw.execute("DROP EVENT TRIGGER IF EXISTS sluice_capture_drop")
                    self.raw.execute(f"DROP FUNCTION IF EXISTS {_DDL_FUNCTION}()")
        except psycopg.Error as e:
            raise source_error(e, self.display, self.process) from None


_PARTITIONS = ("SELECT n.nspname, c.relname, rn.nspname, r.relname FROM pg_class c "
               "JOIN pg_namespace n ON n.oid = c.relnamespace "
               "JOIN pg_class r ON r.oid = pg_partition_root(c.oid) "
               "JOIN pg_namespace rn ON rn.oid = r.relnamespace WHERE c.relispartition")

# what the decoder reads (decode.transactions relies on the row heads these give)
WAL2JSON_OPTIONS = ("format-version", "2", "include-xids", "1", "include-lsn", "1",
                    "include-timestamp", "1", "include-transaction", "1", "include-types", "1",
                    "include-typmod", "1", "include-domain-data-type", "1",
                    "add-msg-prefixes", f"{DDL_PREFIX},{TAG_PREFIX}")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _escape(name: str) -> str:
    """wal2json's table-list syntax: special characters escaped with a backslash."""
    return re.sub(r"([ ',.*\\])", r"\\\1", name)


_DECODER = json.JSONDecoder(parse_float=str)
_DECODE = _DECODER.decode
# json's C scanner called straight: decode() wraps it in Python (two whitespace matches,
# the end check), a few µs per row when an apply process reads thousands
_SCAN = _DECODER.scan_once


def _long_int(text: str) -> int | str:
    """A JSON integer; past Python's limit on the digits ``int`` converts (4,300: a
    PostgreSQL numeric holds up to 131,072 before its point) it stays text, as a number
    with a fraction does, and the decoder makes it a ``Decimal``."""
    try:
        return int(text)
    except ValueError:
        return text


_DECODE_LONG = json.JSONDecoder(parse_float=str, parse_int=_long_int).decode


def parse_json(text: str) -> dict:
    """One wal2json row; numbers with a fraction stay text (the decoder makes a NUMBER a
    ``Decimal`` with every digit, a BINARY_DOUBLE a float, only when it is read), and so
    do integers too long for ``int`` (read again by a slower decoder: the usual row has
    none)."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:       # (leading whitespace, or not JSON: decode() says which)
        return _decode(text)
    except ValueError:          # an integer past int's digits (a JSON error raises again)
        return _DECODE_LONG(text)
    if end != len(text):        # (trailing whitespace, or extra data: the same)
        return _decode(text)
    return value


def _decode(text: str) -> Any:
    try:
        return _DECODE(text)
    except json.JSONDecodeError:
        raise
    except ValueError:
        return _DECODE_LONG(text)
