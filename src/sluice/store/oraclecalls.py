"""Oracle's functions in a user's SQL, as both stores answer them alike.

:mod:`.sqloracle` hands each call of these to :func:`call_pieces`, which says what to put
in the statement instead of which of its pieces (start -> (end, text)):

* ``NVL(a, b)`` is ``COALESCE(a, b)`` (PostgreSQL's own NVL could not type two literals);
* ``NVL2(a, b, c)`` is ``CASE WHEN (a) IS NOT NULL THEN b ELSE c END``;
* ``DECODE(e, s1, r1, …[, d])`` is ``CASE e WHEN s1 THEN r1 … ELSE d END`` — and where a
  search is NULL, which Oracle's DECODE matches to a NULL ``e`` but ``=`` never does,
  ``CASE WHEN e IS [NOT DISTINCT FROM] s1 THEN r1 …``: ``e`` repeated, a name or literal
  as it is, an expression as the statement's translation writes it (a :class:`Copy` of
  its text; a bind in it is the same value each time: the store gets each placeholder
  numbered, :func:`.plsql.binds.bind_values`; a sequence's NEXTVAL its CURRVAL,
  :func:`.seqwords.again`); one whose value may differ at each evaluation (``SYS_GUID``,
  ``DBMS_RANDOM``, a bare ``NEXTVAL(…)``) is SLU-00001;
* ``SUBSTR`` / ``INSTR`` are ``ORACLE_SUBSTR`` / ``ORACLE_INSTR``, Oracle's positions
  (0 is 1, negative from the end, NULL for nothing) on both stores: SQLite's ``substr``
  and PostgreSQL's differ on those, and neither has INSTR's position and occurrence;
* ``TO_CHAR`` is ``ORACLE_TO_CHAR`` on SQLite (its dates are text) and with one argument
  on PostgreSQL (which has no ``to_char(x)``); ``TO_DATE(x, fmt)`` is ``ORACLE_TO_DATE``
  (PostgreSQL's ``to_date`` drops the time); a literal format model is checked here
  (ORA-01821), PostgreSQL's would take ``QQQQ``; a literal number format model
  (``'99,999.99'``) is Oracle's on both stores (:mod:`sluice.numformat`);
* on PostgreSQL a model bound to ``TO_CHAR(x, :fmt)`` is written into the statement as a literal
  model (:func:`bound_model`, the bind taken) when it is a number's — a number model, or any model
  of a number literal, a number bind or a user's NUMBER column (ORA-01481 for no number model) —
  so PostgreSQL's to_char of it is Oracle's as a literal model's is;
* a ``''`` argument of these is NULL, as Oracle's empty string is (``TO_CHAR(5, '')`` is NULL, the
  model no model to check).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable, NamedTuple, Sequence

from ..errors import not_supported, ora
from ..numformat import is_number_model, number_model, pg_to_char
from .oracledates import check_format
from .sessionnls import DEFAULT_NLS, SessionNls, number_written
from .seqwords import is_sequence_word

__all__ = ["CALLS", "Copy", "Piece", "arguments", "bound_model", "call_pieces", "opened"]

CALLS = frozenset({"NVL", "NVL2", "DECODE", "SUBSTR", "INSTR", "LENGTH", "TO_CHAR", "TO_DATE"})
_ARITY = {"NVL": (2, 2), "NVL2": (3, 3), "DECODE": (3, 255), "SUBSTR": (2, 3), "INSTR": (2, 4),
          "LENGTH": (1, 1), "TO_CHAR": (1, 2), "TO_DATE": (1, 2)}
_RENAMED = {"NVL": "COALESCE", "SUBSTR": "ORACLE_SUBSTR", "INSTR": "ORACLE_INSTR",
            "TO_DATE": "ORACLE_TO_DATE"}
# a DECODE operand that may be written twice: a plain name or a literal
_REPEATABLE = frozenset({"id", "num", "str"})
_NOT_PLAIN = frozenset({"USER", "SYSDATE", "CURRENT_DATE", "SYSTIMESTAMP", "CURRENT_TIMESTAMP",
                        "LOCALTIMESTAMP"})
# words of a value that may differ each time it is evaluated
_VOLATILE = ("NEXTVAL", "SYS_GUID", "DBMS_RANDOM", "RANDOM")


class Copy(NamedTuple):
    """In a piece's text: the statement's text from ``start`` to ``end`` as the statement's
    translation writes it (with the pieces within it)."""
    start: int
    end: int


def arguments(toks: Sequence, open_: int) -> tuple[list[tuple[int, int]], int]:
    """The (first, last) tokens (:func:`.sqloracle.tokens`: no white space) of each
    argument of the call whose ``(`` is token ``open_``, and the index of its ``)`` (-1
    when it has none)."""
    args, depth, first = [], 0, open_ + 1
    for j in range(open_, len(toks)):
        text = toks[j].text
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0:
                if j > first:
                    args.append((first, j - 1))
                return args, j
        elif text == "," and depth == 1:
            args.append((first, j - 1))
            first = j + 1
    return args, -1


Piece = tuple[int, "str | tuple[str | Copy, ...]"]     # (end, text)


def opened(toks: Sequence, i: int, lo: int, hi: int) -> tuple[list[tuple[int, int]], int, dict[int, Piece]]:
    """The arguments of the call of ``toks[i]`` and its ``)`` (:func:`arguments`; ORA-00909
    for fewer than ``lo`` or more than ``hi``), and the pieces making its '' arguments NULL
    (Oracle's empty string)."""
    args, close = arguments(toks, i + 1)
    if close < 0:
        return args, close, {}
    if not lo <= len(args) <= hi:
        raise ora(909)
    pieces: dict[int, Piece] = {}
    for a, b in args:
        if a == b and toks[a].text == "''":
            pieces[toks[a].start] = (toks[a].end, "NULL")
    return args, close, pieces


def call_pieces(toks: Sequence, i: int, sqlite: bool, nls: SessionNls = DEFAULT_NLS) -> dict[int, Piece]:
    """What replaces which pieces of the call of ``toks[i]`` (a name of :data:`CALLS`); ``nls``
    the session's settings (a number model's D and G on PostgreSQL; SQLite's functions read
    them themselves)."""
    name = toks[i].word
    args, close, pieces = opened(toks, i, *_ARITY[name])
    if close < 0:
        return {}
    head, comma = (toks[i].start, toks[i + 1].end), [toks[b + 1] for _, b in args[:-1]]
    end = (toks[close].start, toks[close].end)
    if name == "NVL2":
        pieces[head[0]] = (head[1], "CASE WHEN (")
        pieces[comma[0].start] = (comma[0].end, ") IS NOT NULL THEN ")
        pieces[comma[1].start] = (comma[1].end, " ELSE ")
        pieces[end[0]] = (end[1], " END")
    elif name == "DECODE":
        _decode(pieces, toks, args, comma, head, end, sqlite)
    elif name == "TO_CHAR" and not sqlite and _number_model(toks, args):
        _pg_number_format(pieces, toks, args, head, end, nls)
    elif name == "TO_CHAR" and (sqlite or len(args) == 1):
        pieces[toks[i].start] = (toks[i].end, "ORACLE_TO_CHAR")
    elif name in _RENAMED:
        pieces[toks[i].start] = (toks[i].end, _RENAMED[name])
    # a literal date format model is checked here; '' is NULL (a piece above), so the call's NULL
    if name in ("TO_CHAR", "TO_DATE") and len(args) == 2 and args[1][0] == args[1][1] \
            and toks[args[1][0]].kind == "str" and toks[args[1][0]].text != "''" \
            and not (name == "TO_CHAR" and _number_model(toks, args)):
        check_format(toks[args[1][0]].text[1:-1].replace("''", "'"))
    return pieces


def bound_model(toks: Sequence, i: int, peek: Callable[[int], object], take: Callable[[int], object],
                number: Callable[[int], bool]) -> Sequence:
    """``toks`` of a PostgreSQL statement with the model bound to ``TO_CHAR(x, :fmt)`` at token
    ``i`` as a literal (``take`` takes it from the binds; ``peek`` reads a bind, ``number`` tells
    a user's NUMBER column) when it is a number's (see the module); else ``toks`` as they are."""
    args, close = arguments(toks, i + 1)
    if close < 0 or len(args) != 2 or args[1][0] != args[1][1] or toks[args[1][0]].kind != "bind":
        return toks
    k, (a, b) = args[1][0], args[0]
    fmt = peek(k)
    if type(fmt) is not str or not fmt:
        return toks
    x = toks[a]
    numeric = a == b and (x.kind == "num" or x.kind == "bind" and type(peek(a)) in (int, float, Decimal)
                          or x.kind == "id" and number(a))
    if not (numeric or is_number_model(fmt)):
        return toks                     # (a date's model: PostgreSQL's to_char, as before)
    number_model(fmt)                   # (ORA-01481 for a number's model that is none)
    take(k)
    out = list(toks)
    t = toks[k]
    out[k] = type(t)("str", "'" + fmt.replace("'", "''") + "'", t.start, t.end)     # (a token: kind, text, start, end)
    return out


def _number_model(toks: Sequence, args: list[tuple[int, int]]) -> str | None:
    """The literal number format model of a TO_CHAR call (:mod:`sluice.numformat`: read, refused
    when Sluice does not write it, ORA-01481 when it is none) — any literal model but '' (NULL) of a
    number literal — or None."""
    if len(args) != 2 or args[1][0] != args[1][1] or toks[args[1][0]].kind != "str" \
            or toks[args[1][0]].text == "''":
        return None
    fmt = toks[args[1][0]].text[1:-1].replace("''", "'")
    if not is_number_model(fmt) and not (args[0][0] == args[0][1] and toks[args[0][0]].kind == "num"):
        return None
    number_model(fmt)
    return fmt


def _pg_number_format(pieces: dict[int, Piece], toks, args, head, end, nls: SessionNls) -> None:
    """PostgreSQL: ``TO_CHAR(x, 'model')`` as its ``to_char`` with Oracle's overflow (all
    ``#``) and ``$`` (:func:`sluice.numformat.pg_to_char`); ``x`` written twice; a model's D
    and G the session's characters (NLS_NUMERIC_CHARACTERS, :func:`.sessionnls.number_written`)."""
    (first, last), fmt = args[0], _number_model(toks, args)
    if any(t.text.upper().startswith(_VOLATILE) for t in toks[first:last + 1]):
        raise not_supported("TO_CHAR with a number format model of an expression whose value may change")
    before, after, hashes = pg_to_char(fmt)
    swap = number_written(".,", fmt, nls).replace("'", "''")
    opening, closing = ("translate(", f", '.,', '{swap}')") if swap != ".," else ("", "")
    pieces[head[0]] = (head[1], opening + "CASE WHEN position('#' IN " + before)
    pieces[toks[last].end] = (end[1], (after + f") > 0 THEN '{hashes}' ELSE " + before,
                                       Copy(toks[first].start, toks[last].end), after + " END" + closing))


def _decode(pieces: dict[int, Piece], toks, args, comma, head, end, sqlite: bool) -> None:
    searches = args[1:len(args) - (len(args) % 2 == 0)]
    default = len(args) % 2 == 0
    if not any(a == b and toks[a].word == "NULL" or toks[a].text == "''" for a, b in searches[::2]):
        pieces[head[0]] = (head[1], "CASE ")
        for k, c in enumerate(comma):
            word = " WHEN " if k % 2 == 0 else " THEN "
            pieces[c.start] = (c.end, " ELSE " if default and k == len(comma) - 1 else word)
        pieces[end[0]] = (end[1], " END")
        return
    first, last = args[0]
    e = toks[first]
    same: str | tuple[str | Copy, ...]
    if first == last and e.kind in _REPEATABLE and e.word not in _NOT_PLAIN and not is_sequence_word(e.word):
        pieces.pop(e.start, None)            # inside the piece written below
        operand = "NULL" if e.text == "''" else e.text
        same = f" WHEN {operand} {'IS' if sqlite else 'IS NOT DISTINCT FROM'} "
        pieces[head[0]] = (comma[0].end, "CASE" + same)
    else:       # an expression: written as translated, once for each search
        words = [t.text.upper() for t in toks[first:last + 1]]
        if any(w.startswith(_VOLATILE) for w in words):
            raise not_supported("DECODE with a NULL search of an expression whose value may change "
                                "(write CASE WHEN … IS NULL)")
        test = " IS " if sqlite else " IS NOT DISTINCT FROM "
        same = (" WHEN (", Copy(toks[first].start, toks[last].end), ")" + test)
        pieces[head[0]] = (head[1], "CASE WHEN (")
        pieces[comma[0].start] = (comma[0].end, ")" + test)
    for k, c in enumerate(comma[1:]):
        word = " THEN " if k % 2 == 0 else same
        pieces[c.start] = (c.end, " ELSE " if default and k == len(comma) - 2 else word)
    pieces[end[0]] = (end[1], " END")
