"""The server backend: one PostgreSQL schema shared by many processes.

Layout.  Everything lives in one schema (default ``sluice``, DSN parameter
``?schema=``): the catalog tables, the Oracle-named views (``DBA_QUEUES``,
``USER_QUEUES`` …) and one table per queue table named like Oracle's
(``"SCOTT.ORDERS_QT"``, its view ``"SCOTT.AQ$ORDERS_QT"``) — plain SQL for
anyone who looks.  :meth:`PgStore.__init__` creates or upgrades it (``sluice
init``), serialised by an advisory lock so several processes may start at once.

Concurrency is the database's own: a session's transaction is a real
PostgreSQL transaction (see :mod:`.pgsession`), dequeuers lock with ``FOR
UPDATE SKIP LOCKED``, commit-time queues number commits with a locked counter
row, and the time manager claims due rows with ``SKIP LOCKED`` too, so each
item is handled once however many processes run it.

Waking.  Commits NOTIFY (see :mod:`.pglisten`); each process LISTENs on one
connection and wakes its own waiters, so nobody polls.  The catalog version that
the AQ layer reads on every operation is a number in this process, bumped by
this process's DDL at once and by other processes' DDL through NOTIFY.
"""

from __future__ import annotations

import threading
import time
from typing import Collection, Iterable
from urllib.parse import urlsplit

import psycopg

from ..errors import DatabaseError, ProgrammingError, ora
from . import namespace, sqlcatalog, sqlnotify, sqlops
from .base import RELEASE_RECHECK, QueueInfo, QueueTableInfo, Store, TimeEvents
from .dialect import POSTGRESQL
from .pgconn import PgConnection, PgPool, PgTarget, translate
from .pglisten import Listener
from .sessions import OpenSession, pg_open_sessions
from .sqlschema import (LEGACY_RECEIVED, RETYPED_VIEWS, SCHEMA_VERSION, catalog_ddl, legacy_received_ddl, physical, quote,
                        table_name, queue_depth_ddl, upgrade_queue_table_ddl, view_name)
from .timemgr import TimeManagerThread

# a waiter re-checks this often while the listener is reconnecting (notifications lost)
DISCONNECTED_RECHECK = 0.5
DDL_LOCK_TIMEOUT = "5s"     # a DDL waiting on a session's open transaction gives up: ORA-00054


