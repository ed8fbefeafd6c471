"""Synchronous capture: DML changes captured by triggers, enqueued in the changing transaction.

Oracle's synchronous capture (DBMS_CAPTURE_ADM.CREATE_SYNC_CAPTURE, or ADD_TABLE_RULES /
ADD_SUBSET_RULES with ``streams_type => 'sync_capture'``) captures row changes of the
tables its positive rule set names — table and subset rules only, no DDL, no negative
rule set — as persistent row LCRs in a commit-time ANYDATA queue (seed 001 "Queues and
Synchronous Capture", "Commit-Time Queues": "A synchronous capture always enqueues into a
commit-time queue").  It is not a process: it has no state to start or stop and is not in
DBA_CAPTURE; DBA_SYNC_CAPTURE lists it and DBA_SYNC_CAPTURE_TABLES its tables.

Sluice's triggers (:mod:`.syncsqlite`, :mod:`.syncpg`) are plain SQL / PL/pgSQL: any
writer of a captured table is captured, and the rules are evaluated in SQL inside the
trigger (:mod:`.syncrules`), so a change they reject never reaches the queue.  The set of
captured tables follows the rule set: CREATE / ALTER_SYNC_CAPTURE and every DBMS_RULE_ADM
change to a rule set some synchronous capture uses re-create the triggers
(:func:`refresh_rule_set`).  Everything is checked before anything changes.

The triggers enqueue as the capture_user (seed 001 "Secure Queues and Oracle Streams
Clients"): each one checks, as it enqueues, that the user may (ENQUEUE, and on a secure
queue the agent named like the capture mapped to it: the check of a capture process,
:func:`~..clientrights.capture_user_refusals` in SQL); when not, the change is refused
with that error (ORA-01031, ORA-24093, ORA-01918) -- nothing enqueued, nothing kept.
They evaluate the rule set as the capture_user too: one it may not execute
(:func:`~..clientrights.rule_set_refusals`) refuses every change of a captured table with
ORA-01031 before any rule is looked at, captured or not (DESIGN-NOTES "A synchronous
capture's rule set and its capture user").
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from ...errors import ora
from ...names import name_list, split_qualified
from ...rules.engine.ruleset import Rule
from ...store.sqlschema import table_name
from . import params, syncpg, syncsqlite
from .context import CaptureContext
from .spec import KIND as PROCESS_KIND   # capture processes share the namespace of names
from ..clientrights import capture_user_refusals, rule_set_refusals
from ..clientspec import CatalogRow
from .syncrules import rule_table, rule_variables

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["SyncCaptureSpec", "create_sync_capture", "alter_sync_capture", "drop_sync_capture",
           "sync_capture_for_rules", "prepare_sync_instantiation", "refresh_rule_set", "find", "load"]

KIND = "SYNC_CAPTURE"
OWNER = "SYS"
ROW_SUBSET = "STREAMS$_ROW_SUBSET"   # a subset rule's action context (seed 000)
MAX_SQLITE_COLUMNS = 60       # SQLite functions take at most 127 arguments (json_object)


@dataclass
class SyncCaptureSpec(CatalogRow):
    """A synchronous capture's catalog row (DBA_SYNC_CAPTURE) and its captured tables."""

    name: str
    queue_owner: str
    queue_name: str
    capture_user: str
    source_database: str
    rule_set_owner: str | None = None
    rule_set_name: str | None = None
    # (owner, object, physical schema or None, physical table) of each captured table
    tables: list[list[Any]] = field(default_factory=list)


def find(ctx: CaptureContext, name: str) -> SyncCaptureSpec | None:
    spec = ctx.get_object(KIND, OWNER, name)
    return None if spec is None else SyncCaptureSpec.from_spec(name, spec)


def load(ctx: CaptureContext, name: str) -> SyncCaptureSpec:
    """:raises: ORA-26701 when there is no such synchronous capture."""
    found = find(ctx, name)
    if found is None:
        raise ora(26701, name)
    return found


def _save(ctx: CaptureContext, spec: SyncCaptureSpec, replace: bool = True) -> None:
    ctx.put_object(KIND, OWNER, spec.name, spec.to_spec(), replace=replace)


