"""An in-memory type registry and the ``conn.gettype`` name lookup.

Re-exported by :mod:`sluice.objtypes`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import ora
from ..names import split_qualified
from .builtin import builtin_types
from .dbobject import DbObjectType, TypeRegistry, build_collection_type, build_object_type


class SimpleTypeRegistry:
    """An in-memory :class:`TypeRegistry` (tests, the builtin SYS types)."""

    def __init__(self, types: Iterable[DbObjectType] = (), *, builtins: bool = True) -> None:
        self._types: dict[str, DbObjectType] = {}
        if builtins:
            self._types.update(builtin_types())
        for t in types:
            self.add(t)

    def get_type(self, qualified_name: str) -> DbObjectType | None:
        found = self._types.get(qualified_name)
        if found is None and isinstance(qualified_name, str) and "." in qualified_name:
            try:  # tolerate "scott.book_t"
                found = self._types.get(".".join(split_qualified(qualified_name, "")))
            except Exception:
                return None
        return found

    def add(self, objtype: DbObjectType, *, replace: bool = False) -> DbObjectType:
        """Register ``objtype``; ORA-00955 when the name is taken and not ``replace``."""
        if objtype.qualified_name in self._types and not replace:
            raise ora(955)
        self._types[objtype.qualified_name] = objtype
        return objtype

    def drop(self, qualified_name: str) -> None:
        if self._types.pop(qualified_name, None) is None:
            raise ora(4043, qualified_name)

    def create_object_type(self, schema: str, name: str, attributes: Iterable[tuple[str, str]],
                           *, replace: bool = False) -> DbObjectType:
        return self.add(build_object_type(schema, name, attributes, self), replace=replace)

    def create_collection_type(self, schema: str, name: str, kind: str, element_type_text: str,
                               max_size: int | None = None, *, replace: bool = False) -> DbObjectType:
        return self.add(build_collection_type(schema, name, kind, element_type_text, max_size, self),
                        replace=replace)

    def __contains__(self, qualified_name: object) -> bool:
        return qualified_name in self._types

    def __iter__(self) -> Iterator[DbObjectType]:
        return iter(list(self._types.values()))

    def __len__(self) -> int:
        return len(self._types)


def resolve_type(registry: TypeRegistry, name: str | DbObjectType, default_schema: str) -> DbObjectType:
    """The type ``name`` denotes for a session in ``default_schema`` (``conn.gettype``).

    :raises DatabaseError: ORA-04043 when there is no such type.
    """
    if isinstance(name, DbObjectType):
        return name
    schema, obj = split_qualified(name, default_schema, "type name")
    candidates = [f"{schema}.{obj}"] if "." in name else [f"{schema}.{obj}", f"SYS.{obj}"]
    for candidate in candidates:
        found = registry.get_type(candidate)
        if found is not None:
            return found
    raise ora(4043, candidates[0])
