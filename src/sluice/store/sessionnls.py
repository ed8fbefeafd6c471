"""The session's NLS settings: ALTER SESSION SET NLS_DATE_FORMAT and friends, per session.

Scripts and python-oracledb programs often begin ``ALTER SESSION SET NLS_DATE_FORMAT =
'YYYY-MM-DD HH24:MI:SS'``.  A session starts with Oracle's AMERICAN defaults
(:data:`DEFAULTS`: what NLS_SESSION_PARAMETERS, V$NLS_PARAMETERS and
``SYS_CONTEXT('USERENV', 'NLS_DATE_FORMAT')`` show, :mod:`.instanceviews`); :func:`alter_session`
reads the statement whole (TIME_ZONE by :mod:`.sessionzone`, the NLS settings here) before
anything changes, and the connection keeps the new :class:`SessionNls` on its store session
(``session.nls``: on SQLite the connection's ``nls``, which its functions read).

Checked as Oracle checks them (SQL Language Reference, ALTER SESSION; Globalization Support
Guide): a datetime format model of elements Oracle knows, a DATE's without fractions or zones
(ORA-01821), NLS_NUMERIC_CHARACTERS two different characters, neither a digit nor ``+ - < >``,
a language, territory or sort Oracle has (ORA-12705), NLS_COMP / NLS_LENGTH_SEMANTICS /
NLS_NCHAR_CONV_EXCP one of their words (ORA-00096); a name ALTER SESSION does not set
ORA-02248.  Session parameters Oracle has and Sluice has not (CURRENT_SCHEMA …) are SLU-00001.

What Sluice honours (the statement's translation, :mod:`.sqloracle`, and SQLite's functions,
:mod:`.sqlitefns` / :mod:`.oraclefns`, read the session's; PL/SQL's ``values``):
NLS_DATE_FORMAT and NLS_TIMESTAMP_FORMAT for TO_CHAR of a date without a model, TO_DATE /
TO_TIMESTAMP of text without one and a DATE made text in PL/SQL; NLS_NUMERIC_CHARACTERS for a
number model's ``D`` / ``G`` and TO_NUMBER of text.  The others are accepted and shown only
(docs/DESIGN-NOTES.md): month and day names stay English, a territory does not bring its formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..errors import not_supported, ora
from .sessionzone import SessionZone, zone_setting

__all__ = ["DEFAULTS", "DEFAULT_NLS", "SessionNls", "alter_session", "pg_model", "written_model"]

DEFAULTS: tuple[tuple[str, str], ...] = (     # Oracle's AMERICAN defaults, in the views' order
    ("NLS_LANGUAGE", "AMERICAN"), ("NLS_TERRITORY", "AMERICA"), ("NLS_CURRENCY", "$"),
    ("NLS_ISO_CURRENCY", "AMERICA"), ("NLS_NUMERIC_CHARACTERS", ".,"), ("NLS_CALENDAR", "GREGORIAN"),
    ("NLS_DATE_FORMAT", "DD-MON-RR"), ("NLS_DATE_LANGUAGE", "AMERICAN"), ("NLS_SORT", "BINARY"),
    ("NLS_TIME_FORMAT", "HH.MI.SSXFF AM"), ("NLS_TIMESTAMP_FORMAT", "DD-MON-RR HH.MI.SSXFF AM"),
    ("NLS_TIME_TZ_FORMAT", "HH.MI.SSXFF AM TZR"), ("NLS_TIMESTAMP_TZ_FORMAT", "DD-MON-RR HH.MI.SSXFF AM TZR"),
    ("NLS_DUAL_CURRENCY", "$"), ("NLS_COMP", "BINARY"), ("NLS_LENGTH_SEMANTICS", "BYTE"),
    ("NLS_NCHAR_CONV_EXCP", "FALSE"))


@dataclass(frozen=True)
class SessionNls:
    """One session's NLS settings (immutable: ALTER SESSION makes a new one)."""

    values: tuple[tuple[str, str], ...] = DEFAULTS

    def __getitem__(self, name: str) -> str:
        return dict(self.values)[name]

    @property
    def date_format(self) -> str:
        return self.values[6][1]

    @property
    def timestamp_format(self) -> str:
        return self.values[10][1]

    @property
    def decimal(self) -> str:
        """NLS_NUMERIC_CHARACTERS' decimal character (a number model's ``D``)."""
        return self.values[4][1][0]

    @property
    def group(self) -> str:
        """NLS_NUMERIC_CHARACTERS' group separator (a number model's ``G``)."""
        return self.values[4][1][1]

    def with_values(self, changes: dict[str, str]) -> "SessionNls":
        return replace(self, values=tuple((name, changes.get(name, value)) for name, value in self.values))


