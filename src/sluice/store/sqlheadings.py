"""A user's query's column names as Oracle gives them (python-oracledb's ``cursor.description``).

Oracle names a select item by its alias, upper-cased unless quoted (``AS n`` is ``N``,
``AS "Id"`` is ``Id``); a column by its name, so upper-cased unless quoted (``t.col`` is
``COL``); any other expression by its text, upper-cased without its white space
(``count(*)`` is ``COUNT(*)``, ``'x'`` is ``'X'``, ``2.5`` is ``2.5``).  The store's
databases do not: SQLite keeps the text as typed (``n``, ``count(*)``), PostgreSQL
lower-cases (``count``) and names literals ``?column?``.  :func:`oracle_headings` gives
Oracle's names from the statement's top-level select list; the columns of a ``*`` keep
the database's (upper-cased unless PostgreSQL has them quoted).  A statement of plain
column names (``SELECT a, t.b FROM …``) is recognised without tokens.

It also tells which items are Oracle DATEs (``SYSDATE``, ``CURRENT_DATE``, a datetime bind
and their arithmetic) and TIMESTAMP WITH TIME ZONE (``SYSTIMESTAMP``,
``CURRENT_TIMESTAMP``), which both databases return as timestamps; and, in a statement on
Sluice's views, which are a date column of theirs (:data:`.viewdates.VIEW_DATES`, also
through ``*`` and ``MAX`` / ``MIN``, ``NVL`` / ``COALESCE`` / ``CASE`` of dates or NULL,
``CAST`` to a date): TIMESTAMPs, as PostgreSQL's views type them — SQLite's are text, which
:func:`.sqlfetch.sqlite_result` fetches as datetimes by this.  On SQLite it tells which
items are text whatever they read like (VARCHAR: ``TO_CHAR(…)``, ``a || b``, ``'…'``), and
which are a TIMESTAMP minus a date (INTERVAL DAY TO SECOND, :attr:`.Translated.intervals`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from functools import lru_cache

from ..objtypes import (DB_TYPE_BOOLEAN, DB_TYPE_DATE, DB_TYPE_INTERVAL_DS, DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_TZ,
                        DB_TYPE_VARCHAR, DbType)
from .sqloracle import (_KEYWORDS, _LIST_END, _TOKEN, _VIEWS, Translated, _closes, _Tok, aliased, on_views,
                        tokens)
from .oraclefns import DATE_CALLS
from ..objtypes import DB_TYPE_JSON
from .selectitems import select_items
from .jsonpaths import JSON_DECLARED, json_path_column, json_query_column
from .numintervals import NUM_INTERVALS
from .usercolumns import Lookup, date_kind, maybe_user_tables, number_scale, table_names
from .viewdates import VIEW_DATES, view_kind

__all__ = ["declared_columns", "declared_types", "oracle_headings", "plain_columns"]

_NAME = r"""(?:[A-Za-z_][\w$#]*\s*\.\s*)?(?:[A-Za-z_][\w$#]*|\*)"""
_PLAIN = re.compile(rf"""\s*SELECT\s+(?:(?:DISTINCT|ALL|UNIQUE)\s+)?{_NAME}(?:\s*,\s*{_NAME})*\s+FROM\b""",
                    re.I | re.A)
_WS = re.compile(r"\s+")
_CLOCK_TYPES = {"SYSDATE": DB_TYPE_DATE, "CURRENT_DATE": DB_TYPE_DATE,
                "SYSTIMESTAMP": DB_TYPE_TIMESTAMP_TZ, "CURRENT_TIMESTAMP": DB_TYPE_TIMESTAMP_TZ}
# words of literal days and intervals beside a clock word
_UNITS = frozenset({"INTERVAL", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "TO", *NUM_INTERVALS})
# a statement on the views (as sqloracle.on_views reads its tokens), told from its text
_FROM_VIEW = re.compile(r"AQ\$|\b(?:FROM|JOIN)\s+(?:[A-Za-z_][\w$#]*\s*\.\s*)?(?:DBA_|ALL_|USER_|G?V\$)",
                        re.I | re.A)
# words after a column that are no alias of it (ORDER BY enq_time DESC, …)
_NOT_ALIASES = _KEYWORDS | {"ASC", "DESC", "NULLS", "FIRST", "LAST", "END"}
# functions whose value has their argument's type
_SAME_TYPE = frozenset({"MAX", "MIN"})
# functions whose value is one of their arguments (a date when each is a date or NULL)
_ONE_OF = frozenset({"NVL", "COALESCE"})
# conditions Oracle 23ai answers as a BOOLEAN select item (python-oracledb: True / False);
# SQLite's functions of theirs give 1 / 0 (PostgreSQL's are boolean)
_BOOLEAN_CALLS = frozenset({"REGEXP_LIKE", "JSON_EXISTS"})
# functions whose value is text (never a date, though its text may be a date's)
_TEXT_CALLS = frozenset({"TO_CHAR", "SUBSTR", "UPPER", "LOWER", "INITCAP", "TRIM", "LTRIM", "RTRIM", "LPAD",
                         "RPAD", "REPLACE", "TRANSLATE", "CONCAT", "CHR", "RAWTOHEX", "DUMP"})


def oracle_headings(sql: str, oracle: Translated, names: list[str],
                    sqlite: bool, lookup: Lookup | None = None) -> tuple[list[str], dict[int, DbType]]:
    """Oracle's names for the columns the database named ``names`` (see the module), and
    the columns Oracle types as dates (index -> DB_TYPE_DATE, _TIMESTAMP or _TIMESTAMP_TZ);
    ``lookup`` the user's tables' declared types (:mod:`.usercolumns`), for a user's date
    column among the values of NVL, COALESCE or a CASE (looked up only for one)."""
    dates = _date_names(sql, oracle.toks)
    intervals = _interval_aliases(oracle) if oracle.intervals else frozenset()
    texts = _text_aliases(oracle.toks) if sqlite and oracle.dates and oracle.toks else frozenset()
    if oracle.toks is None and _PLAIN.match(sql) and "?column?" not in names:
        named = [_named(n, sqlite) for n in names]
        return named, _view_dates(named, 0, dates)
    toks, items = _top_items(sql, oracle.toks)
    stars = [i for i, (first, last) in enumerate(items) if toks[last].text == "*"]
    extra = len(names) - (len(items) - len(stars))
    if len(stars) > 1 or (extra if stars else -extra) < 0 or not stars and extra:
        return [_named(n, sqlite) for n in names], {}
    out: list[str] = []
    types: dict[int, DbType] = {}
    user = None if lookup is None else _UserDates(sql, lookup)
    for first, last in items:
        if toks[last].text == "*":
            named = [_named(n, sqlite) for n in names[len(out):len(out) + extra]]
            types.update(_view_dates(named, len(out), dates))
            out.extend(named)
            continue
        if aliased(toks, first, last):
            heading = _name(toks[last])
            last -= 1 + (toks[last - 1].word == "AS")
        elif all(t.kind in ("id", "qid") or t.text == "." for t in toks[first:last + 1]) and not any(
                toks[k].text != "." and toks[k + 1].text != "." for k in range(first, last)):
            heading = _name(toks[last])         # a column, maybe qualified (CONNECT_BY_ROOT x is none)
        else:
            heading = "".join(t.text if t.kind == "qid" else t.text.upper() if t.kind == "str"
                              else _WS.sub("", t.text.upper()) for t in toks[first:last + 1])
        dbtype = _item_type(toks, first, last, oracle.dated, dates, user)
        if oracle.intervals and _interval_item(toks, first, last, oracle.intervals, intervals):
            dbtype = DB_TYPE_INTERVAL_DS      # a TIMESTAMP minus a date (a CASE of one, a subquery's alias of one)
        elif (toks[first].start, toks[last].end) in oracle.stamped:
            dbtype = DB_TYPE_TIMESTAMP        # a TIMESTAMP plus an interval (SQLite: its text)
        if (dbtype is None and sqlite and toks[first].word in _BOOLEAN_CALLS and first + 1 < last
                and toks[first + 1].text == "(" and _closes(toks, first + 1) == last):
            dbtype = DB_TYPE_BOOLEAN
        if dbtype is None and sqlite and (_text_item(toks, first, last) or (
                first == last and toks[first].kind == "id" and _column(toks[first]) in texts)):
            dbtype = DB_TYPE_VARCHAR
        if dbtype is None and user is not None and _json_item(toks, first, last, user):
            dbtype = DB_TYPE_JSON             # dot notation or JSON_QUERY of a JSON column (.jsonpaths)
        if dbtype is not None:
            types[len(out)] = dbtype
        out.append(heading)
    return out, types


def _json_item(toks: list[_Tok], first: int, last: int, user: "_UserDates") -> bool:
    """Whether the item at tokens ``first``..``last`` is of the JSON type: a dot-notation path
    or JSON_QUERY of a user's JSON column (:mod:`.jsonpaths` writes them so)."""
    column = (json_path_column(toks[first].text) if first == last and toks[first].kind == "id"
              else json_query_column(toks, first, last))
    return column is not None and user.declared(column) in JSON_DECLARED


def _text_item(toks: list[_Tok], first: int, last: int) -> bool:
    """Whether the item at tokens ``first``..``last`` is text, whatever its value reads
    like: a string literal, a call of :data:`_TEXT_CALLS`, a concatenation (``||`` outside
    parentheses).  On SQLite a date is text too: such an item's value is never turned
    into a datetime because it reads like a date literal of the statement
    (:meth:`.Translated.convert`): ``TO_CHAR(DATE '2024-01-02', 'YYYY-MM-DD HH24:MI:SS')``."""
    t = toks[first]
    if first == last:
        return t.kind == "str"
    if t.kind == "id" and t.word in _TEXT_CALLS and toks[first + 1].text == "(" and _closes(toks, first + 1) == last:
        return True
    depth = 0
    for i in range(first, last + 1):
        depth += (toks[i].text == "(") - (toks[i].text == ")")
        if depth == 0 and toks[i].text == "||":
            return True
    return False


def _named(name: str, sqlite: bool) -> str:
    """A column the database named: upper-cased (PostgreSQL's mixed case was quoted)."""
    return name.upper() if sqlite or name == name.lower() else name


def _name(t: _Tok) -> str:
    if t.kind == "qid":
        return t.text[1:-1].replace('""', '"')
    return _WS.sub("", t.word).rpartition(".")[2]


# the views' date columns by their type as Oracle's: DATE (whole seconds) or TIMESTAMP
_VIEW_TYPES = {name: DB_TYPE_DATE if view_kind(name) == "DATE" else DB_TYPE_TIMESTAMP for name in VIEW_DATES}


def _date_names(sql: str, toks: list[_Tok] | None) -> dict[str, DbType]:
    """In a statement on Sluice's views, the names of their date columns and their types
    (a DATE or a TIMESTAMP as Oracle's, :func:`.viewdates.view_kind`): the views' own
    (:data:`.viewdates.VIEW_DATES`) and the aliases the statement gives one in a subquery
    or WITH clause (``SELECT t FROM (SELECT enq_time t FROM aq$…)``); none otherwise."""
    if not any(view in sql.upper() for view in _VIEWS):
        return {}
    if toks is None and "(" not in sql:     # no subquery to alias a date in: the text says it
        return _VIEW_TYPES if _FROM_VIEW.search(sql) else {}
    toks = tokens(sql) if toks is None else toks
    if not on_views(sql, toks):
        return {}
    aliases = {}
    for i, t in enumerate(toks[:-1]):
        if t.kind == "id" and _column(t) in VIEW_DATES and toks[i + 1].text != "(":
            alias = _alias_after(toks, i)
            if alias:
                aliases[alias] = _VIEW_TYPES[_column(t)]
    return {**_VIEW_TYPES, **aliases} if aliases else _VIEW_TYPES


def _alias_after(toks: list[_Tok], i: int) -> str | None:
    """The alias given in a select list to what ends at token ``i`` (upper-cased), if any."""
    j = i + 1 + (i + 1 < len(toks) and toks[i + 1].word == "AS")
    if (j + 1 < len(toks) and toks[j].kind == "id" and "." not in toks[j].text
            and toks[j].word not in _NOT_ALIASES
            and (toks[j + 1].text in (",", ")") or toks[j + 1].word == "FROM")):
        return toks[j].word
    return None


def _text_aliases(toks: list[_Tok]) -> frozenset[str]:
    """The aliases a statement gives text in a subquery or WITH clause — a string literal or a
    call of :data:`_TEXT_CALLS` standing alone as a select item: on SQLite ``SELECT x FROM
    (SELECT TO_CHAR(SYSDATE, 'YYYY-MM-DD HH24:MI:SS') x …)`` stays text, though it reads like
    the clock's literal (:meth:`.Translated.convert`)."""
    found = set()
    for i, t in enumerate(toks):
        if i == 0 or not (toks[i - 1].text == "," or toks[i - 1].word in ("SELECT", "DISTINCT")):
            continue
        if t.kind == "str":
            end = i
        elif t.kind == "id" and t.word in _TEXT_CALLS and i + 1 < len(toks) and toks[i + 1].text == "(":
            end = _closes(toks, i + 1)
        else:
            continue
        alias = _alias_after(toks, end) if end > 0 else None
        if alias:
            found.add(alias)
    return frozenset(found)


def _interval_aliases(oracle: Translated) -> frozenset[str]:
    """The aliases a statement gives an INTERVAL DAY TO SECOND (:attr:`.Translated.intervals`)
    in a subquery or WITH clause: ``SELECT x FROM (SELECT SYSTIMESTAMP - enq_timestamp x …)``
    fetches ``x`` as a timedelta on SQLite too (its value there is days)."""
    toks = oracle.toks or []
    ends = {end for _, end in oracle.intervals}
    found = {alias for i, t in enumerate(toks) if t.end in ends for alias in (_alias_after(toks, i),) if alias}
    for first, last in reversed(select_items(toks)):     # a CASE / NVL / COALESCE of them, inner ones first
        if first < last and aliased(toks, first, last):
            end = last - 1 - (toks[last - 1].word == "AS")
            if first <= end and _interval_item(toks, first, end, oracle.intervals, found):
                found.add(_name(toks[last]))
    return frozenset(found)


def _interval_item(toks: list[_Tok], first: int, last: int, spans: frozenset[tuple[int, int]],
                   aliases: Collection[str]) -> bool:
    """Whether the item at tokens ``first``..``last`` is an INTERVAL DAY TO SECOND: one of
    ``spans`` (:attr:`.Translated.intervals`), a subquery's alias of one (``aliases``), one in
    parentheses, or NVL / COALESCE / CASE whose values are each one or NULL (one at least)."""
    while first < last and toks[first].text == "(" and _closes(toks, first) == last:
        first, last = first + 1, last - 1
    if (toks[first].start, toks[last].end) in spans:
        return True
    if first == last:
        return toks[first].kind == "id" and _column(toks[first]) in aliases
    if (last - first >= 3 and toks[first].word in _ONE_OF and toks[first + 1].text == "("
            and _closes(toks, first + 1) == last):
        branches = _split(toks, first + 2, last - 1, (",",))
    elif last - first >= 4 and toks[first].word == "CASE" and toks[last].word == "END":
        branches = _case_values(toks, first, last)
    else:
        return False
    found = False
    for a, b in branches:
        if a == b and toks[a].word == "NULL":
            continue
        if a > b or not _interval_item(toks, a, b, spans, aliases):
            return False
        found = True
    return found


def _column(t: _Tok) -> str:
    """The column a (maybe qualified) name token names, upper-cased."""
    return t.word.rpartition(".")[2].strip()


def _view_dates(names: list[str], at: int, dates: dict[str, DbType]) -> dict[int, DbType]:
    """The columns named ``names`` (the first one's index ``at``) that are dates of the views."""
    return {i: dates[n] for i, n in enumerate(names, at) if n in dates}


class _UserDates:
    """The date type of a user's column named in a statement (:mod:`.usercolumns`), its
    tables looked up when first asked."""

    def __init__(self, sql: str, lookup: Lookup) -> None:
        self.sql, self.lookup = sql, lookup
        self.columns: dict | None = None

    def declared(self, column: str) -> str | None:
        if self.columns is None:
            self.columns = self.lookup(_shape(self.sql)[0])
        return self.columns.get(column)

    def __call__(self, t: _Tok) -> DbType | None:
        kind = date_kind(self.declared(_name(t).upper()))
        return None if kind is None else DB_TYPE_DATE if kind == "DATE" else DB_TYPE_TIMESTAMP


def _item_type(toks: list[_Tok], first: int, last: int, dated: frozenset[int],
               dates: dict[str, DbType], user: _UserDates | None = None, branch: bool = False) -> DbType | None:
    """The date type of the item at tokens ``first``..``last`` (None: not a date): within
    ``MAX(…)`` / ``MIN(…)``, a date column of the views (``dates``, :func:`_date_names`),
    a user's (``user``) as a ``branch`` of NVL, COALESCE or a CASE, or a clock item
    (:func:`_clock_type`)."""
    while (last - first >= 3 and toks[first].word in _SAME_TYPE and toks[first + 1].text == "("
           and _closes(toks, first + 1) == last):
        first, last = first + 2, last - 1
    if first == last and toks[first].kind == "id" and _column(toks[first]) in dates:
        return dates[_column(toks[first])]
    if first == last and branch and user is not None and toks[first].kind in ("id", "qid"):
        kind = user(toks[first])
        if kind is not None:
            return kind
    if (last - first >= 3 and toks[first].word in _ONE_OF and toks[first + 1].text == "("
            and _closes(toks, first + 1) == last):
        return _branches_type(toks, _split(toks, first + 2, last - 1, (",",)), dated, dates, user)
    if (last - first == 5 and toks[first].word == "CAST" and toks[first + 1].text == "("
            and toks[first + 3].word == "AS" and toks[last - 1].word in ("DATE", "TIMESTAMP")
            and toks[first + 2].kind == "id" and _column(toks[first + 2]) in dates):
        return DB_TYPE_DATE if toks[last - 1].word == "DATE" else DB_TYPE_TIMESTAMP   # (sqloracle._cast)
    if (first in dated and toks[first].word == "CAST" and toks[last].text == ")"
            and _closes(toks, first + 1) == last):     # the clock's, a bind's, PostgreSQL's DATE
        return DB_TYPE_DATE if toks[last - 1].word == "DATE" else DB_TYPE_TIMESTAMP
    if (first in dated and toks[first].word == "TO_DATE" and toks[last].text == ")"
            and _closes(toks, first + 1) == last):     # (sqloracle._call)
        return DB_TYPE_DATE
    if last - first >= 4 and toks[first].word == "CASE" and toks[last].word == "END":
        return _branches_type(toks, _case_values(toks, first, last), dated, dates, user)
    if (toks[first].word in DATE_CALLS and first + 1 < last and toks[first + 1].text == "("
            and _closes(toks, first + 1) == last):       # LAST_DAY(…), TO_TIMESTAMP(…) (.oraclefns)
        return DB_TYPE_DATE if DATE_CALLS[toks[first].word] == "DATE" else DB_TYPE_TIMESTAMP
    return _clock_type(toks, first, last, dated)


def _branches_type(toks: list[_Tok], branches: list[tuple[int, int]], dated: frozenset[int],
                   dates: dict[str, DbType], user: _UserDates | None) -> DbType | None:
    """The date type of a value that is one of ``branches`` (NVL's, COALESCE's arguments,
    a CASE's THEN and ELSE values): a date when each branch is one or NULL, TIMESTAMP
    when one is a view's (as PostgreSQL types a view's timestamp beside SYSDATE)."""
    found = set()
    for first, last in branches:
        if first == last and toks[first].word == "NULL":
            continue
        found.add(_item_type(toks, first, last, dated, dates, user, True) if first <= last else None)
    if not found or None in found:
        return None
    return DB_TYPE_TIMESTAMP if DB_TYPE_TIMESTAMP in found or len(found) > 1 else found.pop()


def _split(toks: list[_Tok], first: int, last: int, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """The (first, last) tokens of the parts of ``first``..``last`` between the tokens of
    ``words`` (text or keyword) outside parentheses."""
    parts, depth, start = [], 0, first
    for i in range(first, last + 1):
        depth += (toks[i].text == "(") - (toks[i].text == ")")
        if depth == 0 and (toks[i].text in words or toks[i].word in words):
            parts.append((start, i - 1))
            start = i + 1
    parts.append((start, last))
    return parts


def _case_values(toks: list[_Tok], first: int, last: int) -> list[tuple[int, int]]:
    """A CASE … END's values: what follows each THEN and the ELSE, up to the next WHEN,
    ELSE or END of that CASE (a nested CASE is one value)."""
    values, depth, take = [], 0, None
    for i in range(first + 1, last + 1):
        t = toks[i]
        if depth == 0 and t.word in ("WHEN", "ELSE", "END"):
            if take is not None:
                values.append((take, i - 1))
            take = i + 1 if t.word == "ELSE" else None
        elif depth == 0 and t.word == "THEN":
            take = i + 1
        depth += (t.text == "(" or t.word == "CASE") - (t.text == ")" or t.word == "END")
    return values


def _clock_type(toks: list[_Tok], first: int, last: int, dated: frozenset[int]) -> DbType | None:
    """DATE for an item of SYSDATE, CURRENT_DATE or a datetime bind and literal days or
    intervals or a column of days (``dated``: the tokens of those binds and columns, see
    :attr:`.Translated.dated`), TIMESTAMP WITH TIME ZONE for SYSTIMESTAMP or
    CURRENT_TIMESTAMP; None for any other item."""
    words = [t.word for i, t in enumerate(toks[first:last + 1], first) if t.kind == "id" and i not in dated]
    clocks = {_CLOCK_TYPES[w] for w in words if w in _CLOCK_TYPES}
    if any(i in dated for i in range(first, last + 1)):
        clocks = {DB_TYPE_DATE}
    if len(clocks) != 1 or any(w not in _CLOCK_TYPES and w not in _UNITS for w in words):
        return None
    return clocks.pop()


def _top_items(sql: str, toks: list[_Tok] | None) -> tuple[list[_Tok], list[tuple[int, int]]]:
    """The tokens read and the (first, last) token of each item of the statement's top-level
    select list: the first SELECT outside parentheses (after a WITH clause), or the first
    SELECT of a statement in parentheses.  Without ``toks``, ``sql`` is read up to the list's end."""
    read: list[_Tok] = []
    items: list[tuple[int, int]] = []
    level = first = -1              # the list's depth and its item's first token
    depth = 0
    for t in (toks if toks is not None else _lazy(sql)):
        i = len(read)
        read.append(t)
        if t.text == "(":
            depth += 1
            continue
        if t.text == ")":
            if depth == level:
                break
            depth -= 1
            continue
        word = t.word
        if level < 0:
            if word == "SELECT" and (depth == 0 or read[0].text == "("):
                level, first = depth, i + 1
            continue
        if depth != level:
            continue
        if i == first and word in ("DISTINCT", "ALL", "UNIQUE"):
            first += 1
        elif t.text == ",":
            items.append((first, i - 1))
            first = i + 1
        elif word in _LIST_END or word == "BY" and read[i - 1].word in ("GROUP", "ORDER"):
            if word == "BY":
                i -= 1
            break
    else:
        i = len(read)
    if 0 <= first < i:
        items.append((first, i - 1))
    return read, items


def _lazy(sql: str) -> Iterator[_Tok]:
    for m in _TOKEN.finditer(sql):
        if m.lastgroup not in ("ws", "comment"):
            yield _Tok(m.lastgroup, m.group(), m.start(), m.end())


# CAST(… AS NUMBER | NUMERIC | DECIMAL (p, s)) at the end of an item
_NUMBER_TYPES = frozenset({"NUMBER", "NUMERIC", "DECIMAL", "DEC"})
_STAR = ("*", None, True)


def declared_types(sql: str, names: list[str], lookup: Lookup
                   ) -> tuple[dict[int, DbType], dict[int, tuple[int | None, int]]]:
    """For SQLite, whose results carry no column types: the result columns that are a
    user's table's column as it is (a name, qualified or aliased, its MAX or MIN, or one of a ``*``;
    ``names`` the database's names of the result's columns) declared DATE or TIMESTAMP
    (index -> DB_TYPE_DATE / _TIMESTAMP), and those declared NUMBER(p, s) — or a ``CAST``
    to one — (index -> (p, s)), looked up with ``lookup`` (:mod:`.usercolumns`)."""
    dates: dict[int, DbType] = {}
    numbers: dict[int, tuple[int | None, int]] = {}
    for i, decl, cast in declared_columns(sql, names, lookup):
        if cast is not None:
            numbers[i] = cast
        kind = date_kind(decl)
        if kind is not None:
            dates[i] = DB_TYPE_DATE if kind == "DATE" else DB_TYPE_TIMESTAMP
        elif number_scale(decl) is not None:
            numbers[i] = number_scale(decl)
    return dates, numbers


def declared_columns(sql: str, names: list[str], lookup: Lookup
                     ) -> Iterator[tuple[int, str | None, tuple[int | None, int] | None]]:
    """For each result column of ``sql`` (``names`` the database's names of them) that is
    a user's table's column as it is, or a ``CAST`` to NUMBER(p, s): (its index, the type
    its table declares or None, the CAST's (p, s) or None) — see :func:`declared_types`."""
    tables, items = _shape(sql)
    if not tables:
        return
    stars = items.count(_STAR)
    extra = len(names) - (len(items) - stars)
    if stars > 1 or extra < 0 or not stars and extra:
        return
    columns = lookup(tables)
    at = 0
    for item in items:
        if item == _STAR:
            for n in range(extra):
                yield at + n, columns.get(names[at + n].upper()), None
            at += extra
            continue
        name, cast, _ = item
        if name or cast is not None:
            yield at, columns.get(name) if name else None, cast
        at += 1


def plain_columns(sql: str, names: list[str]) -> tuple[tuple[str, ...], dict[int, str]]:
    """The user's tables ``sql`` names, and the result columns that are one of their columns
    itself (a name, qualified or aliased, or one of a ``*``; not its MAX or MIN: index -> its
    name, upper-cased; ``names`` the database's names of the result's columns) — :mod:`.coldesc`."""
    tables, items = _shape(sql)
    stars = items.count(_STAR)
    extra = len(names) - (len(items) - stars)
    if not tables or stars > 1 or extra < 0 or not stars and extra:
        return (), {}
    found: dict[int, str] = {}
    at = 0
    for item in items:
        if item == _STAR:
            found.update((at + n, names[at + n].upper()) for n in range(extra))
            at += extra
            continue
        name, _, bare = item
        if name is not None and bare:
            found[at] = name
        at += 1
    return tables, found


@lru_cache(maxsize=256)
def _shape(sql: str) -> tuple[tuple[str, ...], tuple[tuple[str | None, tuple[int | None, int] | None, bool], ...]]:
    """The user's tables ``sql`` names, and its select list's items as (the column an
    item is as it is, or None; the (p, s) of a CAST to NUMBER(p, s) it is, or None; whether
    it is the column itself, not its MAX or MIN) —
    :data:`_STAR` for a ``*``.  Kept per statement text: a statement run again with other
    binds is not read again."""
    if not maybe_user_tables(sql):
        return (), ()
    toks = tokens(sql)
    tables = tuple(table_names(toks))
    if not tables:
        return (), ()
    _, spans = _top_items(sql, toks)
    items = []
    for first, last in spans:
        if toks[last].text == "*":
            items.append(_STAR)
            continue
        if aliased(toks, first, last):
            last -= 1 + (toks[last - 1].word == "AS")
        cast = _cast_number(toks, first, last)
        bare = first == last
        while (last - first == 3 and toks[first].word in _SAME_TYPE and toks[first + 1].text == "("
               and toks[last].text == ")"):
            first, last = first + 2, last - 1        # MAX(col), MIN(col): the column's type
        plain = first == last and toks[first].kind in ("id", "qid")
        items.append((_name(toks[first]).upper() if plain else None, cast, bare))
    return tables, tuple(items)


def _cast_number(toks: list[_Tok], first: int, last: int) -> tuple[int | None, int] | None:
    """(p, s) of an item ``CAST(x AS NUMBER(p, s))`` (tokens ``first``..``last``), else None."""
    if not (toks[first].word == "CAST" and last - first >= 7 and toks[last].text == ")"
            and _closes(toks, first + 1) == last and toks[last - 1].text == ")"):
        return None
    opening = next((j for j in range(last - 2, first, -1) if toks[j].text == "("), None)
    if opening is None or toks[opening - 1].word not in _NUMBER_TYPES or toks[opening - 2].word != "AS":
        return None
    return number_scale("NUMBER" + "".join(t.text for t in toks[opening:last]))