def global_name(ctx: CaptureContext) -> str:
    """The site's global name (DESIGN.md section 7): the PostgreSQL database's name, or the
    SQLite file's name without its extension, upper-cased."""
    pg = ctx.pg_target()
    if pg is not None:
        with _database(ctx) as db:
            return db.execute("SELECT current_database()").fetchone()[0].upper()
    base = os.path.basename(ctx.store.path)
    stem, ext = os.path.splitext(base)
    return (stem if ext.lower() in (".db", ".sqlite", ".sqlite3") else base).upper()


# -- the store's database, for the triggers ----------------------------------------------
@contextmanager
def _database(ctx: CaptureContext, write: bool = False) -> Iterator[Any]:
    """A connection to the store's database (in one transaction with ``write``)."""
    store = ctx.store
    pg = ctx.pg_target()
    if pg is not None:
        raw = store.target.connect()
        try:
            if write:
                with raw.transaction():
                    yield raw
            else:
                yield raw
        finally:
            raw.close()
        return
    conn = store.connect()
    try:
        if write:
            with store.transaction(conn):
                for stmt in syncsqlite.SQLITE_DDL:
                    conn.execute(stmt)
                yield conn
        else:
            yield conn
    finally:
        conn.close()


def _find_table(ctx: CaptureContext, db: Any, owner: str, name: str) -> Any:
    if ctx.pg_target() is None:
        table = syncsqlite.find_table(db, owner, name)
        if len(table.columns) > MAX_SQLITE_COLUMNS:
            raise ora(26667, f"{owner}.{name} has {len(table.columns)} columns; a synchronous capture "
                             f"on SQLite captures tables of at most {MAX_SQLITE_COLUMNS}")
        return table
    table = syncpg.find_table(db, owner, name)
    if table.unsupported:
        _note_unsupported(ctx, table)
        cols = ", ".join(f"{c} ({t})" for c, t in table.unsupported)
        raise ora(26667, f"{table.owner}.{table.name} has columns a synchronous capture cannot "
                         f"capture: {cols} (see DBA_STREAMS_UNSUPPORTED)")
    return table


def _note_unsupported(ctx: CaptureContext, table: syncpg.PgTable) -> None:
    """DBA_STREAMS_UNSUPPORTED: what makes the table uncapturable (a fact about the table,
    recorded although the request that found it changes nothing)."""
    reason = "unsupported column types: " + ", ".join(sorted({t for _, t in table.unsupported}))
    with _database(ctx, write=True) as db:
        db.execute("INSERT INTO SLUICE_STREAMS_UNSUPPORTED (OWNER, TABLE_NAME, REASON, AUTO_FILTERED, "
                   "NOTED) VALUES (%s, %s, %s, 'NO', extract(epoch FROM now())) ON CONFLICT DO NOTHING",
                   (table.owner, table.name, reason))


# -- which tables the rules name -------------------------------------------------------
def _rules(ctx: CaptureContext, owner: str | None, name: str | None) -> list[tuple[str, str, str | None]]:
    """``(rule name, condition, STREAMS$_ROW_SUBSET of its action context)`` of the rule
    set's rules (the last: which subset rule it is, for row migration)."""
    if name is None:
        return []
    rules = {f"{o}.{n}": Rule.from_spec(o, n, spec) for o, n, spec in ctx.objects("RULE")}
    out = []
    for _, _, member in ctx.objects("RULE_SET_RULE"):
        rule = rules.get(member.get("rule"))
        if member.get("rule_set") == f"{owner}.{name}" and rule is not None:
            subset = rule.action_context.get_value(ROW_SUBSET) if rule.action_context is not None else None
            out.append((rule.qualified, rule.condition,
                        str(subset.value).upper() if subset is not None and subset.value else None))
    return sorted(set(out))


def tables_of(rules: list[tuple]) -> dict[tuple[str, str], list[tuple]]:
    """The tables the rules name, each with its rules.  DDL rules (ADD_TABLE_RULES'
    ``include_ddl``) are left out: a synchronous capture captures DML only.
    :raises: ORA-26667 for a rule that names no table."""
    out: dict[tuple[str, str], list[tuple]] = {}
    for rule in rules:
        name, condition = rule[0], rule[1]
        table = rule_table(condition)
        if table is None:
            if rule_variables(condition) == {"DDL"}:
                continue
            raise ora(26667, f"rule {name}: a synchronous capture uses table and subset rules "
                             f"only (its condition names no table)")
        out.setdefault(table, []).append(rule)
    return out


