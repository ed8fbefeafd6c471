"""python-oracledb's connect keywords, sorted into what they mean for a Sluice store.

``sluice.connect()`` and ``sluice.create_pool()`` take every keyword
``oracledb.connect()`` / ``oracledb.create_pool()`` take, so a python-oracledb
program ports by changing its connect line.  Each keyword is one of:

* **used** — ``user``, ``password``, ``dsn`` (``"sqlite:///app.db"``,
  ``"scott/tiger@sqlite:///app.db"``, ``"scott/tiger"`` on the default store),
  ``params`` (:class:`ConnectParams`), ``mode``, ``proxy_user`` (also spelled
  ``user="proxy[client]"``), ``newpassword``, ``events``, ``conn_class``,
  ``on_connect_callback``;
* **ignored with a warning, once per keyword and process** — what only tunes Oracle
  Net, TLS, DRCP, the statement cache or the client's identification
  (:data:`IGNORED`); the Oracle listener address (``host``, ``port``,
  ``service_name``, ``sid``, ``instance_name``) too when a DSN names the store, as
  python-oracledb lets the DSN win over them;
* **refused** with ``DPY-3001`` (:class:`~sluice.NotSupportedError`) — what would
  change who the session is or what it sees and Sluice cannot do (:data:`REFUSED`),
  and the listener address without a DSN; a keyword python-oracledb does not know
  either is ``DPY-2025`` (an :class:`~sluice.errors.ArgumentError`, which is also a
  ``TypeError``, what python-oracledb raises).

A keyword given as ``None`` (or ``False``, or an empty list) is python-oracledb's
"not specified" and is never warned about or refused.

``events=True``: python-oracledb needs it only in Thick mode (Oracle Client's events
mode); its default Thin mode ignores it.  Sluice behaves like Thin mode: the keyword
is accepted and ``Connection.subscribe()`` works with or without it.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from typing import Any, Callable

from .errors import ArgumentError, dpy
from .pool_settings import DEFAULTS as POOL_DEFAULTS, check_pool_values

DEFAULT_DSN = "sqlite:///sluice.db"

# keywords with a meaning here (besides dsn, pool, pool_alias, conn_class and params,
# which connect() itself takes)
USED = ("user", "password", "proxy_user", "newpassword", "mode", "events", "on_connect_callback")
# the Oracle listener's address: superseded by a Sluice DSN, refused without one
ADDRESS = ("host", "port", "service_name", "sid", "instance_name")
# what only tunes Oracle Net, TLS, DRCP, the statement cache, or what the client tells
# the server about itself: nothing here to tune or to tell
IGNORED = (
    "protocol", "https_proxy", "https_proxy_port", "server_type", "cclass", "purity",
    "expire_time", "retry_count", "retry_delay", "tcp_connect_timeout", "ssl_server_dn_match",
    "ssl_server_cert_dn", "wallet_location", "wallet_password", "disable_oob", "stmtcachesize",
    "tag", "matchanytag", "config_dir", "debug_jdwp", "connection_id_prefix", "ssl_context",
    "sdu", "pool_boundary", "use_tcp_fast_open", "ssl_version", "program", "machine",
    "terminal", "osuser", "driver_name", "use_sni", "thick_mode_dsn_passthrough", "pool_name",
)
# what would change who the session is or what it sees, and Sluice cannot do
REFUSED = {
    "access_token": "token authentication (OAuth 2.0, OCI IAM): Sluice users log on with a password",
    "externalauth": "external authentication: use mode=sluice.AUTH_MODE_SYSDBA for the "
                    "operating-system-authenticated administrator",
    "extra_auth_params": "authentication plugins",
    "edition": "edition-based redefinition",
    "appcontext": "application contexts",
    "shardingkey": "sharded databases",
    "supershardingkey": "sharded databases",
    "handle": "an Oracle Client service context handle",
}
CONNECT_KEYWORDS = frozenset(USED + ADDRESS + IGNORED + tuple(REFUSED))

# python-oracledb's pool keywords (create_pool(), PoolParams) beyond the connect keywords
POOL_USED = ("min", "max", "increment", "getmode", "homogeneous", "timeout", "wait_timeout",
             "max_lifetime_session", "session_callback", "connectiontype")
POOL_IGNORED = ("max_sessions_per_shard", "soda_metadata_cache", "ping_interval", "ping_timeout")
POOL_KEYWORDS = frozenset(POOL_USED + POOL_IGNORED)

_warned: set[str] = set()
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PROXY_FORM = re.compile(r"^(.+)\[(.+)\]$", re.S)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class IgnoredParameterWarning(UserWarning):
    """A python-oracledb connect keyword that has nothing to tune in Sluice."""


def _given(value: Any) -> bool:
    return value is not None and value is not False and value != []


def warn_ignored(name: str, why: str) -> None:
    """Warn once per process that ``name`` is ignored."""
    if name not in _warned:
        _warned.add(name)
        frame, level = sys._getframe(0), 1   # point at the caller's line, outside sluice
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
            frame, level = frame.f_back, level + 1
        warnings.warn(f"sluice: connect parameter {name} is ignored: {why}",
                      IgnoredParameterWarning, stacklevel=level)


def parse_dsn_with_credentials(dsn: str) -> tuple[str | None, str | None, str | None]:
    """``user/password@connect_string`` or ``user/password`` (python-oracledb's forms) ->
    ``(user, password, connect_string)``, empty parts as None.  A connect string may
    hold an ``@`` of its own (``postgresql://pg@host/db``): the credentials end at the
    first ``@`` that a DSN scheme follows."""
    if _SCHEME.match(dsn) and "//" in dsn.split("@", 1)[0]:
        return None, None, dsn or None       # a plain DSN: sqlite:///…, postgresql://…
    at = next((m.start() for m in re.finditer("@", dsn) if _SCHEME.match(dsn[m.start() + 1:])),
              dsn.rfind("@"))
    if at < 0 and _SCHEME.match(dsn):
        return None, None, dsn               # a connect string of another kind (host:1521/…)
    credentials, connect_string = (dsn[:at], dsn[at + 1:] or None) if at >= 0 else (dsn, None)
    slash = credentials.find("/")
    if slash > 0 or (slash == 0 and len(credentials) == 1):
        return credentials[:slash] or None, credentials[slash + 1:] or None, connect_string
    if connect_string is None:
        return None, None, dsn or None
    return credentials or None, None, connect_string


class ConnectParams:
    """python-oracledb's ``ConnectParams``: connect keywords gathered in one object
    (``sluice.connect(params=p)``; keywords given to ``connect()`` win over it).

    The store is named as python-oracledb names the database: by the connect string
    (:meth:`parse_connect_string`, or ``connect()``'s ``dsn``)."""

    _KEYWORDS = CONNECT_KEYWORDS

    def __init__(self, **kwargs: Any) -> None:
        self._values: dict[str, Any] = {}
        self._dsn: str | None = None
        self.set(**kwargs)

    def set(self, **kwargs: Any) -> None:
        """Set the given keywords; ``None`` leaves a value as it is (python-oracledb)."""
        check_names(kwargs, self._KEYWORDS)
        self._values.update(check_used_values({k: v for k, v in kwargs.items() if v is not None}))

    def copy(self) -> "ConnectParams":
        other = type(self).__new__(type(self))
        other._values, other._dsn = dict(self._values), self._dsn
        return other

    def parse_connect_string(self, connect_string: str) -> None:
        """Keep ``connect_string`` (a Sluice DSN) as the store to connect to."""
        self._dsn = connect_string

    def get_connect_string(self) -> str | None:
        return self._dsn

    @staticmethod
    def parse_dsn_with_credentials(dsn: str) -> tuple[str | None, str | None, str | None]:
        if not isinstance(dsn, str):
            raise dpy(2025, f"dsn must be a string, not {type(dsn).__name__}", cls=ArgumentError)
        return parse_dsn_with_credentials(dsn)

    def __getattr__(self, name: str) -> Any:
        if name in type(self)._KEYWORDS and name != "password":   # the password stays hidden
            return self.__dict__["_values"].get(name)
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self._values, self._dsn) == (other._values, other._dsn)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()) if k != "password")
        return f"{type(self).__name__}({shown})"