DEFAULT_NLS = SessionNls()

# -- checking a setting ---------------------------------------------------------------

# Oracle's datetime format elements (SQL Language Reference, "Datetime Format Elements"),
# longest first; punctuation and "quoted text" stand for themselves
_ELEMENTS = re.compile(
    r'"[^"]*"|SYYYY|YYYY|Y,YYY|IYYY|RRRR|SYEAR|YEAR|MONTH|MON|SSSSS|HH24|HH12|TZH|TZM|TZR|TZD|'
    r'A\.D\.|B\.C\.|A\.M\.|P\.M\.|FF[1-9]?|IYY|YYY|SCC|DDD|DAY|DL|DS|DY|EE|FM|FX|HH|IW|IY|MI|MM|RM|RR|SS|TS|WW|YY|'
    r'AD|AM|BC|CC|DD|PM|D|E|I|J|Q|W|X|Y|[-/,.;: ]',
    re.I)
_FRACTION_OR_ZONE = re.compile(r"FF[1-9]?|TZ[HMRD]|X", re.I)
_ZONE = re.compile(r"TZ[HMRD]", re.I)
_FORMATS = {"NLS_DATE_FORMAT": "DATE", "NLS_TIMESTAMP_FORMAT": "TIMESTAMP", "NLS_TIME_FORMAT": "TIMESTAMP",
            "NLS_TIMESTAMP_TZ_FORMAT": "TZ", "NLS_TIME_TZ_FORMAT": "TZ"}
# names Oracle's locale data has (a selection: those of its languages and territories most set)
_LANGUAGES = frozenset(name.strip() for name in (
    "AMERICAN, ARABIC, BRAZILIAN PORTUGUESE, BULGARIAN, CANADIAN FRENCH, CATALAN, CROATIAN, CZECH, DANISH, DUTCH, "
    "EGYPTIAN, ENGLISH, ESTONIAN, FINNISH, FRENCH, GERMAN, GERMAN DIN, GREEK, HEBREW, HUNGARIAN, ICELANDIC, "
    "INDONESIAN, ITALIAN, JAPANESE, KOREAN, LATIN AMERICAN SPANISH, LATVIAN, LITHUANIAN, MEXICAN SPANISH, "
    "NORWEGIAN, POLISH, PORTUGUESE, ROMANIAN, RUSSIAN, SIMPLIFIED CHINESE, SLOVAK, SLOVENIAN, SPANISH, SWEDISH, "
    "THAI, TRADITIONAL CHINESE, TURKISH, UKRAINIAN, VIETNAMESE").split(","))
_SORTS = frozenset({"BINARY", "GENERIC_M", "FRENCH_M", "SPANISH_M", "WEST_EUROPEAN", "PUNCTUATION"})
_TERRITORIES = frozenset({
    "AMERICA", "ARGENTINA", "AUSTRALIA", "AUSTRIA", "BELGIUM", "BRAZIL", "BULGARIA", "CANADA", "CHILE", "CHINA",
    "COLOMBIA", "CROATIA", "CZECH REPUBLIC", "CZECHIA", "DENMARK", "EGYPT", "ESTONIA", "FINLAND", "FRANCE",
    "GERMANY", "GREECE", "HONG KONG", "HUNGARY", "ICELAND", "INDIA", "INDONESIA", "IRELAND", "ISRAEL", "ITALY",
    "JAPAN", "KOREA", "LATVIA", "LITHUANIA", "LUXEMBOURG", "MEXICO", "NETHERLANDS", "NEW ZEALAND", "NORWAY",
    "PERU", "POLAND", "PORTUGAL", "ROMANIA", "RUSSIA", "SINGAPORE", "SLOVAKIA", "SLOVENIA", "SOUTH AFRICA",
    "SPAIN", "SWEDEN", "SWITZERLAND", "TAIWAN", "THAILAND", "TURKEY", "UKRAINE", "UNITED KINGDOM",
    "VIETNAM"})
_WORDS = {"NLS_COMP": {"BINARY", "LINGUISTIC", "ANSI"}, "NLS_LENGTH_SEMANTICS": {"BYTE", "CHAR"},
          "NLS_NCHAR_CONV_EXCP": {"TRUE", "FALSE"}, "NLS_CALENDAR": {"GREGORIAN"}}
