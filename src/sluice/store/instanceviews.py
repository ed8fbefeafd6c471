"""The instance and session views programs query first, and SYS_CONTEXT('USERENV', …).

A connection check, a tool's banner, python-oracledb's samples ask ``SELECT * FROM
v$version``, ``SELECT sid, serial#, username, program FROM v$session``, ``SELECT value FROM
nls_session_parameters WHERE parameter = 'NLS_DATE_FORMAT'``, ``SELECT
sys_context('userenv', 'sid') FROM dual``.  What they show lives in no table of the store's
SQL (the site's global name in the catalog, the sessions in the session registry of
:mod:`.sessions`, the tracing attributes in the connection), so, as USER_SEQUENCES
(:mod:`.seqviews`), a statement naming one gets its rows when it runs — here as a ``WITH``
clause under the view's own name put before the statement: the statement still reads
``FROM v$session``, so the views' DATE columns (:mod:`.viewdates`: LOGON_TIME,
STARTUP_TIME, CREATED) are typed and computed as every view's, and a column of the
statement that happens to bear a view's name (``SELECT global_name FROM global_name``) is
left alone.  Oracle's columns ending in ``#`` (SERIAL#, THREAD#) are quoted names
in either database, so the statement's ``serial#`` is written quoted (its heading kept).

The views (a ``GV$`` one has INST_ID 1 first): V$VERSION, PRODUCT_COMPONENT_VERSION (Sluice,
the store's database, the Oracle release Sluice answers as: ``Connection.version``),
V$INSTANCE, V$DATABASE (the site: its global name's first part is the database's NAME, the
rest its domain; DBID a digest of the store's own name, which a rename leaves), GLOBAL_NAME,
V$SESSION (every session open on the store, every process's — the registry's SID, user,
program, logon time; of the asking session also its process, OS user and python-oracledb's
``module`` / ``action`` / ``client_identifier`` / ``clientinfo``), and the NLS settings Sluice
uses (:mod:`.sessionnls`: Oracle's AMERICAN defaults, the session's as ALTER SESSION set them): NLS_SESSION_PARAMETERS,
NLS_INSTANCE_PARAMETERS, NLS_DATABASE_PARAMETERS (with the character sets and
NLS_RDBMS_VERSION), V$NLS_PARAMETERS.  Sluice has no instance of its own: the instance is up
while sessions are open, STARTUP_TIME the logon of the oldest open now; a store keeps no
creation time, CREATED is NULL.

``SYS_CONTEXT('USERENV', 'name')`` of literals becomes its value's literal (text, as Oracle's
VARCHAR2; the item keeps Oracle's heading): SID, SESSIONID, DB_NAME, INSTANCE_NAME, MODULE …
(:data:`_USERENV`; SESSION_USER, CURRENT_USER and CURRENT_SCHEMA are :mod:`.sqloracle`'s);
a name Oracle does not know is ORA-02003.
"""

from __future__ import annotations

import getpass
import os
import platform
import socket
import zlib
from urllib.parse import urlsplit
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Collection, Sequence

from ..errors import ora
from .selectitems import item_headings
from .sessions import PROGRAM
from .sessionnls import DEFAULTS as _NLS, DEFAULT_NLS, SessionNls
from .sessionzone import SessionZone
from .sqloracle import aliased, tokens

__all__ = ["Asker", "instance_views"]

TEXT, NUMBER, DATE = "VARCHAR(4000)", "BIGINT", "DATE"

_CHARSETS = (("NLS_CHARACTERSET", "AL32UTF8"), ("NLS_NCHAR_CHARACTERSET", "AL16UTF16"))
_PLATFORMS = {("Linux", "x86_64"): "Linux x86 64-bit", ("Linux", "aarch64"): "Linux OS (AARCH64)",
              ("Darwin", "x86_64"): "Apple Mac OS (x86-64)", ("Darwin", "arm64"): "Apple Mac OS (ARM64)",
              ("Windows", "AMD64"): "Microsoft Windows x86 64-bit"}


