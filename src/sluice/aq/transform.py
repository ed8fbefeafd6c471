"""``DBMS_TRANSFORM``: message transformations (seed 003 "Message Format Transformation").

Oracle represents a transformation by a SQL function of the source payload
(``transformation => 'scott.to_order_v2(source.user_data)'``).  Sluice has no
PL/SQL functions, so the function is a Python callable registered under the
name the transformation text uses::

    sluice.register_function("scott.to_order_v2", lambda order: ...)

A transformation applies at enqueue (``enqoptions.transformation``) and at
dequeue (``deqoptions.transformation``); the result must be a payload of the
transformation's target type (checked when it is enqueued).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from ..errors import ora
from ..names import split_qualified
from ..routines import registered_function

if TYPE_CHECKING:
    from ..connection import Connection

_CALL = re.compile(r"^\s*([A-Za-z\"][\w$#.\"]*)\s*\(\s*source\s*\.\s*user_data\s*\)\s*$", re.I)


def compile_transformation(spec: dict) -> Callable[[Any], Any]:
    """The callable a stored transformation spec stands for."""
    text = spec.get("function")
    if not text:
        raise ora(24185, spec.get("owner", "?"), spec.get("name", "?"))
    m = _CALL.match(text)
    fname = m.group(1) if m else text.strip()
    fn = registered_function(fname, spec.get("owner", "SLUICE"))

    def apply(payload: Any) -> Any:
        try:
            return fn(payload)
        except Exception as e:  # the application's function failed
            raise ora(25229, spec.get("owner"), spec.get("name"), e) from e
    return apply


class DbmsTransform:
    """The DBMS_TRANSFORM package for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._session_ctx = conn.context

    def create_transformation(self, schema: str, name: str, from_schema: str, from_type: str,
                              to_schema: str, to_type: str, transformation: str | None = None) -> None:
        owner, tname = split_qualified(f"{schema}.{name}" if schema else name,
                                       self._session_ctx.username)
        self._session_ctx.authz.check_admin(owner, "DBMS_TRANSFORM")
        src = self._type_name(from_schema, from_type)
        dst = self._type_name(to_schema, to_type)
        spec = {"owner": owner, "name": tname, "from_type": src, "to_type": dst,
                "function": transformation}
        if transformation:
            compile_transformation(spec)  # the function must exist now
        self._session_ctx.ddl_commit()
        try:
            self._session_ctx.store.put_catalog_object("TRANSFORMATION", owner, tname, spec,
                                                       replace=False)
        except Exception as e:
            if getattr(e, "code", None) == 955:
                raise ora(24184, owner, tname) from None
            raise
        self._session_ctx.catalog.refresh(force=True)

    def modify_transformation(self, schema: str, name: str, attribute_number: int,
                              transformation: str) -> None:
        owner, tname = split_qualified(f"{schema}.{name}" if schema else name,
                                       self._session_ctx.username)
        self._session_ctx.authz.check_admin(owner, "DBMS_TRANSFORM")
        spec = self._session_ctx.catalog.transformation(f"{owner}.{tname}")
        spec = dict(spec, function=transformation)
        compile_transformation(spec)
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object("TRANSFORMATION", owner, tname, spec, replace=True)
        self._session_ctx.catalog.refresh(force=True)

    def drop_transformation(self, schema: str, name: str) -> None:
        owner, tname = split_qualified(f"{schema}.{name}" if schema else name,
                                       self._session_ctx.username)
        self._session_ctx.authz.check_admin(owner, "DBMS_TRANSFORM")
        self._session_ctx.ddl_commit()
        if not self._session_ctx.store.drop_catalog_object("TRANSFORMATION", owner, tname):
            raise ora(24185, owner, tname)
        self._session_ctx.catalog.refresh(force=True)

    def _type_name(self, schema: str | None, type_name: str) -> str:
        text = type_name if not schema else f"{schema}.{type_name}"
        simple = {"RAW": "RAW", "JSON": "JSON", "XMLTYPE": "XMLTYPE", "ANYDATA": "SYS.ANYDATA"}
        upper = str(type_name).strip().upper()
        if upper in simple and (not schema or schema.strip().upper() == "SYS"):
            return simple[upper]
        return self._session_ctx.catalog.type_named(text).qualified_name
