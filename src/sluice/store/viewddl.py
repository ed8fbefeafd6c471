"""Oracle's views typed at a cursor: ``CREATE [OR REPLACE] [FORCE | NOFORCE] VIEW
[schema.]name [(alias, …)] AS subquery [WITH READ ONLY | WITH CHECK OPTION]``, ``DROP VIEW``.

**What a view is here.**  Two things, as in Oracle: its definition -- the catalog's record
(kind VIEW: owner, Oracle's name, the subquery's Oracle text, its columns, its options),
which USER_VIEWS shows (:mod:`.dictviews`) -- and its compiled form: a real view of the
store's database whose text is the subquery translated once for the store
(``StoreSession.store_sql``: Oracle's functions, dates, names as the cursor's SQL has
them), made in the store's schema (the SQLite file, PostgreSQL's store schema) as a table
made at a cursor is.  Queries, ``cursor.description`` and DML then see it as the database
does a table: the database plans it with the statement, SQLite's view columns keep their
tables' declared types (:mod:`.usercolumns` reads views too), PostgreSQL updates a simple
view itself.  (The other choice -- the subquery put in place of the view's name in each
statement -- would translate it per statement and could take no DML.)  What a view cannot
hold is refused (SLU-00001): the session's words (USER, SYSDATE, ``seq.NEXTVAL`` … --
a translation folds them into the statement's values) and the dictionary views Sluice
rewrites per statement.  CREATE VIEW runs its subquery once, through the cursor, for its
columns' names (Oracle's headings: an expression needs an alias, ORA-00998).

**Valid or not.**  A view is VALID while its compiled form exists.  A table's DROP or
ALTER (:func:`.tableddl.before_table_change`), a view's DROP or its replacement drop the
compiled forms of the views over it (the names its subquery reads are recorded), and of
the views over those; a FORCE view over what is missing has none.  A statement naming a
view without one compiles it first (:func:`views_in_use`), as Oracle recompiles an invalid
view on use; when that fails: ORA-04063 "view … has errors".  (SQLite compiles it on the
session's own connection -- the file's one writer may be that session -- so while another
session holds the write lock it waits for it: ORA-00054 after SQLite's busy timeout.)

**DML.**  PostgreSQL updates a simple view (one table, plain columns) and checks WITH
CHECK OPTION (ORA-01402); SQLite updates no view, and PostgreSQL no other: ORA-01732.
WITH READ ONLY: INSTEAD OF triggers refuse every DML with ORA-42399.

**Privileges** as tables': CREATE VIEW in one's own schema, CREATE ANY VIEW in another's,
DROP ANY VIEW to drop another's (ORA-01031); ORA-00955 for a name in use in the schema's
namespace (:mod:`.namespace`), ORA-00942 for DROP VIEW of what is no view.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Callable, Collection

from ..errors import DatabaseError, not_supported, ora
from . import namespace, sqlcatalog
from .dictviews import REWRITTEN
from .sqloracle import tokens
from .tabledefs import Reader
from .tableddl import (_Db, _Names, _ddl, _described_type, _free, _physical, _plain_name, _quote, _transaction,
                       before_table_change)
from .usercolumns import VIEW_TYPES, table_names

__all__ = ["VIEW", "VIEW_DDL", "is_view_ddl", "named_in", "view_ddl", "views_in_use"]

VIEW = namespace.VIEW
VIEW_DDL = frozenset({"CREATE VIEW", "DROP VIEW"})
# what a translation answers once per statement: a view of it would keep one statement's answer
_FROZEN = frozenset({"USER", "UID", "SYSDATE", "SYSTIMESTAMP", "CURRENT_DATE", "CURRENT_TIMESTAMP",
                     "LOCALTIMESTAMP", "SYS_CONTEXT", "USERENV", "SESSIONTIMEZONE", "NEXTVAL", "CURRVAL"})
_READ_ONLY = "ORA-42399: cannot perform a DML operation on a read-only view"
_PG_READ_ONLY = "sluice_read_only_view"     # PostgreSQL: the trigger function, in the view's schema


def is_view_ddl(kind: str) -> bool:
    """Whether the statement of ``kind`` (``CREATE VIEW`` …) is this module's."""
    return kind in VIEW_DDL