# session parameters Oracle's ALTER SESSION sets that Sluice has not (SLU-00001, not ORA-02248)
_OTHER_PARAMETERS = frozenset({
    "CURRENT_SCHEMA", "EDITION", "CONTAINER", "ROW ARCHIVAL VISIBILITY", "ERROR_ON_OVERLAP_TIME",
    "FLAGGER", "INSTANCE", "ISOLATION_LEVEL", "USE_PRIVATE_OUTLINES", "USE_STORED_OUTLINES", "SQL_TRACE",
    "EVENTS", "OPTIMIZER_MODE", "OPTIMIZER_INDEX_COST_ADJ", "OPTIMIZER_DYNAMIC_SAMPLING", "STATISTICS_LEVEL",
    "TIMED_STATISTICS", "PLSQL_WARNINGS", "PLSQL_OPTIMIZE_LEVEL", "PLSQL_CODE_TYPE", "PLSQL_CCFLAGS",
    "PLSCOPE_SETTINGS", "DDL_LOCK_TIMEOUT", "COMMIT_WRITE", "COMMIT_LOGGING", "COMMIT_WAIT", "CURSOR_SHARING",
    "SKIP_UNUSABLE_INDEXES", "TRACEFILE_IDENTIFIER", "SQL_TRACE", "RESULT_CACHE_MODE", "DB_FILE_MULTIBLOCK_READ_COUNT",
    "SORT_AREA_SIZE", "HASH_AREA_SIZE", "WORKAREA_SIZE_POLICY", "PARALLEL_DEGREE_POLICY", "GLOBAL_NAMES",
    "RECYCLEBIN", "QUERY_REWRITE_ENABLED", "MAX_DUMP_FILE_SIZE", "OPTIMIZER_FEATURES_ENABLE",
    "NLS_CHARACTERSET", "NLS_NCHAR_CHARACTERSET"})


def check_model(fmt: str, kind: str = "DATE") -> str:
    """``fmt``, a datetime format model of ``kind`` (DATE: no fractions or zones; TIMESTAMP:
    no zone; TZ: any), as a session's default: ORA-01821 for one Oracle does not take."""
    at = 0
    for m in _ELEMENTS.finditer(fmt):
        if m.start() != at:
            break
        element = m.group()
        if not element.startswith('"') and (kind == "DATE" and _FRACTION_OR_ZONE.fullmatch(element)
                                             or kind == "TIMESTAMP" and _ZONE.fullmatch(element)):
            raise ora(1821)
        at = m.end()
    if at != len(fmt) or not fmt.strip():
        raise ora(1821)
    return fmt


def _numeric_characters(value: str) -> str:
    if len(value) != 2 or value[0] == value[1] or any(c.isdigit() or c in "+-<>" for c in value):
        raise ora(12705)
    return value


def _named(value: str, names: frozenset[str]) -> str:
    name = " ".join(value.upper().split())
    if name not in names:
        raise ora(12705)
    return name


def _setting(name: str, value: str) -> dict[str, str]:
    """The NLS values ``name = value`` sets."""
    if name in _FORMATS:
        return {name: check_model(value, _FORMATS[name])}
    if name == "NLS_NUMERIC_CHARACTERS":
        return {name: _numeric_characters(value)}
    if name in ("NLS_LANGUAGE", "NLS_DATE_LANGUAGE"):
        language = _named(value, _LANGUAGES)
        # NLS_LANGUAGE is also the default of NLS_DATE_LANGUAGE (Globalization Support Guide)
        return {name: language, **({"NLS_DATE_LANGUAGE": language} if name == "NLS_LANGUAGE" else {})}
    if name in ("NLS_TERRITORY", "NLS_ISO_CURRENCY"):
        return {name: _named(value, _TERRITORIES)}
    if name == "NLS_SORT":      # BINARY, a language's (XGERMAN: its extended one), _CI / _AI of one
        sort = value.upper()
        base = sort.removesuffix("_CI").removesuffix("_AI")
        if base not in _SORTS and base.removeprefix("X").replace("_", " ") not in _LANGUAGES:
            raise ora(12705)
        return {name: sort}
    if name in _WORDS:
        if value.upper() not in _WORDS[name]:
            if name == "NLS_CALENDAR":
                raise not_supported(f"NLS_CALENDAR {value} (Sluice's calendar is Gregorian)")
            raise ora(96, value, name, ", ".join(sorted(_WORDS[name])))
        return {name: value.upper()}
    if name in ("NLS_CURRENCY", "NLS_DUAL_CURRENCY"):
        if not value or len(value) > 10:
            raise ora(12705)
        return {name: value}
    raise ora(2248)


_ALTER_SESSION = re.compile(r"\s*ALTER\s+SESSION\s+SET\s+(.*?)\s*;?\s*", re.I | re.S)
_SETTING = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_$#]*)\s*=\s*('(?:[^']|'')*'|\"[^\"]*\"|[A-Za-z_][A-Za-z0-9_$#.]*|[-+]?\d+(?:\.\d*)?)",
                      re.S)


