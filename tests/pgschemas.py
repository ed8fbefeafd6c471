"""A per-worker pool of reset PostgreSQL test schemas (DESIGN-NOTES "Test suite time").

Each PostgreSQL test of the ``dsn`` fixture used to get a brand-new schema: its first
``sluice.connect`` ran the catalog DDL (131 statements, 89 views: ~70 ms of server CPU) and
its teardown dropped the schema (``DROP SCHEMA … CASCADE``, ~25 ms more), each through an admin
connection of its own (a backend started for each). Now a test's schema, once the test is
done, is **reset** to exactly the state of a freshly opened store and **renamed** to a new
``t_<hex>``, and the next test gets it: the catalog DDL runs once per worker, not per test.

Reset (one transaction on the worker's one admin connection; anything failing or unexpected
rolls it back and the schema is dropped, as before):

* the objects a fresh store does not have are dropped (queue tables and their views, indexes
  and sequences, the tests' own tables, types and functions) — SLUICE_QUEUE_DEPTH, the view
  over every queue table, is first put back to a fresh store's (empty) definition;
* every catalog table is truncated (``RESTART IDENTITY``, and each sequence restarted) and
  the rows a fresh store holds after its first open are inserted again;
* :func:`describe` — every object of the schema by name and kind with its definition (columns,
  view and function text, indexes, constraints, triggers, policies, sequences, privileges,
  and the objects outside the schema that depend on one inside) — must equal a fresh store's;
* the schema is renamed. Everything Sluice keys by the schema's name — the process's Store
  registry (``open_store``: one Store per DSN), NOTIFY channels, advisory-lock keys, slot
  names — is therefore new for the next test, as with a new schema; a process the test left
  behind that connects later with the old DSN finds no schema there (and makes a new one, as
  after a DROP).

Not reused (dropped) when: the replication slots, publications or subscriptions of the
database differ from those before the test, or a publication names one of the schema's tables
or the schema (checked first: no waiting then); another backend is still connected to the
worker's database — one still open could hold prepared statements on the schema's tables,
which a rename does not stop. Before that is judged, this process closes what the test dropped
(:func:`let_go`: the reaper's queued closes, then a wait for the one its thread runs) and a
store of the schema still open here (a live object holds it) drops the schema at once; then
the backends get a short while to exit (other processes' connections that are closing). Also
dropped: the store's schema_version is not this Sluice's; the schema holds no store.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import uuid

import psycopg

import sluice
import sluice.store
from sluice.store import reaper
from sluice.store.dialect import POSTGRESQL
from sluice.store.sqlschema import SCHEMA_VERSION, queue_depth_ddl

# how long a reset waits for the test's backends to end once this process closed its own: a
# closed connection's backend exits at once (the rest: other processes' connections)
BACKENDS_GONE_WAIT = 1.0
# how long it waits for this process's reaper to close the connections the test dropped (a
# store's close: its listener thread joined, its pool's connections closed)
REAPED_WAIT = 30.0
ADMIN = "sluice-test-admin"    # the admin connections' application_name
RESET_BY_TRUNCATE = False
POOL_LIMIT = 4                 # reset schemas kept per worker (one test at a time uses one)


def new_schema_name() -> str:
    return "t_" + uuid.uuid4().hex[:12]


# the objects outside the schema that depend on one in it (a view or a foreign key of another
# schema, a publication of its tables): a CTE "outside" (line) after CTEs "ns" and "objs"
_OUTSIDE = """
own AS (SELECT classid, objid FROM objs
        UNION ALL SELECT 'pg_rewrite'::regclass, oid FROM pg_rewrite WHERE ev_class IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_trigger'::regclass, oid FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_attrdef'::regclass, oid FROM pg_attrdef WHERE adrelid IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_policy'::regclass, oid FROM pg_policy WHERE polrelid IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_constraint'::regclass, oid FROM pg_constraint WHERE connamespace = (SELECT oid FROM ns)),
outside AS (
  SELECT pg_describe_object(d.classid, d.objid, 0) AS line
    FROM pg_depend d JOIN objs o ON d.refclassid = o.classid AND d.refobjid = o.objid
   WHERE d.deptype <> 'i' AND (d.classid, d.objid) NOT IN (SELECT classid, objid FROM own))"""

# CTEs: the schema, its relations, its objects (class, oid), and "outside"
_HEAD = """WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = %(s)s),
rels AS (SELECT c.* FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM ns)),
objs AS (SELECT 'pg_class'::regclass AS classid, oid AS objid FROM rels
         UNION ALL SELECT 'pg_proc'::regclass, p.oid FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM ns)
         UNION ALL SELECT 'pg_type'::regclass, t.oid FROM pg_type t WHERE t.typnamespace = (SELECT oid FROM ns)),
