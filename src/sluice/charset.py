"""The database character set, AL32UTF8: text that cannot be converted to it.

A Python string may hold lone surrogates ("\\ud800"; undecodable bytes of a command line
arrive so, as surrogate escapes), which UTF-8 cannot encode.  Oracle fails to convert such
text with ORA-06502 "character string conversion failed"; the values, binds, statements and
message properties that leave Python for a store pass :func:`utf8` or :func:`checked`
first, so the error is that and not Python's UnicodeEncodeError.
"""

from __future__ import annotations

from typing import Any

from .errors import ora

CONVERSION_FAILED = "character string conversion failed"


def utf8(text: str) -> bytes:
    """``text`` in the database character set.

    :raises DataError: ORA-06502 when it holds a lone surrogate.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ora(6502, CONVERSION_FAILED) from None


def checked(text: str) -> str:
    """``text`` itself once it is known to convert (ASCII, the usual case, at once)."""
    if not text.isascii():
        utf8(text)
    return text


def fits(text: str, limit: int, what: str) -> str:
    """``text`` itself once it converts and takes at most ``limit`` bytes there (Oracle's
    ``VARCHAR2(limit)``, byte semantics).

    :raises DataError: ORA-06502 when it does not convert, or is longer ("character string
        buffer too small", as PL/SQL says assigning it to such a variable).
    """
    size = len(text) if text.isascii() else len(utf8(text))
    if size > limit:
        raise ora(6502, f"character string buffer too small ({what}: {size} bytes, at most {limit})")
    return text


def check_statement(sql: str, binds: Any) -> None:
    """A statement for a store: its text and its text binds convert (python-oracledb
    cannot send them otherwise).

    :raises DataError: ORA-06502 when one does not.
    """
    checked(sql)
    for value in (binds.values() if isinstance(binds, dict) else binds or ()):
        if type(value) is str and not value.isascii():
            utf8(value)


def convertible(text: str) -> bool:
    """Does ``text`` convert to the database character set?"""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


__all__ = ["CONVERSION_FAILED", "check_statement", "checked", "convertible", "fits", "utf8"]
