"""Database links: ``CREATE [PUBLIC] DATABASE LINK dbs2.net CONNECT TO u IDENTIFIED BY p
USING '…'`` and ``DROP [PUBLIC] DATABASE LINK``; DBA_DB_LINKS.

A link names another site (DESIGN.md section 7): its USING string is another Sluice
store's DSN (``sqlite:///…``, ``postgresql://…?schema=…`` — another schema of the same
PostgreSQL database is another site) or a remote Sluice server's propagation servlet
(``http(s)://host:port/aqserv/servlet/AQPropServlet``, Basic auth with the link's
credentials).  A link is a ``SLUICE_CATALOG`` row of kind DBLINK, owner ``PUBLIC`` or
the user who made it; its password is kept encrypted (Fernet) — see :func:`_key` for
where the key lives and why.  Oracle resolves a name to the user's own link first, then
to a public one; an unknown name is ORA-02019 when it is used, not before (seed 003
"Propagation to Remote Subscribers": a schedule may name a link that does not exist yet).
"""

from __future__ import annotations

import base64
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from ...errors import ora
from ...names import canonical

KIND = "DBLINK"
PUBLIC = "PUBLIC"
_KEY_KIND, _KEY_ENV = "DBLINK_KEY", "SLUICE_DBLINK_KEY"

_LINK_NAME = r'(?:"[^"]+"|[A-Za-z][\w$#]*(?:\.[A-Za-z][\w$#]*)*)'
_CREATE = re.compile(
    rf"^\s*CREATE\s+(?:SHARED\s+)?(PUBLIC\s+)?DATABASE\s+LINK\s+({_LINK_NAME})"
    rf"(?:\s+CONNECT\s+TO\s+(\"[^\"]+\"|\w+)\s+IDENTIFIED\s+BY\s+(\"[^\"]*\"|\S+))?"
    rf"(?:\s+USING\s+'([^']*)')?\s*;?\s*$", re.I | re.S)
_DROP = re.compile(rf"^\s*DROP\s+(PUBLIC\s+)?DATABASE\s+LINK\s+({_LINK_NAME})\s*;?\s*$", re.I)
SCHEMES = ("sqlite:", "postgresql://", "postgres://", "http://", "https://")


@dataclass(frozen=True)
class DbLink:
    owner: str                 # PUBLIC or the user who made it
    name: str                  # DBS2.NET
    username: str | None
    password: str | None       # in memory only; stored encrypted
    using: str
    created: float

    @property
    def endpoint(self) -> str:
        """Where the link leads: a DSN or the servlet's URL (seed 004's connect string
        ``(DESCRIPTION=(ADDRESS=(PROTOCOL=http)(HOST=…)(PORT=…)))`` is the servlet at
        ``/aqserv/servlet/AQPropServlet`` there)."""
        return description_url(self.using) or self.using

    @property
    def is_http(self) -> bool:
        return self.endpoint.lower().startswith(("http://", "https://"))


_DESCRIPTION = re.compile(r"^\s*\(\s*DESCRIPTION\s*=.*\(\s*PROTOCOL\s*=\s*(https?)\s*\).*", re.I | re.S)
_PART = re.compile(r"\(\s*(HOST|PORT)\s*=\s*([^)\s]+)\s*\)", re.I)


def description_url(using: str) -> str | None:
    """The servlet URL of an Oracle connect descriptor with PROTOCOL http/https (seed 004
    "Setting Up for Oracle Streams AQ Propagation over HTTP"), else None."""
    m = _DESCRIPTION.match(using)
    if m is None:
        return None
    parts = {k.upper(): v for k, v in _PART.findall(using)}
    if "HOST" not in parts:
        return None
    port = f":{parts['PORT']}" if "PORT" in parts else ""
    return f"{m.group(1).lower()}://{parts['HOST']}{port}/aqserv/servlet/AQPropServlet"


def link_name(text: str) -> str:
    """A link's canonical name: upper case unless quoted (``dbs2.net`` -> ``DBS2.NET``).
    :raises: ORA-06502 for a value that is not text."""
    if not isinstance(text, str):
        raise ora(6502, f"a database link name must be a string, not {type(text).__name__}")
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    return text.upper()


