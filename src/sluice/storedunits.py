"""Stored procedures and functions in the catalog: what ``CREATE [OR REPLACE] PROCEDURE /
FUNCTION`` keeps and ``DROP PROCEDURE / FUNCTION`` removes, and the units a block may call
(the connection's ``create_unit``, ``drop_unit`` and ``procedure`` hooks of the statement
interpreter; :mod:`sluice.plsql.subprograms` runs them).

Each unit is one object of the store's generic catalog (``Store.put_catalog_object``), of
kind ``PROCEDURE`` or ``FUNCTION``, owner its schema, name its own; its spec:

==========  ===================================================================
source      its text from the word PROCEDURE / FUNCTION on (USER_SOURCE's)
params      ``[{"name", "mode": IN | OUT | IN OUT, "type", "default": bool}]``
            in order (``type`` None for a %TYPE anchor); ``[]`` if the header
            did not parse
returns     a function's return type, else None
status      ``VALID`` or ``INVALID`` (created with compilation errors)
errors      ``[{"line", "position", "text"}]`` (USER_ERRORS'), ``[]`` if VALID
created     seconds since the epoch of the first CREATE; ``last_ddl``: the latest
==========  ===================================================================

A unit's name is in its schema's one namespace (:mod:`sluice.store.namespace`): a table,
type, sequence or the other kind of unit by that name is ORA-00955, as is an existing unit
of the kind without OR REPLACE.  A user creates and drops units of its own schema; another
schema's takes a superuser (Sluice has no CREATE ANY PROCEDURE).  A unit may be called by
its owner, a superuser, a holder of EXECUTE ANY PROCEDURE, or a grantee of ``GRANT EXECUTE
ON owner.name`` (:meth:`Authorizer.may_execute`); to anyone else it is not there: PLS-00201,
as Oracle reports it.  Inside a unit, the units it names are looked up as its owner sees them
(unqualified: the owner's schema; the owner's privileges, no role's: definer's rights); its
static SQL and the packages it calls run with the caller's session.

A ``plsql://name`` notification registration (DBMS_AQ.REGISTER) whose name no Python function
is registered under (:func:`sluice.register_function` wins) calls the stored procedure
``name`` -- unqualified, of the registering user's schema -- with Oracle's arguments
(context RAW, reginfo SYS.AQ$_REG_INFO, descr SYS.AQ$_DESCRIPTOR, payload RAW, payloadl
NUMBER), in a session of that user of its own, committed after the call.  The dispatcher
has a store, not a connection: a connection opened on a store tells this module how to open
another session on it (:func:`opened`).
"""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any, Callable

from . import constants as C
from .aq.notify.registration import RegInfo
from .errors import ora
from .names import split_qualified
from .plsql.subprograms import StoredUnit
from .routines import find_stored_procedures
from .security.authorize import Authorizer
from .store import namespace

if TYPE_CHECKING:
    from .connection import Connection

KINDS = (namespace.PROCEDURE, namespace.FUNCTION)
# per store: (catalog version, {(owner, name): (kind, spec)}) -- read once per catalog change
_units_of: "weakref.WeakKeyDictionary[Any, tuple[int, dict]]" = weakref.WeakKeyDictionary()
# per store: how to open a session on it (opened(): a notification's procedure needs one)
_sessions_of: "weakref.WeakKeyDictionary[Any, Callable[[str, str], Any]]" = weakref.WeakKeyDictionary()


def _units(store: Any) -> dict[tuple[str, str], tuple[str, dict]]:
    version = store.catalog_version()
    cached = _units_of.get(store)
    if cached is None or cached[0] != version:
        rows = store.catalog_objects_of(KINDS)
        cached = (version, {(owner, name): (kind, spec) for kind in KINDS
                            for owner, name, spec in rows[kind]})
        _units_of[store] = cached
    return cached[1]


