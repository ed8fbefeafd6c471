"""Oracle's scalar functions a user types that neither store has as Oracle answers them.

SQLite has none of them: :func:`register_oracle_functions` gives every SQLite connection
Python ones under Oracle's names (GREATEST, LEAST, REGEXP_LIKE / _SUBSTR / _INSTR /
_REPLACE / _COUNT, TO_NUMBER, TO_TIMESTAMP, ADD_MONTHS, MONTHS_BETWEEN, LAST_DAY, NEXT_DAY,
LPAD, RPAD, INITCAP, ASCII, CHR, SYS_GUID), so a statement needs no translation there: NULL in
is NULL out, '' is NULL, an Oracle error is kept for the session to raise
(:func:`.sqlitecalls.oracle_call`: SQLite says only that a function raised); a date is the
text SQLite's dates are (``YYYY-MM-DD HH:MM:SS[.ffffff]``), typed back into a datetime by
the heading's type (:data:`DATE_CALLS`, :mod:`.sqlheadings`).

PostgreSQL has some of them with other answers: :func:`pg_pieces` says what to write
instead (:mod:`.sqloracle` hands it each call of :data:`PG_CALLS`):

* ``GREATEST`` / ``LEAST`` are NULL when an argument is (PostgreSQL's skip NULLs): a
  scalar subquery over ``VALUES`` of the arguments, each written (and evaluated) once;
* ``LPAD`` / ``RPAD`` of a number or a fractional length as Oracle's; an empty answer NULL;
* ``REGEXP_*`` with Oracle's match parameter (a literal: ``i c n m x``; another is
  SLU-00001) as PostgreSQL's flags — Oracle's ``.`` matches no newline without ``n``, and
  ``^`` ``$`` match at lines only with ``m`` — and REGEXP_REPLACE replacing every match
  (occurrence 0) unless told, a NULL replacement deleting;
* ``TO_NUMBER(x)`` a NUMERIC cast (ORA-01722 for text that is none), ``TO_NUMBER('text',
  'fmt')`` of literals the number read by the model (:func:`sluice.numformat.read_number`, as
  SQLite's TO_NUMBER reads any text with one), ``TO_TIMESTAMP``
  a TIMESTAMP without time zone, ``LAST_DAY`` / ``ADD_MONTHS`` (Oracle's rule: the last day
  of a month to the last day of the other) / ``MONTHS_BETWEEN`` (whole months for the same
  day or two last days, else the days over 31) as subqueries over their arguments;
* ``SYS_GUID()`` 16 random bytes, a RAW as python-oracledb fetches it;
* ``NEXT_DAY(d, 'FRIDAY')`` (a day named by a literal; ORA-01846 for no day's name);
* ``RAWTOHEX(MSG_ID)`` of a view (PostgreSQL's MSG_ID is its hex, text: :func:`hex_column`).

On both stores ``TRIM([LEADING | TRAILING | BOTH] [c] FROM s)`` (:func:`trim_from`: SQLite
cannot parse it) and an empty TRIM is NULL; ``ADD_MONTHS`` of the clock, a datetime bind or
a DATE literal, and ``SYS_EXTRACT_UTC(SYSTIMESTAMP)``, are folded by :mod:`.sqloracle` as
the clock is (:func:`add_months`), so that its date arithmetic goes on working.

``TO_NUMBER`` with NLS parameters (or on PostgreSQL with a format model not a literal; a
literal model of a column's text is read by :func:`sluice.numformat.pg_read_number`), ``DUMP`` (:data:`REFUSED`), and a non-literal
regular-expression match parameter on PostgreSQL, are refused (SLU-00001).
"""

from __future__ import annotations

import calendar
import os
import re
import sqlite3
from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..errors import DatabaseError, not_supported, ora
from ..numformat import pg_read_number, read_number
from ..sqlfunctions import to_number
from .oracledates import check_format, to_date
from .oraclecalls import Piece, arguments, opened
from .sessionnls import DEFAULT_NLS, SessionNls, number_read, numeric_text, written_model
from .sqlitecalls import BAD_NUMBER, oracle_call, session_call

__all__ = ["DATE_CALLS", "PG_CALLS", "REFUSED", "add_months", "hex_column", "last_day", "months_between",
           "next_day", "pg_pieces", "pg_regex_error", "register_oracle_functions", "trim_from"]