@dataclass
class Asker:
    """What the views show of the session asking (its connection fills it for a statement
    that names one of them)."""

    store: Any
    sid: int
    user: str
    zone: SessionZone                       # its time zone: the views' dates are its wall clock
    tracing: dict[str, Any]                 # python-oracledb's module, action, client_identifier, clientinfo
    users: Callable[[], Collection[str]]    # every user (whose sessions V$SESSION lists)
    release: str                            # the Oracle release Sluice answers as (Connection.version)
    sluice: str                             # Sluice's own version (sluice.__version__)
    nls: SessionNls = DEFAULT_NLS           # its NLS settings (ALTER SESSION SET NLS_…)


def instance_views(sql: str, asker: Callable[[], Asker]) -> str:
    """``sql`` with the views above it names given their rows and its ``SYS_CONTEXT('USERENV',
    …)`` calls their values; ``asker`` is called once if it names any."""
    if "$" not in sql and "_" not in sql:     # (every query is tested: the cheapest test first)
        return sql
    upper = sql.upper()
    if not ("V$" in upper or "NLS_" in upper or "SYS_CONTEXT" in upper or "GLOBAL_NAME" in upper
            or "PRODUCT_COMPONENT" in upper):
        return sql
    toks = tokens(sql)
    named: dict[str, None] = {}         # the views, in the order named
    edits: list[tuple[int, int, str]] = []
    marked: set[int] = set()        # tokens whose select item keeps Oracle's heading by an alias
    facts: list[_Facts] = []

    def known() -> _Facts:
        if not facts:
            facts.append(_Facts(asker()))
        return facts[0]
    for i, t in enumerate(toks):
        if t.kind != "id":
            continue
        after = toks[i + 1].text if i + 1 < len(toks) else ""
        owner, _, name = (part.strip() for part in t.word.rpartition("."))
        if name in _VIEWS and owner in ("", "SYS", "PUBLIC") and after not in ("(", "."):
            named[name] = None
            if owner:
                edits.append((t.start, t.end, name))      # the WITH clause's name
        elif name in _HASHED:        # serial#: a quoted name in either database
            qualifier = t.text[:t.text.rindex(".")].rstrip() + "." if owner else ""
            edits.append((t.start, t.end, f'{qualifier}"{name}"'))
            marked.add(i)
        elif t.word == "SYS_CONTEXT" and after == "(":
            call = toks[i + 1:i + 6]
            if ([c.text for c in call[::2]] == ["(", ",", ")"] and call[1].kind == call[3].kind == "str"
                    and call[1].text.upper() == "'USERENV'"):
                parameter = call[3].text[1:-1].upper()
                if parameter not in _ORACLE_WORDS:      # (.sqloracle's: the session user)
                    edits.append((t.start, call[-1].end, _text(known().userenv(parameter))))
                    marked.add(i)
    if not named and not edits:
        return sql
    for last, heading in item_headings(toks, marked, aliased, _heading).items():
        edits.append((toks[last].end, toks[last].end, f' AS "{heading}"'))
    for start, end, text in sorted(edits, reverse=True):
        sql = sql[:start] + text + sql[end:]
    if not named:
        return sql
    ctes = ", ".join(f"{view} AS ({_VIEWS[view](known())})" for view in named)
    first = next((t for t in toks if t.kind not in ("ws", "comment")), None)
    if first is not None and first.word == "WITH":       # the statement's own WITH clause after
        return sql[:first.end] + f" {ctes}," + sql[first.end:]
    return f"WITH {ctes} " + sql


def _heading(toks: list, first: int, last: int) -> str | None:
    """Oracle's heading of a quoted ``#`` column standing alone: its name."""
    return toks[last].word.rpartition(".")[2].strip() if first == last and "#" in toks[last].text else None


def _text(value: str | None) -> str:
    return "CAST(NULL AS VARCHAR(256))" if value is None else "'" + value.replace("'", "''") + "'"