def split_name(name: str, schema: str) -> tuple[str, str]:
    """``'P1'`` / ``'SCOTT.P1'`` (canonical parts, as the interpreter names them)."""
    owner, _, unit = name.rpartition(".")
    return owner or schema, unit


def own_schema(conn: "Connection", owner: str) -> None:
    ctx = conn.context
    if owner != ctx.username and not ctx.authz.is_superuser():
        raise ora(1031)


def find_unit(conn: "Connection", name: str, definer: str | None = None) -> StoredUnit | None:
    """The unit ``name`` calls for this session -- or, inside a unit of ``definer``, for that
    unit: unqualified, of its schema; its owner's privileges, no role's (definer's rights) --
    None when there is none it may execute."""
    ctx = conn.context
    owner, unit = split_name(name, definer or ctx.username)
    found = _units(ctx.store).get((owner, unit))
    authz = ctx.authz if definer is None else Authorizer(ctx.security, definer, roles=False)
    if found is None or not authz.may_execute(f"{owner}.{unit}"):
        return None
    kind, spec = found
    return StoredUnit.from_source(f"{owner}.{unit}", kind, spec["source"])


def create_unit(conn: "Connection", kind: str, name: str, spec: dict, or_replace: bool,
                shared: bool = True) -> None:
    """Store the unit (DDL: the open transaction is committed first); ``shared``: its name
    is in the schema's namespace (a package body's is not: ``storedpackages``)."""
    ctx = conn.context
    owner, unit = split_name(name, ctx.username)
    own_schema(conn, owner)
    ctx.ddl_commit()
    if shared:
        namespace.check(ctx.store, owner, unit, (kind,))
    now = time.time()
    earlier = _units(ctx.store).get((owner, unit))
    created = earlier[1].get("created", now) if earlier is not None else now
    ctx.store.put_catalog_object(kind, owner, unit, {**spec, "created": created, "last_ddl": now},
                                 replace=or_replace)


def drop_unit(conn: "Connection", kind: str, name: str) -> None:
    """Drop the unit and the EXECUTE grants on it.  :raises: ORA-04043 when there is none."""
    ctx = conn.context
    owner, unit = split_name(name, ctx.username)
    own_schema(conn, owner)
    ctx.ddl_commit()
    if not ctx.store.drop_catalog_object(kind, owner, unit):
        raise ora(4043, name)
    for grantee, routine, _ in ctx.store.catalog_objects("EXECPRIV"):
        if routine == f"{owner}.{unit}":
            ctx.store.drop_catalog_object("EXECPRIV", grantee, routine)


def opened(store: Any, open_session: Callable[[str, str], Any]) -> None:
    """A connection opened ``store``: ``open_session(client, proxy)`` opens another session on
    it, as ``client`` (``proxy_connect`` of its DSN)."""
    _sessions_of[store] = open_session


def notification_procedure(store: Any, name: str, schema: str) -> Any:
    """The stored procedure ``name`` (resolved in ``schema``) of ``store`` as the Python
    callable the notification dispatcher calls, None when there is none."""
    owner, unit = split_qualified(name, schema, "procedure name")
    found = _units(store).get((owner, unit))
    open_session = _sessions_of.get(store)
    if found is None or found[0] != namespace.PROCEDURE or open_session is None:
        return None

    def call(context: Any, reginfo: dict, descr: dict, payload: Any, payloadl: int) -> None:
        conn = open_session(schema, "SYS")
        try:
            raw = bytes.fromhex(context) if isinstance(context, str) else context
            info = RegInfo(reginfo["name"], C.SUBSCR_NAMESPACE_AQ, f"plsql://{reginfo['location']}", raw,
                           reginfo.get("qos", 0), reginfo.get("timeout", 0))
            conn.cursor().callproc(f'"{owner}"."{unit}"', [raw, info, descr, payload, payloadl])
            conn.commit()
        finally:
            conn.close()
    return call


find_stored_procedures(notification_procedure)