# calls whose value is a date: DATE or TIMESTAMP (sqlheadings types the item so)
DATE_CALLS = {"LAST_DAY": "DATE", "ADD_MONTHS": "DATE", "NEXT_DAY": "DATE", "TO_TIMESTAMP": "TIMESTAMP",
              "SYS_EXTRACT_UTC": "TIMESTAMP"}
PG_CALLS = frozenset({"GREATEST", "LEAST", "LPAD", "RPAD", "REGEXP_LIKE", "REGEXP_SUBSTR", "REGEXP_INSTR",
                      "REGEXP_REPLACE", "REGEXP_COUNT", "TO_NUMBER", "TO_TIMESTAMP", "LAST_DAY", "ADD_MONTHS",
                      "MONTHS_BETWEEN", "SYS_GUID", "ASCII", "INITCAP", "NEXT_DAY"})
_ARITY = {"GREATEST": (1, 255), "LEAST": (1, 255), "LPAD": (2, 3), "RPAD": (2, 3), "REGEXP_LIKE": (2, 3),
          "REGEXP_SUBSTR": (2, 6), "REGEXP_INSTR": (2, 7), "REGEXP_REPLACE": (2, 6), "REGEXP_COUNT": (2, 4),
          "TO_NUMBER": (1, 3), "TO_TIMESTAMP": (1, 2), "LAST_DAY": (1, 1), "ADD_MONTHS": (2, 2),
          "MONTHS_BETWEEN": (2, 2), "SYS_GUID": (0, 0), "ASCII": (1, 1), "INITCAP": (1, 1),
          "NEXT_DAY": (2, 2)}
# where each REGEXP_ function's match parameter is (0-based), and its defaults before it
_MATCH_AT = {"REGEXP_LIKE": 2, "REGEXP_SUBSTR": 4, "REGEXP_INSTR": 5, "REGEXP_REPLACE": 5, "REGEXP_COUNT": 3}
_DEFAULTS = {"REGEXP_LIKE": (), "REGEXP_SUBSTR": ("1", "1"), "REGEXP_INSTR": ("1", "1", "0"),
             "REGEXP_REPLACE": ("''", "1", "0"), "REGEXP_COUNT": ("1",)}


# -- Oracle's answers (both stores: SQLite's functions, the translation's folding) -----------
def last_day(d: datetime) -> datetime:
    return d.replace(day=calendar.monthrange(d.year, d.month)[1])


def add_months(d: datetime, n: Any) -> datetime:
    """Oracle's ``ADD_MONTHS(d, n)``: ``n`` truncated; the last day of a month (or a day
    the other month has not) is the other month's last day."""
    months = d.year * 12 + d.month - 1 + int(n)
    year, month = divmod(months, 12)
    if not 1 <= year <= 9999:
        raise ora(1841)
    last = calendar.monthrange(year, month + 1)[1]
    day = last if d.day == calendar.monthrange(d.year, d.month)[1] else min(d.day, last)
    return d.replace(year=year, month=month + 1, day=day, microsecond=0)


