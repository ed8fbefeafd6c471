"""How the interpreter words its errors: Oracle's ORA-06550 wrapper around PLS-nnnnn."""

from __future__ import annotations

from ..errors import DatabaseError, ora


def pls_error(line: int, col: int, message: str) -> DatabaseError:
    """``ORA-06550: line L, column C:`` followed by ``message`` (a PLS-nnnnn text)."""
    return ora(6550, line, col, message)


def semantic_error(line: int, col: int, message: str) -> DatabaseError:
    """A name or call that does not resolve.  Oracle adds the second
    "Statement ignored" line for these (not for syntax errors), so we do too."""
    return ora(6550, line, col, f"{message}\nORA-06550: line {line}, column {col}:\n"
               "PL/SQL: Statement ignored")


def unexpected(token, expected: list[str] | tuple[str, ...]) -> DatabaseError:
    """PLS-00103 for ``token``, listing what the parser would have accepted there."""
    listing = " ".join(expected)
    return pls_error(token.line, token.col,
                     f'PLS-00103: Encountered the symbol "{token.shown()}" when expecting '
                     f"one of the following:\n\n   {listing}")