def _key(store: Any) -> bytes:
    """The Fernet key that encrypts the link passwords of ``store``.

    ``SLUICE_DBLINK_KEY`` in the environment, when set: the key then lives nowhere near
    the data.  Otherwise an SQLite store keeps it in a file beside the database
    (``<file>.dblink-key``, mode 0600): a copy of the database file alone — a backup, a
    file sent to someone — does not disclose the passwords.  A PostgreSQL store keeps it
    in the store itself (a catalog row): the hosts of a PostgreSQL site run on several
    machines and must all decrypt, so no single machine's file can hold it; there the
    encryption keeps passwords out of DBA_DB_LINKS, catalog dumps and logs of the catalog,
    not from someone who can read every table — as with Oracle's link passwords, which
    are as safe as the dictionary."""
    env = os.environ.get(_KEY_ENV)
    if env:
        return env.encode()
    path = getattr(store, "path", None)
    if path is not None:
        key_file = f"{path}.dblink-key"
        try:
            with open(key_file, "rb") as f:
                return f.read().strip()
        except FileNotFoundError:
            key = Fernet.generate_key()
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, key)
            finally:
                os.close(fd)
            return key
    for _, _, spec in store.catalog_objects(_KEY_KIND):
        return spec["key"].encode()
    key = Fernet.generate_key()
    store.put_catalog_object(_KEY_KIND, "SYS", "KEY", {"key": key.decode()}, replace=False)
    return key


def encrypt(store: Any, password: str) -> str:
    return Fernet(_key(store)).encrypt(password.encode()).decode()


def decrypt(store: Any, token: str) -> str:
    try:
        return Fernet(_key(store)).decrypt(token.encode()).decode()
    except InvalidToken:
        raise ora(1017) from None   # the key changed: the stored password cannot be read


def _check_using(using: str) -> None:
    if not using.lower().startswith(SCHEMES) and description_url(using) is None:
        raise ora(12154, f"{using!r}: a Sluice DSN (sqlite:, postgresql://) or "
                         f"http(s)://host:port/aqserv/servlet/AQPropServlet")


def create_link(ctx: Any, text: str) -> None:
    """``CREATE [PUBLIC] DATABASE LINK``.  :raises: ORA-02011 (exists), ORA-01031 (no
    privilege), ORA-12154 (a USING string naming no Sluice site)."""
    m = _CREATE.match(text)
    if not m:
        raise ora(922, "CREATE DATABASE LINK name CONNECT TO user IDENTIFIED BY password "
                       "USING 'dsn or url'")
    public, name, user, password, using = m.groups()
    _check_privilege(ctx, "CREATE PUBLIC DATABASE LINK" if public else "CREATE DATABASE LINK")
    owner = PUBLIC if public else ctx.username
    name = link_name(name)
    if using is None:
        raise ora(2019)
    _check_using(using)
    if any(o == owner and n == name for o, n, _ in ctx.store.catalog_objects(KIND)):
        raise ora(2011)
    username = canonical(user, "user name") if user else None
    if password is not None and password.startswith('"') and password.endswith('"'):
        password = password[1:-1]
    spec = {"username": username,
            "password": encrypt(ctx.store, password) if password is not None else None,
            "host": using, "created": time.time()}
    ctx.ddl_commit()
    ctx.store.put_catalog_object(KIND, owner, name, spec, replace=False)


def drop_link(ctx: Any, text: str) -> None:
    """``DROP [PUBLIC] DATABASE LINK``.  :raises: ORA-02024 when there is no such link."""
    m = _DROP.match(text)
    if not m:
        raise ora(922, "DROP [PUBLIC] DATABASE LINK name")
    public, name = m.groups()
    owner = PUBLIC if public else ctx.username
    if public:
        _check_privilege(ctx, "DROP PUBLIC DATABASE LINK")
    ctx.ddl_commit()
    if not ctx.store.drop_catalog_object(KIND, owner, link_name(name)):
        raise ora(2024)


def _check_privilege(ctx: Any, privilege: str) -> None:
    authz = ctx.authz
    if not (authz.is_superuser() or authz.has_system(privilege)):
        raise ora(1031)


def find_link(store: Any, user: str, name: str) -> DbLink | None:
    """The link ``name`` as ``user`` sees it: the user's own, else a public one."""
    name = link_name(name)
    found: dict[str, dict] = {}
    for owner, n, spec in store.catalog_objects(KIND):
        if n == name and owner in (user, PUBLIC):
            found[owner] = spec
    spec = found.get(user) or found.get(PUBLIC)
    if spec is None:
        return None
    owner = user if user in found else PUBLIC
    password = decrypt(store, spec["password"]) if spec.get("password") else None
    return DbLink(owner, name, spec.get("username"), password, spec["host"], spec.get("created", 0.0))


def resolve_link(store: Any, user: str, name: str) -> DbLink:
    """:raises: ORA-02019 when ``user`` sees no link ``name``."""
    link = find_link(store, user, name)
    if link is None:
        raise ora(2019)
    return link


def basic_auth(link: DbLink) -> str | None:
    """The HTTP ``Authorization`` header value for an HTTP link (None without a user)."""
    if link.username is None:
        return None
    token = f"{link.username}:{link.password or ''}".encode()
    return "Basic " + base64.b64encode(token).decode()


__all__ = ["DbLink", "KIND", "basic_auth", "create_link", "drop_link",
           "find_link", "link_name", "resolve_link"]