def alter_session(text: str, nls: SessionNls, local: SessionZone) -> tuple[SessionZone | None, SessionNls]:
    """The time zone (None: unchanged) and NLS settings ``ALTER SESSION SET name = value
    [name = value …]`` (``text``) gives a session in ``nls`` (``local``: the zone it started
    in, TIME_ZONE = LOCAL's).  Every setting is read and checked before any is made.

    :raises DatabaseError: ORA-02248 (no SET, or a name ALTER SESSION does not set), ORA-00922
        (no ``name = value``), a value's error (see the module); SLU-00001 for the session
        parameters Oracle has that Sluice has not."""
    m = _ALTER_SESSION.fullmatch(text)
    if m is None:
        raise ora(2248)
    rest, at, zone, changes = m.group(1), 0, None, {}
    while at < len(rest):
        setting = _SETTING.match(rest, at)
        if setting is None:
            raise ora(922, rest[at:].strip())
        name, value = setting.group(1).upper(), setting.group(2)
        quoted = value[0] in "'\""
        if value[0] == "'":
            value = value[1:-1].replace("''", "'")
        elif value[0] == '"':
            value = value[1:-1]
        if name == "TIME_ZONE":
            zone = zone_setting(value, quoted, local)
        elif name.startswith("NLS_") and name not in _OTHER_PARAMETERS:
            changes.update(_setting(name, value))
        elif name in _OTHER_PARAMETERS:
            raise not_supported(f"ALTER SESSION SET {name} (Sluice sets TIME_ZONE and the NLS parameters)")
        else:
            raise ora(2248)
        at = setting.end()
    if zone is None and not changes:
        raise ora(922, rest)
    return zone, nls.with_values(changes) if changes else nls


# -- honouring them --------------------------------------------------------------------

_WRITTEN = re.compile(r'"[^"]*"|X|FF(?![1-9])', re.I)


def written_model(fmt: str) -> str:
    """``fmt`` as Sluice's date writers and readers (:mod:`.oracledates`, PL/SQL's values)
    take it: ``X`` (the local radix character) as ``.``, a bare ``FF`` as ``FF6``
    (a TIMESTAMP's six digits)."""
    if "X" not in fmt.upper() and "FF" not in fmt.upper():
        return fmt
    return _WRITTEN.sub(lambda m: m.group() if m.group().startswith('"') else
                        "." if m.group().upper() == "X" else "FF6", fmt)


_PG = re.compile(r'"[^"]*"|RRRR|RR|X|FF(?![1-9])', re.I)


def pg_model(fmt: str) -> str:
    """``fmt`` as PostgreSQL's ``to_char`` / ``to_timestamp`` read it: ``RR`` / ``RRRR`` as
    ``YY`` / ``YYYY`` (PostgreSQL has no RR), ``X`` as ``.``, ``FF`` as ``FF6``."""
    return _PG.sub(lambda m: {"RRRR": "YYYY", "RR": "YY", "X": ".", "FF": "FF6"}.get(m.group().upper(), m.group()),
                   fmt)


def numeric_text(text: str, nls: SessionNls) -> str:
    """Text of a number written with the session's decimal character (TO_NUMBER of text
    without a model), as Python reads it: the decimal character a ``.``; a ``.`` that is not
    it left as it is, so that the number is refused (ORA-01722) as Oracle refuses it."""
    decimal = nls.decimal
    if decimal == ".":
        return text
    return text.replace(".", "\0").replace(decimal, ".")


def number_written(text: str, fmt: str, nls: SessionNls) -> str:
    """``text``, a number written by the model ``fmt`` with NLS AMERICA's ``D`` ``.`` and
    ``G`` ``,`` (:func:`sluice.numformat.format_number`), with the session's: only a model
    of ``D`` / ``G`` elements gets them (``.`` and ``,`` in a model are always themselves)."""
    if nls.values[4][1] == ".," or not any(c in "DG" for c in fmt.upper()):
        return text
    return text.translate({ord("."): nls.decimal, ord(","): nls.group})


def number_read(text: str, fmt: str, nls: SessionNls) -> str:
    """``text`` to read by the model ``fmt`` (:func:`sluice.numformat.read_number`): the
    session's ``D`` / ``G`` characters as ``.`` / ``,``."""
    if nls.values[4][1] == ".," or not any(c in "DG" for c in fmt.upper()):
        return text
    return text.translate({ord("."): "\0", ord(","): "\0", ord(nls.decimal): ".", ord(nls.group): ","})

