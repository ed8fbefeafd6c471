"""``DBMS_CAPTURE_ADM``: create, start, stop, alter and drop capture processes.

``conn.capture_adm.create_capture(queue_name=…, capture_name=…, rule_set_name=…)`` is
``DBMS_CAPTURE_ADM.CREATE_CAPTURE(queue_name => …, capture_name => …, rule_set_name =>
…)``.  The procedures change catalog state only (a new capture is DISABLED;
START_CAPTURE enables it); a host runs the enabled ones (:class:`.CaptureProcess`).
CREATE_CAPTURE creates the capture's replication slot on its PostgreSQL source — the
store's own database, or ``source_dsn`` (a Sluice parameter, for an SQLite store) —
and DROP_CAPTURE drops it.  Seed 001 "Secure Queues and Oracle Streams Clients": an
AQ agent named like the capture process is made a secure queue user for the capture
user, so the capture can enqueue into its secure queue.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ...errors import DatabaseError, not_supported, ora
from ...names import split_qualified
from . import spec as specs
from .context import CaptureContext
from . import params, sync
from .pgsource import SLOT_PREFIX, slot_missing
from .process import source_for
from . import spill
from .staging import STAGINGS

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["CaptureAdm", "capture_for_rules"]

def _scn(what: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ora(26667, f"{what} {value!r}: an SCN is a non-negative integer")
    return value


def slot_name(ctx: CaptureContext, capture: str) -> str:
    """``sluice_<store>_<digest of the capture name>``: unique per store and capture, and
    recognisable, so the slots a store leaves behind can be found."""
    digest = hashlib.sha1(capture.encode()).hexdigest()[:10]
    return f"{SLOT_PREFIX}{ctx.store_key()}_{digest}"[:63]


class CaptureAdm:
    """The DBMS_CAPTURE_ADM package for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn

    def _ctx(self) -> CaptureContext:
        ctx = CaptureContext(self._conn)
        ctx.check_streams_administrator()
        return ctx

    # -- the procedures ----------------------------------------------------------------
    def create_capture(self, queue_name: str, capture_name: str, rule_set_name: str | None = None,
                       start_scn: int | None = None, source_database: str | None = None,
                       use_database_link: bool = False, first_scn: int | None = None,
                       logfile_assignment: str = "implicit",
                       negative_rule_set_name: str | None = None, capture_user: str | None = None,
                       checkpoint_retention_time: float = 60, source_dsn: str | None = None) -> None:
        """Create a capture process (DISABLED) and its replication slot.

        ``first_scn`` / ``start_scn``: a capture cannot read the log from before its slot
        existed, so both default to the slot's consistent point and may only be later
        (ORA-01291 otherwise); changes committed before ``start_scn`` are not captured.
        ``source_dsn`` (Sluice): the PostgreSQL source when it is not the store's
        database.  :raises: ORA-26665 (exists), ORA-24010 (no queue), ORA-24141 (no rule
        set), ORA-01325 (the source's wal_level is not logical)."""
        ctx = self._ctx()
        name = params.capture_name(capture_name)
        if specs.find(ctx, name) is not None or sync.find(ctx, name) is not None:
            raise ora(26665, name)
        queue = params.capture_queue(ctx, queue_name)
        positive = params.rule_set(ctx, rule_set_name)
        negative = params.rule_set(ctx, negative_rule_set_name)
        user = params.capture_user(ctx, capture_user)
        start, first = _scn("start_scn", start_scn), _scn("first_scn", first_scn)
        if use_database_link:
            raise not_supported("use_database_link (downstream capture through a database link)")
        if str(logfile_assignment or "implicit").lower() != "implicit":
            raise not_supported("logfile_assignment => 'explicit' (the slot assigns the log)")
        retention = _retention(checkpoint_retention_time)
        if source_dsn is not None and not str(source_dsn).startswith(("postgresql://", "postgres://")):
            raise ora(26667, f"source_dsn {source_dsn!r}: a postgresql:// DSN")
        ctx.ddl_commit()
        with source_for(ctx, source_dsn=source_dsn, process=name).connect() as source:
            source.check_logical()
            global_name = (source_database or source.database_name()).upper()
            if not source_database and source_dsn is None and ctx.store.global_name() != \
                    ctx.store.default_global_name():
                # the store's own database, whose site was given a global name (ALTER DATABASE
                # RENAME GLOBAL_NAME, DESIGN.md §7): its changes are that site's, as in Oracle
                global_name = ctx.store.global_name()
            slot = slot_name(ctx, name)
            _not_before(first, start, source.current_lsn())     # the slot cannot go back
            if source.slot(slot) is not None:      # left by a capture of this name that is gone
                source.drop_slot(slot)
            source.install_ddl_trigger()
            consistent = source.create_slot(slot)
            try:
                # again: another session's DROP_CAPTURE may have dropped the triggers between
                # the two (its last slot gone, ours not made yet); from now on our slot keeps them
                source.install_ddl_trigger()
                _not_before(first, start, consistent)
                params.secure_queue_user(self._conn, ctx, name, user, queue)
                first_scn_ = first if first is not None else consistent
                spec = specs.CaptureSpec(
                    name=name, queue_owner=queue[0], queue_name=queue[1], capture_user=user, slot=slot,
                    source_database=global_name, first_scn=first_scn_,
                    start_scn=max(start if start is not None else first_scn_, first_scn_),
                    rule_set_owner=positive[0], rule_set_name=positive[1],
                    negative_rule_set_owner=negative[0], negative_rule_set_name=negative[1],
                    source_dsn=source_dsn, checkpoint_retention_time=retention)
                spec = spec.with_status(specs.DISABLED)
                spec.created = spec.status_change_time
                specs.save(ctx, spec, replace=False)
            except BaseException:
                source.drop_slot(slot)
                try:
                    source.remove_ddl_trigger_if_unused()
                except DatabaseError:
                    pass      # tidying only (a user who may not drop them): the error is raised
                raise

    def start_capture(self, capture_name: str) -> None:
        """Enable the capture process (a running host starts it within a second); an
        ABORTED one starts again from its position.  :raises: ORA-01291 when its slot is
        gone, ORA-01325 when the source's wal_level is not logical."""
        ctx = self._ctx()
        spec = specs.load(ctx, params.capture_name(capture_name))
        if spec.status == specs.ENABLED:
            return
        ctx.ddl_commit()
        with source_for(ctx, spec, process=spec.name).connect() as source:
            source.check_logical()
            if source.slot(spec.slot) is None:
                raise slot_missing(f'replication slot "{spec.slot}" of capture {spec.name} does not exist')
        specs.save(ctx, spec.with_status(specs.ENABLED))

    def stop_capture(self, capture_name: str, force: bool = False) -> None:
        """Disable the capture process (a running one stops at its next batch)."""
        ctx = self._ctx()
        spec = specs.load(ctx, params.capture_name(capture_name))
        if spec.status == specs.DISABLED:
            return
        ctx.ddl_commit()
        keep = spec.with_status(specs.DISABLED)
        if spec.status == specs.ABORTED:   # the error stays visible until START_CAPTURE
            keep.error_number, keep.error_message = spec.error_number, spec.error_message
        specs.save(ctx, keep)

    def alter_capture(self, capture_name: str, rule_set_name: str | None = None,
                      remove_rule_set: bool = False, start_scn: int | None = None,
                      use_database_link: bool | None = None, first_scn: int | None = None,
                      negative_rule_set_name: str | None = None,
                      remove_negative_rule_set: bool = False, capture_user: str | None = None,
                      checkpoint_retention_time: float | None = None,
                      start_time: Any = None) -> None:
        """Change rule sets, capture user, retention, first or start SCN.  A new
        ``start_scn`` needs the capture stopped (ORA-26666); moving it back re-captures
        from there if the slot still has the log (ORA-01291 otherwise)."""
        ctx = self._ctx()
        spec = specs.load(ctx, params.capture_name(capture_name))
        if rule_set_name is not None and remove_rule_set:
            raise ora(26667, "rule_set_name together with remove_rule_set")
        if negative_rule_set_name is not None and remove_negative_rule_set:
            raise ora(26667, "negative_rule_set_name together with remove_negative_rule_set")
        positive = params.rule_set(ctx, rule_set_name)
        negative = params.rule_set(ctx, negative_rule_set_name)
        user = params.capture_user(ctx, capture_user) if capture_user is not None else None
        start, first = _scn("start_scn", start_scn), _scn("first_scn", first_scn)
        if use_database_link:
            raise not_supported("use_database_link (downstream capture through a database link)")
        if start_time is not None:
            raise not_supported("start_time (give start_scn: a PostgreSQL LSN)")
        retention = _retention(checkpoint_retention_time) if checkpoint_retention_time is not None else None
        if first is not None and first < spec.first_scn:
            raise slot_missing(f"first_scn {first} is before the capture's first SCN {spec.first_scn}")
        recapture_from = None
        if start is not None:
            if spec.status == specs.ENABLED:
                raise ora(26666, spec.name, ": stop it before changing its start SCN")
            if start < (first if first is not None else spec.first_scn):
                raise slot_missing(f"start_scn {start} is before the capture's first SCN")
            with source_for(ctx, spec, process=spec.name).connect() as source:
                slot = source.slot(spec.slot)
            if slot is None:
                raise slot_missing(f'replication slot "{spec.slot}" of capture {spec.name} does not exist')
            rows = ctx.query("SELECT CAPTURED_SCN FROM SLUICE_CAPTURE_PROGRESS WHERE OWNER = :o "
                             "AND NAME = :n", {"o": specs.OWNER, "n": spec.name})
            captured = rows[0][0] if rows and rows[0][0] is not None else 0
            if start <= captured:        # back: the log from there must still be in the slot
                if slot[1] > start:
                    raise slot_missing(f"the replication slot no longer holds the log from SCN {start} "
                                       f"(it starts at {slot[1]})")
                recapture_from = start
        ctx.ddl_commit()
        if user is not None and user != spec.capture_user:
            params.secure_queue_user(self._conn, ctx, spec.name, user, (spec.queue_owner, spec.queue_name))
            spec.capture_user = user
        spec.alter_rule_sets(positive, rule_set_name is not None, remove_rule_set,
                             negative, negative_rule_set_name is not None, remove_negative_rule_set)
        if first is not None:
            spec.first_scn = first
            spec.start_scn = max(spec.start_scn, first)
        if start is not None:
            spec.start_scn = start
        if retention is not None:
            spec.checkpoint_retention_time = retention
        specs.save(ctx, spec)
        if recapture_from is not None:
            ctx.add_commit_work(lambda c: c.execute(
                "UPDATE SLUICE_CAPTURE_PROGRESS SET CAPTURED_SCN = ? WHERE OWNER = ? AND NAME = ?",
                (recapture_from - 1, specs.OWNER, spec.name)))
            self._conn.commit()

    def set_parameter(self, capture_name: str, parameter: str, value: Any) -> None:
        """A capture process parameter.  Sluice's own: ``STAGING`` — ``PERSISTENT`` (the
        default: LCRs and position committed together) or ``BUFFERED`` (LCRs in the queue's
        buffered part, the slot confirmed once consumers committed; see
        :mod:`.staging`); ``TXN_LCR_SPILL_THRESHOLD`` — how many LCRs of one source
        transaction the capture holds in memory before it spills them to its store (a
        count ≥ 1 or ``INFINITE``; default 10,000; the apply's parameter of that name, on
        the capture's side: see :mod:`.spill`).  NULL: back to the default.  Changed while
        the capture is stopped.  :raises: ORA-26701 no such capture, ORA-26667 unknown
        parameter, ORA-23605 bad value, ORA-26666 capture enabled."""
        ctx = self._ctx()
        spec = specs.load(ctx, params.capture_name(capture_name))
        param = str(parameter).upper() if parameter is not None else ""
        if param not in ("STAGING", "TXN_LCR_SPILL_THRESHOLD"):
            raise ora(26667, f"{parameter!r}: not a capture process parameter Sluice knows "
                             f"(STAGING, TXN_LCR_SPILL_THRESHOLD)")
        if param == "STAGING":
            text = STAGINGS[0] if value is None else str(value).strip().upper()
            valid = text in STAGINGS
        else:
            text = spill.DEFAULT_THRESHOLD if value is None else str(value).strip().upper()
            valid = text == "INFINITE" or (text.isascii() and text.isdigit() and int(text) >= 1)
        if not valid:
            raise ora(23605, value, param)
        if text == getattr(spec, param.lower()):
            return
        if spec.status == specs.ENABLED:
            raise ora(26666, spec.name, f": stop it before changing its {param.lower()}")
        ctx.ddl_commit()
        setattr(spec, param.lower(), text)
        specs.save(ctx, spec)

    def drop_capture(self, capture_name: str, drop_unused_rule_sets: bool = False) -> None:
        """Drop a stopped (DISABLED or ABORTED) capture process, its slot and what it
        recorded; with ``drop_unused_rule_sets`` also its rule sets (and their rules)
        when no other capture process uses them.  A synchronous capture of that name is
        dropped with its triggers (:func:`.sync.drop_sync_capture`).
        :raises: ORA-26666 while ENABLED."""
        ctx = self._ctx()
        name = params.capture_name(capture_name)
        if specs.find(ctx, name) is None and sync.find(ctx, name) is not None:
            sync.drop_sync_capture(self._conn, f'"{name}"', drop_unused_rule_sets)
            return
        spec = specs.load(ctx, name)
        if spec.status == specs.ENABLED:
            raise ora(26666, spec.name, ": stop it first (STOP_CAPTURE)")
        ctx.ddl_commit()
        with source_for(ctx, spec, process=spec.name).connect() as source:
            source.drop_slot(spec.slot)
            ctx.drop_object(specs.KIND, specs.OWNER, spec.name)
            ctx.add_commit_work(lambda c: (
                c.execute("DELETE FROM SLUICE_CAPTURE_PROGRESS WHERE OWNER = ? AND NAME = ?",
                          (specs.OWNER, spec.name)),
                c.execute("DELETE FROM SLUICE_STREAMS_UNSUPPORTED WHERE CAPTURE_OWNER = ? "
                          "AND CAPTURE_NAME = ?", (specs.OWNER, spec.name)),
                c.execute("DELETE FROM SLUICE_CAPTURE_CONSUMED WHERE OWNER = ? AND NAME = ?",
                          (specs.OWNER, spec.name)),
                c.execute("DELETE FROM SLUICE_CAPTURE_SPILL WHERE OWNER = ? AND NAME = ?",
                          (specs.OWNER, spec.name))))
            self._conn.commit()
            try:
                source.remove_ddl_trigger_if_unused()
            except DatabaseError:
                pass   # only tidying: the trigger writes nothing without a Sluice slot
        if drop_unused_rule_sets:
            others = specs.all_specs(ctx)
            used = {(s.rule_set_owner, s.rule_set_name) for s in others} | \
                   {(s.negative_rule_set_owner, s.negative_rule_set_name) for s in others}
            for owner, rs in ((spec.rule_set_owner, spec.rule_set_name),
                              (spec.negative_rule_set_owner, spec.negative_rule_set_name)):
                if rs is not None and (owner, rs) not in used and ctx.rule_set_exists(owner, rs):
                    self._conn.rule_adm.drop_rule_set(rule_set_name=f'"{owner}"."{rs}"',
                                                      delete_rules=True)


    # -- synchronous capture (sync.py) -------------------------------------------------
    def create_sync_capture(self, queue_name: str, capture_name: str, rule_set_name: str | None = None,
                            capture_user: str | None = None) -> None:
        """A synchronous capture: triggers on the tables its rule set names enqueue their
        row changes, in the changing transaction, into ``queue_name`` (see :mod:`.sync`)."""
        sync.create_sync_capture(self._conn, queue_name, capture_name, rule_set_name, capture_user)

    def alter_sync_capture(self, capture_name: str, rule_set_name: str | None = None,
                           capture_user: str | None = None) -> None:
        """Another rule set (the tables it names are captured from now on) or capture user."""
        sync.alter_sync_capture(self._conn, capture_name, rule_set_name, capture_user)

    def prepare_sync_instantiation(self, table_names: Any) -> int:
        """The SCN to instantiate the tables at (changes committed later carry greater ones)."""
        return sync.prepare_sync_instantiation(self._conn, table_names)


