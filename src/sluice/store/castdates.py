"""Oracle's date arithmetic on ``CAST(x AS DATE | TIMESTAMP)`` of a run-time value.

An object payload's DATE attribute (``q.user_data.due_date``) is such a CAST of the stored
JSON text (:mod:`.objpaths`), and so is a user's own ``CAST(col AS DATE)``.  Oracle's
arithmetic on it, as on any DATE (SQL Reference, "Datetime/Interval Arithmetic"):

* ``CAST(…) ± n`` (literal days, a bind of a number): a DATE — :func:`.viewdates.plus_days`
  (SQLite's ``sluice_add_days``; PostgreSQL's interval of days), a TIMESTAMP's fraction
  dropped as Oracle's TIMESTAMP + number is a DATE;
* ``CAST(…) - CAST(…)`` (``q.user_data.due - q.user_data.created``): the days between, a
  TIMESTAMP among them an INTERVAL DAY TO SECOND;
* ``CLOCK - CAST(…)`` (SYSDATE, a datetime bind, a DATE literal; :mod:`.sqloracle` folds the
  clock first): the days between, a number; a TIMESTAMP among them (SYSTIMESTAMP, a CAST AS
  TIMESTAMP) an INTERVAL DAY TO SECOND.

SQLite would take the CAST's text for its year, PostgreSQL answered ORA-00932.  The CAST is
written as :meth:`.sqloracle._Translation._cast` writes it (:func:`cast_pieces`); ``x`` is
written as a piece of the statement's text (the clock minus it: translated; it plus days: as
typed, the tokens up to the days done, as a date column's arithmetic is).
"""

from __future__ import annotations

from typing import Callable, Sequence

from .viewdates import days_between, interval_between, plus_days

__all__ = ["cast_end", "cast_minus", "cast_minus_cast", "cast_pieces", "cast_plus_days"]

_HOLE = "\0"
# the operand's words that are the clock's own (sqloracle folds a CAST of those)
_CLOCK = frozenset({"SYSDATE", "SYSTIMESTAMP", "CURRENT_DATE", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP"})
Piece = tuple[str, tuple[int, int], str]


def cast_end(toks: Sequence, k: int, closes: Callable[[int], int]) -> tuple[int, str] | None:
    """For ``CAST(x AS DATE | TIMESTAMP)`` at token ``k`` of a run-time ``x`` (not the clock nor
    a bind): (its ``)``, ``DATE`` | ``TIMESTAMP``); else None.  ``closes(i)`` is the ``)`` of the
    ``(`` at token ``i``."""
    if not (k + 1 < len(toks) and toks[k].word == "CAST" and toks[k + 1].text == "("):
        return None
    close = closes(k + 1)
    if close < 0 or close - 3 <= k + 1 or toks[close - 2].word != "AS" or toks[close - 1].word not in (
            "DATE", "TIMESTAMP"):
        return None
    if close - 3 == k + 2 and (toks[k + 2].word in _CLOCK or toks[k + 2].kind == "bind") or \
            toks[k + 2].word in _CLOCK:
        return None
    return close, toks[close - 1].word


def cast_pieces(sqlite: bool, kind: str) -> tuple[str, str]:
    """The SQL before and after ``x`` of ``CAST(x AS kind)`` as Oracle's: a DATE whole seconds
    keeping its time of day (SQLite's ``sluice_cast_date``, PostgreSQL's ``date_trunc``)."""
    if sqlite:
        return "sluice_cast_date(", f", '{kind}')"
    if kind == "DATE":
        return "date_trunc('second', CAST(", " AS TIMESTAMP))"
    return "CAST(", " AS TIMESTAMP)"


def _around(sql: str, before: str, after: str) -> tuple[str, str]:
    """``sql`` (made with a hole where ``x`` goes) split at the hole, ``before`` / ``after``
    kept around ``x``."""
    head, _, tail = sql.partition(_HOLE)
    return head + before, after + tail


def cast_plus_days(toks: Sequence, i: int, close: int, kind: str, sqlite: bool,
                   days: Callable[[Sequence, int], tuple[int, object] | None]) -> tuple[int, Piece] | None:
    """``CAST(x AS kind) ± days`` at tokens ``i`` (CAST) .. ``close`` and after: (its last
    token, the piece writing it, a DATE) — ``days(toks, k)`` reads the literal days at token
    ``k`` (:func:`.sqlclock.days_term`) — or None when no days follow."""
    if not (close + 2 < len(toks) and toks[close + 1].text in ("+", "-")):
        return None
    term = days(toks, close + 2)
    if term is None:
        return None
    end, value = term
    if value is None or not hasattr(value, "numerator"):
        return None             # (NULL days: the database's NULL)
    value = -value if toks[close + 1].text == "-" else value
    before, after = cast_pieces(sqlite, kind)
    text = plus_days(sqlite, _HOLE, repr(float(value)))
    head, tail = _around(text, before, after)
    return end, (head, (toks[i + 2].start, toks[close - 3].end), tail)


def cast_minus(sqlite: bool, clock: str, clock_kind: str, toks: Sequence, k: int, close: int,
               kind: str) -> tuple[Piece, bool]:
    """``clock - CAST(x AS kind)`` (``clock`` the SQL of the folded clock, a DATE or TIMESTAMP
    literal; the CAST at tokens ``k`` .. ``close``): (the piece writing it, whether it is an
    INTERVAL DAY TO SECOND — a TIMESTAMP among them — rather than the days between)."""
    before, after = cast_pieces(sqlite, kind)
    stamp = "TIMESTAMP" in (clock_kind, kind)
    text = (interval_between if stamp else days_between)(sqlite, clock, _HOLE)
    head, tail = _around(text, before, after)
    return (head, (toks[k + 2].start, toks[close - 3].end), tail), stamp


def cast_minus_cast(toks: Sequence, i: int, close: int, kind: str, sqlite: bool,
                    closes: Callable[[int], int]) -> tuple[int, tuple, bool] | None:
    """``CAST(x AS kind) - CAST(y AS kind2)`` at tokens ``i`` (CAST) .. ``close`` and after, no
    arithmetic after it: (its last token, the piece writing it, whether it is an INTERVAL DAY
    TO SECOND rather than the days between), or None."""
    if not (close + 2 < len(toks) and toks[close + 1].text == "-"):
        return None
    other = cast_end(toks, close + 2, closes)
    if other is None:
        return None
    end, other_kind = other
    if end + 1 < len(toks) and toks[end + 1].text in ("+", "-", "*", "/", "||"):
        return None
    a, b = cast_pieces(sqlite, kind), cast_pieces(sqlite, other_kind)
    stamp = "TIMESTAMP" in (kind, other_kind)
    head, _, tail = (interval_between if stamp else days_between)(sqlite, _HOLE, _HOLE + _HOLE).partition(_HOLE)
    middle, _, tail = tail.partition(_HOLE + _HOLE)
    return end, (head + a[0], (toks[i + 2].start, toks[close - 3].end), a[1] + middle + b[0],
                 (toks[close + 4].start, toks[end - 3].end), b[1] + tail), stamp
