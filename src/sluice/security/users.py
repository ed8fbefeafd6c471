"""Database users and the SQL that manages them and their grants.

``CREATE USER name IDENTIFIED BY password``, ``ALTER USER … IDENTIFIED BY …``,
``ALTER USER … GRANT CONNECT THROUGH …``, ``DROP USER … [CASCADE]``,
``GRANT … TO …`` and ``REVOKE … FROM …`` for what AQ needs: EXECUTE on the
DBMS_ packages, the roles CONNECT, RESOURCE, AQ_USER_ROLE, AQ_ADMINISTRATOR_ROLE,
DBA, and the system privileges CREATE SESSION, ENQUEUE/DEQUEUE/MANAGE ANY QUEUE.
A password appears only in the statement text the caller passes in: it is hashed
at once and never stored, logged or echoed in an error message.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import ora
from ..names import canonical
from .catalog import BOOTSTRAP_USER, ROLE_GRANTS, SQL_SYSTEM_PRIVILEGES, SecurityCatalog
from .passwords import hash_password, verify_password

if TYPE_CHECKING:
    from ..connection import Connection

_IDENT = r'(?:"[^"]+"|[A-Za-z][\w$#]*)'
_CREATE_USER = re.compile(rf"^\s*CREATE\s+USER\s+({_IDENT})\s+IDENTIFIED\s+BY\s+(\"[^\"]*\"|\S+)"
                          rf"(\s+.*)?$", re.I | re.S)
_ALTER_PASSWORD = re.compile(rf"^\s*ALTER\s+USER\s+({_IDENT})\s+IDENTIFIED\s+BY\s+(\"[^\"]*\"|\S+)\s*$",
                             re.I | re.S)
_ALTER_PROXY = re.compile(rf"^\s*ALTER\s+USER\s+({_IDENT})\s+(GRANT|REVOKE)\s+CONNECT\s+THROUGH\s+"
                          rf"({_IDENT})\s*$", re.I | re.S)
_DROP_USER = re.compile(rf"^\s*DROP\s+USER\s+({_IDENT})(\s+CASCADE)?\s*$", re.I | re.S)
_GRANT = re.compile(r"^\s*GRANT\s+(.+?)\s+TO\s+(.+?)(\s+WITH\s+(ADMIN|GRANT)\s+OPTION)?\s*$", re.I | re.S)
_REVOKE = re.compile(r"^\s*REVOKE\s+(.+?)\s+FROM\s+(.+?)\s*$", re.I | re.S)
# EXECUTE on a package of SYS (DBMS_AQ …, stored by its name) or on a routine of another
# schema (a registered procedure or function, stored as OWNER.NAME)
_EXECUTE_ON = re.compile(r"^EXECUTE\s+ON\s+(?:SYS\.)?([\w$#]+(?:\.[\w$#]+)?)$", re.I)


def authenticate(security: SecurityCatalog, user: str, password: str | None) -> None:
    """Check a logon.  :raises: ORA-01017 (wrong user or password), ORA-01045."""
    if user == "SYS":
        raise ora(28009)
    info = security.user(user)
    if info is None:
        raise ora(1017)
    if info.password is not None:
        if password is None or not verify_password(password, info.password):
            raise ora(1017)
    elif password is not None and user != BOOTSTRAP_USER:
        raise ora(1017)
    if not (info.superuser or "CREATE_SESSION" in info.system):
        raise ora(1045, user)


def init_administrator(conn: "Connection", password: str | None) -> bool:
    """``sluice init``: make the bootstrap administrator a stored user (with a password
    if one is given).  Returns False when users exist already (nothing changes)."""
    if conn.context.security.users:
        return False
    spec = {"password": hash_password(password) if password else None, "superuser": True}
    conn.context.store.put_catalog_object("USER", "SYS", BOOTSTRAP_USER, spec, replace=False)
    return True


def _password(token: str) -> str:
    return token[1:-1] if token.startswith('"') and token.endswith('"') else token


class UserStatements:
    """Runs the user and grant SQL for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._session_ctx = conn.context

    @property
    def _security(self) -> SecurityCatalog:
        return self._session_ctx.security

    def _require_superuser(self) -> None:
        if not self._session_ctx.authz.is_superuser():
            raise ora(1031)

    def execute(self, kind: str, text: str) -> int:
        """Run one statement of ``kind`` ('CREATE USER', 'GRANT' …); returns 0."""
        text = text.strip().rstrip(";").strip()
        if kind == "CREATE USER":
            m = _CREATE_USER.match(text)
            if not m:
                raise ora(922, "CREATE USER needs IDENTIFIED BY")
            self.create_user(m.group(1), _password(m.group(2)))
        elif kind == "ALTER USER":
            if m := _ALTER_PASSWORD.match(text):
                self.alter_password(m.group(1), _password(m.group(2)))
            elif m := _ALTER_PROXY.match(text):
                self.proxy(m.group(1), m.group(3), m.group(2).upper() == "GRANT")
            else:
                raise ora(922, "unsupported ALTER USER clause")
        elif kind == "DROP USER":
            m = _DROP_USER.match(text)
            if not m:
                raise ora(922, "DROP USER name [CASCADE]")
            self.drop_user(m.group(1), bool(m.group(2)))
        elif kind == "GRANT":
            m = _GRANT.match(text)
            if not m:
                raise ora(990, "GRANT … TO …")
            option = (m.group(4) or "").upper()
            self.grant(m.group(1), m.group(2), option)
        elif kind == "REVOKE":
            m = _REVOKE.match(text)
            if not m:
                raise ora(990, "REVOKE … FROM …")
            self.revoke(m.group(1), m.group(2))
        else:
            raise ora(900)
        return 0

    # -- users --------------------------------------------------------------
    def create_user(self, name: str, password: str) -> None:
        self._require_superuser()
        user = canonical(name, "user name")
        if user in self._security.users or user in ("SYS", BOOTSTRAP_USER):
            raise ora(1920, user)
        self._ensure_bootstrap()
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object(
            "USER", "SYS", user, {"password": hash_password(password), "superuser": False},
            replace=False)

    def _ensure_bootstrap(self) -> None:
        """The first CREATE USER makes the bootstrap administrator a real user."""
        if not self._security.users:
            self._session_ctx.store.put_catalog_object(
                "USER", "SYS", BOOTSTRAP_USER, {"password": None, "superuser": True}, replace=True)

    def alter_password(self, name: str, password: str) -> None:
        user = canonical(name, "user name")
        info = self._security.user(user)
        if info is None:
            raise ora(1918, user)
        if user != self._session_ctx.username:
            self._require_superuser()
        self._ensure_bootstrap()
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object(
            "USER", "SYS", user, {"password": hash_password(password), "superuser": info.superuser},
            replace=True)

    def proxy(self, name: str, proxy: str, grant: bool) -> None:
        """``ALTER USER OE GRANT CONNECT THROUGH AQADM`` (seed 004 Example 17-26)."""
        self._require_superuser()
        user, via = canonical(name, "user name"), canonical(proxy, "user name")
        for u in (user, via):
            if self._security.user(u) is None:
                raise ora(1918, u)
        self._session_ctx.ddl_commit()
        if grant:
            self._session_ctx.store.put_catalog_object("PROXY", user, via, {}, replace=True)
        elif not self._session_ctx.store.drop_catalog_object("PROXY", user, via):
            raise ora(1927)

    def drop_user(self, name: str, cascade: bool) -> None:
        self._require_superuser()
        user = canonical(name, "user name")
        if user not in self._security.users:
            raise ora(1918, user)
        if user == self._session_ctx.username:
            raise ora(1940, user)
        store = self._session_ctx.store
        owned = [qt for qt in store.queue_tables() if qt.owner == user]
        if owned and not cascade:
            raise ora(1922, user)
        self._session_ctx.ddl_commit()
        for qt in owned:
            store.drop_queue_table(qt.owner, qt.name)
        for kind in ("SYSPRIV", "EXECPRIV", "ROLE", "QUEUEPRIV", "RULEPRIV", "PROXY"):
            for owner, obj, _ in store.catalog_objects(kind):
                if owner == user:
                    store.drop_catalog_object(kind, owner, obj)
        for agent, db_user, _ in store.catalog_objects("AGENTUSER"):
            if db_user == user:
                store.drop_catalog_object("AGENTUSER", agent, db_user)
        store.drop_catalog_object("USER", "SYS", user)

    # -- GRANT / REVOKE -----------------------------------------------------
    def _parse_privileges(self, text: str) -> list[tuple[str, str]]:
        """-> [(kind, name)] with kind EXECPRIV, SYSPRIV or ROLE."""
        out = []
        for item in (p.strip() for p in text.split(",")):
            upper = re.sub(r"\s+", " ", item.upper())
            if m := _EXECUTE_ON.match(upper):
                out.append(("EXECPRIV", m.group(1)))
            elif upper in SQL_SYSTEM_PRIVILEGES:
                out.append(("SYSPRIV", SQL_SYSTEM_PRIVILEGES[upper]))
            elif upper in ROLE_GRANTS:
                out.append(("ROLE", upper))
            else:
                raise ora(990, item)
        return out

    def _grantees(self, text: str) -> list[str]:
        users = [canonical(u.strip(), "grantee") for u in text.split(",")]
        for u in users:
            if self._security.user(u) is None:
                raise ora(1917, u)
        return users

    def grant(self, privileges: str, grantees: str, option: str) -> None:
        self._require_superuser()
        privs, users = self._parse_privileges(privileges), self._grantees(grantees)
        self._session_ctx.ddl_commit()
        for user in users:
            for kind, name in privs:
                spec = {"grantor": self._session_ctx.username, "admin_option": option == "ADMIN"}
                self._session_ctx.store.put_catalog_object(kind, user, name, spec, replace=True)

    def revoke(self, privileges: str, grantees: str) -> None:
        self._require_superuser()
        privs, users = self._parse_privileges(privileges), self._grantees(grantees)
        store = self._session_ctx.store
        held = {(k, o, n) for k in ("EXECPRIV", "SYSPRIV", "ROLE") for o, n, _ in store.catalog_objects(k)}
        for user in users:        # check everything first: a failed REVOKE changes nothing
            for kind, name in privs:
                if (kind, user, name) not in held:
                    raise ora(1951, name, user) if kind == "ROLE" else ora(
                        1952, user) if kind == "SYSPRIV" else ora(1927)
        self._session_ctx.ddl_commit()
        for user in users:
            for kind, name in privs:
                store.drop_catalog_object(kind, user, name)