# -- the triggers ----------------------------------------------------------------------
def _install(ctx: CaptureContext, spec: SyncCaptureSpec, rule_set: tuple[str | None, str | None]) -> list:
    """Make the triggers of ``spec`` match the rules of ``rule_set``; returns the new
    table list.  Every table is looked up and every rule compiled before any DDL runs,
    and the DDL is one transaction."""
    statements, tables = _plan(ctx, spec, _rules(ctx, *rule_set))
    with _database(ctx, write=True) as db:
        for stmt in statements:
            db.execute(stmt)
    return tables


def _plan(ctx: CaptureContext, spec: SyncCaptureSpec, rules: list[tuple]) -> tuple[list[str], list]:
    """The DDL that makes the triggers of ``spec`` capture what ``rules`` name, and the
    new table list.  :raises: ORA-00942, ORA-26667 (nothing has changed)."""
    wanted = tables_of(rules)
    qinfo = ctx.queue(spec.queue_owner, spec.queue_name)
    qt = table_name(qinfo.table)
    pg = ctx.pg_target()
    statements: list[str] = []
    tables: list[list[Any]] = []
    # the capture_user's rights, checked by the triggers as they fire: to evaluate the rule
    # set (before any rule), to enqueue (a change the rules capture)
    catalog = "SLUICE_CATALOG" if pg is None else syncpg.catalog_table(pg[1])
    refusals = capture_user_refusals(ctx, spec.name, spec.capture_user, spec.queue_owner, spec.queue_name,
                                     catalog)
    rule_set = f"{spec.rule_set_owner}.{spec.rule_set_name}" if spec.rule_set_name is not None else None
    evaluation = rule_set_refusals(ctx, spec.capture_user, rule_set, catalog)
    with _database(ctx) as db:
        for (owner, name), rules in sorted(wanted.items()):
            t = _find_table(ctx, db, owner, name)
            if pg is None:
                _one_owner(ctx, spec, tables, owner, t.name)
                statements += syncsqlite.drop_ddl(spec.name, t.name)
                statements += syncsqlite.trigger_ddl(spec.name, (spec.queue_owner, spec.queue_name), qt,
                                                     spec.capture_user, spec.source_database, t, rules,
                                                     refusals, evaluation, qinfo.qid)
                tables.append([owner, t.name, None, t.physical])
            else:
                statements += syncpg.trigger_ddl(pg[1], spec.name, (spec.queue_owner, spec.queue_name), qt,
                                                 ctx.store.target.table_channel(qinfo.table.qt_id),
                                                 spec.capture_user, spec.source_database, t, rules, refusals,
                                                 evaluation, qinfo.qid)
                tables.append([t.owner, t.name, t.schema, t.table])
    keep = {(t[2], t[3].upper() if pg is None else t[3]) for t in tables}
    for owner, name, schema, physical in spec.tables:
        if (schema, physical.upper() if pg is None else physical) not in keep:
            statements += _drop_statements(ctx, spec.name, owner, name, schema, physical)
    return statements, tables


def _one_owner(ctx: CaptureContext, spec: SyncCaptureSpec, planned: list, owner: str, name: str) -> None:
    """SQLite: a table of the store's file is captured under one owner (its LCRs' owner).
    :raises: ORA-26667 when this capture or another already names it with another owner."""
    others = [t for o, n, s in ctx.objects(KIND) if o == OWNER and n != spec.name
              for t in SyncCaptureSpec.from_spec(n, s).tables]
    for t_owner, t_name, _, _ in planned + others:
        if t_name == name and t_owner != owner:
            raise ora(26667, f"{owner}.{name}: the SQLite table {name} is captured as "
                             f"{t_owner}.{t_name} (a table has one owner)")


def _drop_statements(ctx: CaptureContext, capture: str, owner: str, name: str, schema: str | None,
                     physical: str) -> list[str]:
    pg = ctx.pg_target()
    if pg is None:
        return syncsqlite.drop_ddl(capture, name)
    table = syncpg.PgTable(owner, name, schema or "", physical, (), ())
    return syncpg.drop_ddl(pg[1], capture, table)