""" + _OUTSIDE

# the number of objects of each other kind in the schema (operators, collations, …: a fresh
# store has none), as rows (k, n)
_OTHERS = """
    SELECT 'operator' AS k, count(*) AS n FROM pg_operator WHERE oprnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'collation', count(*) FROM pg_collation WHERE collnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'conversion', count(*) FROM pg_conversion WHERE connamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'opclass', count(*) FROM pg_opclass WHERE opcnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'opfamily', count(*) FROM pg_opfamily WHERE opfnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'statistic', count(*) FROM pg_statistic_ext WHERE stxnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'extension', count(*) FROM pg_extension WHERE extnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'ts_config', count(*) FROM pg_ts_config WHERE cfgnamespace = (SELECT oid FROM ns)
    UNION ALL SELECT 'ts_dict', count(*) FROM pg_ts_dict WHERE dictnamespace = (SELECT oid FROM ns)
"""

# Everything in namespace %(s)s, as sorted text lines that do not name the schema (its name
# replaced by "<s>"): two schemas holding the same store describe alike.
_DESCRIBE = """
""" + _HEAD + """
SELECT line FROM (
  SELECT 'class ' || relname || ' ' || relkind::text || ' ' || relpersistence::text || ' ' || relreplident::text
         || ' rls=' || relrowsecurity || ' acl=' || coalesce(relacl::text, '-')
         || ' opts=' || coalesce(reloptions::text, '-') AS line FROM rels
  UNION ALL
  SELECT 'column ' || r.relname || '.' || a.attnum || ' ' || a.attname || ' '
         || format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull
         || ' dropped=' || a.attisdropped || ' identity=' || a.attidentity::text
         || ' generated=' || a.attgenerated::text || ' collation=' || a.attcollation
         || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-')
    FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
  UNION ALL
  SELECT 'view ' || relname || ' ' || pg_get_viewdef(oid) FROM rels WHERE relkind IN ('v', 'm')
  UNION ALL
  SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN rels r ON r.oid = i.indrelid
  UNION ALL
  SELECT 'constraint ' || conname || ' ' || conrelid::regclass::text || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
    FROM pg_trigger t JOIN rels r ON r.oid = t.tgrelid WHERE NOT t.tgisinternal
  UNION ALL
  SELECT 'policy ' || r.relname || ' ' || p.polname || ' ' || coalesce(pg_get_expr(p.polqual, p.polrelid), '-')
    FROM pg_policy p JOIN rels r ON r.oid = p.polrelid
  UNION ALL
  SELECT 'rule ' || pg_get_ruledef(w.oid) FROM pg_rewrite w JOIN rels r ON r.oid = w.ev_class
   WHERE w.rulename <> '_RETURN'
  UNION ALL
  SELECT 'function ' || p.oid::regprocedure::text || ' ' || p.prokind::text || ' acl=' || coalesce(p.proacl::text, '-')
         || ' ' || CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) ELSE '' END
    FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT 'type ' || typname || ' ' || typtype::text || ' acl=' || coalesce(typacl::text, '-')
    FROM pg_type WHERE typnamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT 'sequence ' || r.relname || ' ' || s.seqtypid::regtype || ' ' || s.seqstart || ' ' || s.seqincrement
         || ' ' || s.seqmax || ' ' || s.seqmin || ' ' || s.seqcache || ' ' || s.seqcycle
         || ' last=' || coalesce(pg_sequence_last_value(r.oid)::text, '-')
    FROM pg_sequence s JOIN rels r ON r.oid = s.seqrelid
  UNION ALL   -- objects of other kinds in the schema (operators, collations, …): fresh has none
  SELECT 'other ' || k || ' ' || n FROM (
""" + _OTHERS + """  ) o
  UNION ALL   -- what outside the schema depends on an object in it (a view of another schema …)
  SELECT 'outside ' || line FROM outside
) lines
"""


# The same, cheaply (no view or function is deparsed; ~2 ms): the catalogs' rows of the schema's
# objects as stored — object ids, stored expression trees (hashed) — without the fields a
# TRUNCATE, VACUUM or ANALYZE changes. Equal for one schema before and after a test that changed
# nothing but rows; not comparable between two schemas (oids).
_STATE = """
""" + _HEAD + """
SELECT md5(string_agg(line, E'\n' ORDER BY line)), count(*) FROM (
  SELECT concat_ws(' ', 'class', oid, relname, relkind, relpersistence, relreplident, relrowsecurity,
                   relforcerowsecurity, relacl, reloptions, reltype, relnatts, relchecks, relam, relispartition,
                   reltablespace, reloftype) AS line FROM rels
  UNION ALL
  SELECT concat_ws(' ', 'column', attrelid, attnum, attname, atttypid, atttypmod, attnotnull, attisdropped,
                   attidentity, attgenerated, attcollation, atthasdef, attacl, attoptions)
    FROM pg_attribute WHERE attrelid IN (SELECT oid FROM rels) AND attnum > 0
  UNION ALL
  SELECT concat_ws(' ', 'default', adrelid, adnum, md5(adbin::text)) FROM pg_attrdef
   WHERE adrelid IN (SELECT oid FROM rels)
  UNION ALL
  SELECT concat_ws(' ', 'rewrite', oid, ev_class, rulename, ev_type, ev_enabled, is_instead,
                   md5(ev_qual::text), md5(ev_action::text)) FROM pg_rewrite WHERE ev_class IN (SELECT oid FROM rels)
  UNION ALL
  SELECT concat_ws(' ', 'index', indexrelid, indrelid, indkey, indclass, indcollation, indoption, indisunique,
                   indisprimary, indimmediate, indisvalid, md5(indexprs::text), md5(indpred::text))
    FROM pg_index WHERE indrelid IN (SELECT oid FROM rels)
  UNION ALL
  SELECT concat_ws(' ', 'constraint', oid, conname, contype, conrelid, contypid, conkey, confrelid, confkey,
                   condeferrable, condeferred, convalidated, md5(conbin::text))
    FROM pg_constraint WHERE connamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT concat_ws(' ', 'trigger', oid, tgrelid, tgname, tgfoid, tgtype, tgenabled, tgisinternal, tgargs)
    FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM rels)
  UNION ALL
  SELECT concat_ws(' ', 'policy', oid, polrelid, polname, polcmd, polpermissive, polroles, md5(polqual::text),
                   md5(polwithcheck::text)) FROM pg_policy WHERE polrelid IN (SELECT oid FROM rels)
  UNION ALL
  SELECT concat_ws(' ', 'proc', oid, proname, prokind, proargtypes, proallargtypes, proargmodes, proargnames,
                   prorettype, proretset, provolatile, prosecdef, proisstrict, proconfig, proacl, prolang,
                   md5(prosrc), md5(proargdefaults::text)) FROM pg_proc WHERE pronamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT concat_ws(' ', 'type', oid, typname, typtype, typrelid, typelem, typarray, typbasetype, typacl,
                   md5(typdefaultbin::text)) FROM pg_type WHERE typnamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT concat_ws(' ', 'sequence', seqrelid, seqtypid, seqstart, seqincrement, seqmax, seqmin, seqcache, seqcycle,
                   pg_sequence_last_value(seqrelid)) FROM pg_sequence WHERE seqrelid IN (SELECT oid FROM rels)
  UNION ALL
  SELECT concat_ws(' ', 'other', k, n) FROM (
""" + _OTHERS + """  ) o
  UNION ALL
  SELECT 'outside ' || line FROM outside
  UNION ALL   -- the schema's own row (its owner, its privileges)
  SELECT concat_ws(' ', 'schema', oid, nspowner, nspacl) FROM pg_namespace WHERE oid = (SELECT oid FROM ns)
) lines
"""


def state(admin: psycopg.Connection, schema: str) -> tuple:
    """The cheap fingerprint of the schema's objects (see _STATE)."""
    return tuple(admin.execute(_STATE, {"s": schema}).fetchone())