def view_ddl(kind: str, text: str, user: str, store: Any, session: Any, may: Callable[[str], bool],
             commit: Callable[[], None], query: Callable[[str], tuple[list, list]]) -> int:
    """Run the view DDL ``text`` as ``user`` on ``store`` (``session``: the user's, which
    translates the subquery); ``may``, ``commit`` and ``query`` as
    :func:`.tableddl.table_ddl`'s.  Returns 0."""
    r = Reader(text)
    if kind == "DROP VIEW":
        return _drop_view(r, user, store, may, commit)
    r.expect("CREATE")
    replace = r.accept("OR", "REPLACE")
    force = r.accept("FORCE")
    if not force:
        r.accept("NOFORCE")
    r.accept("EDITIONABLE") or r.accept("NONEDITIONABLE")
    r.expect("VIEW")
    schema, name = r.qualified()
    owner = schema or user
    aliases = r.columns() if r.word() == "(" else None
    r.expect("AS")
    subquery, read_only, check = _subquery(r)
    toks = tokens(subquery)
    for t in toks:
        word = t.word.rpartition(".")[2]
        if word in _FROZEN or word in REWRITTEN:
            raise not_supported(f"{word} in a view (Sluice translates a view's query once)")
    _allowed(may, user, owner, "CREATE_VIEW", "CREATE_ANY_VIEW")
    commit()
    spec = {"text": subquery, "aliases": aliases, "read_only": read_only, "check": check,
            "tables": table_names(toks), "created": dt.datetime.now().isoformat(sep=" ", timespec="seconds")}
    try:
        body = _translated(session, subquery)
        spec = _typed(spec, query(subquery))
    except DatabaseError:
        if not force:
            raise
        body = None       # created with errors: no compiled form (ORA-04063 when used)
    names = _Names(store, user)
    names.homes.add(owner)

    def create(db: _Db) -> None:
        old = _recorded(db, owner, name)
        if old is None or not replace:
            _free(db, store, owner, name)
        else:
            _invalidate(db, name, dropping=True)
        if body is not None:
            _compile(db.run, db, name, body, spec)
        sqlcatalog.put_object(db.conn, VIEW, owner, name, spec, True)
    return _ddl(store, names, create)


def _subquery(r: Reader) -> tuple[str, bool, bool]:
    """The subquery's text and its WITH READ ONLY / WITH CHECK OPTION (either with a
    CONSTRAINT name, kept by no one)."""
    first, depth, cut = r.i, 0, None
    for k in range(first, len(r.toks)):
        t = r.toks[k]
        depth += (t.text == "(") - (t.text == ")")
        if depth == 0 and k > first and t.word == "WITH" and r.word(k + 1 - r.i) in ("READ", "CHECK"):
            cut = k
    if r.at_end() or r.word() not in ("SELECT", "WITH", "("):
        raise ora(928)
    end = r.toks[cut - 1].end if cut is not None else r.toks[-1].end
    text = r.text[r.toks[first].start:end]
    read_only = check = False
    if cut is not None:
        r.i = cut + 1
        if r.accept("READ", "ONLY"):
            read_only = True
        else:
            r.expect("CHECK", "OPTION")
            check = True
        if r.accept("CONSTRAINT"):
            r.column()
        r.end()
    return text, read_only, check


def _allowed(may: Callable[[str], bool], user: str, owner: str, own: str | None, any_: str) -> None:
    """ORA-01031 unless the user may: in its own schema ``own`` (None: nothing needed) or
    ``any_``, in another's ``any_``."""
    if owner == user and (own is None or may(own)):
        return
    if not may(any_):
        raise ora(1031)


def _translated(session: Any, subquery: str) -> str:
    """The subquery as the store's SQL; SLU-00001 when its translation folded values in."""
    body, translated = session.store_sql(subquery)
    if translated.dates or translated.binds:
        raise not_supported("a view whose query the store answers with values of one statement")
    return body


