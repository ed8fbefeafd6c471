"""Oracle's own words in a user's SQL, as the store's database can answer them.

A statement typed at a cursor (``SELECT USER FROM DUAL``) runs on the store's database,
which has no Oracle session: :func:`oracle_words` replaces

* ``USER`` and ``SYS_CONTEXT('USERENV', 'SESSION_USER' | 'CURRENT_USER' |
  'CURRENT_SCHEMA')`` by the session's Sluice user (a literal: the database's own
  ``user`` would be its server login);
* ``SESSIONTIMEZONE`` / ``DBTIMEZONE`` by the session's time zone (:mod:`.sessionzone`) and
  the database's (``+00:00``: the stores keep UTC);
* ``SYSDATE`` / ``CURRENT_DATE`` (a DATE: whole seconds) and ``SYSTIMESTAMP`` /
  ``CURRENT_TIMESTAMP`` / ``LOCALTIMESTAMP`` by the clock, read once per statement as
  Oracle reads it — SYSDATE and SYSTIMESTAMP the host's wall clock (the database
  server's), the others the session time zone's, the zone the views show their dates
  in — and fetched as the naive ``datetime`` python-oracledb gives for
  DATE and TIMESTAMP [WITH TIME ZONE] (PostgreSQL: a ``TIMESTAMP`` literal; SQLite:
  text, the form its views' dates have, which :meth:`Translated.convert` turns back).
  Oracle's date arithmetic on them: ``CLOCK ± literal days ± INTERVAL '…' unit`` (and
  ``n + CLOCK``) is folded into that literal (:mod:`.sqlclock`), a bind among the days
  by its value, the bind then gone from the statement (:mod:`.clockbinds`:
  :attr:`Translated.binds` are the binds left); ``SYSDATE - column`` and
  ``column - SYSDATE`` are the days between, a float (of a user's TIMESTAMP column an
  INTERVAL DAY TO SECOND, :meth:`_Translation._interval`); ``SYSDATE + column`` adds the
  column's days (a DATE; SQLite: :mod:`.sqlitedays`); other arithmetic on them is
  refused (SLU-00001), neither database counting it in days;
* a ``date`` / ``datetime`` bind as python-oracledb binds it, an Oracle DATE (whole
  seconds): folded like ``SYSDATE`` into a literal with its arithmetic (``:t + 1``,
  ``:t - column``, ``SYSDATE - :t`` the days between, a number; ``DATE + DATE``
  ORA-00975), so SQLite fetches it back as a datetime, compared with the views' dates
  as it is (both the session zone's wall clock); a ``timedelta`` added to or taken from one is an
  INTERVAL DAY TO SECOND;
* in a statement on Sluice's views, a DATE column of theirs (:mod:`.viewdates`) ± days
  (or an INTERVAL DAY TO SECOND) is a DATE, one minus another the days between, one plus
  another ORA-00975 — the views' DATEs whole seconds there and where compared
  (:func:`.viewdates.whole_seconds`); a TIMESTAMP among them (ENQ_TIMESTAMP …,
  :data:`.viewdates.VIEW_TIMESTAMPS`), SYSTIMESTAMP minus a view's or a user's date, or
  ``CAST(SYSTIMESTAMP AS TIMESTAMP) - column``, is an INTERVAL DAY TO SECOND
  (:meth:`_Translation._timestamp_minus`); ``CAST(SYSTIMESTAMP AS DATE) - column`` the days;
* ``NUMTODSINTERVAL`` / ``NUMTOYMINTERVAL`` (:mod:`.numintervals`), an ``INTERVAL`` literal
  alone on SQLite as its days, ``EXTRACT(field FROM x)`` on SQLite by ``sluice_extract``;
  ``ROUND`` / ``TRUNC`` of a number as NUMERIC on PostgreSQL, by ``sluice_round`` /
  ``sluice_trunc`` on SQLite (:meth:`_Translation._number_call`);
* ``TRUNC(date [, 'fmt'])`` of the clock, a datetime bind (folded) or a view's DATE
  column (:func:`.viewdates.truncated`) is a DATE;
* ``DATE '…'`` / ``TIMESTAMP '…'`` literals and ``TO_DATE('text', 'fmt')`` of literals
  (:mod:`.oracledates`) as a datetime bind's value; NVL, NVL2, DECODE, SUBSTR, INSTR,
  LENGTH, TO_CHAR, TO_DATE as both stores answer them alike (:mod:`.oraclecalls`); GREATEST,
  LEAST, REGEXP_*, TO_NUMBER, TO_TIMESTAMP, ADD_MONTHS, MONTHS_BETWEEN, LAST_DAY, NEXT_DAY, LPAD,
  RPAD, TRIM … FROM, SYS_GUID as Oracle answers them (:mod:`.oraclefns`: SQLite's functions of
  those names, PostgreSQL's calls rewritten), ``ADD_MONTHS`` / ``SYS_EXTRACT_UTC`` of the
  clock folded with it;
* in a session whose NLS settings are not Oracle's defaults (ALTER SESSION, :mod:`.sessionnls`),
  TO_CHAR / TO_DATE / TO_TIMESTAMP / TO_NUMBER without a model given the session's
  (:mod:`.nlscalls`), and a date made text by ``||`` or text compared with a DATE column in its
  NLS_DATE_FORMAT (:meth:`_Translation._nls_implicit`);
* each divisor ``a / b``: on SQLite by ``a / sluice_divisor(b)``, a REAL, or ORA-01476
  for zero where SQLite answers NULL (:mod:`.sqlitefns`); on PostgreSQL by
  ``a / CAST(b AS NUMERIC)`` (it raises for zero itself) — so that integers divide
  exactly as Oracle's NUMBER (7/2 is 3.5, not 3); the quotients come back as
  python-oracledb fetches a NUMBER, as every number of the statement does (:mod:`.sqlfetch`).

Each ``''`` (and a bound ``''``) is NULL, as in Oracle; ``||`` and CONCAT skip NULLs
(:mod:`.oraclestrings`, after the words above).  Then ``TABLE(sys.odcinumberlist(…))`` (:mod:`.odcilists`),
PIVOT / UNPIVOT (:mod:`.sqlpivot`), hierarchical queries (:mod:`.sqlhierarchy`), MINUS, the CONNECT BY row generator,
UTL_RAW and DBMS_LOB calls (:mod:`.sqlsetops`),
ROWNUM, OFFSET / FETCH FIRST, a FROM subquery without an alias (PostgreSQL) and LISTAGG
as the store answers them (:mod:`.sqllimits`).

A select item so changed keeps the heading Oracle gives it (``USER``, ``1/0``) through an
alias.  Literals, quoted names and comments are never touched.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Collection, NamedTuple, Sequence

from ..errors import NotSupportedError, not_supported, ora
from .castdates import cast_end, cast_minus, cast_minus_cast, cast_plus_days
from .clockbinds import ClockBinds
from .oraclecalls import CALLS, arguments, bound_model, call_pieces
from .oraclefns import DATE_CALLS, PG_CALLS, REFUSED, add_months, hex_column, last_day, next_day, pg_pieces, trim_from
from .oracledates import datetime_literal, to_char as oracle_to_char, to_date
from .oraclestrings import EMPTY, empty_binds_null, oracle_strings
from .usercolumns import AMBIGUOUS_DATE, Columns, Lookup, date_kind, is_number, is_text, table_names
from .nlscalls import model_pieces
from .sessionnls import DEFAULT_NLS, SessionNls, pg_model, written_model
from .sessionzone import DBTIMEZONE, SessionZone
from .dateround import round_sql, rounded
from .sqllimits import limited
from .seqwords import again, is_sequence_word, pieces as sequence_pieces
from .sqlsetops import set_rewrites
from .jsonpaths import json_paths
from .sqlhierarchy import hierarchical
from .sqlpivot import pivoted
from .odcilists import odci_lists
from .sqlclock import NULL, add_days, add_interval, days_term, interval, trunc_unit, truncate
from .numintervals import (NUM_INTERVALS, check_extracts, ds_interval_pieces, ds_micros, interval_literal,
                           num_interval, scaled_intervals, unit_of)
from .viewdates import (VIEW_DATES, days_between, interval_between, plus_days, plus_interval, truncated, view_kind,
                        whole_seconds)

__all__ = ["Translated", "aliased", "on_views", "oracle_words", "tokens"]

_TOKEN = re.compile(
    r"""(?P<str>'(?:[^']|'')*')"""
    r"""|(?P<qid>"(?:[^"]|"")*")"""
    r"""|(?P<comment>--[^\n]*|/\*.*?\*/)"""
    r"""|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"""
    r"""|(?P<id>[A-Za-z_][A-Za-z0-9_$#]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_$#]*)*)"""
    r"""|(?P<bind>:[A-Za-z0-9_]+|\?\d*)"""
    r"""|(?P<ws>\s+)"""
    r"""|(?P<op>\|\||<>|!=|<=|>=|::|.)""",
    re.S,
)
# only a statement naming one of these needs the tokens
_MAYBE = ("USER", "SYS", "CURRENT_", "LOCALTIMESTAMP", "/", "TRUNC", "CAST", "TIMEZONE", "DATE", "TIMESTAMP",
          "NVL", "DECODE", "SUBSTR", "INSTR", "LENGTH", "TO_CHAR", "INTERVAL", "NUMTO", "ROUND", "EXTRACT", "TIME", "CREATED", "DELAY",
          "GREATEST", "LEAST", "REGEXP_", "TO_NUMBER", "MONTHS_BETWEEN", "LAST_DAY", "ADD_MONTHS", "LPAD", "RPAD",
          "NEXT_DAY", "RAWTOHEX", "TRIM", "DUMP", "NEXTVAL", "CURRVAL", EMPTY)

