"""Oracle's conversions without a model in a user's SQL, in the session's NLS settings.

After ``ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD HH24:MI:SS'`` (:mod:`.sessionnls`)
Oracle's ``TO_CHAR(hired)`` is ``'2026-01-02 00:00:00'`` and ``TO_DATE('2026-01-02
00:00:00')`` reads it.  :mod:`.sqloracle` hands each such call here when the session's
settings are not the defaults (a session that set none translates as before, at no cost):
:func:`model_pieces` gives the call the session's model as its second argument —

* ``TO_CHAR(x)`` of a DATE (NLS_DATE_FORMAT) or TIMESTAMP (NLS_TIMESTAMP_FORMAT) the
  statement knows the type of (the clock, a datetime bind, a DATE / TIMESTAMP literal, a date
  column of the user's tables or of Sluice's views): SQLite's ``ORACLE_TO_CHAR(x, model)``, PostgreSQL's own
  ``to_char(x, model)`` (:func:`.sessionnls.pg_model`); of anything else SQLite's
  ``ORACLE_TO_CHAR`` reads the connection's settings itself (:mod:`.sqlitefns`), PostgreSQL's
  answers in the default format;
* ``TO_DATE(x)`` / ``TO_TIMESTAMP(x)`` of text (not of a date): read by NLS_DATE_FORMAT /
  NLS_TIMESTAMP_FORMAT (a literal is folded by :mod:`.sqloracle` as ``TO_DATE('…', 'fmt')``
  is);
* PostgreSQL's ``TO_NUMBER(x)`` of text (a literal, a text column, a bound ``str``) with
  NLS_NUMERIC_CHARACTERS' decimal character: that character read as the point, a ``.`` then
  no number (ORA-01722), as Oracle reads it (SQLite's TO_NUMBER reads the settings itself).
"""

from __future__ import annotations

from typing import Callable, Sequence

from .oraclecalls import Piece, arguments
from .sessionnls import SessionNls, pg_model, written_model

__all__ = ["model_pieces"]


def _quoted(model: str) -> str:
    return "'" + model.replace("'", "''") + "'"


def model_pieces(toks: Sequence, i: int, sqlite: bool, nls: SessionNls, kind: Callable[[int], str | None],
                 text: Callable[[int], bool]) -> dict[int, Piece] | None:
    """The pieces giving the call at token ``i`` (TO_CHAR, TO_DATE, TO_TIMESTAMP, TO_NUMBER)
    the session's model, or None when the call is not one without a model Sluice answers so;
    ``kind(j)``: DATE / TIMESTAMP for a token the statement knows is one, ``text(j)``: whether
    it is text (a literal, a text column, a bound ``str``)."""
    name = toks[i].word
    args, close = arguments(toks, i + 1)
    if close < 0 or len(args) != 1:
        return None
    (j, last), end = args[0], toks[close]
    literal = last == j + 1 and toks[j].word in ("DATE", "TIMESTAMP") and toks[last].kind == "str"
    if last != j and not literal:
        return None
    model = pg_model if not sqlite else written_model
    if name == "TO_CHAR":
        typed = toks[j].word if literal else kind(j)
        if typed is None:
            return None
        fmt = _quoted(model(nls.date_format if typed == "DATE" else nls.timestamp_format))
        return {toks[i].start: (toks[i].end, "ORACLE_TO_CHAR" if sqlite else "to_char"),
                end.start: (end.end, f", {fmt})")}
    if literal or kind(j) is not None or not text(j):
        return None
    if name == "TO_DATE":
        return {end.start: (end.end, f", {_quoted(model(nls.date_format))})")}
    if name == "TO_TIMESTAMP" and not sqlite:
        return {toks[i].start: (toks[i + 1].end, "CAST(TO_TIMESTAMP("),
                end.start: (end.end, f", {_quoted(model(nls.timestamp_format))}) AS TIMESTAMP)")}
    if name == "TO_NUMBER" and not sqlite and nls.decimal != ".":
        swap = _quoted(nls.decimal + ".")
        return {toks[i].start: (toks[i + 1].end, "CAST(translate(CAST("),
                end.start: (end.end, f" AS TEXT), {swap}, '.!') AS NUMERIC)")}
    return None