def _typed(spec: dict, result: tuple[Any, list]) -> dict:
    """``spec`` with the view's column names (:func:`_columns`) and their Oracle types, from
    the description of its query's result (SQLite keeps them in the view's text:
    :func:`.usercolumns.view_types`)."""
    description = getattr(result[0], "description", None) or []
    types = [_described_type(d).sqlite if d[1] is not None else "" for d in description]
    return {**spec, "columns": _columns(result, spec.get("aliases")), "types": types}


def _columns(result: tuple[Any, list], aliases: list[str] | None) -> list[str]:
    """The view's column names: the aliases, else Oracle's headings of its query."""
    headings = [str(h) for h in result[0]]
    if aliases is not None and len(aliases) != len(headings):
        raise ora(1730)
    names = aliases or headings
    if aliases is None:
        for h in headings:       # (a quoted alias is any text; an unquoted heading a name)
            if h == h.upper() and not _plain_name(h):
                raise ora(998)
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ora(957, n)
        seen.add(n)
    return names


def _recorded(db: _Db, owner: str, name: str) -> dict | None:
    return next((spec for o, n, spec in sqlcatalog.objects(db.conn, VIEW) if o == owner and n == name), None)


def _view_name(db: Any, name: str) -> str:
    """The compiled form's name in statements (the store's schema)."""
    q = _quote(_physical(name))
    return f"{_quote(db.home)}.{q}" if db.pg else q


