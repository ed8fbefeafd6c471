"""Exceptions a block raises itself, and SQLCODE / SQLERRM for the one being handled."""

from __future__ import annotations

from ..errors import DatabaseError, known_codes, ora, places
from .resolve import ExcInfo

NORMAL = "ORA-0000: normal, successful completion"


class UserException(DatabaseError):
    """``RAISE name`` for an exception declared in the block."""

    def __init__(self, info: ExcInfo) -> None:
        code = info.code if info.code is not None else 6510
        super().__init__(str(coded_error(code)), code)
        self.info = info


def coded_error(code: int) -> DatabaseError:
    """The error Oracle raises for a bare error number (``RAISE`` of a mapped exception).
    Oracle shows the catalogue text with its placeholders unfilled (``%s``)."""
    if code in known_codes():
        return ora(code, *("%s",) * places(code))
    return DatabaseError(f"ORA-{code:05d}: ", code)


def sqlcode(exc: DatabaseError | None) -> int:
    """Oracle's SQLCODE: negative ORA number, +100 for NO_DATA_FOUND, +1 for a user exception."""
    if exc is None:
        return 0
    if isinstance(exc, UserException) and exc.info.code is None:
        return 1
    return 100 if exc.code == 1403 else -exc.code


def sqlerrm(exc: DatabaseError | None) -> str:
    if exc is None:
        return NORMAL
    if isinstance(exc, UserException) and exc.info.code is None:
        return "User-Defined Exception"
    # the error itself, not the ORA-06512 lines of the units it left (DBMS_UTILITY's backtrace)
    return str(exc).split("\nORA-06512: at ", 1)[0]


def sqlerrm_of(code: int) -> str:
    """``SQLERRM(n)``: the message for error number ``n`` (negative, or +100)."""
    if code == 0:
        return NORMAL
    return str(coded_error(1403 if code == 100 else abs(code)))