def describe(admin: psycopg.Connection, schema: str) -> list[str]:
    """The schema's objects and their definitions, sorted, its own name written ``<s>``."""
    with admin.transaction():
        admin.execute(f'SET LOCAL search_path = "{schema}"')   # the views' text: names unqualified
        lines = [r[0] for r in admin.execute(_DESCRIBE, {"s": schema})]
    return sorted(line.replace(f'"{schema}".', "<s>.").replace(f"{schema}.", "<s>.") for line in lines)


def objects(admin: psycopg.Connection, schema: str) -> set[tuple[str, str, str]]:
    """The schema's relations, routines (with their arguments) and types: (what, name, kind)."""
    with admin.transaction():
        admin.execute(f'SET LOCAL search_path = "{schema}"')   # argument types unqualified
        return {tuple(r) for r in admin.execute(_OBJECTS, {"ns": schema})}


def catalog_rows(admin: psycopg.Connection, schema: str, tables: list[str]) -> dict[str, list[tuple]]:
    """Every row of each of ``tables`` (sorted)."""
    return {t: sorted(admin.execute(f'SELECT * FROM "{schema}"."{t}"').fetchall(), key=repr) for t in tables}


_OBJECTS = """
SELECT 'class', relname, relkind::text FROM pg_class WHERE relnamespace = %(ns)s::regnamespace
UNION ALL SELECT 'proc', format('%%I(%%s)', p.proname, pg_get_function_identity_arguments(p.oid)),
                 p.prokind::text FROM pg_proc p
 WHERE p.pronamespace = %(ns)s::regnamespace
UNION ALL SELECT 'type', t.typname, t.typtype::text FROM pg_type t
 WHERE t.typnamespace = %(ns)s::regnamespace AND t.typrelid = 0 AND t.typelem = 0
"""

