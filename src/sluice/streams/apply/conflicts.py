"""Update conflict handlers: SET_UPDATE_CONFLICT_HANDLER's prebuilt methods.

An update conflict: the row with the LCR's key exists, but some of its current values
differ from the LCR's old values.  Each column group (a ``column_list`` with its
``resolution_column`` and ``method_name``) that holds a differing column decides for all of
its columns:

* ``OVERWRITE``: the LCR's new values replace the current ones;
* ``DISCARD``: the current values stay, the LCR's new values for the group are dropped;
* ``MAXIMUM``: the LCR wins when its new value of the resolution column is greater than or
  equal to the current one (a current NULL loses, a new NULL loses), else the current
  values stay;
* ``MINIMUM``: the same with less than or equal.

A differing column in no group leaves the conflict unresolved (ORA-26786).  Columns of
groups without a conflict, and columns in no group, take the LCR's new values.
"""

from __future__ import annotations

from typing import Any

from .settings import ConflictGroup

__all__ = ["resolve_update"]


def _lcr_wins(group: ConflictGroup, current: dict[str, Any], new: dict[str, Any],
              old: dict[str, Any]) -> bool:
    method = group.method
    if method == "OVERWRITE":
        return True
    if method == "DISCARD":
        return False
    res = group.resolution_column
    mine = new[res] if res in new else old.get(res)
    theirs = current.get(res)
    if mine is None:
        return False
    if theirs is None:
        return True
    try:
        return mine >= theirs if method == "MAXIMUM" else mine <= theirs
    except TypeError:              # e.g. a datetime against a date read back
        return str(mine) >= str(theirs) if method == "MAXIMUM" else str(mine) <= str(theirs)


def resolve_update(differing: list[str], groups: list[ConflictGroup], current: dict[str, Any],
                   new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any] | None:
    """The columns to set (column -> value) after resolving, None when unresolved."""
    losing: set[str] = set()
    for column in differing:
        group = next((g for g in groups if column in g.columns), None)
        if group is None:
            return None
        if not _lcr_wins(group, current, new, old):
            losing |= group.columns
    return {c: v for c, v in new.items() if c not in losing}