def _not_before(first: int | None, start: int | None, scn: int) -> None:
    for what, value in (("first_scn", first), ("start_scn", start)):
        if value is not None and value < scn:
            raise slot_missing(f"{what} {value} is before the first SCN {scn} this capture's "
                               f"replication slot can read")


def _retention(value: Any) -> float:
    if isinstance(value, str) and value.upper() == "INFINITE":
        return float("inf")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ora(26667, f"checkpoint_retention_time {value!r}")
    return float(value)


def capture_for_rules(conn: "Connection", capture_name: str, queue_name: str,
                      source_database: str | None = None) -> specs.CaptureSpec:
    """For DBMS_STREAMS_ADM.ADD_*_RULES with ``streams_type => 'capture'``: the capture
    process ``capture_name``, created (DISABLED, without rule sets) on ``queue_name`` when
    it does not exist, as Oracle does.  The caller then creates the rule set and attaches
    it with ``conn.capture_adm.alter_capture(capture_name, rule_set_name=…)``.
    :raises: ORA-26667 when it exists with another queue."""
    ctx = CaptureContext(conn)
    name = params.capture_name(capture_name)
    found = specs.find(ctx, name)
    if found is None:
        CaptureAdm(conn).create_capture(queue_name=queue_name, capture_name=f'"{name}"',
                                        source_database=source_database)
        return specs.load(ctx, name)
    owner, qname = split_qualified(queue_name, ctx.username, "queue name")
    if (owner, qname) != (found.queue_owner, found.queue_name):
        raise ora(26667, f"queue_name {queue_name!r}: capture process {name} uses "
                         f"{found.queue_owner}.{found.queue_name}")
    return found