_DATES = frozenset({"SYSDATE", "CURRENT_DATE"})
_TIMESTAMPS = frozenset({"SYSTIMESTAMP", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP"})
_SERVER_CLOCK = frozenset({"SYSDATE", "SYSTIMESTAMP"})     # the others are the session zone's
_ZONED = frozenset({"SYSTIMESTAMP", "CURRENT_TIMESTAMP"})     # TIMESTAMP WITH TIME ZONE
_USERENV = frozenset({"SESSION_USER", "CURRENT_USER", "CURRENT_SCHEMA"})
# words that end a select list at its own depth (GROUP and ORDER only before BY:
# LISTAGG(...) WITHIN GROUP (ORDER BY ...) stays in the item)
_LIST_END = frozenset({"FROM", "INTO", "WHERE", "HAVING", "UNION", "INTERSECT", "EXCEPT", "MINUS",
                       "LIMIT", "FETCH", "OFFSET", "WINDOW", "CONNECT", "START"})
# words that continue an expression: the name after one is not an alias
_CONTINUE = frozenset({"AND", "OR", "NOT", "IS", "IN", "LIKE", "BETWEEN", "ESCAPE", "COLLATE", "THEN",
                       "ELSE", "WHEN", "CASE", "PRIOR", "CONNECT_BY_ROOT"})
# … and words that end one (INTERVAL '1' DAY is not '1' aliased DAY)
_NOT_ALIAS = _CONTINUE | {"END", "NULL", "TRUE", "FALSE", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}
# words before which an operand starts, and words that are no column's name
_KEYWORDS = _CONTINUE | _LIST_END | {"SELECT", "DISTINCT", "ALL", "BY", "ON", "SET", "VALUES", "RETURN",
                                     "RETURNING", "USING", "AS", "ANY", "SOME", "EXISTS", "PRIOR"}
_NOT_NAMES = _KEYWORDS | _DATES | _TIMESTAMPS | {"USER", "INTERVAL", "DATE", "TIMESTAMP", "NULL", "END",
                                                 "TRUE", "FALSE", "SYS_CONTEXT"}
# calls whose value is one of their arguments (a date's text on SQLite when one is a date)
_ONE_OF_ARGS = frozenset({"NVL", "NVL2", "COALESCE", "IFNULL", "GREATEST", "LEAST", "NULLIF", "DECODE", "MAX",
                          "MIN"})
_ARITHMETIC = frozenset({"+", "-", "*", "/"})
# comparison operators: a view's DATE compared is whole seconds
_COMPARE = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
# a name times something (``SELECT * FROM`` is none): maybe a date column's arithmetic
_TIMES = re.compile(r"""[\w$#"]\s*\*(?!\s*(?:FROM\b|,))""", re.I)
# Sluice's views: their DATE columns (viewdates) have Oracle's date arithmetic
_VIEWS = ("AQ$", "DBA_", "ALL_", "USER_", "V$", "GV$")


class _Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int

    @property
    def word(self) -> str:
        return self.text.upper() if self.kind == "id" else ""


@dataclass
class Translated:
    """A statement made runnable; the clock values to give back as datetimes (SQLite's
    text of them -> the value);
    the tokens of the statement typed, if they were read (:mod:`.sqlheadings` reuses them);
    the binds to run it with (those given, less the ones folded into the clock)."""

    text: str
    dates: dict[str | datetime, datetime] = field(default_factory=dict)
    toks: list[_Tok] | None = None          # the user's statement's, when they were read
    binds: dict | Sequence | None = None
    dated: frozenset[int] = frozenset()     # tokens (a datetime bind, a column of days) making a DATE
    # (start, end) in the user's text of each TIMESTAMP minus a date: an INTERVAL DAY TO SECOND
    intervals: frozenset[tuple[int, int]] = frozenset()
    # (start, end) of each TIMESTAMP plus an interval SQLite answers as text: a TIMESTAMP
    stamped: frozenset[tuple[int, int]] = frozenset()

    def convert(self, rows: list[tuple], text: Collection[int] = ()) -> list[tuple]:
        """``rows`` with this statement's clock values as datetimes (SQLite: their text, as
        the statement folded them), but in the columns ``text`` (items that are text:
        :func:`.sqlheadings.oracle_headings`)."""
        dates = self.dates
        if dates:
            rows = [tuple(dates.get(v, v) if (type(v) is str or type(v) is datetime) and i not in text else v
                          for i, v in enumerate(row))
                    for row in rows]
        return rows


def oracle_words(sql: str, user: str, sqlite: bool, now: datetime | None = None,
                 binds: dict | Sequence | None = None, columns: Lookup | None = None,
                 zone: SessionZone | None = None, nls: SessionNls = DEFAULT_NLS) -> Translated:
    """``sql`` with Oracle's session words answered for ``user`` (see the module);
    ``sqlite`` for the SQLite store (clock as text, divisions checked), else PostgreSQL;
    ``now`` the host's clock (read when the statement needs it); ``binds`` the values the
    statement is to run with (by name or by position); ``columns`` looks up the declared
    types of the user's tables the statement names (:mod:`.usercolumns`), for arithmetic on
    their DATE columns; ``zone`` the session's time zone (None: the host's); ``nls`` its NLS
    settings (:mod:`.nlscalls`)."""
    upper = sql.upper()
    binds = empty_binds_null(binds)       # a bound '' is NULL, as python-oracledb sends it
    if not any(word in upper for word in _MAYBE) and not _dated(binds) and not (
            ("+" in sql or "-" in sql) and any(view in upper for view in _VIEWS)) and not (
            columns is not None and ("+" in sql or "-" in sql or sqlite and "*" in sql and _TIMES.search(sql))) and not (
            nls is not DEFAULT_NLS and ("'" in sql or "||" in sql)):     # (implicit conversions: .nlscalls)
        return _limited(Translated(sql, binds=binds), sqlite, columns)
    return _limited(_Translation(sql, user, sqlite, now, binds, columns, zone, nls).run(), sqlite, columns)


def _limited(out: Translated, sqlite: bool, columns: Lookup | None = None) -> Translated:
    """``out`` with ROWNUM, FETCH FIRST, unaliased subqueries and LISTAGG as the store
    answers them (:mod:`.sqllimits`), MINUS, CONNECT BY LEVEL and UTL_RAW / DBMS_LOB before
    (:mod:`.sqlsetops`), hierarchical queries before, PIVOT / UNPIVOT first (:mod:`.sqlpivot`)."""
    text = odci_lists(oracle_strings(out.text, sqlite, tokens, aliased), sqlite, tokens)
    text = json_paths(text, sqlite, tokens, columns, aliased)
    text = pivoted(text, sqlite, tokens, columns)
    text = set_rewrites(hierarchical(text, sqlite, tokens, aliased, columns), sqlite, tokens)
    text, binds = limited(text, out.binds, sqlite, tokens)
    if text is not out.text:
        out.text, out.binds = text, binds
    return out


class _Translation:
    def __init__(self, sql: str, user: str, sqlite: bool, now: datetime | None,
                 binds: dict | Sequence | None, columns: Lookup | None = None,
                 zone: SessionZone | None = None, nls: SessionNls = DEFAULT_NLS) -> None:
        self.sql, self.user, self.sqlite, self.nls = sql, user, sqlite, nls
        self.lookup = columns
        self.columns: Columns | None = None     # the user's tables' columns, once looked up
        self.now, self.zone = now, zone
        self.dates: dict[str | datetime, datetime] = {}
        self.toks = tokens(sql)
        self.binds = ClockBinds(self.toks, binds)
        self.on_views: bool | None = None                # read when a view's date is (_on_views)
        self.items: list[tuple[int, int]] | None = None
        self.skip = -1                                   # tokens up to this one are done
        self.replace: dict[int, tuple[int, str]] = {}     # start -> (end, text)
        self.opens: dict[int, int] = {}                  # a divisor's wrapping starts before
        self.closes: dict[int, int] = {}                 # … and ends at
        self.aliases: dict[int, str] = {}
        self.dated: set[int] = set()        # (Translated.dated)
        self.intervals: set[tuple[int, int]] = set()     # (Translated.intervals)
        self.stamped: set[tuple[int, int]] = set()       # (Translated.stamped)
        self.casts: dict[int, tuple[int, str]] = {}   # a CAST's operand's start -> (its end, DATE | TIMESTAMP)

    def run(self) -> Translated:
        toks = self.toks
        for i, t in enumerate(toks):      # Oracle's '' is NULL (.oraclestrings); X'' stays a RAW
            if t.kind == "str" and t.text == EMPTY and not (
                    i and toks[i - 1].kind == "id" and toks[i - 1].end == t.start):
                self.replace[t.start] = (t.end, "NULL")
        for i, t in enumerate(toks):
            if i <= self.skip:
                continue
            if t.kind == "id":
                self._word(i, t)
            elif t.text == "/":
                self._divisor(i + 1)
            elif t.kind == "str" and self.nls is not DEFAULT_NLS and t.text != EMPTY:
                self._nls_implicit(i)       # text compared with a date: read by NLS_DATE_FORMAT
            elif t.kind == "bind" and isinstance(self.binds.peek(i), dt.date):
                if not (self.nls is not DEFAULT_NLS and self._nls_implicit(i)):    # (|| a bind: text)
                    self._clock(i, i, 0, self._bind_date(i))
            elif self.sqlite and t.kind == "bind" and i not in self.binds.used and isinstance(
                    self.binds.peek(i), dt.timedelta):      # (SQLite binds no timedelta: its days)
                self.intervals.add((t.start, t.end))
                self.replace[t.start] = (t.end, f"({float(_seconds(self.binds.take(i)) / 86400)!r})")
        if not (self.replace or self.opens):
            return Translated(self.sql, toks=toks, binds=self.binds.binds)
        self._headings()
        if self.intervals:
            check_extracts(toks, self.intervals)
        intervals = scaled_intervals(toks, self.intervals) if self.sqlite and self.intervals else self.intervals
        return Translated(self._text(), self.dates, toks, self.binds.remaining(), frozenset(self.dated),
                          frozenset(intervals), frozenset(self.stamped))

    # -- the words ---------------------------------------------------------------------
    def _word(self, i: int, t: _Tok) -> None:
        word, toks = t.word, self.toks
        after = toks[i + 1].text if i + 1 < len(toks) else ""
        if word.endswith(("NEXTVAL", "CURRVAL")) and is_sequence_word(word):     # (.seqwords)
            self.replace.update(sequence_pieces(toks, i, self.user, self.sqlite))
        elif word == "USER" and after != "(":
            self.replace[t.start] = (t.end, _literal(self.user))
        elif word in ("SESSIONTIMEZONE", "DBTIMEZONE") and after != "(":
            zone = DBTIMEZONE if word == "DBTIMEZONE" or self.zone is None else self.zone.name
            self.replace[t.start] = (t.end, _literal(zone))
        elif word == "SYS_CONTEXT":
            call = toks[i + 1:i + 6]
            if ([c.text for c in call[::2]] == ["(", ",", ")"] and call[1].kind == call[3].kind == "str"
                    and call[1].text.upper() == "'USERENV'" and call[3].text[1:-1].upper() in _USERENV):
                self.replace[t.start] = (call[-1].end, _literal(self.user))
        elif self.nls is not DEFAULT_NLS and self._nls_implicit(i):
            return      # a date made text by || in the session's NLS_DATE_FORMAT (.nlscalls)
        elif word in _DATES and after != "(":
            self._clock(i, i, 0)
        elif word in _TIMESTAMPS:
            call = toks[i + 1:i + 4]
            if after == "(" and [c.text for c in call[::2]] == ["(", ")"] and call[1].text.isdigit():
                self._clock(i, i + 3, int(call[1].text))
            elif after != "(":
                self._clock(i, i, 6)
        elif word in ("DATE", "TIMESTAMP") and i + 1 < len(toks) and toks[i + 1].kind == "str":
            value, digits = datetime_literal(word, toks[i + 1].text[1:-1])
            self.dated.add(i)
            self._clock(i, i + 1, digits, value)     # as a datetime bind's value
        elif word in CALLS and after == "(":
            self._call(i)
        elif word in DATE_CALLS and after == "(" and self._clock_call(i):
            return    # folded: the call of the clock, a bind or a literal is now a value
        elif word in PG_CALLS and after == "(" and not self.sqlite:
            self.replace.update(pg_pieces(toks, i))
            if self.nls is not DEFAULT_NLS:     # TO_TIMESTAMP / TO_NUMBER of text in the session's NLS_…
                self.replace.update(self._nls_pieces(i) or {})
        elif word == "RAWTOHEX" and after == "(" and not self.sqlite and self._on_views():
            self.replace.update(hex_column(toks, i))
        elif word in REFUSED and after == "(":
            raise not_supported(REFUSED[word])
        elif word == "TRIM" and after == "(":
            self.replace.update(trim_from(toks, i, self.sqlite))
        elif word in NUM_INTERVALS and after == "(":
            self._num_interval(i)
        elif word == "INTERVAL" and self.sqlite and i + 1 < len(toks) and toks[i + 1].kind == "str":
            self._interval_literal(i)
        elif word == "ROUND" and after == "(":
            self._trunc(i)          # (ROUND of a date as TRUNC of one, else of a number)
        elif word == "EXTRACT" and after == "(" and self.sqlite and i + 3 < len(toks) \
                and toks[i + 2].word in ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND") \
                and toks[i + 3].word == "FROM":      # (SQLite has no EXTRACT: .sqlitedays)
            self.replace[t.start] = (toks[i + 3].end, f"sluice_extract('{toks[i + 2].word}', ")
            self.skip = i + 3
        elif after in ("+", "-") and (self._view_date(i) or self._user_date(i)) and self._starts_operand(i):
            self._date_column(i)
        elif (after == "(" and i + 4 < len(toks) and toks[i + 4].text in ("+", "-") and self._starts_operand(i)
              and self._extreme(i) is not None):
            self._date_column(i, i + 3, i + 2)
        elif after in ("*", "/") and self.sqlite and self._user_date(i):     # (PostgreSQL: ORA-00932 itself)
            raise ora(932, "NUMBER", "DATE")
        elif i > 0 and (toks[i - 1].text in ("+", "-") or self.sqlite and toks[i - 1].text in ("*", "/")) \
                and self._user_date(i):
            self._date_after_operator(i)
        elif after == ")" and self.sqlite and self._arithmetic_outside(i, i) and self._user_date(i):
            raise _unanswered(t.text)
        elif (i > 0 and toks[i - 1].text in _ARITHMETIC or after in ("*", "/") or after in ("+", "-") and not (
                i > 0 and toks[i - 1].text == "||")) and self._user_text(i):
            # a text column an operand of arithmetic (not of a || before it): a number, ORA-01722 for none
            self.replace[t.start] = (t.end, f"TO_NUMBER({t.text})" if self.sqlite else f"CAST({t.text} AS NUMERIC)")
        elif self.sqlite and self.lookup is not None and (word in _ONE_OF_ARGS and after == "(" or word == "CASE"):
            self._date_choice(i)
        elif word == "TRUNC" and after == "(":
            self._trunc(i)
        elif word == "CAST" and after == "(":
            self._cast(i)
        elif (after in _COMPARE or i > 0 and toks[i - 1].text in _COMPARE
              or i + 1 < len(toks) and toks[i + 1].word in ("BETWEEN", "IN")) and self._view_kind(i) == "DATE":
            # a view's DATE compared (no arithmetic took it above): whole seconds, as fetched
            self.replace[t.start] = (t.end, whole_seconds(self.sqlite, t.text))

    def _call(self, i: int) -> None:
        """A call of one of Oracle's functions both stores answer alike (:mod:`.oraclecalls`);
        ``TO_DATE('text', 'fmt')`` of literals folded as a datetime bind's value is
        (:mod:`.oracledates`: Oracle's errors for a bad model or text)."""
        toks, word = self.toks, self.toks[i].word
        if word == "TO_DATE":
            self.dated.add(i)
            args, close = arguments(toks, i + 1)
            if close > 0 and all(a == b and toks[a].kind == "str" and toks[a].text != "''" for a, b in args) and (
                    len(args) == 2 or len(args) == 1 and self.nls is not DEFAULT_NLS):     # ('' is NULL: the call's)
                text, *model = (toks[a].text[1:-1].replace("''", "'") for a, _ in args)
                self._clock(i, close, 0, to_date(text, model[0] if model else written_model(self.nls.date_format)))
                return
        if word == "TO_CHAR" and not self.sqlite:     # a bound number model as a literal one (.oraclecalls)
            toks = bound_model(toks, i, self.binds.peek, self.binds.take, self._user_number)
        self.replace.update(call_pieces(toks, i, self.sqlite, self.nls))
        if self.nls is not DEFAULT_NLS and word in ("TO_CHAR", "TO_DATE"):    # no model: the session's
            self.replace.update(self._nls_pieces(i) or {})
        if self.sqlite and self.lookup is not None and word in _ONE_OF_ARGS:
            self._date_choice(i)

    def _nls_pieces(self, i: int) -> dict | None:
        """The call at token ``i`` without a model given the session's (:mod:`.nlscalls`)."""
        def kind(j: int) -> str | None:
            t, value = self.toks[j], self.binds.peek(j) if self.toks[j].kind == "bind" else None
            if t.word in _DATES or t.word in _TIMESTAMPS and t.word not in _ZONED:
                return "DATE" if t.word in _DATES else "TIMESTAMP"
            if isinstance(value, dt.date):
                return "TIMESTAMP" if getattr(value, "microsecond", 0) else "DATE"
            return self._date_kind(j) if t.kind == "id" else None

        def text(j: int) -> bool:
            t = self.toks[j]
            return (t.kind == "str" or t.kind == "bind" and isinstance(self.binds.peek(j), str)
                    or t.kind == "id" and self._user_text(j))
        return model_pieces(self.toks, i, self.sqlite, self.nls, kind, text)

    def _nls_implicit(self, i: int) -> bool:
        """Oracle's implicit conversions in the session's NLS_DATE_FORMAT (not the default's):
        SYSDATE / CURRENT_DATE or a date column of the user's tables or the views an operand of
        ``||`` (made text), text compared with such a column (read as a date: ORA-01861 … for
        text the model does not read).  True when token ``i`` was so converted."""
        toks, t = self.toks, self.toks[i]
        before = toks[i - 1].text if i else ""
        after = toks[i + 1].text if i + 1 < len(toks) else ""
        if t.kind == "str":
            j = i + 2 if after in _COMPARE else i - 2 if before in _COMPARE else -1
            if 0 <= j < len(toks) and toks[j].kind == "id" and self._date_kind(j) == "DATE":
                value = to_date(t.text[1:-1].replace("''", "'"), written_model(self.nls.date_format))
                text = _literal(value.isoformat(" "))
                self.replace[t.start] = (t.end, text if self.sqlite else f"TIMESTAMP {text}")
                return True
            return False
        if "||" not in (before, after) or after == "(":
            return False
        fmt = written_model(self.nls.date_format)
        if t.word in _DATES or t.kind == "bind":
            value = self._bind_date(i) if t.kind == "bind" else self._now(t.word).replace(microsecond=0)
            self.replace[t.start] = (t.end, _literal(oracle_to_char(value, fmt)))
            return True
        if self._date_kind(i) != "DATE":
            return False
        model = _literal(fmt if self.sqlite else pg_model(self.nls.date_format))
        self.replace[t.start] = (t.end, f"{'ORACLE_TO_CHAR' if self.sqlite else 'to_char'}({t.text}, {model})")
        return True

    def _clock_call(self, i: int) -> bool:
        """``ADD_MONTHS(d, n)`` (``n`` a number or a bind), ``LAST_DAY(d)``, ``NEXT_DAY(d,
        'day')`` of the clock, a datetime bind or a DATE literal folded as the clock is, its
        arithmetic with it (:mod:`.oraclefns`); ``SYS_EXTRACT_UTC`` of SYSTIMESTAMP (or
        CURRENT_TIMESTAMP) the UTC clock, of anything else SLU-00001.  False: not folded (the
        stores answer it) — but arithmetic on such a date of a column is SLU-00001, neither
        store counting it in days."""
        toks, word = self.toks, self.toks[i].word
        args, close = arguments(toks, i + 1)
        if close < 0 or not args:
            return False
        if word == "SYS_EXTRACT_UTC":
            if len(args) != 1 or args[0][0] != args[0][1] or toks[args[0][0]].word not in _ZONED:
                raise not_supported("SYS_EXTRACT_UTC of other than SYSTIMESTAMP or CURRENT_TIMESTAMP")
            self._now()
            self.dated.update(range(i, close + 1))
            self._clock(i, close, 6, self.now.astimezone(dt.timezone.utc).replace(tzinfo=None))
            return True
        folded = self._folded_call(i, args, close)
        if folded is None:
            if (close + 1 < len(toks) and toks[close + 1].text in ("+", "-")) or toks[i - 1].text in ("+", "-"):
                raise not_supported(f"date arithmetic on {word}(…) of other than the clock, a datetime bind or "
                                    "a DATE literal")
            return False
        self.dated.update(range(i, close + 1))
        self._clock(i, close, 0, folded)
        return True

    def _folded_call(self, i: int, args: list[tuple[int, int]], close: int) -> datetime | None:
        """The value of ``ADD_MONTHS`` / ``LAST_DAY`` / ``NEXT_DAY`` (its arguments ``args``)
        at token ``i`` of the clock, a datetime bind (taken) or a DATE literal: a DATE; None
        when it is of anything else."""
        toks, word = self.toks, self.toks[i].word
        (a, b), *rest = args
        t, fold = toks[a], None
        if word == "ADD_MONTHS" and len(rest) == 1:
            c, d = rest[0]
            sign, n = -1 if c + 1 == d and toks[c].text == "-" else 1, toks[d]
            if (c == d or sign < 0) and (n.kind == "num" or n.kind == "bind" and not isinstance(
                    self.binds.peek(d), bool) and isinstance(self.binds.peek(d), (int, float, Decimal))):
                def fold(value):
                    return add_months(value, sign * (Fraction(n.text) if n.kind == "num" else self.binds.days(d)))
        elif word == "LAST_DAY" and not rest:
            fold = last_day
        elif word == "NEXT_DAY" and len(rest) == 1 and rest[0][0] == rest[0][1] and toks[rest[0][0]].kind == "str":
            def fold(value):
                return next_day(value, toks[rest[0][0]].text[1:-1])
        if fold is not None and a == b and t.word in _DATES:
            return fold(self._now(t.word).replace(microsecond=0))
        if fold is not None and a + 1 == b and t.word == "DATE" and toks[b].kind == "str":
            return fold(datetime_literal("DATE", toks[b].text[1:-1])[0])
        if fold is not None and a == b and t.kind == "bind" and isinstance(self.binds.peek(a), dt.date):
            return fold(self._bind_date(a))
        return None

    def _cast(self, i: int) -> None:
        """``CAST(x AS DATE | TIMESTAMP)`` as Oracle answers it.  Of a view's DATE column it
        is the column (a DATE already): PostgreSQL's DATE would drop its time of day,
        SQLite's CAST read its text as the number of its year.  Of the clock or a datetime
        bind with their literal arithmetic it is their folded literal (:meth:`_clock`), to
        the second for a DATE.  Any other CAST to DATE on PostgreSQL keeps the time of day
        as Oracle's DATE does (``date_trunc('second', CAST(x AS TIMESTAMP))``); on SQLite it
        is ``sluice_cast_date(x, 'DATE' | 'TIMESTAMP')`` (:mod:`.sqlitedays`: a date's text
        read as the date, a number ORA-00932).  The CAST's first token joins :attr:`dated`
        when Sluice answered it (the item's type is the CAST's, :mod:`.sqlheadings`).  A
        CAST to any other type is the database's."""
        toks, k = self.toks, i + 2
        close = _closes(toks, i + 1)
        to = close - 1
        if close < 0 or toks[to].word not in ("DATE", "TIMESTAMP") or toks[to - 1].word != "AS" or to - 1 <= k:
            return
        if to - 1 == k + 1 and self._view_date(k):     # (a DATE's or to a DATE: whole seconds)
            whole = toks[to].word == "DATE" or self._view_kind(k) == "DATE"
            self.replace[toks[i].start] = (toks[close].end, whole_seconds(self.sqlite, toks[k].text) if whole
                                           else toks[k].text)
            self.skip = close
            return
        t, after = toks[k], toks[k + 1].text
        if t.word in _DATES | _TIMESTAMPS and after != "(" or (
                t.word in _TIMESTAMPS and after == "(") or t.kind == "bind" and isinstance(self.binds.peek(k), dt.date):
            folded = (t.start, toks[to - 2].end)
            self.casts[t.start] = (toks[to - 2].end, toks[to].word)
            if t.kind == "bind":
                self._clock(k, k, 0, self._bind_date(k))
            else:
                self._word(k, t)
            if self.replace.get(t.start, (None,))[0] == folded[1] and self.skip == to - 2:
                self.replace[toks[i].start] = (toks[close].end, self.replace.pop(t.start)[1])
                self.skip = close
                self.dated.add(i)
                self._cast_minus(i, close)
                return
        plus = cast_plus_days(toks, i, close, toks[to].word, self.sqlite, self._days_term)
        if plus is not None:        # CAST(x AS DATE) ± days: a DATE (.castdates)
            self.dated.update(range(i, plus[0] + 1))
            self.replace[toks[i].start] = (toks[plus[0]].end, plus[1])
            self.skip = plus[0]
            return
        minus = cast_minus_cast(toks, i, close, toks[to].word, self.sqlite, lambda p: _closes(toks, p))
        if minus is not None:       # CAST(x AS DATE) - CAST(y AS DATE): the days between (.castdates)
            end, piece, interval = minus
            if interval:
                self.intervals.add((toks[i].start, toks[end].end))
            self.replace[toks[i].start] = (toks[end].end, piece)
            self.skip = end
            return
        if not self.sqlite and toks[to].word == "DATE":
            self.replace[toks[i].start] = (toks[i].end, "date_trunc('second', CAST")
            self.replace[toks[to].start] = (toks[to].end, "TIMESTAMP)")
            self.dated.add(i)
        elif self.sqlite:     # SQLite's CAST reads a date's text as its year: Sluice's reads the date
            self.replace[toks[i].start] = (toks[i + 1].end, "sluice_cast_date(")
            self.replace[toks[to - 1].start] = (toks[to].end, f", '{toks[to].word}'")
            self.dated.add(i)

    def _trunc(self, i: int) -> None:
        """``TRUNC(date [, 'fmt'])`` (:func:`.sqlclock.trunc_unit`) or ``ROUND(date [, 'fmt'])``
        (:mod:`.dateround`) of the clock, a datetime bind or a DATE / TIMESTAMP literal, folded
        into the clock's literal with the arithmetic after it, or of a view's or a user's DATE
        column (:func:`.viewdates.truncated`, :func:`.dateround.round_sql`); a DATE.  Of
        anything else (a number) it is :meth:`_number_call`'s."""
        toks, k = self.toks, i + 2
        if k + 1 >= len(toks):
            return
        t, after = toks[k], toks[k + 1].text
        clock = t.word in _DATES | _TIMESTAMPS and after != "("
        bind = t.kind == "bind" and isinstance(self.binds.peek(k), dt.date)
        literal = t.word in ("DATE", "TIMESTAMP") and toks[k + 1].kind == "str" and k + 2 < len(toks)
        if literal:
            k, after = k + 1, toks[k + 2].text
        user = not (clock or bind or literal) and self._user_date(k)
        if not (clock or bind or literal or user or self._view_date(k)):
            self._number_call(i)
            return
        if after == ")":
            close, fmt = k + 1, None
        elif (after == "," and k + 3 < len(toks) and toks[k + 2].kind == "str"
              and toks[k + 3].text == ")"):
            close, fmt = k + 3, toks[k + 2].text[1:-1].replace("''", "'")
        elif after in ("+", "-", "*", "/"):
            n = k + 2
            if after == "+" or after == "-" and not (
                    n < len(toks) and (toks[n].word in _DATES | _TIMESTAMPS or self._a_date(n)
                                       or self._extreme(n) is not None or toks[n].word in ("TRUNC", "ROUND")
                                       or toks[n].kind == "bind" and isinstance(self.binds.peek(n), dt.date)
                                       or toks[n].word in ("DATE", "TIMESTAMP") and n + 1 < len(toks)
                                       and toks[n + 1].kind == "str")):
                # a date plus or minus days is a date, which neither store truncates so (SQLite
                # answered NULL, PostgreSQL ORA-00932)
                raise not_supported(f"{toks[i].word} of date arithmetic in SQL (Sluice answers it of a date, "
                                    "or of a difference of dates)")
            self._number_call(i)        # (of days between: a number)
            return
        else:
            return
        unit = trunc_unit(fmt)
        rounding = toks[i].word == "ROUND"      # (Oracle's rules: .dateround)
        self.dated.update(range(i, close + 1))
        if clock or bind or literal:
            value = (self._bind_date(k) if bind else datetime_literal(t.word, toks[k].text[1:-1])[0] if literal
                     else self._now(t.word))
            self._clock(i, close, 0, (rounded if rounding else truncate)(value, unit))
            return
        if close + 1 < len(toks) and toks[close + 1].text in ("+", "-"):
            raise not_supported(f"date arithmetic on {toks[i].word} of a column in SQL")
        column = f"CAST({t.text} AS TIMESTAMP)" if user and not self.sqlite else t.text    # (PostgreSQL's date)
        self.replace[toks[i].start] = (toks[close].end, (round_sql if rounding else truncated)(
            self.sqlite, column, unit))
        self.skip = close

    # -- the DATE columns of Sluice's views ----------------------------------------------
    def _view_date(self, i: int) -> bool:
        """Whether token ``i`` names a DATE column of Sluice's views in a statement on them."""
        t = self.toks[i]
        return (t.kind == "id" and t.word.rpartition(".")[2].strip() in VIEW_DATES
                and not (i + 1 < len(self.toks) and self.toks[i + 1].text == "(") and self._on_views())

    def _user_date(self, i: int) -> str | None:
        """``DATE`` or ``TIMESTAMP`` when token ``i`` names a DATE or TIMESTAMP column of
        the user's tables the statement names (:mod:`.usercolumns`; looked up once, when
        first asked), else None.  A name two of them declare differently, one as a date,
        is refused: the text cannot tell which one it is."""
        t = self.toks[i]
        if self.lookup is None or t.kind != "id" or t.word in _NOT_NAMES or (
                i + 1 < len(self.toks) and self.toks[i + 1].text == "("):
            return None
        if self.columns is None:
            self.columns = self.lookup(table_names(self.toks))
        decl = self.columns.get(t.word.rpartition(".")[2].strip())
        if decl == AMBIGUOUS_DATE:
            raise not_supported(f"date arithmetic on {t.text}, a column two of the statement's tables "
                                "declare with different types (name the one meant by another alias)")
        return date_kind(decl)

    def _date_after_operator(self, i: int) -> None:
        """A user's DATE column at token ``i`` after an arithmetic operator that no date
        before it took: ``n + column`` (a number, a bind, a column of days) is the DATE n
        days on; a number times or by a DATE ORA-00932; anything else is left to
        PostgreSQL (which refuses what it cannot type) and refused on SQLite, which would
        compute on the year of the date's text."""
        toks, op = self.toks, self.toks[i - 1].text
        if op in ("*", "/"):
            raise ora(932, "NUMBER", "DATE")
        first = i - 2
        if op == "+" and first >= 0 and not self._continues(i):
            if toks[first].kind in ("num", "bind") and not isinstance(self.binds.peek(first), dt.date):
                name = first if self._starts_operand(first) else None
            else:
                name = self._name_before(i - 1)
                if name is not None and (self._a_date(name) or toks[name].word in _NOT_NAMES):
                    name = None
            if name is not None:
                self.dated.update(range(name, i + 1))
                days = self.sql[toks[name].start:toks[i - 2].end]
                self.replace[toks[name].start] = (toks[i].end, plus_days(self.sqlite, toks[i].text, days))
                return
        if self.sqlite:
            raise _unanswered(toks[i].text)

    def _date_choice(self, i: int) -> None:
        """On SQLite, refuse arithmetic on a call at token ``i`` whose value is one of its
        arguments (NVL, COALESCE, GREATEST …, CASE … END) when a date is among them: the
        value is the date's text, whose year SQLite would compute on."""
        toks = self.toks
        if toks[i].word == "CASE":
            depth, end = 0, None
            for j in range(i, len(toks)):
                depth += (toks[j].word == "CASE") - (toks[j].word == "END")
                if depth == 0:
                    end = j
                    break
        else:
            end = _closes(toks, i + 1)
        if end is None or end < 0:
            return
        ops = ("+", "-", "*", "/")
        if not (end + 1 < len(toks) and toks[end + 1].text in ops or i > 0 and toks[i - 1].text in ops):
            return
        condition = False           # a CASE's WHEN … THEN: no value of it
        for k in range(i + 1, end):
            t = toks[k]
            if t.word in ("WHEN", "THEN", "ELSE"):
                condition = t.word == "WHEN"
            if condition:
                continue
            if (t.word in _DATES | _TIMESTAMPS or t.kind == "bind" and isinstance(self.binds.peek(k), dt.date)
                    or t.kind == "id" and self._a_date(k)):
                raise _unanswered(self.sql[toks[i].start:toks[end].end])

    def _extreme(self, i: int) -> int | None:
        """The last token of ``MAX(column)`` / ``MIN(column)`` at token ``i`` of a DATE
        column (the views' or a user's: a DATE as the column is), else None."""
        toks = self.toks
        if (toks[i].word in ("MAX", "MIN") and i + 3 < len(toks) and toks[i + 1].text == "("
                and toks[i + 3].text == ")" and self._a_date(i + 2)):
            return i + 3
        return None

    def _arithmetic_outside(self, first: int, last: int) -> bool:
        """Whether the expression at tokens ``first``..``last``, in parentheses of its own
        (``(d)``, ``((d + 1))``), is an operand of arithmetic outside them."""
        toks, depth = self.toks, 0
        while first > 0 and last + 1 < len(toks) and toks[first - 1].text == "(" and toks[last + 1].text == ")":
            first, last, depth = first - 1, last + 1, depth + 1
            if first > 0 and toks[first - 1].kind in ("id", "qid") and toks[first - 1].word not in _KEYWORDS:
                return False        # a call's argument
        return depth > 0 and (last + 1 < len(toks) and toks[last + 1].text in ("+", "-", "*", "/")
                              or first > 0 and toks[first - 1].text in ("+", "-", "*", "/"))

    def _user_number(self, i: int) -> bool:
        """Whether token ``i`` names a column of the user's tables declared a number (or is the
        CONNECT BY row generator's LEVEL, :mod:`.sqlsetops`)."""
        if self.toks[i].word == "LEVEL" and "CONNECT" in self.sql.upper():
            return True
        if self.lookup is None or self.toks[i].kind != "id":
            return False
        if self.columns is None:
            self.columns = self.lookup(table_names(self.toks))
        return is_number(self.columns.get(self.toks[i].word.rpartition(".")[2].strip()))

    def _user_text(self, i: int) -> bool:
        """Whether token ``i`` names a column of the user's tables declared as text."""
        if self.lookup is None or self.toks[i].kind != "id":
            return False
        if self.columns is None:
            self.columns = self.lookup(table_names(self.toks))
        return is_text(self.columns.get(self.toks[i].word.rpartition(".")[2].strip()))

    def _a_date(self, i: int) -> bool:
        return self._view_date(i) or self._user_date(i) is not None

    def _date_column(self, i: int, last: int | None = None, column: int | None = None) -> None:
        """``column ± days …`` (a DATE, :func:`.viewdates.plus_days`) or ``column - column``
        (days between) for a DATE column of the views or of the user's tables at token
        ``i`` (or ``MAX(column)`` / ``MIN(column)``: tokens ``i``..``last``, the column
        ``column``); ``column + column`` is ORA-00975.  A user's DATE column ± a column of
        days is a DATE too; a TIMESTAMP column minus a date (or a date minus it) is Oracle's
        INTERVAL DAY TO SECOND (:meth:`_interval`).  The clock or a datetime bind after it is left to
        their own arithmetic; other arithmetic on a user's date SQLite would do on the year
        of its text, so it is refused there."""
        last = i if last is None else last
        toks, j, days = self.toks, last, Fraction(0)
        stamp: Fraction | None = None       # the seconds of the intervals a TIMESTAMP takes on SQLite
        more = ""                           # … and NUMTODSINTERVAL of columns: their microseconds' SQL
        date = self.sql[toks[i].start:toks[last].end]
        user = self._user_date(i if column is None else column)
        kind = self._date_kind(i if column is None else column)
        while j + 1 < len(toks) and toks[j + 1].text in ("+", "-"):
            minus, k = toks[j + 1].text == "-", j + 2
            # an interval this loop takes: NUMTODSINTERVAL of a bind, a timedelta bind (taken)
            takes = kind == "DATE" or kind == "TIMESTAMP" and self.sqlite and (j == last or stamp is not None)
            if k >= len(toks) or toks[k].word in _DATES or toks[k].word in _TIMESTAMPS or (
                    toks[k].kind == "bind" and isinstance(self.binds.peek(k), dt.date)) or (
                    not takes and toks[k].kind == "bind" and isinstance(self.binds.peek(k), dt.timedelta)) or (
                    toks[k].word in ("DATE", "TIMESTAMP") and k + 1 < len(toks) and toks[k + 1].kind == "str") or (
                    toks[k].word == "TRUNC" and self._truncates_clock(k)):
                break       # (the clock's, the bind's or the literal's own arithmetic: _clock)
            other = k if self._a_date(k) else self._extreme(k)
            if j == last and other is not None and not self._continues(other):
                if not minus:
                    raise ora(975)
                own = i if column is None else column
                k, col = other, k if other == k else k + 2
                col_user = self._user_date(col)
                a, b = (self._whole_date(x, c) for x, c in (
                    (date, own), (self.sql[toks[j + 2].start:toks[other].end], col)))
                if "TIMESTAMP" in (self._date_kind(own), self._date_kind(col)):  # a TIMESTAMP minus a date: an INTERVAL
                    self._interval(toks[i].start, toks[k].end, a, b)
                    self.skip = k
                    return
                if not self.sqlite:         # (PostgreSQL's DATE minus a DATE is an integer, no interval)
                    a, b = (f"CAST({x} AS TIMESTAMP)" if is_user else x for x, is_user in ((a, user), (b, col_user)))
                self.replace[toks[i].start] = (toks[k].end, days_between(self.sqlite, a, b))
                self.skip = k
                return
            end = self._name_after(k)
            if j == last and end is not None and not self._continues(end) and user:
                days_column = self.sql[toks[k].start:toks[end].end]
                self.dated.update(range(i, end + 1))
                self.replace[toks[i].start] = (toks[end].end, plus_days(
                    self.sqlite, date, f"-({days_column})" if minus else days_column))
                self.skip = end
                return
            iv = interval(toks, k) or num_interval(toks, k, self._bind_days if takes else None)
            if iv is None and takes and self._interval_bind(k):
                iv = (k, 0, _seconds(self.binds.take(k)))
            if iv is not None and not iv[1] and kind == "DATE":
                j, seconds = iv[0], iv[2]        # a DATE plus an INTERVAL DAY TO SECOND: a DATE
                days = days if days is NULL else days + (-seconds if minus else seconds) / 86400
                continue
            if (iv is not None and not iv[1] and kind == "TIMESTAMP" and self.sqlite
                    and (j == last or stamp is not None)):
                j, seconds = iv[0], iv[2]        # a TIMESTAMP plus one: a TIMESTAMP (.sqlitedays)
                stamp = (stamp or 0) + (-seconds if minus else seconds)
                continue
            run = ds_micros(toks, k, self.sql) if iv is None and kind == "TIMESTAMP" and self.sqlite and (
                j == last or stamp is not None) else None
            if run is not None:                  # a TIMESTAMP plus NUMTODSINTERVAL(column, …)
                j, micros = run
                stamp, more = stamp or Fraction(0), f"{more} {'-' if minus else '+'} {micros}"
                continue
            if stamp is not None:
                raise _unanswered(date)          # (days after a TIMESTAMP's intervals: a DATE of a TIMESTAMP)
            taken = set(self.binds.used)
            term = days_term(toks, k, self.binds.days)
            if term is None:
                self.binds.used = taken          # (a bind read in a term that is not all days)
                if self.sqlite and (iv is not None or toks[k].word in NUM_INTERVALS or toks[k].word == "INTERVAL"
                                    or toks[k].kind == "bind" and isinstance(self.binds.peek(k), dt.timedelta)):
                    raise _unanswered(date)     # (SQLite would add the interval's days to the text's year)
                if self.sqlite and user:         # SQLite would add to the text's year
                    raise _unanswered(date)
                break
            j, value = term
            days = NULL if days is NULL or value is NULL else days - value if minus else days + value
        if j == last:
            return
        if stamp is not None:
            self.stamped.add((toks[i].start, toks[j].end))
            self.replace[toks[i].start] = (toks[j].end, plus_interval(date, stamp, more))
            self.skip = j
            return
        if self.sqlite and user and self._arithmetic_outside(i, j):
            raise _unanswered(date)         # ((d + 1) + 1: the year of the DATE's text)
        self.dated.update(range(i, last + 1))
        if days is NULL:
            text = "NULL" if self.sqlite else "CAST(NULL AS TIMESTAMP)"
        else:
            text = plus_days(self.sqlite, date, repr(float(days)))
        self.replace[toks[i].start] = (toks[j].end, text)
        self.skip = j

    # -- TIMESTAMPs and INTERVALs (DESIGN-NOTES "intervals in cursor SQL") ----------------
    def _view_kind(self, i: int) -> str | None:
        """``DATE`` or ``TIMESTAMP`` for a date column of the views at token ``i``
        (:func:`.viewdates.view_kind`), else None."""
        return view_kind(self.toks[i].word.rpartition(".")[2].strip()) if self._view_date(i) else None

    def _date_kind(self, i: int) -> str | None:
        """``DATE`` or ``TIMESTAMP`` for a date column of the views or of the user's tables."""
        return self._view_kind(i) or self._user_date(i)

    def _whole_date(self, text: str, i: int) -> str:
        """``text``, the column at token ``i`` (or MAX / MIN of it), as Oracle's value: a
        view's DATE whole seconds (:func:`.viewdates.whole_seconds`)."""
        return whole_seconds(self.sqlite, text) if self._view_kind(i) == "DATE" else text

    def _column_sql(self, column: tuple[int, int]) -> str:
        """The text of the column at tokens ``column`` (first, last; or MAX / MIN of one) as
        Oracle's value."""
        text = self.sql[self.toks[column[0]].start:self.toks[column[1]].end]
        return self._whole_date(text, self._column_of(column))

    def _column_of(self, column: tuple[int, int]) -> int:
        """The token of the column at tokens ``column``: the name, or MAX / MIN's argument."""
        return column[0] + 2 if column[0] != column[1] and self._extreme(column[0]) is not None else column[0]

    def _timestamp_minus(self, start: int, end: int, value, digits: int, column: tuple[int, int],
                         clock_first: bool) -> None:
        """SYSTIMESTAMP, a TIMESTAMP literal or a DATE (its ``value`` to ``digits``) minus the
        date column at tokens ``column``, or that column minus it, a TIMESTAMP among them:
        Oracle's INTERVAL DAY TO SECOND."""
        name = self._column_sql(column)
        if value is NULL:
            text = "NULL"
        else:
            text = _literal(value.isoformat(" ", "microseconds" if digits else "seconds"))
            text = text if self.sqlite else f"TIMESTAMP {text}"
        self._interval(start, end, *((text, name) if clock_first else (name, text)))

    def _cast_minus(self, i: int, close: int) -> None:
        """``CAST(clock AS DATE | TIMESTAMP) - column`` (the CAST at tokens ``i``..``close``
        folded into a literal): the days between for a DATE and a view's or a user's DATE
        column, an INTERVAL DAY TO SECOND when a TIMESTAMP is among them."""
        toks = self.toks
        if not (close + 2 < len(toks) and toks[close + 1].text == "-"):
            return
        end = self._name_after(close + 2)
        if end is None or end != close + 2 or self._continues(end) or not self._a_date(end):
            return
        literal = self.replace.pop(toks[i].start)[1]
        column = self._column_sql((end, end))
        start, stop = toks[i].start, toks[end].end
        self.skip = end
        self.dated.discard(i)
        if toks[close - 1].word == "TIMESTAMP" or self._date_kind(end) == "TIMESTAMP":
            self._interval(start, stop, literal, column)
            return
        if not self.sqlite and self._user_date(end):
            column = f"CAST({column} AS TIMESTAMP)"
        self.replace[start] = (stop, days_between(self.sqlite, literal, column))

    def _bind_days(self, k: int):
        """The number bound at token ``k``, taken (None, left in the statement, when it is
        none or NULL)."""
        if self.binds.peek(k) is None or isinstance(self.binds.peek(k), (dt.date, dt.timedelta)):
            return None
        return self.binds.days(k)

    def _num_interval(self, i: int) -> None:
        """``NUMTODSINTERVAL(n, 'unit')`` standing alone (:mod:`.numintervals`): an INTERVAL
        DAY TO SECOND; ``NUMTOYMINTERVAL`` alone is SLU-00001."""
        found = unit_of(self.toks, i)
        if found is None:
            return
        args, close, unit = found
        if self.toks[i].word == "NUMTOYMINTERVAL":
            raise not_supported("NUMTOYMINTERVAL in SQL but in SYSDATE / SYSTIMESTAMP arithmetic of literal "
                                "numbers (python-oracledb's IntervalYM is not Sluice's)")
        toks = self.toks
        first, last = args[0]
        prefix, suffix = ds_interval_pieces(self.sqlite, unit)
        self.intervals.add((toks[i].start, toks[close].end))
        self.replace[toks[i].start] = (toks[close].end, (prefix, (toks[first].start, toks[last].end), suffix))

    def _interval_literal(self, i: int) -> None:
        """On SQLite, an ``INTERVAL '…' unit`` literal no date's arithmetic took (compared
        with a TIMESTAMP minus a date, fetched): its days, as ``sluice_interval`` gives an
        INTERVAL DAY TO SECOND; YEAR TO MONTH is SLU-00001."""
        iv = interval(self.toks, i)
        if iv is None:
            return
        last, months, seconds = iv
        if months:
            raise not_supported("an INTERVAL YEAR TO MONTH in SQL on SQLite but in SYSDATE / SYSTIMESTAMP "
                                "arithmetic")
        self.intervals.add((self.toks[i].start, self.toks[last].end))
        self.replace[self.toks[i].start] = (self.toks[last].end, f"({float(seconds / 86400)!r})")
        self.skip = last

    def _number_call(self, i: int) -> None:
        """``ROUND(n [, d])`` / ``TRUNC(n [, d])`` of a number: on PostgreSQL of ``n`` as a
        NUMERIC (it has no round or trunc of a DOUBLE PRECISION to digits, and rounds one
        half to even), on SQLite by ``sluice_round`` / ``sluice_trunc`` (:mod:`.sqlitefns`:
        SQLite has no TRUNC to digits, and rounds to no digits before the point).  ROUND and TRUNC of a date are
        :meth:`_trunc`'s."""
        toks = self.toks
        args, close = arguments(toks, i + 1)
        if close < 0 or not 1 <= len(args) <= 2:
            return
        first, last = args[0]
        if first == last and (toks[first].word in _DATES | _TIMESTAMPS or self._a_date(first)):
            return
        if self.sqlite:
            self.replace[toks[i].start] = (toks[i].end, f"sluice_{toks[i].word.lower()}")
            return
        self.replace[toks[i + 1].start] = (toks[i + 1].end, "(CAST((")
        end = toks[last].end
        self.replace[end] = (end, ") AS NUMERIC)")

    def _truncates_clock(self, k: int) -> bool:
        """Whether ``TRUNC(`` at token ``k`` truncates the clock or a datetime bind (folded
        into a literal by :meth:`_trunc`)."""
        toks = self.toks
        if k + 3 >= len(toks) or toks[k + 1].text != "(":
            return False
        t = toks[k + 2]
        return (t.word in _DATES | _TIMESTAMPS and toks[k + 3].text != "("
                or t.kind == "bind" and isinstance(self.binds.peek(k + 2), dt.date))

    def _now(self, word: str = "SYSDATE") -> datetime:
        """The clock ``word`` reads, once per statement: SYSDATE / SYSTIMESTAMP the host's
        wall clock (the database server's), CURRENT_DATE / CURRENT_TIMESTAMP /
        LOCALTIMESTAMP the session time zone's."""
        if self.now is None:
            self.now = datetime.now()
        if word in _SERVER_CLOCK or self.zone is None:
            return self.now
        return self.zone.wall_clock(self.now.astimezone())

    def _bind_date(self, i: int) -> datetime:
        """The date or datetime bound at token ``i`` (taken) as python-oracledb binds it: an
        Oracle DATE, whole seconds (the fraction dropped), no time zone."""
        self.dated.add(i)
        return _as_date(self.binds.take(i))

    # -- the clock and its arithmetic -------------------------------------------------------
    def _clock(self, first: int, last: int, digits: int, value: datetime | None = None) -> None:
        """The clock word at tokens ``first``..``last`` (or a datetime bind: its ``value``)
        with Oracle's arithmetic around it: ``n + CLOCK``, ``CLOCK ± days ± INTERVAL …``
        folded into one literal (:mod:`.sqlclock`; a bind among the days read from its
        value, an interval bind as an INTERVAL, :mod:`.clockbinds`), ``CLOCK - column`` /
        ``column - CLOCK`` (a DATE word) as days between, ``DATE - DATE`` as their days;
        ``DATE + DATE`` is ORA-00975 as in Oracle; any other arithmetic on it is refused
        (SLU-00001) rather than answered wrongly."""
        toks = self.toks
        word = toks[first].word or toks[first].text.upper()
        is_date = word in _DATES or value is not None
        if value is None:
            value = self._now(word)
            if digits < 6:
                step = 10 ** (6 - digits)
                value = value.replace(microsecond=value.microsecond // step * step)
        start = toks[first].start
        before = toks[first - 1].text if first > 0 else ""
        if before in ("+", "-"):
            name = self._name_before(first - 1)
            if before == "-" and name is not None and not is_date and not self._continues(last) \
                    and self._a_date(name):      # a date column minus SYSTIMESTAMP: an INTERVAL
                self._timestamp_minus(toks[name].start, toks[last].end, value, digits, (name, first - 2), False)
                self.skip = last
                return
            if before == "-" and name is not None and is_date and not self._continues(last):
                self._days_between(toks[name].start, toks[last].end, (name, first - 2), value, clock_first=False,
                                   timestamp=word == "TIMESTAMP")
                self.skip = last
                return
            if before == "+" and name is not None and not self._continues(last):
                self._days_column(toks[name].start, toks[last].end, value, name, first - 2)
                self.skip = last
                return
            if (before == "+" and first >= 2 and toks[first - 2].kind in ("num", "bind")
                    and self._starts_operand(first - 2)):
                n = toks[first - 2]
                interval_bind = n.kind == "bind" and isinstance(self.binds.peek(first - 2), dt.timedelta)
                if interval_bind:
                    value = add_interval(value, 0, _seconds(self.binds.take(first - 2)))
                else:
                    value = _plus(value, Fraction(n.text) if n.kind == "num" else self.binds.days(first - 2))
                    digits = 0
                start = n.start
            else:
                raise _refused(word)
        j = last
        while j + 1 < len(toks) and toks[j + 1].text in ("+", "-"):
            minus = toks[j + 1].text == "-"
            other = self._date_operand(j + 2)
            if other is not None:
                if not minus:
                    raise ora(975)
                end, other_value, other_stamp = other
                if before in ("*", "/"):
                    raise _refused(word)
                if end + 1 < len(toks) and toks[end + 1].text in ("*", "/"):
                    raise ora(932, "NUMBER", "DATE")
                if other_stamp or word in _TIMESTAMPS or word == "TIMESTAMP" and toks[first].kind == "id":
                    # a TIMESTAMP among them: an INTERVAL DAY TO SECOND (Oracle's datetime arithmetic)
                    a, b = self._instants(value, word, other_value, toks[j + 2].word)
                    self.intervals.add((start, toks[end].end))
                    self.replace[start] = (toks[end].end, interval_literal(self.sqlite, a, b))
                else:
                    self._days_literal(start, toks[end].end, self._shown(value, digits), other_value)
                self.skip = end
                return
            if self._interval_bind(j + 2):
                seconds = _seconds(self.binds.take(j + 2))
                if value is not NULL:
                    value = add_interval(value, 0, -seconds if minus else seconds)
                j += 2
                continue
            term = days_term(toks, j + 2, self.binds.days)
            if term is not None:
                j, days = term
                value, digits = _plus(value, -days if minus and days is not NULL else days), 0
                continue
            iv = interval(toks, j + 2) or num_interval(toks, j + 2, self._bind_days)
            if iv is not None:
                j, months, seconds = iv
                if value is not NULL:
                    value = add_interval(value, -months if minus else months, -seconds if minus else seconds)
                continue
            end = self._name_after(j + 2)
            if not minus and end is not None and not self._continues(end) and before not in ("*", "/"):
                self._days_column(start, toks[end].end, value, j + 2, end)
                self.skip = end
                return
            if minus and end is not None and not is_date and not self._continues(end) and self._a_date(j + 2):
                self._timestamp_minus(start, toks[end].end, value, digits, (j + 2, end), True)
                self.skip = end
                return
            extreme = self._extreme(j + 2) if minus and is_date else None
            if extreme is not None and not self._continues(extreme):       # DATE - MAX(column)
                self._days_between(start, toks[extreme].end, (j + 2, extreme), self._shown(value, digits),
                                   timestamp=word == "TIMESTAMP", clock_first=True)
                self.skip = extreme
                return
            if minus and end is not None and is_date and not self._continues(end):
                self._days_between(start, toks[end].end, (j + 2, end), self._shown(value, digits),
                                   timestamp=word == "TIMESTAMP",
                                   clock_first=True)
                self.skip = end
                return
            cast = cast_end(toks, j + 2, lambda p: _closes(toks, p)) if minus and before not in ("*", "/") else None
            if cast is not None and value is not NULL and not self._continues(cast[0]):
                self._clock_minus_cast(start, value, digits, not is_date or word == "TIMESTAMP", j + 2, *cast)
                return
            if not self.sqlite and (toks[j + 2].word == "INTERVAL" or toks[j + 2].word in NUM_INTERVALS):
                break       # PostgreSQL has the other intervals
            raise _refused(word)
        if j + 1 < len(toks) and toks[j + 1].text in ("*", "/") or before in ("*", "/"):
            raise _refused(word)
        if word == "TIMESTAMP" and digits:      # a TIMESTAMP literal keeping its fraction: no DATE
            self.dated.discard(first)
        self._literal(start, toks[j].end, self._shown(value, digits), digits)
        self.skip = j

    def _clock_minus_cast(self, start: int, value: datetime, digits: int, stamp: bool, k: int, close: int,
                          kind: str) -> None:
        """The clock (``value``, a TIMESTAMP when ``stamp``) minus ``CAST(x AS kind)`` at tokens
        ``k``..``close`` (:mod:`.castdates`): the days between, or an INTERVAL DAY TO SECOND."""
        text = _literal(value.isoformat(" ", "microseconds" if stamp and digits else "seconds"))
        piece, interval = cast_minus(self.sqlite, text if self.sqlite else f"TIMESTAMP {text}",
                                     "TIMESTAMP" if stamp else "DATE", self.toks, k, close, kind)
        if interval:
            self.intervals.add((start, self.toks[close].end))
        self.replace[start] = (self.toks[close].end, piece)

    def _days_term(self, toks: Sequence, k: int):
        """:func:`.sqlclock.days_term` at token ``k``, its binds taken only when it is one."""
        taken = set(self.binds.used)
        term = days_term(toks, k, self.binds.days)
        if term is None:
            self.binds.used = taken
        return term

    def _date_operand(self, k: int) -> tuple[int, datetime, bool] | None:
        """The DATE or TIMESTAMP operand starting at token ``k`` whose value the statement
        knows — a clock word, a datetime bind (taken), a DATE or TIMESTAMP literal,
        ``ADD_MONTHS`` / ``LAST_DAY`` / ``NEXT_DAY`` of one (:meth:`_folded_call`) — as (its
        last token, its value, whether it is a TIMESTAMP); None when token ``k`` starts none."""
        toks = self.toks
        if k >= len(toks):
            return None
        t, after = toks[k], toks[k + 1].text if k + 1 < len(toks) else ""
        if t.kind == "bind" and isinstance(self.binds.peek(k), dt.date):
            return k, self._bind_date(k), False
        if t.word in _DATES and after != "(":
            return k, self._now(t.word).replace(microsecond=0), False
        if t.word in _TIMESTAMPS:
            call = toks[k + 1:k + 4]
            digits = int(call[1].text) if after == "(" and len(call) == 3 and call[1].text.isdigit() else 6
            value = self._now(t.word)
            step = 10 ** (6 - digits)
            return (k + 3 if after == "(" else k), value.replace(microsecond=value.microsecond // step * step), True
        if t.word in ("DATE", "TIMESTAMP") and k + 1 < len(toks) and toks[k + 1].kind == "str":
            return k + 1, datetime_literal(t.word, toks[k + 1].text[1:-1])[0], t.word == "TIMESTAMP"
        if t.word == "TO_DATE" and after == "(":
            args, close = arguments(toks, k + 1)
            if close > 0 and len(args) == 2 and all(a == b and toks[a].kind == "str" for a, b in args):
                text, fmt = (toks[a].text[1:-1].replace("''", "'") for a, _ in args)
                return close, to_date(text, fmt), False
        if t.word in ("TRUNC", "ROUND") and after == "(":
            return self._unit_operand(k)
        if t.word in DATE_CALLS and after == "(":
            args, close = arguments(toks, k + 1)
            value = self._folded_call(k, args, close) if close > 0 and args else None
            if value is not None:
                self.dated.update(range(k, close + 1))
                return close, value, False
        return None

    def _unit_operand(self, k: int) -> tuple[int, datetime, bool] | None:
        """``TRUNC`` / ``ROUND(d [, 'fmt'])`` at token ``k`` of the clock, a datetime bind or a
        DATE / TIMESTAMP literal (``SYSDATE - TRUNC(SYSDATE)``): as :meth:`_date_operand`, a DATE."""
        toks = self.toks
        args, close = arguments(toks, k + 1)
        if close < 0 or not 1 <= len(args) <= 2 or len(args) == 2 and not (
                args[1][0] == args[1][1] and toks[args[1][0]].kind == "str"):
            return None
        a, b = args[0]
        if not (a == b or b == a + 1 and toks[a].word in ("DATE", "TIMESTAMP")
                or b == a + 3 and toks[a].word in _TIMESTAMPS):
            return None             # (one operand alone: a bind is taken only when it is the argument)
        inner = self._date_operand(a)
        if inner is None or inner[0] != b:
            return None
        fmt = toks[args[1][0]].text[1:-1].replace("''", "'") if len(args) == 2 else None
        self.dated.update(range(k, close + 1))
        return close, (rounded if toks[k].word == "ROUND" else truncate)(inner[1], trunc_unit(fmt)), False

    def _instants(self, a, a_word: str, b, b_word: str) -> tuple:
        """``a`` and ``b`` (values of the clock words or other datetimes ``a_word`` /
        ``b_word``) as wall-clock times of one zone, for their difference: Oracle takes a
        TIMESTAMP WITH TIME ZONE (SYSTIMESTAMP: the host's zone; CURRENT_TIMESTAMP: the
        session's) at its instant and, beside one, a datetime without a zone as the session
        zone's; two without a zone differ by their wall clocks (SYSDATE - LOCALTIMESTAMP is
        the zones' difference in Oracle too)."""
        if self.zone is None or not {a_word, b_word} & _ZONED or NULL in (a, b):
            return a, b
        now = self._now()
        shift = self.zone.wall_clock(now.astimezone()) - now      # the session's wall clock ahead of the host's
        return tuple(v if w == "SYSTIMESTAMP" else v - shift for v, w in ((a, a_word), (b, b_word)))

    def _interval_bind(self, k: int) -> bool:
        """Whether token ``k`` is a bind of a ``timedelta`` (python-oracledb's INTERVAL DAY
        TO SECOND) standing alone as an operand of ``+`` / ``-``."""
        toks = self.toks
        return (k < len(toks) and toks[k].kind == "bind" and isinstance(self.binds.peek(k), dt.timedelta)
                and not (k + 1 < len(toks) and toks[k + 1].text in ("*", "/")))

    def _days_literal(self, start: int, end: int, value, other: datetime) -> None:
        """``DATE - DATE``, both known: Oracle's number of days between, a literal."""
        if value is NULL:
            self.replace[start] = (end, "NULL" if self.sqlite else "CAST(NULL AS NUMERIC)")
            return
        delta = value - other
        days = Fraction(delta.days * 86400 + delta.seconds, 86400)
        text = str(days.numerator) if days.denominator == 1 else repr(float(days))
        self.replace[start] = (end, f"({text})")

    def _on_views(self) -> bool:
        """Whether the statement names one of Sluice's views."""
        if self.on_views is None:
            self.on_views = on_views(self.sql, self.toks)
        return self.on_views

    @staticmethod
    def _shown(value, digits: int):
        return value.replace(microsecond=0) if digits == 0 and value is not NULL else value

    def _literal(self, start: int, end: int, value, digits: int) -> None:
        """The clock value (or a datetime bind) in the statement as a literal: the views show
        their dates in the session's zone, which CURRENT_DATE reads too (SQLite's text of it
        is fetched back as the datetime)."""
        if value is NULL:
            self.replace[start] = (end, "NULL" if self.sqlite else "CAST(NULL AS TIMESTAMP)")
            return
        if self.casts.get(start) == (end, "DATE"):
            value, digits = value.replace(microsecond=0), 0      # CAST(… AS DATE): whole seconds
        text = value.isoformat(" ", "seconds" if digits == 0 else "microseconds")
        if self.sqlite:
            self.dates[text] = value
            self.replace[start] = (end, _literal(text))
        else:
            self.replace[start] = (end, f"TIMESTAMP {_literal(text)}")

    def _days_column(self, start: int, end: int, value, first: int, last: int) -> None:
        """``DATE + column`` (or ``column + DATE``), the column's tokens ``first``..``last``:
        its value as days, a DATE rounded to the second — on SQLite by ``sluice_add_days``
        (:mod:`.sqlitedays`), on PostgreSQL as an interval of days (a date in the column
        cannot be cast: ORA-00932)."""
        self.dated.update(range(first, last + 1))
        column = self.sql[self.toks[first].start:self.toks[last].end]
        if value is NULL:
            self.replace[start] = (end, "NULL" if self.sqlite else "CAST(NULL AS TIMESTAMP)")
            return
        date = value.replace(microsecond=0)
        text = _literal(date.isoformat(" "))
        self.replace[start] = (end, plus_days(self.sqlite, text if self.sqlite else f"TIMESTAMP {text}", column))

    def _interval(self, start: int, end: int, a: str, b: str) -> None:
        """``a - b`` at ``start``..``end`` of the text, a TIMESTAMP among them: Oracle's
        INTERVAL DAY TO SECOND (:func:`.viewdates.interval_between`)."""
        self.intervals.add((start, end))
        self.replace[start] = (end, interval_between(self.sqlite, a, b))

    def _days_between(self, start: int, end: int, column: tuple[int, int], value: datetime,
                      clock_first: bool, timestamp: bool = False) -> None:
        """``DATE - column`` (or ``column - DATE``; ``column`` its first and last token):
        Oracle's number of days between — and on SQLite, whose column may hold numbers,
        ``DATE - column`` of days a DATE (:mod:`.sqlitedays`); on PostgreSQL so for a
        user's column declared a number (:mod:`.usercolumns`).  A user's TIMESTAMP column
        minus a date or a date minus it (or a user's date and a ``timestamp`` literal) is
        Oracle's INTERVAL DAY TO SECOND (:meth:`_interval`)."""
        name = self._column_sql(column)
        kind = self._date_kind(self._column_of(column))
        if kind == "TIMESTAMP" or timestamp and kind:     # Oracle's TIMESTAMP minus a date
            self._timestamp_minus(start, end, value, 6 if timestamp else 0, column, clock_first)
            return
        if value is NULL:
            self.replace[start] = (end, "NULL" if self.sqlite else "CAST(NULL AS DOUBLE PRECISION)")
            return
        text = _literal(value.isoformat(" ", "seconds"))
        if self.sqlite:
            if clock_first:         # a date when the column holds days
                self.dated.update(range(column[0], column[1] + 1))
            pair = (text, name) if clock_first else (name, text)
            self.replace[start] = (end, f"sluice_date_minus({pair[0]}, {pair[1]})")
            return
        date = f"TIMESTAMP {text}"
        if clock_first and column[0] == column[1] and self._user_number(column[0]):    # a column of days
            self.dated.update(range(column[0], column[1] + 1))
            self.replace[start] = (end, plus_days(False, date, f"-({name})"))
            return
        self.replace[start] = (end, days_between(False, date, name) if clock_first
                               else days_between(False, name, date))

    def _name_after(self, i: int) -> int | None:
        """The last token of the column name starting at token ``i`` (None: not a name)."""
        toks = self.toks
        if i >= len(toks) or toks[i].kind not in ("id", "qid") or toks[i].word in _NOT_NAMES:
            return None
        if i + 1 < len(toks) and toks[i + 1].text == "(":
            return None
        while i + 2 < len(toks) and toks[i + 1].text == "." and toks[i + 2].kind in ("id", "qid"):
            i += 2
        return i

    def _name_before(self, op: int) -> int | None:
        """The first token of the column name ending just before token ``op``, if what
        comes before that name ends no operand (None: not a lone name)."""
        toks, i = self.toks, op - 1
        if i < 0 or toks[i].kind not in ("id", "qid") or toks[i].word in _NOT_NAMES:
            return None
        while i >= 2 and toks[i - 1].text == "." and toks[i - 2].kind in ("id", "qid"):
            i -= 2
        return i if self._starts_operand(i) else None

    def _starts_operand(self, i: int) -> bool:
        """Whether token ``i`` starts an operand of an additive operator: what comes before
        it binds no tighter (the start, ``(``, ``,``, a comparison or a keyword)."""
        if i == 0:
            return True
        prev = self.toks[i - 1]
        if prev.kind == "op":
            return prev.text not in ("*", "/", "+", "-", "||", ".", ")", "::")
        return prev.kind == "id" and prev.word in _KEYWORDS

    def _continues(self, i: int) -> bool:
        """Whether arithmetic goes on after token ``i`` (a days-between cannot take it)."""
        return i + 1 < len(self.toks) and self.toks[i + 1].text in ("+", "-", "*", "/", "||")

    # -- SQLite's divisions ------------------------------------------------------------
    def _divisor(self, i: int) -> None:
        end = self._operand_end(i)
        if end is not None:
            start, stop = self.toks[i].start, self.toks[end].end
            self.opens[start] = self.opens.get(start, 0) + 1
            self.closes[stop] = self.closes.get(stop, 0) + 1

    def _operand_end(self, i: int) -> int | None:
        """The last token of the operand starting at token ``i``: unary signs, then a
        literal, bind, name, call, parenthesis or CASE … END (None when it is none)."""
        toks = self.toks
        while i < len(toks) and toks[i].text in ("-", "+", "~"):
            i += 1
        if i >= len(toks):
            return None
        t = toks[i]
        if t.text == "(":
            return self._closing(i)
        if t.word == "CASE":
            depth = 0
            for j in range(i, len(toks)):
                depth += (toks[j].word == "CASE") - (toks[j].word == "END")
                if depth == 0:
                    return j
            return None
        if t.word in ("DATE", "TIMESTAMP") and i + 1 < len(toks) and toks[i + 1].kind == "str":
            return i + 1
        if t.kind in ("id", "qid") and i + 1 < len(toks) and toks[i + 1].text == "(":
            return self._closing(i + 1)
        if t.kind in ("id", "qid", "num", "str", "bind"):
            while i + 2 < len(toks) and toks[i + 1].text == "." and toks[i + 2].kind in ("id", "qid"):
                i += 2
            return i
        return None

    def _closing(self, i: int) -> int | None:
        depth = 0
        for j in range(i, len(self.toks)):
            depth += (self.toks[j].text == "(") - (self.toks[j].text == ")")
            if depth == 0:
                return j
        return None

    # -- headings ----------------------------------------------------------------------
    def _headings(self) -> None:
        """An unaliased select item that changed gets Oracle's heading for it."""
        for first, last in self._select_items():
            lo, hi = self.toks[first].start, self.toks[last].end
            if any(lo <= p < hi for p in (*self.replace, *self.opens)) and not self._aliased(first, last):
                heading = "".join(t.text if t.kind == "qid" else t.text.upper()
                                  for t in self.toks[first:last + 1])
                if first == last and is_sequence_word(self.toks[first].word):    # seq.NEXTVAL: NEXTVAL
                    heading = heading.rpartition(".")[2].strip()
                self.aliases[hi] = ' AS "' + heading.replace('"', '""') + '"'

    def _select_items(self) -> list[tuple[int, int]]:
        """(first, last) token of each item of each select list, at any depth."""
        if self.items is not None:
            return self.items
        toks, items = self.toks, []
        self.items = items
        open_at: dict[int, int | None] = {}       # depth -> first token of the current item
        depth = 0

        def close(d: int, upto: int) -> None:
            start = open_at.get(d)
            if start is not None and start < upto:
                items.append((start, upto - 1))
            open_at[d] = None

        for i, t in enumerate(toks):
            nxt = toks[i + 1].word if i + 1 < len(toks) else ""
            if t.text == "(":
                depth += 1
                open_at[depth] = None
            elif t.text == ")":
                close(depth, i)
                depth -= 1
            elif t.word == "SELECT":
                open_at[depth] = i + 1 + (nxt in ("DISTINCT", "ALL", "UNIQUE"))
            elif open_at.get(depth) is not None and (
                    t.text == "," or t.word in _LIST_END or (t.word in ("GROUP", "ORDER") and nxt == "BY")):
                close(depth, i)
                if t.text == ",":
                    open_at[depth] = i + 1
        close(depth, len(toks))
        return items

    def _aliased(self, first: int, last: int) -> bool:
        return aliased(self.toks, first, last)

    # -- the text ----------------------------------------------------------------------
    def _text(self, start: int = 0, end: int | None = None) -> str:
        """The statement (or its text from ``start`` to ``end``) as translated: the
        replacements, divisions and aliases within it written."""
        sql, out = self.sql, []
        at, part = start, end is not None
        end = len(sql) if end is None else end
        open_, close = ("sluice_divisor(", ")") if self.sqlite else ("CAST(", " AS NUMERIC)")
        for p in sorted({*self.replace, *self.opens, *self.closes, *self.aliases}):
            if not start <= p <= end or p < at:      # (inside a replacement: written in it)
                continue
            out.append(sql[at:p])
            at = p
            out.append(close * self.closes.get(p, 0))
            if part and p == end:       # (what starts there is the text's after it)
                break
            out.append(self.aliases.get(p, ""))
            out.append(open_ * self.opens.get(p, 0))
            if p in self.replace:
                at, text = self.replace[p]
                out.append((again(text) if part else text) if type(text) is str else "".join(
                    part if type(part) is str else self._text(*part) for part in text))
        out.append(sql[at:end])
        return "".join(out)


def tokens(sql: str) -> list[_Tok]:
    """``sql``'s tokens, without its white space and comments."""
    return list(_tokens(sql))


@lru_cache(maxsize=256)
def _tokens(sql: str) -> tuple[_Tok, ...]:
    """(Kept per statement text: a statement typed at a cursor is run again with other binds.)"""
    return tuple(_Tok(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sql)
                 if m.lastgroup not in ("ws", "comment"))


def aliased(toks: list[_Tok], first: int, last: int) -> bool:
    """Whether the select item at tokens ``first``..``last`` ends in an alias."""
    if last == first:
        return False
    t, before = toks[last], toks[last - 1]
    if t.kind not in ("id", "qid") or t.kind == "id" and "." in t.text or t.word in _NOT_ALIAS:
        return False
    return (before.word == "AS" or before.text == ")"
            or before.kind in ("id", "qid", "num", "str", "bind") and before.word not in _CONTINUE)


def on_views(sql: str, toks: list[_Tok] | None = None) -> bool:
    """Whether ``sql`` (its ``toks``, read here when not given) is a statement on Sluice's
    views: it names an ``AQ$…`` name, or a ``DBA_/ALL_/USER_/V$/GV$`` name after FROM or JOIN."""
    upper = sql.upper()
    if not any(view in upper for view in _VIEWS):
        return False
    toks = tokens(sql) if toks is None else toks
    return any(name and (name.startswith("AQ$") or i > 0 and toks[i - 1].word in ("FROM", "JOIN"))
               for i, name in ((i, _view(t)) for i, t in enumerate(toks) if t.kind == "id"))


def _view(t: _Tok) -> str:
    """The name of a token naming one of Sluice's views (without its schema), or ''."""
    name = t.word.rpartition(".")[2].strip()
    return name if name.startswith(_VIEWS) else ""


def _closes(toks: list[_Tok], i: int) -> int:
    """The token closing the parenthesis at token ``i`` (-1: none)."""
    depth = 0
    for j in range(i, len(toks)):
        depth += (toks[j].text == "(") - (toks[j].text == ")")
        if depth == 0:
            return j
    return -1


def _dated(binds: dict | Sequence | None) -> bool:
    """Whether any of ``binds`` is a date, datetime or timedelta (Oracle's DATE and INTERVAL)."""
    values = binds.values() if isinstance(binds, dict) else binds or ()
    return any(isinstance(v, (dt.date, dt.timedelta)) for v in values)


def _as_date(value: dt.date) -> datetime:
    """A date or datetime as an Oracle DATE: whole seconds, no time zone."""
    if isinstance(value, datetime):
        return value.replace(microsecond=0, tzinfo=None)
    return datetime(value.year, value.month, value.day)


def _seconds(value: dt.timedelta) -> Fraction:
    return Fraction(value // dt.timedelta(microseconds=1), 10**6)


def _plus(value, days):
    """``value + days`` (either may be NULL)."""
    return NULL if value is NULL or days is NULL else add_days(value, days)


def _refused(word: str) -> NotSupportedError:
    return not_supported(f"this date arithmetic on {word} in SQL (Sluice answers {word} plus or minus "
                         "days (numbers and binds) or an INTERVAL literal, and a DATE minus a column)")


def _unanswered(column: str) -> NotSupportedError:
    return not_supported(f"this date arithmetic on {column} in SQL on SQLite (Sluice answers a DATE column "
                         "plus or minus days: numbers, binds, a column; SQLite would compute on its text)")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