class PgStore(Store):
    """One PostgreSQL schema, shared by every connection of this process."""

    dialect = "postgresql"

    def __init__(self, target: PgTarget) -> None:
        self.target = target
        # waiters for the change counter; notify_all only when someone waits (every
        # buffered enqueue signals)
        self._cond_lock = threading.Lock()
        self._cond = threading.Condition(self._cond_lock)
        self._waiting = 0
        self._changes = 0
        self._catalog_version = 0
        # the database's catalog version the last bump announced, and those this process's
        # DDL transactions commit and announce once they have (under self._cond)
        self._announced = -1
        self._announcing: set[int] = set()
        self._cache_lock = threading.Lock()
        self._cache: tuple[int, list[QueueTableInfo], dict] | None = None
        self._tm: TimeManagerThread | None = None
        self._tm_lock = threading.Lock()
        self._closed = False
        setup = target.connect()
        try:
            try:
                self._ensure_schema(setup)
                self._announced = sqlcatalog.version(setup)     # the caches load it or later
            except psycopg.Error as e:
                raise translate(e, target) from None
            self._catalog_notify = f"NOTIFY {quote(target.channel)}, 'c%d'"
            self._table_notify: dict[int, str] = {}
            self._interest: set[int] = set()
            self.pool = PgPool(target)
            try:
                self.listener = Listener(target, self._on_notify, self._on_lost, self._on_reconnect,
                                         self._check_catalog)
                # the set-up connection, idle now, becomes the listener's: one server
                # connection (a backend process started) fewer per store opened
                self.listener.listen(setup)
            except BaseException:
                self.pool.close()
                raise
        except BaseException:
            setup.close()       # (the listener's own once it listens; closing it twice is harmless)
            raise

    def _ensure_schema(self, raw: psycopg.Connection) -> None:
        """Create or upgrade the store's schema (idempotent; one process at a time)."""
        schema = quote(self.target.schema)
        with raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"sluice:{self.target.schema}",))
            raw.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            row = raw.execute("SELECT to_regclass(%s)", (f"{schema}.sluice_meta",)).fetchone()
            if row[0] is not None:
                version = int(raw.execute("SELECT value FROM sluice_meta WHERE key = 'schema_version'")
                              .fetchone()[0])
                if version == SCHEMA_VERSION:
                    return
                if version > SCHEMA_VERSION:
                    raise ProgrammingError(
                        f"ORA-00600: internal error code, arguments: [schema {self.target.schema} "
                        f"has version {version}; this Sluice knows {SCHEMA_VERSION}]", 600)
            if row[0] is not None:   # an older Sluice's views of other column types
                for view in RETYPED_VIEWS:
                    raw.execute(f"DROP VIEW IF EXISTS {view} CASCADE")
            for stmt in catalog_ddl(POSTGRESQL):
                raw.execute(stmt)
            if row[0] is not None:   # queue tables made by an older Sluice
                self._upgrade_queue_tables(raw)
                if raw.execute("SELECT to_regclass(%s)", (f"{schema}.{LEGACY_RECEIVED.lower()}",)
                               ).fetchone()[0] is not None:
                    for stmt in legacy_received_ddl():
                        raw.execute(stmt)
            # catalog_ddl left SLUICE_QUEUE_DEPTH empty: list the queue tables in it again
            for stmt in queue_depth_ddl(sqlcatalog.queue_tables(raw), POSTGRESQL):
                raw.execute(stmt)
            raw.execute("UPDATE sluice_meta SET value = %s WHERE key = 'schema_version'",
                        (str(SCHEMA_VERSION),))

    def _upgrade_queue_tables(self, raw: psycopg.Connection) -> None:
        tables = raw.execute("SELECT OWNER, NAME, PAYLOAD_TYPE, SORT_LIST, MULTIPLE_CONSUMERS, "
                             "MESSAGE_GROUPING, QT_ID FROM aq_queue_tables").fetchall()
        for owner, name, payload, sort_list, multi, grouping, qt_id in tables:
            qt = QueueTableInfo(owner, name, payload, tuple(sort_list.split(",")), bool(multi),
                                grouping, qt_id=qt_id)
            cols = {r[0].upper() for r in raw.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
                "AND table_name = %s", (self.target.schema, physical(f"{owner}.{name}")))}
            for stmt in upgrade_queue_table_ddl(qt, cols, POSTGRESQL):
                raw.execute(stmt)

    def session(self, user: str):
        from .pgsession import PgSession
        return PgSession(self, user)

    def open_sessions(self, users: Collection[str]) -> list[OpenSession]:
        return self.pool.run(lambda c: pg_open_sessions(c.raw, self.target.schema, users), transaction=False)

    def close(self) -> None:
        self._run_close_hooks()
        if self._closed:
            return
        self._closed = True
        if self._tm is not None:
            self._tm.stop()
            self._tm = None
        self.listener.stop()
        self.pool.close()

    # -- waking waiters -------------------------------------------------------
    def notices(self, qt_ids: Iterable[int] = (), when: float | None = None) -> list[str]:
        """The NOTIFY statements announcing that messages of the queue tables ``qt_ids`` may
        be available (to the processes waiting there) and that a time event is due at
        ``when`` (to every process's time manager).

        They are sent right after the COMMIT, in the same round trip ("COMMIT; NOTIFY …"),
        not inside the transaction: a NOTIFY inside takes PostgreSQL's cluster-wide notify
        lock until the end of the commit, fsync included, which would serialise every
        producer's commit.  After it, the NOTIFY is a transaction of its own that writes no
        WAL; the server runs it as soon as the COMMIT succeeded (and never when it failed),
        so a woken dequeuer still finds the committed rows."""
        out = []
        for qt_id in qt_ids:
            sql = self._table_notify.get(qt_id)
            if sql is None:
                sql = self._table_notify[qt_id] = f"NOTIFY {quote(self.target.table_channel(qt_id))}, 'm'"
            out.append(sql)
        if when is not None:
            out.append(f"NOTIFY {quote(self.target.channel)}, 't{when!r}'")
        return out

    def interest(self, qt_id: int) -> None:
        """A session of this process found queue table ``qt_id`` empty and may wait for it:
        listen to its channel from now on.  Once that is in effect every waiter re-checks,
        so a commit that came in between is not missed."""
        if qt_id not in self._interest:
            self._interest.add(qt_id)
            self.listener.add_channel(self.target.table_channel(qt_id), self.local_change)

    def watch_queue(self, qualified: str) -> None:
        """The notification dispatcher waits for commits on this queue's table."""
        owner, _, name = qualified.partition(".")
        q = self.find_queue(owner, name)
        if q is not None:
            self.interest(q.table.qt_id)

    def local_change(self, when: float | None = None) -> None:
        """This process committed something that may make messages available (and a time
        event at ``when``): wake its waiters and time manager without waiting for NOTIFY."""
        with self._cond_lock:
            self._changes += 1
            if self._waiting:
                self._cond.notify_all()
        if when is not None and self._tm is not None:
            self._tm.hint(when)

    def _on_notify(self, payload: str) -> None:
        kind = payload[:1]
        if kind == "t":
            if self._tm is not None:
                try:
                    self._tm.hint(float(payload[1:]))
                except ValueError:
                    pass
            return
        if kind == "c":
            self._announce(int(payload[1:]) if payload[1:].isdigit() else None)
        self.local_change()

    def _on_lost(self) -> None:
        self.local_change()          # waiters go and find out (their next call errors or reconnects)

    def _on_reconnect(self) -> None:
        with self._cond:
            self._catalog_version += 1   # notifications sent meanwhile were lost
        self.local_change()
        if self._tm is not None:
            self._tm.hint(time.time())

    def sync_catalog(self) -> None:
        # another process's DDL is announced by its NOTIFY, which may still be on its way:
        # the database's catalog version is what was committed
        self._check_catalog()

    def _check_catalog(self) -> None:
        """Backstop, from the idle listener: the catalog version in the database moved
        without a notification reaching us (one lost, a server-side change) — announce
        it.  A version an announcement covered is not announced again: each bump makes
        every cache of this process reload."""
        try:
            v = self.pool.run(sqlcatalog.version, transaction=False)
        except DatabaseError:
            return
        self._announce(v)

    def _announce(self, version: int | None) -> None:
        """The database's catalog is at ``version`` (None: unknown, a notification of an
        older release): bump the catalog version unless a bump since it was committed
        covered it — one this process's DDL made, or will make once its commit returns."""
        with self._cond:
            if version is not None:
                if version <= self._announced or version in self._announcing:
                    return
                self._announced = version
            self._catalog_version += 1

    def wake_waiters(self) -> None:
        self.local_change()

    def change_counter(self) -> int:
        return self._changes

    def wait_for_messages(self, since: int, timeout: float) -> None:
        with self._cond:
            if self._changes != since:
                return
            # nobody announces the rows a killed session's transaction released
            timeout = min(timeout, RELEASE_RECHECK if self.listener.connected.is_set()
                          else DISCONNECTED_RECHECK)
            self._waiting += 1
            try:
                self._cond.wait(timeout)
            finally:
                self._waiting -= 1

    def default_global_name(self) -> str:
        """``SCHEMA.DATABASE`` (``DBS1.TEST``): two schemas of one database are two sites."""
        database = urlsplit(self.target.display).path.lstrip("/") or "POSTGRES"
        return f"{self.target.schema}.{database}".upper()

    # -- catalog ----------------------------------------------------------------
    def catalog_version(self) -> int:
        return self._catalog_version

    def _ddl(self, work):
        """One catalog change as its own transaction, announced to every process."""
        announcing: list[int] = []

        def run(c: PgConnection):
            c.execute(f"SET LOCAL lock_timeout = '{DDL_LOCK_TIMEOUT}'")
            result = work(c)
            sqlcatalog.bump_version(c)
            v = sqlcatalog.version(c)
            with self._cond:        # its NOTIFY coming back before the bump below is covered by it
                announcing.append(v)
                self._announcing.add(v)
            c.command(self._catalog_notify % v)
            return result
        done = False
        try:
            result = self.pool.run(run)
            done = True
            return result
        finally:
            with self._cond:
                self._catalog_version += 1
                for v in announcing:     # a retried transaction: each try's
                    self._announcing.discard(v)
                    if done:
                        self._announced = max(self._announced, v)

    def create_queue_table(self, table: QueueTableInfo, exception_queue: QueueInfo | None,
                           queues: tuple[QueueInfo, ...] = ()) -> QueueTableInfo:
        def create(c: PgConnection) -> QueueTableInfo:
            namespace.check(self, table.owner, table.name, (namespace.QUEUE_TABLE,), c)   # (a table …)
            return sqlcatalog.create_queue_table(c, table, exception_queue, queues)
        return self._ddl(create)

    def drop_queue_table(self, owner: str, name: str) -> None:
        qt = next((t for t in self.queue_tables() if (t.owner, t.name) == (owner, name)), None)
        if qt is None:
            raise ora(24002, f"{owner}.{name}")
        self._ddl(lambda c: sqlcatalog.drop_queue_table(c, qt))

    def queue_table_in_use(self, owner: str, name: str) -> bool:
        """The lock DROP TABLE needs, waited for as long as it would wait, then released:
        a session's open transaction holding one of the table's rows refuses both."""
        qt = next((t for t in self.queue_tables() if (t.owner, t.name) == (owner, name)), None)
        if qt is None:
            raise ora(24002, f"{owner}.{name}")

        def probe(c: PgConnection) -> None:
            c.execute(f"SET LOCAL lock_timeout = '{DDL_LOCK_TIMEOUT}'")
            c.execute(f"LOCK TABLE {table_name(qt)} IN ACCESS EXCLUSIVE MODE")
        return self._refused(probe)

    def update_queue_table(self, table: QueueTableInfo) -> None:
        self._ddl(lambda c: sqlcatalog.update_queue_table(c, table))

    def queue_tables(self) -> list[QueueTableInfo]:
        return self.pool.run(sqlcatalog.queue_tables, transaction=False)

    def create_queue(self, queue: QueueInfo, noting: tuple[str, str, str, dict] | None = None) -> QueueInfo:
        if noting is None:
            self._ddl(lambda c: sqlcatalog.insert_queue(c, queue))
        else:
            self._ddl(lambda c: sqlcatalog.insert_queue_noting(c, queue, *noting))
        return queue

    def update_queue(self, queue: QueueInfo) -> None:
        self._ddl(lambda c: sqlcatalog.update_queue(c, queue))

    def drop_queue(self, owner: str, name: str) -> None:
        q = self.find_queue(owner, name)
        if q is None:
            raise ora(24010, f"{owner}.{name}")
        self._ddl(lambda c: sqlcatalog.drop_queue(c, q))

    def queue_in_use(self, owner: str, name: str) -> bool:
        """The row locks the DELETE of :meth:`drop_queue` needs, waited for as long as it
        would wait, then released."""
        q = self.find_queue(owner, name)
        if q is None:
            raise ora(24010, f"{owner}.{name}")

        def probe(c: PgConnection) -> None:
            c.execute(f"SET LOCAL lock_timeout = '{DDL_LOCK_TIMEOUT}'")
            c.execute(f"SELECT SEQ FROM {table_name(q.table)} WHERE Q_NAME = ? FOR UPDATE", (q.name,))
        return self._refused(probe)

    def _refused(self, probe) -> bool:
        """Whether ``probe`` (run in a transaction of its own, which then ends) meets a
        lock it cannot get within DDL_LOCK_TIMEOUT: ORA-00054."""
        try:
            self.pool.run(probe)
        except DatabaseError as e:
            if e.code == 54:
                return True
            raise
        return False

    def queues(self) -> list[QueueInfo]:
        def read(c: PgConnection) -> list[QueueInfo]:
            return sqlcatalog.queues(c, {qt.qt_id: qt for qt in sqlcatalog.queue_tables(c)})
        return self.pool.run(read)   # one snapshot for both reads

    def _catalog(self) -> tuple[list[QueueTableInfo], dict]:
        """Queue tables and queues, cached by catalog version (time manager, message SQL)."""
        version = self._catalog_version
        cache = self._cache
        if cache is None or cache[0] != version:
            qs = self.queues()
            tables = {q.table.qt_id: q.table for q in qs}
            tables.update((t.qt_id, t) for t in self.queue_tables() if t.qt_id not in tables)
            cache = (version, list(tables.values()), {(q.owner, q.name): q for q in qs})
            with self._cache_lock:
                self._cache = cache
        return cache[1], cache[2]

    def find_queue(self, owner: str, name: str) -> QueueInfo | None:
        return self._catalog()[1].get((owner, name))

    def put_catalog_object(self, kind: str, owner: str, name: str, spec: dict, replace: bool) -> None:
        self._ddl(lambda c: sqlcatalog.put_object(c, kind, owner, name, spec, replace))

    def merge_catalog_object(self, kind: str, owner: str, name: str, change, create: bool) -> dict | None:
        return self._ddl(lambda c: sqlcatalog.merge_object(c, kind, owner, name, change, create))

    def drop_catalog_object(self, kind: str, owner: str, name: str) -> bool:
        return self._ddl(lambda c: sqlcatalog.drop_object(c, kind, owner, name))

    def catalog_objects(self, kind: str) -> list[tuple[str, str, dict]]:
        return self.pool.run(lambda c: sqlcatalog.objects(c, kind), transaction=False)

    def catalog_objects_of(self, kinds: tuple[str, ...]) -> dict[str, list[tuple[str, str, dict]]]:
        return self.pool.run(lambda c: sqlcatalog.objects_of(c, kinds), transaction=False)

    # -- messages outside sessions ---------------------------------------------
    def count_messages(self, queue: QueueInfo, states: Iterable[int] | None = None) -> int:
        return self.pool.run(lambda c: sqlops.count(c, queue, states), transaction=False)

    def write_notifications(self, queue: str, records: list) -> None:
        self.pool.run(lambda c: sqlnotify.write(c, queue, records))

    def claim_notifications(self, reg_ids: list[str], lease: float, limit: int) -> list[tuple]:
        return self.pool.run(lambda c: sqlnotify.claim(c, reg_ids, time.time(), lease, limit))

    def finish_notifications(self, ids: list[int]) -> None:
        self.pool.run(lambda c: sqlnotify.finish(c, ids))

    def release_notifications(self, ids: list[int], at: float) -> None:
        self.pool.run(lambda c: sqlnotify.release(c, ids, at))

    def drop_registration_notifications(self, reg_id: str) -> None:
        self.pool.run(lambda c: sqlnotify.drop_registration(c, reg_id))

    def drop_consumer_messages(self, queue: QueueInfo, name: str | None, address: str | None,
                               protocol: int) -> int:
        return self.pool.run(lambda c: sqlops.drop_consumer_messages(c, queue, name, address, protocol))

    def purge_messages(self, table: QueueTableInfo, condition: str | None) -> int:
        where = f"WHERE {condition}" if condition and condition.strip() else ""
        t = table_name(table)
        # messages a session holds are skipped, not waited for
        sql = (f"DELETE FROM {t} WHERE SEQ IN (SELECT SEQ FROM {t} WHERE SEQ IN "
               f"(SELECT qtview.LOCAL_ORDER_NO FROM {view_name(table)} qtview {where}) "
               f"FOR UPDATE SKIP LOCKED) RETURNING SEQ")

        def purge(c: PgConnection) -> int:
            try:
                return len(c.raw.execute(sql).fetchall())
            except psycopg.errors.SyntaxError as e:
                raise ProgrammingError(f"ORA-00904: invalid purge condition: {e}", 904) from None
        return self.pool.run(purge)

    def run_time_manager(self, now: float) -> TimeEvents:
        ev = TimeEvents()
        tables, queues = self._catalog()
        by_name = {(q.name, q.table.qt_id): q for q in queues.values()}
        for qt in tables:
            nd = self.pool.run(lambda c: sqlops.next_due(c, qt), transaction=False)
            if nd is not None and nd <= now:
                before = ev.promoted + ev.expired
                then: list[str] = []
                nd = self.pool.run(lambda c: self._time_pass(c, qt, by_name, now, ev, tables, then),
                                   then=then)
                if ev.promoted + ev.expired > before:
                    self.local_change()
            if nd is not None and nd <= now:
                nd = now + 0.5  # locked or over the batch limit: look again soon
            if nd is not None and (ev.next_due is None or nd < ev.next_due):
                ev.next_due = nd
        return ev

    def _time_pass(self, c: PgConnection, qt: QueueTableInfo, queues: dict, now: float,
                   ev: TimeEvents, tables: list[QueueTableInfo], then: list[str]) -> float | None:
        """Claim the due rows of one queue table (SKIP LOCKED: rows sessions or other
        time managers hold are left alone) and apply their events in one transaction."""
        promoted, expired = ev.promoted, ev.expired
        due = sqlops.due_records(c, qt, now, lock=True)
        sqlops.apply_time_events(c, qt, due, queues, now, ev, lambda seq: True, self.find_queue)
        # delivered at commit to every process waiting there; an expired message may have
        # moved to an exception queue of another table: those are told too (a rare event)
        told = tables if ev.expired > expired else [qt] if ev.promoted > promoted else []
        then[:] = self.notices(t.qt_id for t in told)       # sent once the pass commits
        return sqlops.next_due(c, qt)

    def start_time_manager(self) -> None:
        with self._tm_lock:
            if self._tm is None and not self._closed:
                self._tm = TimeManagerThread(self, (DatabaseError, psycopg.Error))
                self._tm.start()
