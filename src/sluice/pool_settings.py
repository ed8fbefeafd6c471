"""A connection pool's settings (``min``, ``max``, ``getmode`` …): their defaults and the
checks python-oracledb makes of them, shared by ``create_pool()``, ``PoolParams``,
``pool.reconfigure()`` and the pool's settable attributes.

Every setting is checked, the whole set at once, before any is kept: a refused value
leaves the pool (or the ``PoolParams``) as it was.  As in python-oracledb, sizes and
times are unsigned 32-bit integers made with ``int()`` (so ``"3"`` is 3; ``1.5`` is 1,
as there), ``getmode`` is one of the ``POOL_GETMODE_*`` values (or its name) and
``homogeneous`` is a boolean (a string: ``on``/``yes``/``true``).  ``max`` must be at
least 1 — OCI's session pool refuses 0 (ORA-24413) — and at least ``min`` (DPY-2064).

python-oracledb bounds ``min`` by its 32-bit integers only; Oracle by its ``SESSIONS``
and ``PROCESSES`` parameters, PostgreSQL by ``max_connections`` (ORA-00020 when a pool
opens more).  A SQLite store has no such limit, so a huge ``min`` opens that many
sessions there as it asks.
"""

from __future__ import annotations

from typing import Any

from .errors import ArgumentError, dpy, ora

POOL_GETMODE_WAIT, POOL_GETMODE_NOWAIT, POOL_GETMODE_FORCEGET, POOL_GETMODE_TIMEDWAIT = 0, 1, 2, 3
_GETMODE_NAMES = {"WAIT": POOL_GETMODE_WAIT, "NOWAIT": POOL_GETMODE_NOWAIT,
                  "FORCEGET": POOL_GETMODE_FORCEGET, "TIMEDWAIT": POOL_GETMODE_TIMEDWAIT}
UINT32_MAX = 2 ** 32 - 1   # python-oracledb keeps the sizes and times in uint32_t

# python-oracledb's defaults (PoolParams())
DEFAULTS: dict[str, Any] = {
    "min": 1, "max": 2, "increment": 1, "getmode": POOL_GETMODE_WAIT, "homogeneous": True,
    "timeout": 0, "wait_timeout": 0, "max_lifetime_session": 0, "session_callback": None,
    "connectiontype": None,
}
_UINTS = ("min", "max", "increment", "timeout", "wait_timeout", "max_lifetime_session")


def check_pool_values(values: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``values`` (every setting, already checked) with the settings in ``given`` (None:
    unchanged) checked and put in; raises before anything is changed."""
    merged = dict(values)
    for name, value in given.items():
        if value is not None and name in DEFAULTS:
            merged[name] = _check(name, value)
    if merged["max"] < 1:
        raise ora(24413)
    if merged["max"] < merged["min"]:
        raise dpy(2064)
    return merged


def _check(name: str, value: Any) -> Any:
    if name in _UINTS:
        return _uint(name, value)
    if name == "getmode":
        return _getmode(value)
    if name == "homogeneous":   # python-oracledb's _set_bool_param
        return value.strip().lower() in ("on", "yes", "true") if isinstance(value, str) else bool(value)
    if name == "session_callback":
        if not callable(value):
            raise dpy(2027, f"session_callback must be callable, not {type(value).__name__}",
                      cls=ArgumentError)
        return value
    from .connection import Connection   # here: the connection module imports this one's users
    if not (isinstance(value, type) and issubclass(value, Connection)):   # connectiontype
        raise dpy(2023)
    return value


def _uint(name: str, value: Any) -> int:
    if not isinstance(value, (int, float, str)):
        raise dpy(2027, f"{name} must be an integer, not {type(value).__name__}", cls=ArgumentError)
    try:
        number = int(value)
    except (ValueError, OverflowError):   # "x", nan, inf
        number = -1
    if not 0 <= number <= UINT32_MAX:
        raise dpy(2027, f"{name} must be an integer from 0 to {UINT32_MAX}, not {value!r}")
    return number


def _getmode(value: Any) -> int:
    if isinstance(value, str) and not value.isdigit():
        mode = _GETMODE_NAMES.get(value.strip().upper())
    elif isinstance(value, (int, str)):
        mode = int(value)
    else:
        mode = None
    if mode not in _GETMODE_NAMES.values():
        raise dpy(4022, "PoolGetMode", value)
    return mode