class PoolParams(ConnectParams):
    """python-oracledb's ``PoolParams``: ``ConnectParams`` plus the pool's keywords."""

    _KEYWORDS = CONNECT_KEYWORDS | POOL_KEYWORDS

    def set(self, **kwargs: Any) -> None:
        """As ``ConnectParams.set``; the pool's settings are checked as ``create_pool()``
        checks them (python-oracledb checks them here too), against the defaults."""
        check_names(kwargs, self._KEYWORDS)
        current = {**POOL_DEFAULTS, **{k: v for k, v in self._values.items() if k in POOL_DEFAULTS}}
        given = {k: v for k, v in kwargs.items() if k in POOL_DEFAULTS and v is not None}
        checked = check_pool_values(current, given)
        super().set(**{**kwargs, **{k: checked[k] for k in given}})


# python-oracledb's AuthMode (an IntFlag: its flags combine)
AUTH_MODES = {"DEFAULT": 0, "PRELIM": 0x8, "SYSASM": 0x8000, "SYSBKP": 0x20000, "SYSDBA": 0x2,
              "SYSDGD": 0x40000, "SYSKMT": 0x80000, "SYSOPER": 0x4, "SYSRAC": 0x100000}


def check_used_values(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (connect keywords, None left out) with those Sluice uses checked: the
    names and passwords are strings (DPY-2025, an ArgumentError), the callback callable
    (DPY-2070); ``mode`` an ``AUTH_MODE_*`` value or name (DPY-4022), as an int."""
    for name in ("user", "password", "proxy_user", "newpassword"):
        value = values.get(name)
        if value is not None and not isinstance(value, str):
            raise dpy(2025, f"{name} must be a string, not {type(value).__name__}", cls=ArgumentError)
    callback = values.get("on_connect_callback")
    if callback is not None and not callable(callback):
        raise dpy(2070)
    if values.get("mode") is not None:
        values = {**values, "mode": _auth_mode(values["mode"])}
    return values


def _auth_mode(value: Any) -> int:
    mode = None
    if isinstance(value, str) and not value.isdigit():
        mode = AUTH_MODES.get(value.strip().upper())
    elif isinstance(value, (int, str)) and not isinstance(value, bool):
        mode = int(value)
        all_flags = sum(AUTH_MODES.values())
        mode = mode if 0 <= mode and mode & ~all_flags == 0 else None
    if mode is None:
        raise dpy(4022, "AuthMode", value)
    return mode


def check_names(kwargs: dict, known: frozenset[str], what: str = "connection params") -> None:
    """Refuse keywords python-oracledb does not know either (DPY-2025, a TypeError)."""
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise dpy(2025, f"unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(repr(u) for u in unknown)}", cls=ArgumentError)


class ConnectSpec:
    """What one ``connect()`` call asks for, with python-oracledb's precedence applied:
    keywords over ``params``; credentials in the DSN only where no ``user`` is given."""

    def __init__(self, dsn: Any, params: ConnectParams | None, kwargs: dict,
                 known: frozenset[str] = CONNECT_KEYWORDS) -> None:
        if params is not None and not isinstance(params, ConnectParams):
            raise dpy(2025, "params must be a sluice.ConnectParams")
        check_names(kwargs, known)
        values = dict(params._values) if params is not None else {}
        values.update(check_used_values({k: v for k, v in kwargs.items() if v is not None}))
        if dsn is None and params is not None:
            dsn = params.get_connect_string()
        if dsn is not None and not isinstance(dsn, str):
            raise dpy(2025, f"dsn must be a string, not {type(dsn).__name__}", cls=ArgumentError)
        user, password, connect_string = parse_dsn_with_credentials(dsn) if dsn else (None, None, None)
        if values.get("user") is None:   # python-oracledb: the DSN's credentials only then
            values.update({k: v for k, v in (("user", user), ("password", password)) if v is not None})
        self.values = values
        self._check_unused(values, dsn_given=connect_string is not None)
        self.dsn = connect_string or DEFAULT_DSN
        self.user, self.proxy_user = values.get("user"), values.get("proxy_user")
        if self.user and self.proxy_user is None and (m := _PROXY_FORM.match(self.user)):
            self.user, self.proxy_user = m.group(1), m.group(2)   # "proxy[client]"
        self.password = values.get("password")
        self.mode = values.get("mode") or 0
        self.newpassword = values.get("newpassword")
        self.on_connect_callback: Callable | None = values.get("on_connect_callback")
        self.events = bool(values.get("events"))

    @staticmethod
    def _check_unused(values: dict, dsn_given: bool) -> None:
        for name, value in values.items():
            if not _given(value):
                continue
            if name in REFUSED:
                raise dpy(3001, f"connect parameter {name}", REFUSED[name])
            if name in ADDRESS:
                if not dsn_given:
                    raise dpy(3001, f"connect parameter {name}",
                              "it addresses an Oracle listener; name the store with "
                              "dsn='sqlite:///file.db' or dsn='postgresql://…'")
                warn_ignored(name, "the DSN names the store")
            elif name in IGNORED or name in POOL_IGNORED:
                warn_ignored(name, "it tunes Oracle networking or the Oracle client, "
                                   "which Sluice does not use")


def resolve_positional(dsn: Any, user: Any, password: Any) -> tuple[Any, Any, Any]:
    """``connect(dsn, user, password)`` is Sluice's order; ``connect(user, password, dsn)``
    (cx_Oracle's) is recognised when only its third argument is a DSN."""
    def is_dsn(v: Any) -> bool:
        return isinstance(v, str) and bool(_SCHEME.match(parse_dsn_with_credentials(v)[2] or ""))
    if password is not None and is_dsn(password) and not is_dsn(dsn):
        return password, dsn, user
    return dsn, user, password