class _Facts:
    """The site, this host and the asking session, read once for a statement."""

    def __init__(self, asker: Asker) -> None:
        self.asker = asker
        store = asker.store
        site = store.global_name()
        self.db_name, _, self.domain = site.partition(".")
        self.global_name = site
        self.dbid = zlib.crc32(store.default_global_name().encode()) & 0x7FFFFFFF   # a rename keeps it
        self.sqlite = store.dialect == "sqlite"
        self.host = socket.gethostname()
        self._sessions: list | None = None

    @property
    def sessions(self) -> list:
        """The sessions open on the store now (:meth:`Store.open_sessions`)."""
        if self._sessions is None:
            self._sessions = self.asker.store.open_sessions(self.asker.users())
        return self._sessions

    def date(self, seconds: float | None) -> datetime | None:
        """POSIX ``seconds`` as the session zone's wall clock, whole seconds (Oracle's DATE)."""
        if seconds is None:
            return None
        return self.asker.zone.wall_clock(datetime.fromtimestamp(seconds, timezone.utc)).replace(microsecond=0)

    @property
    def database_product(self) -> str:
        return "SQLite" if self.sqlite else "PostgreSQL"

    @property
    def banner(self) -> str:
        return (f"Sluice {self.asker.sluice} on {self.database_product}, "
                f"as Oracle Database 23ai Release {self.asker.release}")

    @property
    def instance_name(self) -> str:
        return self.db_name.lower()

    @property
    def server_host(self) -> str:
        """The database server's host: this one for SQLite's file, the server's of the DSN."""
        if self.sqlite:
            return self.host
        return urlsplit(self.asker.store.target.display).hostname or self.host

    def userenv(self, parameter: str) -> str | None:
        """SYS_CONTEXT('USERENV', ``parameter``): ORA-02003 when Oracle has no such parameter."""
        if parameter not in _USERENV:
            raise ora(2003)
        value = _USERENV[parameter](self)
        return None if value is None else str(value)


def _platform() -> str:
    """Oracle's PLATFORM_NAME of this machine."""
    system, machine = platform.system(), platform.machine()
    return _PLATFORMS.get((system, machine), f"{system} {machine}")


# SYS_CONTEXT('USERENV', …): the parameters Sluice answers (the session user's: .sqloracle)
_ORACLE_WORDS = frozenset({"SESSION_USER", "CURRENT_USER", "CURRENT_SCHEMA"})
_USERENV: dict[str, Callable[[_Facts], Any]] = {
    "SID": lambda f: f.asker.sid,
    "SESSIONID": lambda f: f.asker.sid,             # (V$SESSION.AUDSID: the SID)
    "INSTANCE": lambda f: 1,
    "INSTANCE_NAME": lambda f: f.instance_name,
    "DB_NAME": lambda f: f.db_name,
    "DB_UNIQUE_NAME": lambda f: f.db_name,
    "DB_DOMAIN": lambda f: f.domain or None,
    "CON_NAME": lambda f: f.db_name,
    "CON_ID": lambda f: 0,
    "SERVER_HOST": lambda f: f.server_host,
    "HOST": lambda f: f.host,
    "OS_USER": lambda f: _os_user(),
    "TERMINAL": lambda f: "unknown",               # (python-oracledb Thin's)
    "CLIENT_PROGRAM_NAME": lambda f: PROGRAM,
    "MODULE": lambda f: f.asker.tracing.get("module"),
    "ACTION": lambda f: f.asker.tracing.get("action"),
    "CLIENT_IDENTIFIER": lambda f: f.asker.tracing.get("client_identifier"),
    "CLIENT_INFO": lambda f: f.asker.tracing.get("clientinfo"),
    "SESSION_USERID": lambda f: None, "CURRENT_USERID": lambda f: None, "CURRENT_SCHEMAID": lambda f: None,
    "AUTHENTICATED_IDENTITY": lambda f: f.asker.user,
    "AUTHENTICATION_METHOD": lambda f: "PASSWORD",
    "IDENTIFICATION_TYPE": lambda f: "LOCAL",
    "ISDBA": lambda f: "TRUE" if f.asker.user == "SYS" else "FALSE",
    "DATABASE_ROLE": lambda f: "PRIMARY",
    "IP_ADDRESS": lambda f: None, "NETWORK_PROTOCOL": lambda f: None, "SERVICE_NAME": lambda f: None,
    "PROXY_USER": lambda f: None,
    "LANGUAGE": lambda f: f"{f.asker.nls['NLS_LANGUAGE']}_{f.asker.nls['NLS_TERRITORY']}.AL32UTF8",
    "LANG": lambda f: "US",
    "NLS_TERRITORY": lambda f: f.asker.nls["NLS_TERRITORY"],
    "NLS_CURRENCY": lambda f: f.asker.nls["NLS_CURRENCY"],
    "NLS_CALENDAR": lambda f: f.asker.nls["NLS_CALENDAR"],
    "NLS_DATE_FORMAT": lambda f: f.asker.nls["NLS_DATE_FORMAT"],
    "NLS_DATE_LANGUAGE": lambda f: f.asker.nls["NLS_DATE_LANGUAGE"],
    "NLS_SORT": lambda f: f.asker.nls["NLS_SORT"],
    "PLATFORM_SLASH": lambda f: "/",
}