def months_between(a: datetime, b: datetime) -> Fraction:
    """Oracle's ``MONTHS_BETWEEN(a, b)``: whole months for the same day of the month or two
    last days, else the difference of the days and times over 31 days."""
    months = Fraction((a.year - b.year) * 12 + a.month - b.month)
    if a.day == b.day or (a.day == last_day(a).day and b.day == last_day(b).day):
        return months
    since = (a - a.replace(day=1, hour=0, minute=0, second=0, microsecond=0)) - (
        b - b.replace(day=1, hour=0, minute=0, second=0, microsecond=0))
    return months + Fraction(since // timedelta(microseconds=1), 31 * 86400 * 10**6)


_DAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


def weekday(name: Any) -> int:
    """Monday 0 … Sunday 6 for a day's English name or its first three letters or more
    (ORA-01846 for none)."""
    word = _text(name).strip().upper()
    for k, day in enumerate(_DAYS):
        if len(word) >= 3 and day.startswith(word):
            return k
    raise ora(1846)


def next_day(d: datetime, name: Any) -> datetime:
    """Oracle's ``NEXT_DAY(d, 'FRIDAY')``: the first such day after ``d`` (its time kept)."""
    return d + timedelta(days=(weekday(name) - d.weekday() - 1) % 7 + 1)


def _pad(left: bool) -> Callable[..., Any]:
    def pad(s: Any, n: Any, fill: Any = " ") -> str | None:
        width = int(float(n))
        s = _text(s)
        if width <= 0:
            return None
        if len(s) >= width:
            return s[:width]
        more = (fill * width)[:width - len(s)]
        return more + s if left else s + more
    return pad


def _initcap(s: Any) -> str:
    return re.sub(r"[^\W_]+", lambda m: m.group().capitalize(), _text(s))


def _ascii(s: Any) -> int:
    return int.from_bytes(_text(s)[0].encode("utf-8"), "big")


def _chr(n: Any) -> str:
    return chr(int(float(n)))


def _text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return v if isinstance(v, str) else str(v)


def _extreme(pick: Callable) -> Callable[..., Any]:
    """GREATEST / LEAST: the others compared as the first's type (Oracle converts them)."""
    def extreme(*args: Any) -> Any:
        first = args[0]
        if isinstance(first, (int, float)):
            values = [to_number(a) if isinstance(a, str) else a for a in args]
        else:
            values = [_text(a) for a in args]
        return pick(values)
    return extreme


# -- regular expressions ---------------------------------------------------------------------
_CLASSES = {"alpha": r"a-zA-Z", "digit": r"0-9", "alnum": r"a-zA-Z0-9", "upper": r"A-Z", "lower": r"a-z",
            "space": r"\s", "punct": r"!-/:-@\[-`{-~", "xdigit": r"0-9A-Fa-f", "blank": r" \t",
            "cntrl": r"\x00-\x1f\x7f", "print": r"\x20-\x7e", "graph": r"\x21-\x7e"}
# Python's complaint about a pattern -> Oracle's error
_REGEX_ERRORS = (("parenthesis", 12725), ("subpattern", 12725), ("character set", 12726),
                 ("group reference", 12727), ("invalid group", 12727), ("range", 12728), ("repeat", 12732))


# PostgreSQL's "invalid regular expression: …" -> Oracle's error
_PG_REGEX_ERRORS = (("parentheses", 12725), ("brackets", 12726), ("backreference", 12727), ("range", 12728),
                    ("class", 12729), ("braces", 12732), ("repetition", 12732))


def pg_regex_error(message: str) -> DatabaseError:
    """Oracle's error for the bad regular expression PostgreSQL's ``message`` is about."""
    return ora(next((code for word, code in _PG_REGEX_ERRORS if word in message), 12722))


def _flags(match: Any) -> int:
    flags = 0
    for c in match or "":
        if c == "i":
            flags |= re.I
        elif c == "c":
            flags &= ~re.I
        elif c == "n":
            flags |= re.S
        elif c == "m":
            flags |= re.M
        elif c == "x":
            flags |= re.X
        else:
            raise ora(1760)
    return flags


def _regex(pattern: Any, match: Any = None) -> re.Pattern:
    """Oracle's POSIX pattern as Python's (``[[:alpha:]]`` classes; ``$`` only at the end)."""
    text = re.sub(r"\[:(\w+):\]", lambda m: _CLASSES.get(m.group(1), m.group()), _text(pattern))
    if "[:" in text:
        raise ora(12729)
    text = re.sub(r"(?<!\\)\$", r"(?:\\Z)" if not (_flags(match) & re.M) else "$", text)
    try:
        return re.compile(text, _flags(match))
    except re.error as e:
        raise ora(next((code for word, code in _REGEX_ERRORS if word in str(e)), 12722)) from None


def _regexp_like(s: Any, p: Any, m: Any = None) -> int:
    return int(_regex(p, m).search(_text(s)) is not None)


def _matches(s: str, p: Any, pos: Any, m: Any) -> list[re.Match]:
    start = int(float(pos))
    if start < 1:
        raise ora(1428, start)
    return list(_regex(p, m).finditer(s, start - 1))


def _occurrence(n: Any) -> int:
    occ = int(float(n))
    if occ < 1:
        raise ora(1428, occ)
    return occ


def _regexp_substr(s: Any, p: Any, pos: Any = 1, occ: Any = 1, m: Any = None, sub: Any = 0) -> str | None:
    found = _matches(_text(s), p, pos, m)
    k = _occurrence(occ)
    return found[k - 1].group(int(float(sub))) if len(found) >= k else None


def _regexp_instr(s: Any, p: Any, pos: Any = 1, occ: Any = 1, after: Any = 0, m: Any = None,
                  sub: Any = 0) -> int:
    found = _matches(_text(s), p, pos, m)
    k = _occurrence(occ)
    if len(found) < k:
        return 0
    g = int(float(sub))
    return (found[k - 1].end(g) if int(float(after)) else found[k - 1].start(g)) + 1


def _regexp_count(s: Any, p: Any, pos: Any = 1, m: Any = None) -> int:
    return len(_matches(_text(s), p, pos, m))


def _regexp_replace(s: Any, p: Any, r: Any = None, pos: Any = 1, occ: Any = 0, m: Any = None) -> str | None:
    text, k = _text(s), int(float(occ))
    if k < 0:
        raise ora(1428, k)
    repl = re.sub(r"\\(\d)", r"\\g<\1>", "" if r is None else _text(r))
    seen = 0

    def one(match: re.Match) -> str:
        nonlocal seen
        seen += 1
        return match.expand(repl) if k in (0, seen) else match.group()
    start = int(float(pos))
    if start < 1:
        raise ora(1428, start)
    return text[:start - 1] + _regex(p, m).sub(one, text[start - 1:])


# -- dates as SQLite holds them --------------------------------------------------------------
_ISO_DATE = re.compile(r"\d{4}-\d\d-\d\d(?:[ T]|$)")     # (a date's own text: read as it is)


def _date(v: Any) -> datetime:
    if isinstance(v, str):
        try:
            return datetime.fromisoformat(v.strip())
        except ValueError:
            raise ora(1861) from None
    raise ora(932, "DATE", "NUMBER")


def _date_text(d: datetime) -> str:
    return d.isoformat(" ")


def _to_timestamp(session: SessionNls, text: Any, fmt: Any = None) -> str:
    if fmt is None and session is not DEFAULT_NLS and isinstance(text, str) and not _ISO_DATE.match(text.strip()):
        fmt = written_model(session.timestamp_format)       # the session's NLS_TIMESTAMP_FORMAT
    if fmt is None:
        return _date_text(_date(text))
    return _date_text(to_date(_text(text), _text(fmt), fraction=True))


def _number(session: SessionNls, v: Any, fmt: Any = None, nls: Any = None) -> Any:
    if nls is not None:
        raise not_supported(_NUMBER_MODEL)
    if fmt is not None:      # (the session's D and G: NLS_NUMERIC_CHARACTERS)
        return _number_value(read_number(number_read(v if isinstance(v, str) else str(v), _text(fmt), session),
                                         _text(fmt)))
    n = to_number(numeric_text(_text(v).strip(), session)) if isinstance(v, str) else v
    return float(n) if not isinstance(n, (int, float)) else n


def _number_value(n: Decimal) -> int | float:
    """A number read by a format model as SQLite holds it (an int when it is whole)."""
    return int(n) if n == n.to_integral_value() else float(n)


_NUMBER_MODEL = ("TO_NUMBER with NLS parameters, or on PostgreSQL with a format model other than a literal "
                 "(Sluice reads text by a literal model, sluice/numformat.py)")


def _answer(value: Any) -> Any:
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value


_SQLITE: dict[str, tuple[Callable[..., Any], int, int]] = {
    "GREATEST": (_extreme(max), -1, -1), "LEAST": (_extreme(min), -1, -1),
    "REGEXP_LIKE": (_regexp_like, 2, 3), "REGEXP_SUBSTR": (_regexp_substr, 2, 6),
    "REGEXP_INSTR": (_regexp_instr, 2, 7), "REGEXP_COUNT": (_regexp_count, 2, 4),
    "TO_NUMBER": (_number, 1, 3), "TO_TIMESTAMP": (_to_timestamp, 1, 2),
    "ADD_MONTHS": (lambda d, n: _date_text(add_months(_date(d), float(n))), 2, 2),
    "MONTHS_BETWEEN": (lambda a, b: months_between(_date(a), _date(b)), 2, 2),
    "LAST_DAY": (lambda d: _date_text(last_day(_date(d))), 1, 1),
    "NEXT_DAY": (lambda d, name: _date_text(next_day(_date(d), name)), 2, 2),
    "LPAD": (_pad(True), 2, 3), "RPAD": (_pad(False), 2, 3), "INITCAP": (_initcap, 1, 1),
    "ASCII": (_ascii, 1, 1), "CHR": (_chr, 1, 1),
}


def _replace_call(*args: Any) -> Any:
    """REGEXP_REPLACE: a NULL replacement deletes the matches (the others NULL in, NULL out)."""
    if any(a is None for k, a in enumerate(args) if k != 2):
        return None
    return _regexp_replace(*args)


def register_oracle_functions(conn: sqlite3.Connection) -> None:
    """Give ``conn`` Oracle's functions of this module under Oracle's names."""
    for name, (impl, lo, hi) in _SQLITE.items():
        if impl in (_number, _to_timestamp):        # (the session's NLS_…)
            impl = session_call(conn, impl)
        for narg in ([-1] if lo < 0 else range(lo, hi + 1)):
            conn.create_function(name, narg, oracle_call(impl, answer=_answer, bad_number=BAD_NUMBER),
                                 deterministic=True)
    for narg in range(2, 7):
        conn.create_function("REGEXP_REPLACE", narg, oracle_call(_replace_call, strict=False, answer=_answer,
                                                                 bad_number=BAD_NUMBER), deterministic=True)
    conn.create_function("SYS_GUID", 0, lambda: os.urandom(16))


# -- PostgreSQL ------------------------------------------------------------------------------
def _pg_flags(match: str | None) -> str:
    """Oracle's match parameter as PostgreSQL's flags (Oracle's default: ``.`` no newline,
    ``^``/``$`` the whole text — PostgreSQL's ``p``)."""
    case, dot, lines, extra = "", False, False, ""
    for c in match or "":
        if c in "ic":
            case = c
        elif c == "n":
            dot = True
        elif c == "m":
            lines = True
        elif c == "x":
            extra = "x"
        else:
            raise ora(1760)
    return case + {(False, False): "p", (True, False): "s", (False, True): "n", (True, True): "w"}[dot, lines] + extra


def _literal_text(toks: Sequence, a: int, b: int) -> str | None:
    """The text of a literal argument (None: ''/NULL); anything else is SLU-00001."""
    if a == b and toks[a].kind == "str":
        return toks[a].text[1:-1].replace("''", "'") or None
    if a == b and toks[a].word == "NULL":
        return None
    raise not_supported("a regular expression's match parameter other than a literal")


# functions refused on both stores (SLU-00001) rather than answered otherwise
REFUSED = {"DUMP": "DUMP (Oracle's internal representation of a value)"}


# the views' columns of a RAW shown as its hex (a message's id: PostgreSQL's text)
_HEX_COLUMNS = frozenset({"MSG_ID", "ORIGINAL_MSGID"})
_TRIMS = {"LEADING": "LTRIM", "TRAILING": "RTRIM", "BOTH": "TRIM"}


def trim_from(toks: Sequence, i: int, sqlite: bool) -> dict[int, Piece]:
    """``TRIM([LEADING | TRAILING | BOTH] [c] FROM s)`` (SQLite cannot parse it) as
    ``LTRIM`` / ``RTRIM`` / ``TRIM(s[, c])`` (PostgreSQL: ``BTRIM``) — ``c`` a literal or
    a bind (else SLU-00001), of one character (ORA-30001, PostgreSQL would trim a set);
    an empty answer of any TRIM is NULL, Oracle's ''."""
    args, close = arguments(toks, i + 1)
    if close < 0 or len(args) != 1:
        return {}
    first, last = args[0]
    head, end = (toks[i].start, toks[i + 1].end), (toks[close].start, toks[close].end)
    at = next((k for k in range(first, last + 1) if toks[k].word == "FROM"), None)
    if at is None:
        return {head[0]: (head[1], "NULLIF(TRIM("), end[0]: (end[1], "), '')")}
    k, fn = first, "TRIM" if sqlite else "BTRIM"
    if toks[k].word in _TRIMS:
        fn, k = _TRIMS[toks[k].word] if toks[k].word != "BOTH" else fn, k + 1
    if k < at and (k + 1 != at or toks[k].kind not in ("str", "bind")):
        raise not_supported("TRIM of other than a literal or a bind character")
    if k < at and toks[k].kind == "str" and len(toks[k].text[1:-1].replace("''", "'")) != 1:
        raise ora(30001)
    char = ", " + toks[k].text if k < at else ""
    return {head[0]: (toks[at].end, "NULLIF(" + fn + "("), end[0]: (end[1], char + "), '')")}


def hex_column(toks: Sequence, i: int) -> dict[int, Piece]:
    """``RAWTOHEX(MSG_ID)`` on PostgreSQL's views, whose MSG_ID is its hex already (as
    Oracle's RAWTOHEX of text is: the text as a RAW, then its hex): ``UPPER(MSG_ID)``."""
    args, close = arguments(toks, i + 1)
    if len(args) == 1 and args[0][0] == args[0][1] and toks[args[0][0]].kind == "id" \
            and toks[args[0][0]].word.rsplit(".", 1)[-1].strip() in _HEX_COLUMNS:
        return {toks[i].start: (toks[i].end, "UPPER")}
    return {}


def pg_pieces(toks: Sequence, i: int) -> dict[int, Piece]:
    """What replaces which pieces of the call of ``toks[i]`` (a name of :data:`PG_CALLS`)
    on PostgreSQL; its '' arguments are NULL."""
    name = toks[i].word
    args, close, pieces = opened(toks, i, *_ARITY[name])
    if close < 0:
        return {}
    head, end = (toks[i].start, toks[i + 1].end), (toks[close].start, toks[close].end)
    commas = [toks[b + 1] for _, b in args[:-1]]

    def put(at, text: str) -> None:
        pieces[at[0] if type(at) is tuple else at.start] = (at[1] if type(at) is tuple else at.end, text)
    if name in ("GREATEST", "LEAST"):
        put(head, f"(SELECT CASE WHEN COUNT(sluice_v) = COUNT(*) THEN {'MAX' if name == 'GREATEST' else 'MIN'}"
                  "(sluice_v) END FROM (VALUES (")
        for c in commas:
            put(c, "), (")
        put(end, ")) AS sluice_values(sluice_v))")
    elif name in ("LPAD", "RPAD"):
        put(head, f"NULLIF({name}(CAST(")
        put(commas[0], " AS TEXT), CAST(TRUNC(")
        if len(commas) > 1:
            put(commas[1], ") AS INTEGER), ")
            put(end, "), '')")
        else:
            put(end, ") AS INTEGER)), '')")
    elif name in _MATCH_AT:
        at = _MATCH_AT[name]
        flags = "'" + _pg_flags(_literal_text(toks, *args[at]) if len(args) > at else None) + "'"
        tail = ""
        if len(args) > at:              # the match parameter itself
            a, b = args[at]
            pieces[toks[a].start] = (toks[b].end, flags)
        else:                           # the defaults up to it (from the third argument), then it
            tail = "".join(", " + d for d in _DEFAULTS[name][len(args) - 2:]) + ", " + flags
        if name == "REGEXP_REPLACE":    # a NULL replacement deletes; an empty answer is NULL
            put(head, "NULLIF(REGEXP_REPLACE(")
            if len(args) >= 3:
                a, b = args[2]
                if a == b and (toks[a].text == "''" or toks[a].word == "NULL"):
                    pieces[toks[a].start] = (toks[a].end, "''")
                else:
                    put((toks[a].start, toks[a].start), "COALESCE(")
                    if len(commas) > 2:
                        put(commas[2], ", ''),")
                    else:
                        tail = ", '')" + tail
            tail += "), ''"
        put(end, tail + ")")
    elif name == "TO_NUMBER":
        if len(args) == 2 and all(a == b and toks[a].kind == "str" for a, b in args):
            text, fmt = (toks[a].text[1:-1].replace("''", "'") for a, _ in args)
            value = None if text == "" or fmt == "" else read_number(text, fmt)     # ('' is NULL)
            return {toks[i].start: (toks[close].end, "CAST(NULL AS NUMERIC)" if value is None
                                    else f"CAST('{value}' AS NUMERIC)")}
        if len(args) == 2 and args[1][0] == args[1][1] and toks[args[1][0]].kind == "str":
            fmt = toks[args[1][0]].text[1:-1].replace("''", "'")
            if fmt == "":
                return {toks[i].start: (toks[close].end, "CAST(NULL AS NUMERIC)")}
            before, after = pg_read_number(fmt)     # (a column's text by the model)
            put(head, before)
            pieces[commas[0].start] = (end[1], after)
            return pieces
        if len(args) > 1:
            raise not_supported(_NUMBER_MODEL)
        put(head, "CAST(")
        put(end, " AS NUMERIC)")
    elif name == "TO_TIMESTAMP":
        if len(args) == 1:
            put(head, "CAST(")
        else:
            put(head, "CAST(TO_TIMESTAMP(")
            put(end, ") AS TIMESTAMP)")
            a, b = args[1]
            if a == b and toks[a].kind == "str":       # Oracle's FF (9 digits) as PostgreSQL's FF6
                check_format(toks[a].text[1:-1].replace("''", "'"))
                pieces[toks[a].start] = (toks[a].end, re.sub(r"(?i)FF[1-9]?", "FF6", toks[a].text))
            return pieces
        put(end, " AS TIMESTAMP)")
    elif name == "LAST_DAY":
        put(head, "(SELECT sluice_d + (DATE_TRUNC('month', sluice_d) + INTERVAL '1 month - 1 day' "
                  "- DATE_TRUNC('day', sluice_d)) FROM (VALUES (CAST(")
        put(end, " AS TIMESTAMP))) AS sluice_values(sluice_d))")
    elif name == "ADD_MONTHS":
        moved = "sluice_d + MAKE_INTERVAL(months => sluice_n)"
        put(head, "(SELECT CAST(DATE_TRUNC('second', CASE WHEN DATE_TRUNC('day', sluice_d) = DATE_TRUNC('month', "
                  "sluice_d) + INTERVAL '1 month - 1 day' THEN DATE_TRUNC('month', " + moved + ") + "
                  "INTERVAL '1 month - 1 day' + (sluice_d - DATE_TRUNC('day', sluice_d)) ELSE " + moved +
                  " END) AS TIMESTAMP(0)) FROM (VALUES (CAST(")
        put(commas[0], " AS TIMESTAMP), CAST(TRUNC(")
        put(end, ") AS INTEGER))) AS sluice_values(sluice_d, sluice_n))")
    elif name == "MONTHS_BETWEEN":
        months = ("((EXTRACT(YEAR FROM sluice_a) - EXTRACT(YEAR FROM sluice_b)) * 12 "
                  "+ EXTRACT(MONTH FROM sluice_a) - EXTRACT(MONTH FROM sluice_b))")
        last = "DATE_TRUNC('day', {0}) = DATE_TRUNC('month', {0}) + INTERVAL '1 month - 1 day'"
        put(head, f"(SELECT CASE WHEN EXTRACT(DAY FROM sluice_a) = EXTRACT(DAY FROM sluice_b) OR "
                  f"({last.format('sluice_a')} AND {last.format('sluice_b')}) THEN {months} ELSE {months} + "
                  "(EXTRACT(EPOCH FROM sluice_a - DATE_TRUNC('month', sluice_a)) - EXTRACT(EPOCH FROM "
                  "sluice_b - DATE_TRUNC('month', sluice_b))) / 2678400 END FROM (VALUES (CAST(")
        put(commas[0], " AS TIMESTAMP), CAST(")
        put(end, " AS TIMESTAMP))) AS sluice_values(sluice_a, sluice_b))")
    elif name == "NEXT_DAY":
        a, b = args[1]
        if a != b or toks[a].kind != "str":
            raise not_supported("NEXT_DAY of a day named other than by a literal")
        day = (weekday(toks[a].text[1:-1]) + 1) % 7            # PostgreSQL's DOW: Sunday 0
        put(head, "(SELECT sluice_d + MAKE_INTERVAL(days => (" + str(day) + " - CAST(EXTRACT(DOW FROM sluice_d) "
                  "AS INTEGER) + 6) % 7 + 1) FROM (VALUES (CAST(")
        pieces[commas[0].start] = (toks[b].end, " AS TIMESTAMP))) AS sluice_values(sluice_d)")
        put(end, ")")
    elif name == "SYS_GUID":
        put((toks[i].start, end[1]), "DECODE(MD5(RANDOM()::TEXT || CLOCK_TIMESTAMP()::TEXT), 'hex')")
    return pieces
