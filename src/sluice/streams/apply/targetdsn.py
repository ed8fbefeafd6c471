"""Which database an apply process applies to.

**Which database.**  ``apply_database_link`` names it: a database link (CREATE DATABASE LINK
dbs2.net … USING 'postgresql://…'; DESIGN.md section 7: a link names another site by DSN), or
the DSN itself: ``postgresql://…[?schema=s]`` or ``sqlite:///path``.  Without
one, an apply process on a PostgreSQL store applies to the store's own database and an
apply process on an SQLite store to the store's own file.
"""

from __future__ import annotations

from typing import Any

from ...errors import not_supported, ora
from ...store.pgconn import parse_dsn
from ..propagation.links import link_name, resolve_link
from .pgtarget import PgTarget
from .sqlitetarget import SqliteTarget
from .target import Target


def is_dsn(link: str) -> bool:
    return link.startswith(("sqlite:///", "postgresql://", "postgres://"))


def check_link(link: str) -> str:
    """``apply_database_link`` as the catalog keeps it: a DSN as it is, a database link's
    name (CREATE DATABASE LINK) canonical.  :raises: ORA-12154 for neither."""
    if isinstance(link, str) and is_dsn(link):
        return link
    try:
        return link_name(link)
    except Exception:
        raise ora(12154, f"{str(link).split('@')[-1]} (an apply database link is a database link's name "
                         f"or a DSN: sqlite:///file.db or postgresql://…)") from None


def link_dsn(store: Any, user: str, link: str) -> str:
    """The DSN an apply database link leads to.  :raises: ORA-02019 (no such database link),
    SLU-00001 (a link to an HTTP servlet: an apply process needs the database itself)."""
    if is_dsn(link):
        return link
    found = resolve_link(store, user, link)
    if found.is_http or not is_dsn(found.endpoint):
        raise not_supported(f"applying through database link {found.name} to {found.endpoint} "
                            f"(an apply process writes to the database itself: the link's USING "
                            f"must be a sqlite:/// or postgresql:// DSN)")
    return found.endpoint


def open_target(link: str | None, store_dialect: str, store_pg: tuple[str, str] | None,
                store_path: str | None, create: bool = True) -> Target:
    """The target named by ``apply_database_link`` (see the module's docstring);
    ``create=False``: an SQLite file that is not there is ORA-27041, not made."""
    if link:
        if link.startswith("sqlite:///"):
            return SqliteTarget(link[len("sqlite:///"):], create)
        if link.startswith(("postgresql://", "postgres://")):
            t = parse_dsn(link)
            return PgTarget(t.conninfo, t.schema, t.display)
        raise ora(12154, f"{link.split('@')[-1]} (a DSN: sqlite:///file.db or postgresql://…)")
    if store_pg is not None:
        return PgTarget(store_pg[0], store_pg[1], "the store's database")
    if store_path:
        return SqliteTarget(store_path)
    raise not_supported("an apply process without a target database")