def _os_user() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):      # (no name for the process's uid)
        return None


# -- the views' rows ----------------------------------------------------------------------

def _rows(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> str:
    """A SELECT of ``rows`` (text, integers, datetimes, None) as ``columns`` (name, type):
    each value typed (SQLite compares a number with a column of the type's affinity)."""
    def value(v: Any, kind: str) -> str:
        if v is None:
            return f"CAST(NULL AS {kind})"
        if kind == DATE:
            return f"TO_DATE('{v:%Y-%m-%d %H:%M:%S}', 'YYYY-MM-DD HH24:MI:SS')"
        if kind == NUMBER:
            return f"CAST({int(v)} AS {NUMBER})"
        return "'" + str(v).replace("'", "''") + "'"
    names = [f'"{name}"' if "#" in name else name for name, _ in columns]
    if not rows:
        return "SELECT " + ", ".join(f"{value(None, k)} AS {n}" for n, (_, k) in zip(names, columns)) + " WHERE 1 = 0"
    return " UNION ALL ".join("SELECT " + ", ".join(f"{value(v, k)} AS {n}" for v, n, (_, k) in zip(row, names, columns))
                              for row in rows)


def _version(f: _Facts) -> tuple[list, list]:
    cols = [("BANNER", TEXT), ("BANNER_FULL", TEXT), ("BANNER_LEGACY", TEXT), ("CON_ID", NUMBER)]
    return cols, [(f.banner, f"{f.banner}\nVersion {f.asker.release}", f.banner, 0)]


def _product(f: _Facts) -> tuple[list, list]:
    cols = [("PRODUCT", TEXT), ("VERSION", TEXT), ("VERSION_FULL", TEXT), ("STATUS", TEXT)]
    release = f.asker.release
    return cols, [(f"Sluice on {f.database_product}, as Oracle Database 23ai", release, release,
                   f"Sluice {f.asker.sluice}")]


def _instance(f: _Facts) -> tuple[list, list]:
    cols = [("INSTANCE_NUMBER", NUMBER), ("INSTANCE_NAME", TEXT), ("HOST_NAME", TEXT), ("VERSION", TEXT),
            ("VERSION_LEGACY", TEXT), ("VERSION_FULL", TEXT), ("STARTUP_TIME", DATE), ("STATUS", TEXT),
            ("PARALLEL", TEXT), ("THREAD#", NUMBER), ("ARCHIVER", TEXT), ("LOGINS", TEXT),
            ("SHUTDOWN_PENDING", TEXT), ("DATABASE_STATUS", TEXT), ("INSTANCE_ROLE", TEXT), ("ACTIVE_STATE", TEXT),
            ("BLOCKED", TEXT), ("CON_ID", NUMBER), ("INSTANCE_MODE", TEXT), ("EDITION", TEXT),
            ("DATABASE_TYPE", TEXT)]
    started = min((s.logon_time for s in f.sessions), default=None)
    release = f.asker.release
    return cols, [(1, f.instance_name, f.server_host, release, release, release,
                   f.date(started), "OPEN", "NO", 1, "STOPPED", "ALLOWED", "NO", "ACTIVE", "PRIMARY_INSTANCE",
                   "NORMAL", "NO", 0, "REGULAR", "EE", "SINGLE")]


def _database(f: _Facts) -> tuple[list, list]:
    cols = [("DBID", NUMBER), ("NAME", TEXT), ("CREATED", DATE), ("LOG_MODE", TEXT), ("OPEN_MODE", TEXT),
            ("PROTECTION_MODE", TEXT), ("DATABASE_ROLE", TEXT), ("PLATFORM_NAME", TEXT), ("DB_UNIQUE_NAME", TEXT),
            ("FLASHBACK_ON", TEXT), ("FORCE_LOGGING", TEXT), ("CDB", TEXT), ("CON_ID", NUMBER)]
    return cols, [(f.dbid, f.db_name, None, "NOARCHIVELOG", "READ WRITE", "MAXIMUM PERFORMANCE", "PRIMARY",
                   _platform(), f.db_name, "NO", "NO", "NO", 0)]


def _global_name(f: _Facts) -> tuple[list, list]:
    return [("GLOBAL_NAME", TEXT)], [(f.global_name,)]


def _session(f: _Facts) -> tuple[list, list]:
    cols = [("SID", NUMBER), ("SERIAL#", NUMBER), ("AUDSID", NUMBER), ("USERNAME", TEXT), ("STATUS", TEXT),
            ("SERVER", TEXT), ("SCHEMANAME", TEXT), ("OSUSER", TEXT), ("PROCESS", TEXT), ("MACHINE", TEXT),
            ("TERMINAL", TEXT), ("PROGRAM", TEXT), ("TYPE", TEXT), ("MODULE", TEXT), ("ACTION", TEXT),
            ("CLIENT_INFO", TEXT), ("LOGON_TIME", DATE), ("CLIENT_IDENTIFIER", TEXT), ("CON_ID", NUMBER)]
    own, tracing = f.asker.sid, f.asker.tracing
    rows = []
    for s in f.sessions:
        mine = s.sid == own
        machine = s.program.rpartition("@")[2] or None if "@" in s.program else None
        rows.append((s.sid, 1, s.sid, s.username, "ACTIVE" if s.active or mine else "INACTIVE", "DEDICATED",
                     s.username, _os_user() if mine else None, str(os.getpid()) if mine else None, machine,
                     "unknown" if mine else None, s.program or None, "USER",
                     *((tracing.get(k) or None for k in ("module", "action", "clientinfo")) if mine else (None,) * 3),
                     f.date(s.logon_time), (tracing.get("client_identifier") or None) if mine else None, 0))
    return cols, rows


def _nls(values: Sequence[tuple[str, str]], con_id: bool = False) -> tuple[list, list]:
    cols = [("PARAMETER", TEXT), ("VALUE", TEXT)] + [("CON_ID", NUMBER)] * con_id
    return cols, [(p, v) + (0,) * con_id for p, v in values]


_ROWS: dict[str, Callable[[_Facts], tuple[list, list]]] = {
    "V$VERSION": _version, "PRODUCT_COMPONENT_VERSION": _product, "V$INSTANCE": _instance,
    "V$DATABASE": _database, "GLOBAL_NAME": _global_name, "V$SESSION": _session,
    "NLS_SESSION_PARAMETERS": lambda f: _nls(f.asker.nls.values), "NLS_INSTANCE_PARAMETERS": lambda f: _nls(_NLS),
    "NLS_DATABASE_PARAMETERS": lambda f: _nls(_NLS + _CHARSETS + (("NLS_RDBMS_VERSION", f.asker.release),)),
    "V$NLS_PARAMETERS": lambda f: _nls(f.asker.nls.values + _CHARSETS, con_id=True),
}


def _view(rows: Callable[[_Facts], tuple[list, list]], instances: bool) -> Callable[[_Facts], str]:
    """The SELECT of a view's rows; a GV$ view's with INST_ID 1 first."""
    def select(f: _Facts) -> str:
        cols, values = rows(f)
        if instances:
            cols, values = [("INST_ID", NUMBER)] + cols, [(1, *row) for row in values]
        return _rows(cols, values)
    return select


_VIEWS: dict[str, Callable[[_Facts], str]] = {name: _view(rows, False) for name, rows in _ROWS.items()}
_VIEWS.update({"G" + name: _view(rows, True) for name, rows in _ROWS.items() if name.startswith("V$")})
# the views' columns ending in # (a quoted name in either database)
_HASHED = frozenset({"SERIAL#", "THREAD#"})