def _compile(run: Callable[[str], Any], db: Any, name: str, body: str, spec: dict) -> None:
    """The view's compiled form made by ``run``; ``db`` says the store (``pg``, ``home``)."""
    view = _view_name(db, name)
    cols = ", ".join(_quote(_physical(c)) for c in spec["columns"])
    kept = "" if db.pg or not spec.get("types") else f"{VIEW_TYPES}{json.dumps(spec['types'])} */ "
    create = f"CREATE VIEW {'' if db.pg else 'IF NOT EXISTS '}{view} ({cols}) AS {kept}{body}"
    if db.pg and spec.get("check"):
        _pg_checked(run, create)
    else:
        run(create)
    if not spec.get("read_only"):
        return
    if db.pg:
        function = f"{_quote(db.home)}.{_PG_READ_ONLY}"
        run(f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$BEGIN RAISE EXCEPTION '{_READ_ONLY}'; END$$")
        run(f"CREATE TRIGGER {_quote(_physical(name) + '$read_only')} INSTEAD OF INSERT OR UPDATE OR DELETE "
            f"ON {view} FOR EACH ROW EXECUTE FUNCTION {function}()")
        return
    for event in ("INSERT", "UPDATE", "DELETE"):
        run(f"CREATE TRIGGER IF NOT EXISTS {_quote(_physical(name) + '$read_only_' + event.lower())} "
            f"INSTEAD OF {event} ON {view} BEGIN SELECT RAISE(ABORT, '{_READ_ONLY}'); END")


def _pg_checked(run: Callable[[str], Any], create: str) -> None:
    """PostgreSQL: WITH CHECK OPTION on a view it updates; a view it cannot update takes no
    DML at all (ORA-01732), so none is needed there."""
    import psycopg
    run("SAVEPOINT sluice_view")
    try:
        run(create + " WITH CASCADED CHECK OPTION")
    except psycopg.errors.FeatureNotSupported:
        run("ROLLBACK TO SAVEPOINT sluice_view")
        run(create)
    run("RELEASE SAVEPOINT sluice_view")


def _invalidate(db: _Db, changed: str, dropping: bool = False) -> None:
    """The compiled forms of the views over the table or view ``changed`` (physical or
    Oracle's name) dropped, and of the views over those; ``dropping``: ``changed`` is a
    view whose own goes too."""
    views = sqlcatalog.objects(db.conn, VIEW)
    todo, gone = [changed.upper()], {changed.upper(): changed} if dropping else {}
    while todo:
        read = todo.pop()
        for _, name, spec in views:
            if name.upper() not in gone and read in spec.get("tables", ()):
                gone[name.upper()] = name
                todo.append(name.upper())
    for name in gone.values():
        db.run(f"DROP VIEW IF EXISTS {_view_name(db, name)}" + (" CASCADE" if db.pg else ""))


before_table_change(lambda db, physical: _invalidate(db, physical))


def _drop_view(r: Reader, user: str, store: Any, may: Callable[[str], bool], commit: Callable[[], None]) -> int:
    r.expect("DROP")
    r.expect("VIEW")
    schema, name = r.qualified(942)
    r.accept("CASCADE", "CONSTRAINTS")
    r.end()
    owner = schema or user
    _allowed(may, user, owner, None, "DROP_ANY_VIEW")
    commit()

    def drop(db: _Db) -> None:
        if _recorded(db, owner, name) is None:
            raise ora(942)
        _invalidate(db, name, dropping=True)
        sqlcatalog.drop_object(db.conn, VIEW, owner, name)
    return _ddl(store, _Names(store, user), drop)


# -- a view in a statement ------------------------------------------------------------------
def views_in_use(store: Any, session: Any, user: str, sql: str, query: Callable[[str], tuple[list, list]]) -> None:
    """Before ``sql`` runs: each view it names that has no compiled form compiled (Oracle's
    recompilation on use), ORA-04063 when it cannot be.  Costs a look at the catalog's
    version unless views exist and ``sql`` names one."""
    known = _known(store)
    for upper in named_in(sql, known):
        for owner, name, spec in known[upper]:
            if not _compiled(store, session, name):
                _recompile(store, session, user, owner, name, spec, query)


def named_in(sql: str, known: Collection[str]) -> list[str]:
    """The names of ``known`` (Oracle's, upper-case) that ``sql`` names as a table (after
    FROM, JOIN, INTO, UPDATE: :func:`.usercolumns.table_names`); its tokens are read only
    when its text holds one of them."""
    if not known:
        return []
    upper = sql.upper()
    if not any(name in upper for name in known):
        return []
    return [name for name in table_names(tokens(sql)) if name in known]


def _known(store: Any) -> dict[str, list[tuple[str, str, dict]]]:
    """Oracle's name upper-cased (as :func:`.usercolumns.table_names` gives a statement's)
    -> (owner, Oracle's name, spec) of every view, kept until the catalog changes."""
    version = store.catalog_version()
    kept = getattr(store, "views_kept", None)
    if kept is None or kept[0] != version:
        found: dict[str, list[tuple[str, str, dict]]] = {}
        for owner, name, spec in store.catalog_objects(VIEW):
            found.setdefault(name.upper(), []).append((owner, name, spec))
        kept = store.views_kept = (version, found, set())
    return kept[1]


def _compiled(store: Any, session: Any, name: str) -> bool:
    """Whether the view ``name`` has its compiled form (PostgreSQL: kept as known until the
    catalog changes; SQLite reads its own schema, which a rolled-back compilation leaves)."""
    physical = _physical(name).replace("'", "''")
    if getattr(store, "target", None) is None:
        return bool(session.run_own(f"SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = '{physical}'"))
    seen = store.views_kept[2]
    if name not in seen and store.pool.run(lambda c: c.execute(
            "SELECT to_regclass(?)::text", (f'"{store.target.schema}"."{_physical(name)}"',)).fetchall()[0][0],
            transaction=False) is not None:
        seen.add(name)
    return name in seen


def _recompile(store: Any, session: Any, user: str, owner: str, name: str, spec: dict,
               query: Callable[[str], tuple[list, list]]) -> None:
    try:
        body = _translated(session, spec["text"])
        spec = _typed(spec, query(spec["text"]))
        names = _Names(store, user)
        names.homes.add(owner)
        if getattr(store, "target", None) is None:
            _compile(session.run_own, _Db(store, names, None), name, body, spec)
        else:
            def compile_(db: _Db) -> None:
                _compile(db.run, db, name, body, spec)
                sqlcatalog.put_object(db.conn, VIEW, owner, name, spec, True)
            _transaction(store, names, compile_)
    except DatabaseError as e:
        if e.code == 54:    # SQLite: another session holds the file's write lock (see the module)
            raise
        raise ora(4063, f'view "{owner}.{name}"') from None