def _remove_all(ctx: CaptureContext, spec: SyncCaptureSpec) -> None:
    statements = [s for t in spec.tables for s in _drop_statements(ctx, spec.name, *t)]
    if statements:
        with _database(ctx, write=True) as db:
            for stmt in statements:
                db.execute(stmt)


def _commit_time(ctx: CaptureContext, queue: tuple[str, str]) -> None:
    if not ctx.queue(*queue).table.commit_time:
        raise ora(26667, f"queue {queue[0]}.{queue[1]}: a synchronous capture enqueues into a "
                         f"commit-time queue (sort_list 'commit_time', as SET_UP_QUEUE makes)")


# -- DBMS_CAPTURE_ADM ------------------------------------------------------------------
def create_sync_capture(conn: "Connection", queue_name: Any, capture_name: Any,
                        rule_set_name: Any = None, capture_user: Any = None) -> SyncCaptureSpec:
    """CREATE_SYNC_CAPTURE.  :raises: ORA-26665 (a capture of that name exists), ORA-24010
    (no queue), ORA-24141 (no rule set), ORA-01918 (no user), ORA-00942 (a table its rules
    name does not exist), ORA-26667 (a rule it cannot use, not a commit-time queue)."""
    ctx = CaptureContext(conn)
    ctx.check_streams_administrator()
    name = params.capture_name(capture_name)
    if find(ctx, name) is not None or ctx.get_object(PROCESS_KIND, OWNER, name) is not None:
        raise ora(26665, name)
    queue = params.capture_queue(ctx, queue_name)
    _commit_time(ctx, queue)
    positive = params.rule_set(ctx, rule_set_name)
    user = params.capture_user(ctx, capture_user)
    spec = SyncCaptureSpec(name, queue[0], queue[1], user, global_name(ctx), *positive)
    ctx.ddl_commit()
    spec.tables = _install(ctx, spec, positive)
    try:
        params.secure_queue_user(conn, ctx, name, user, queue)
        _save(ctx, spec, replace=False)
    except BaseException:
        _remove_all(ctx, spec)
        raise
    return spec


def alter_sync_capture(conn: "Connection", capture_name: Any, rule_set_name: Any = None,
                       capture_user: Any = None) -> SyncCaptureSpec:
    """ALTER_SYNC_CAPTURE: another rule set (its tables are captured from now on, the
    others no longer) or another capture user."""
    ctx = CaptureContext(conn)
    ctx.check_streams_administrator()
    spec = load(ctx, params.capture_name(capture_name))
    positive = params.rule_set(ctx, rule_set_name) if rule_set_name is not None else \
        (spec.rule_set_owner, spec.rule_set_name)
    user = params.capture_user(ctx, capture_user) if capture_user is not None else spec.capture_user
    ctx.ddl_commit()
    changed = dataclasses.replace(spec, rule_set_owner=positive[0], rule_set_name=positive[1],
                                  capture_user=user)
    changed.tables = _install(ctx, changed, positive)
    if user != spec.capture_user:
        params.secure_queue_user(conn, ctx, spec.name, user, (spec.queue_owner, spec.queue_name))
    _save(ctx, changed)
    return changed


def drop_sync_capture(conn: "Connection", capture_name: Any, drop_unused_rule_sets: bool = False) -> None:
    """DROP_CAPTURE of a synchronous capture: its triggers go; with ``drop_unused_rule_sets``
    its rule set (and rules) too when no other capture uses it."""
    ctx = CaptureContext(conn)
    ctx.check_streams_administrator()
    spec = load(ctx, params.capture_name(capture_name))
    ctx.ddl_commit()
    _remove_all(ctx, spec)
    ctx.drop_object(KIND, OWNER, spec.name)
    if drop_unused_rule_sets and spec.rule_set_name is not None:
        used = {(s.get("rule_set_owner"), s.get("rule_set_name")) for _, _, s in ctx.objects(KIND)} | \
               {(s.get(k + "_owner"), s.get(k + "_name")) for _, _, s in ctx.objects(PROCESS_KIND)
                for k in ("rule_set", "negative_rule_set")}
        key = (spec.rule_set_owner, spec.rule_set_name)
        if key not in used and ctx.rule_set_exists(*key):
            conn.rule_adm.drop_rule_set(rule_set_name=f'"{key[0]}"."{key[1]}"', delete_rules=True)