_REPLICATION = """
SELECT array(SELECT 'slot ' || slot_name FROM pg_replication_slots WHERE database = current_database()
             UNION ALL SELECT 'publication ' || pubname FROM pg_publication
             UNION ALL SELECT 'subscription ' || subname FROM pg_subscription
              WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
             ORDER BY 1)
"""

_REFERS = """
SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE schemaname = %(s)s)
       OR EXISTS (SELECT 1 FROM pg_publication_namespace WHERE pnnspid = %(s)s::regnamespace)
"""

_OTHER_BACKENDS = """
SELECT count(*) FROM pg_stat_activity
 WHERE datname = current_database() AND pid <> pg_backend_pid()
   AND backend_type NOT IN ('autovacuum worker', 'autovacuum launcher')
   AND application_name IS DISTINCT FROM %s
"""

_DROP = {"r": "TABLE", "p": "TABLE", "f": "FOREIGN TABLE", "v": "VIEW", "m": "MATERIALIZED VIEW",
         "S": "SEQUENCE", "i": "INDEX", "I": "INDEX", "c": "TYPE"}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _referring_first(tables: list[str], refs: set[tuple[str, str]]) -> list[str]:
    """``tables`` in an order a DELETE of each can follow: one whose foreign key refers to
    another before that other."""
    out: list[str] = []
    left = list(tables)
    while left:
        ready = [t for t in left if not any(b == t and a in left and a != t for a, b in refs)]
        if not ready:
            raise Unsafe("foreign keys in a cycle")
        out += ready
        left = [t for t in left if t not in ready]
    return out


class Unsafe(Exception):
    """The schema must not be reused (why)."""


def open_here(schema: str) -> bool:
    """Whether this process has a store of ``schema`` open (a connection to it not closed)."""
    return any(key.endswith(f"#{schema}") for key in list(sluice.store._stores))


def reaped(timeout: float = REAPED_WAIT) -> bool:
    """Wait until every close posted to this process's reaper so far has run (False: not
    within ``timeout``). Those posted and not yet taken run here, now; then a marker posted
    after them runs in the reaper thread once the close it may be running is done (one
    thread, first in first out) — or here, when no reaper thread runs (none is open)."""
    reaper.run_posted()
    done = threading.Event()
    reaper.post(done.set)
    end = time.monotonic() + timeout
    while not done.wait(0.01):
        if not any(t.name == "sluice-reaper" for t in threading.enumerate()):
            reaper.run_posted()
        if time.monotonic() > end:
            return False
    return True


def let_go(schema: str) -> None:
    """Close the connections to ``schema`` the test dropped without closing (tests/aq's
    never-close group does so on purpose: its fixtures drop them, the collector finds them and
    the reaper thread closes them some time later), now, not within the backends' wait. Then
    a store of ``schema`` still open here is one a live object holds (in a loaded tests/aq run,
    19 of the 22 schemas dropped for a backend: DESIGN-NOTES "Test suite time"): no waiting
    for its backends, the schema is dropped.
    :raises Unsafe: a store of ``schema`` is still open in this process."""
    if open_here(schema):
        gc.collect()      # connections in reference cycles (a test's traceback) post their close
    if not reaped():
        raise Unsafe("the reaper did not close the dropped connections")
    if open_here(schema):
        raise Unsafe("a connection of the test is still open")


