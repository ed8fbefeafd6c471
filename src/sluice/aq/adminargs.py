"""Argument checks shared by the DBMS_AQADM procedures (:mod:`.admin`, :mod:`.sharded`):
Oracle's errors for a wrong flag, number of seconds, retry count or comment."""

from __future__ import annotations

import math

from ..errors import ora
from ..model import check_flag as flag

__all__ = ["flag", "seconds", "retries", "comment_arg", "parse_sort_list", "MAX_SECONDS"]


# the longest retry delay or retention a queue takes (and the stores' views can show as dates)
MAX_SECONDS = 2**31 - 1


def seconds(name: str, value: object, code: int, allow_forever: bool) -> float:
    """A number of seconds: finite (a NaN passed ``< 0`` and failed in the store's NOT NULL
    column; an infinity has no date), at most 2**31 - 1 (68 years: 1e300 broke PostgreSQL's
    views with 'timestamp out of range'), non-negative or, ``allow_forever``, -1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ora(code, value)
    try:
        seconds = float(value)
    except OverflowError:                      # an int beyond any float
        raise ora(code, value) from None
    if not math.isfinite(seconds) or seconds > MAX_SECONDS \
            or (seconds < 0 and not (allow_forever and seconds == -1)):
        raise ora(code, value)
    return seconds


def retries(value: object) -> int:
    """MAX_RETRIES: 0 .. 2**31 - 1 (Oracle's limit; beyond it SQLite could not store it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31 - 1:
        raise ora(24013, value)
    return value


def comment_arg(comment: object) -> str | None:
    """A COMMENT argument (VARCHAR2).  :raises: ORA-06502 for anything but text or NULL."""
    if comment is not None and not isinstance(comment, str):
        raise ora(6502, f"comment must be a string, not {type(comment).__name__}")
    return comment


_SORT_KEYS = ("PRIORITY", "ENQ_TIME", "COMMIT_TIME")


def parse_sort_list(sort_list: str | None) -> tuple[str, ...]:
    """``'priority, enq_time'`` -> ``('PRIORITY', 'ENQ_TIME')``.  :raises: ORA-24036."""
    if sort_list is None or not str(sort_list).strip():
        return ("ENQ_TIME",)
    keys = tuple(k.strip().upper() for k in str(sort_list).split(","))
    if (len(keys) > 2 or any(k not in _SORT_KEYS for k in keys) or len(set(keys)) != len(keys)
            or {"ENQ_TIME", "COMMIT_TIME"} <= set(keys)
            or (len(keys) == 2 and keys[1] == "PRIORITY" and keys[0] == "COMMIT_TIME")):
        raise ora(24036, sort_list)
    return keys
