"""Stored packages in the catalog: what ``CREATE [OR REPLACE] PACKAGE [BODY]`` keeps and
``DROP PACKAGE [BODY]`` removes, and the packages a block may use (the connection's
``create_package``, ``drop_package`` and -- for a name that is no built-in DBMS_* package --
``package`` hooks; :mod:`sluice.plsql.packages` runs them).

A spec and a body are objects of the store's generic catalog (``put_catalog_object``, no
schema change) of kinds ``PACKAGE`` and ``PACKAGE BODY``, owner the schema, name the
package's; their spec ``{"source", "status", "errors", "created", "last_ddl"}`` as a stored
unit's (:mod:`sluice.storedunits`, whose rules they follow: created with compilation errors,
a user's own schema, EXECUTE privilege on ``OWNER.NAME``, definer's rights).  The spec's name
is in the schema's namespace (ORA-00955 against a table, a procedure …); the body's is its
own.  DROP PACKAGE drops the body and the EXECUTE grants too; DROP PACKAGE BODY the body.

Each session keeps its own instances of the packages it used (``_states_of``, by
connection), for as long as it is open.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from . import storedunits
from .errors import ora
from .plsql.packages import StoredPackage
from .security.authorize import Authorizer
from .store import namespace

if TYPE_CHECKING:
    from .connection import Connection

SPEC, BODY = namespace.PACKAGE, namespace.PACKAGE_BODY
# per store: (catalog version, {(owner, name): {kind: spec}}) -- read once per catalog change
_packages_of: "weakref.WeakKeyDictionary[Any, tuple[int, dict]]" = weakref.WeakKeyDictionary()
# per session: {OWNER.NAME: PackageState}
_states_of: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def _packages(store: Any) -> dict[tuple[str, str], dict[str, dict]]:
    version = store.catalog_version()
    cached = _packages_of.get(store)
    if cached is None or cached[0] != version:
        found: dict[tuple[str, str], dict[str, dict]] = {}
        for kind, rows in store.catalog_objects_of((SPEC, BODY)).items():
            for owner, name, spec in rows:
                found.setdefault((owner, name), {})[kind] = spec
        cached = _packages_of[store] = (version, found)
    return cached[1]


def find_package(conn: "Connection", name: str, definer: str | None = None) -> StoredPackage | None:
    """The package ``name`` names for this session -- or, inside a unit of ``definer``, for
    that unit (its schema's, its owner's privileges: definer's rights) --, None when there is
    none it may execute (a body without its spec is none)."""
    ctx = conn.context
    owner, package = storedunits.split_name(name, definer or ctx.username)
    found = _packages(ctx.store).get((owner, package), {})
    authz = ctx.authz if definer is None else Authorizer(ctx.security, definer, roles=False)
    if SPEC not in found or not authz.may_execute(f"{owner}.{package}"):
        return None
    spec, body = found[SPEC], found.get(BODY)
    stamp = (spec.get("last_ddl"), body.get("last_ddl") if body is not None else None)
    return StoredPackage(f"{owner}.{package}", spec["source"],
                         body["source"] if body is not None else None, stamp,
                         _states_of.setdefault(conn, {}))


def create_package(conn: "Connection", kind: str, name: str, spec: dict, or_replace: bool) -> None:
    """Store the spec or body (DDL: the open transaction is committed first)."""
    storedunits.create_unit(conn, kind, name, spec, or_replace, shared=kind == SPEC)


def drop_package(conn: "Connection", kind: str, name: str) -> None:
    """DROP PACKAGE (the body and the grants too) or PACKAGE BODY.  :raises: ORA-04043."""
    if kind == SPEC:
        storedunits.drop_unit(conn, SPEC, name)
    ctx = conn.context
    owner, package = storedunits.split_name(name, ctx.username)
    storedunits.own_schema(conn, owner)
    ctx.ddl_commit()
    if not ctx.store.drop_catalog_object(BODY, owner, package) and kind == BODY:
        raise ora(4043, name)