class SchemaPool:
    """The reset schemas of one test process, and its one admin connection to ``base`` (the
    worker's database), made again when the server dropped it (a restart, a terminated
    backend)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._admin: psycopg.Connection | None = None
        self._free: list[str] = []
        self._fresh: tuple[list[str], dict[str, list[tuple]], list[str], list[str]] | None = None
        self._replication: list[str] | None = None     # slots … when the test began
        self._states: dict[int, tuple] = {}             # a kept schema's state (by its oid)
        self.reused = self.dropped = 0
        self.why: dict[str, int] = {}
        self.log: list[str] = []        # the test and the reason of each drop

    # -- the admin connection ----------------------------------------------------------
    def _connect(self) -> psycopg.Connection:
        try:
            # no JIT: the catalog queries' estimated costs (subplans) made PostgreSQL compile them,
            # ~0.3-1.2 s of server CPU each (measured 2026-11-30)
            return psycopg.connect(self.base, autocommit=True, connect_timeout=5, application_name=ADMIN,
                                   options="-c jit=off")
        except psycopg.OperationalError as e:
            raise AssertionError(f"PostgreSQL is not reachable at {self.base} (start it with "
                                 f"pg_ctlcluster --skip-systemctl-redirect 15 main start): {e}") from None

    def admin(self, check: str = "SELECT 1") -> psycopg.Connection:
        """The admin connection, checked with a round trip (new when the old one is gone):
        the check's first row is in ``self.checked``."""
        if self._admin is not None and not self._admin.closed:
            try:
                self.checked = self._admin.execute(check).fetchone()
                return self._admin
            except psycopg.Error:
                self._admin.close()
        self._admin = None
        self._admin = self._connect()
        self.checked = self._admin.execute(check).fetchone()
        return self._admin

    def close(self) -> None:
        """Drop the schemas kept (a serial run's are in the shared database), close."""
        while self._free:
            try:
                self.drop(self._free.pop())
            except (AssertionError, psycopg.Error):
                pass
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    # -- the pool ------------------------------------------------------------------------
    def take(self) -> str:
        """A schema name for a test: a reset store's, or a new one (the server checked)."""
        self.admin(_REPLICATION)
        self._replication = self.checked[0]   # to compare with after the test
        return self._free.pop() if self._free else new_schema_name()

    def give_back(self, schema: str) -> None:
        """After the test: reset ``schema`` and keep it (under a new name), or drop it."""
        try:
            admin = self.admin()
            renamed = self.reset(admin, schema)
        except Exception as e:       # unsafe, or anything unexpected: drop it, as without the pool
            why = str(e) if isinstance(e, Unsafe) else type(e).__name__
            self.why[why] = self.why.get(why, 0) + 1
            self.log.append(f"{os.environ.get('PYTEST_CURRENT_TEST', '?')}: {why}: {str(e)[:300]}")
            renamed = None
        if renamed is not None:
            self.reused += 1
            self._free.append(renamed)
            return
        self.dropped += 1
        self.drop(schema)

    def drop(self, schema: str) -> None:
        try:
            admin = self.admin()
        except AssertionError:
            admin = None
        if admin is None or admin.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            admin = self._admin = self._connect()
        admin.execute("SET lock_timeout = '20s'")
        try:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            admin.execute("RESET lock_timeout")

    # -- a fresh store ---------------------------------------------------------------------
    def fresh(self, admin: psycopg.Connection) -> tuple[list[str], dict[str, list[tuple]], list[str], list[str]]:
        """A fresh store's description, catalog rows, tables and sequences: of a store made
        (and closed) for it, then kept in the pool."""
        if self._fresh is None:
            schema = new_schema_name()
            sluice.connect(f"{self.base}{'&' if '?' in self.base else '?'}schema={schema}").close()
            tables = [r[0] for r in admin.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'r' "
                "ORDER BY relname", (schema,))]
            refs = admin.execute(     # (a table, a table its foreign keys refer to)
                "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint "
                "WHERE contype = 'f' AND connamespace = %s::regnamespace", (schema,)).fetchall()
            tables = _referring_first(tables, {(a.split(".")[-1].strip('"'), b.split(".")[-1].strip('"'))
                                              for a, b in refs})
            sequences = [r[0] for r in admin.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'S' "
                "ORDER BY relname", (schema,))]
            self._fresh = (describe(admin, schema), catalog_rows(admin, schema, tables), tables, sequences)
            self._objects = objects(admin, schema)
            self._states[self._oid(admin, schema)] = state(admin, schema)
            self._free.append(schema)
        return self._fresh

    # -- reset -------------------------------------------------------------------------------
    @staticmethod
    def _oid(admin: psycopg.Connection, schema: str) -> int | None:
        return admin.execute("SELECT to_regnamespace(%s)::oid", (schema,)).fetchone()[0]

    def replication(self, admin: psycopg.Connection) -> list[str]:
        return admin.execute(_REPLICATION).fetchone()[0]

    def reset(self, admin: psycopg.Connection, schema: str) -> str | None:
        """Reset ``schema`` to a fresh store and rename it: the new name. None when there is no
        such schema (the test never opened its store). :raises Unsafe: when it must be dropped."""
        oid = self._oid(admin, schema)
        if oid is None:
            return None
        try:
            return self._reset(admin, schema, oid)
        except BaseException:
            self._states.pop(oid, None)      # dropped now
            raise

    def _reset(self, admin: psycopg.Connection, schema: str, oid: int) -> str:
        # what makes reuse impossible anyway first: no waiting for backends then
        before, self._replication = self._replication, None
        if before is None or self.replication(admin) != before:
            raise Unsafe("replication slots or publications changed")
        if admin.execute(_REFERS, {"s": schema}).fetchone()[0]:
            raise Unsafe("a publication refers to the schema")
        if len(self._free) >= POOL_LIMIT:
            raise Unsafe("the pool is full")
        if admin.execute(_OTHER_BACKENDS, (ADMIN,)).fetchone()[0]:
            let_go(schema)        # the test's dropped connections closed now, not some time
            end = time.monotonic() + BACKENDS_GONE_WAIT
            while admin.execute(_OTHER_BACKENDS, (ADMIN,)).fetchone()[0]:
                if time.monotonic() > end:
                    raise Unsafe("another backend is connected")
                time.sleep(0.02)
        description, rows, tables, sequences = self.fresh(admin)
        new = new_schema_name()
        q = f'"{schema}"'
        with admin.transaction():
            admin.execute(f"SET LOCAL search_path = {q}")
            admin.execute("SET LOCAL lock_timeout = '2s'")
            if admin.execute("SELECT to_regclass(%s)", (f"{q}.sluice_meta",)).fetchone()[0] is None:
                raise Unsafe("no store")
            version = admin.execute("SELECT value FROM sluice_meta WHERE key = 'schema_version'").fetchone()
            if version is None or version[0] != str(SCHEMA_VERSION):
                raise Unsafe("another schema version")
            extra = objects(admin, schema) - self._objects
            if extra:
                for stmt in queue_depth_ddl([], POSTGRESQL):   # no longer over the queue tables
                    admin.execute(stmt)
                order = "rpfmvSiIc"
                for what, name, kind in sorted(extra, key=lambda e: (e[0] != "class", order.find(e[2]))):
                    if what == "class":
                        admin.execute(f"DROP {_DROP[kind]} IF EXISTS {q}.{_ident(name)} CASCADE")
                    elif what == "proc":       # name(argument types)
                        admin.execute(f"DROP ROUTINE IF EXISTS {q}.{name} CASCADE")
                    else:
                        admin.execute(f"DROP TYPE IF EXISTS {q}.{_ident(name)} CASCADE")
            if RESET_BY_TRUNCATE:
                admin.execute("TRUNCATE " + ", ".join(f'{q}."{t}"' for t in tables) + " RESTART IDENTITY")
            else:
                admin.execute("".join(f'DELETE FROM {q}."{t}";' for t in tables))
            admin.execute("SELECT setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s JOIN pg_class c "
                          "ON c.oid = s.seqrelid WHERE c.relnamespace = %s AND c.relname = ANY(%s)", (oid, sequences))
            for t, seed in rows.items():
                if seed:
                    marks = ", ".join(["%s"] * len(seed[0]))
                    admin.cursor().executemany(f'INSERT INTO {q}."{t}" VALUES ({marks})', seed)
            now = state(admin, schema)
            if oid in self._states:       # kept before: its objects as they were then
                if now != self._states[oid]:
                    raise Unsafe("its objects changed")
            elif describe(admin, schema) != description:   # first reset: as a fresh store's
                raise Unsafe("not like a fresh store after the reset")
            self._states[oid] = now
            admin.execute(f'ALTER SCHEMA {q} RENAME TO "{new}"')
        return new