def sync_capture_for_rules(conn: "Connection", capture_name: str, queue_name: str,
                           table_owner: str, table_name: str) -> SyncCaptureSpec:
    """For DBMS_STREAMS_ADM.ADD_TABLE_RULES / ADD_SUBSET_RULES with ``streams_type =>
    'sync_capture'``: the synchronous capture ``capture_name``, created on ``queue_name``
    (without a rule set) when it does not exist, as Oracle does, after checking that the
    table exists.  The caller then adds its rules and attaches the rule set with
    ``conn.capture_adm.alter_sync_capture(capture_name, rule_set_name=…)``, which captures
    the table.  ``table_owner`` / ``table_name`` are the names as the rules will carry them.  :raises: ORA-00942 (no such table), ORA-26667 (it exists with another
    queue), ORA-26665 (a capture process has that name)."""
    ctx = CaptureContext(conn)
    name = params.capture_name(capture_name)
    # the names as rules carry them (canonical: 'HR', 'EMPLOYEES'); a table_name that still
    # holds its owner ('hr.employees') is resolved as a SQL name would be
    owner, tname = (table_owner, table_name) if table_owner else \
        split_qualified(table_name, ctx.username, "table name")
    with _database(ctx) as db:
        _find_table(ctx, db, owner, tname)
    found = find(ctx, name)
    if found is None:
        return create_sync_capture(conn, queue_name=queue_name, capture_name=f'"{name}"')
    q_owner, q_name = split_qualified(queue_name, ctx.username, "queue name")
    if (q_owner, q_name) != (found.queue_owner, found.queue_name):
        raise ora(26667, f"queue_name {queue_name!r}: synchronous capture {name} uses "
                         f"{found.queue_owner}.{found.queue_name}")
    return found


def check_rule_set_change(conn: "Connection", rule_set: str, rules: list[tuple[str, str]]) -> None:
    """Before DBMS_RULE_ADM changes the rules of ``rule_set`` (``OWNER.NAME``) to
    ``rules``: refuse (ORA-26667, ORA-00942) what a synchronous capture using it could not
    capture, so that the change is not made."""
    ctx = CaptureContext(conn)
    for spec in _using(ctx, rule_set):
        _plan(ctx, spec, [(name, condition, None) for name, condition in rules])


def _using(ctx: CaptureContext, rule_set: str) -> list[SyncCaptureSpec]:
    """The synchronous captures whose rule set is ``rule_set`` (``OWNER.NAME``)."""
    specs = [SyncCaptureSpec.from_spec(n, s) for o, n, s in ctx.objects(KIND) if o == OWNER]
    return [s for s in specs if f"{s.rule_set_owner}.{s.rule_set_name}" == rule_set]


def refresh_rule_set(conn: "Connection", rule_set: str) -> None:
    """After DBMS_RULE_ADM changed the rules of ``rule_set`` (``OWNER.NAME``): every
    synchronous capture using it captures the tables its rules now name."""
    ctx = CaptureContext(conn)
    for spec in _using(ctx, rule_set):
        spec.tables = _install(ctx, spec, (spec.rule_set_owner, spec.rule_set_name))
        _save(ctx, spec)


def prepare_sync_instantiation(conn: "Connection", table_names: Any) -> int:
    """PREPARE_SYNC_INSTANTIATION: the SCN to instantiate the tables ``table_names`` (a
    comma-separated list, or a list) at: every change committed after the call carries a
    greater SCN.  :raises: ORA-00942 (no such table)."""
    ctx = CaptureContext(conn)
    ctx.check_streams_administrator()
    names = name_list(table_names, "table_names")
    with _database(ctx) as db:
        for item in names:
            owner, name = split_qualified(item, ctx.username, "table name")
            _find_table(ctx, db, owner, name)
        return db.execute("SELECT SCN FROM SLUICE_SCN WHERE ID = 1").fetchone()[0]
