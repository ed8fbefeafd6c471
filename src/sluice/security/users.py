"""Database users and the SQL that manages them and their grants.

``CREATE USER name IDENTIFIED BY password``, ``ALTER USER … IDENTIFIED BY …``,
``ALTER USER … GRANT CONNECT THROUGH …``, ``DROP USER … [CASCADE]``,
``GRANT … TO …`` and ``REVOKE … FROM …`` for what AQ needs: EXECUTE on the
DBMS_ packages, the roles CONNECT, RESOURCE, AQ_USER_ROLE, AQ_ADMINISTRATOR_ROLE,
DBA, and the system privileges CREATE SESSION, ENQUEUE/DEQUEUE/MANAGE ANY QUEUE …; and the
object privileges of tables and sequences, ``GRANT SELECT, INSERT ON owner.table TO …``,
``GRANT ALL [PRIVILEGES] ON owner.seq TO …`` (:data:`.catalog.TABLE_PRIVILEGES`,
``SEQUENCE_PRIVILEGES``; the object's owner, or a holder WITH GRANT OPTION, may grant them;
a revoke takes with it what the revokee granted on).  ``CREATE ROLE name`` / ``DROP ROLE name`` make roles of one's own
(CREATE ROLE grants the new role to its creator WITH ADMIN OPTION; its holders WITH ADMIN
OPTION, or of GRANT ANY ROLE, grant and revoke it): ``GRANT … TO role`` (privileges, other
roles), ``GRANT role TO user | PUBLIC``, and a user holds what its roles hold
(:mod:`.catalog`) -- in its session, as far as ``SET ROLE`` enabled them.
A password appears only in the statement text the caller passes in: it is hashed
at once and never stored, logged or echoed in an error message.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Protocol

from ..errors import not_supported, ora
from ..names import canonical, split_qualified
from ..store import sequences
from ..store.sqlschema import PREDEFINED_ROLES
from .catalog import BOOTSTRAP_USER, SEQUENCE_PRIVILEGES, SQL_SYSTEM_PRIVILEGES, TABLE_PRIVILEGES, SecurityCatalog
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
_CREATE_ROLE = re.compile(rf"^\s*CREATE\s+ROLE\s+({_IDENT})(\s+NOT\s+IDENTIFIED)?\s*$", re.I | re.S)
_DROP_ROLE = re.compile(rf"^\s*DROP\s+ROLE\s+({_IDENT})\s*$", re.I | re.S)
_ROLE_NAME = re.compile(rf"^{_IDENT}$")
_SET_ROLE = re.compile(rf"^\s*SET\s+ROLE\s+(?:(NONE)|(ALL)(?:\s+EXCEPT\s+({_IDENT}(?:\s*,\s*{_IDENT})*))?"
                       rf"|({_IDENT}(?:\s*,\s*{_IDENT})*))\s*$", re.I | re.S)
_GRANT = re.compile(r"^\s*GRANT\s+(.+?)\s+TO\s+(.+?)(\s+WITH\s+(ADMIN|GRANT)\s+OPTION)?\s*$", re.I | re.S)
_REVOKE = re.compile(r"^\s*REVOKE\s+(.+?)\s+FROM\s+(.+?)\s*$", re.I | re.S)
# EXECUTE on a package of SYS (DBMS_AQ …, stored by its name) or on a routine of a schema
# (a registered procedure or function, stored as OWNER.NAME)
_EXECUTE_ON = re.compile(r"^EXECUTE\s+ON\s+(\S.*)$", re.I | re.S)
# object privileges of a table or sequence: ``SELECT, INSERT ON [schema.]name``, ``ALL [PRIVILEGES] ON …``
_OBJECT_ON = re.compile(r"^(.+?)\s+ON\s+(?:(?:TABLE|SEQUENCE)\s+)?(\S+)$", re.I | re.S)
_ALL = re.compile(r"^ALL(?:\s+PRIVILEGES)?$", re.I)


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


# the grants that name an object of a schema (``OWNER.NAME``; rule objects ``TYPE.OWNER.NAME``;
# EXECPRIV also names SYS's packages by their bare names): they go with the schema's user
_OBJECT_GRANTS = ("EXECPRIV", "QUEUEPRIV", "RULEPRIV", "TABPRIV")


def _object_owner(kind: str, name: str) -> str | None:
    parts = name.split(".")
    if kind == "RULEPRIV":
        return parts[1] if len(parts) > 2 else None
    return parts[0] if len(parts) > 1 else None


def _password(token: str) -> str:
    return token[1:-1] if token.startswith('"') and token.endswith('"') else token


class SchemaObjects(Protocol):
    """What DROP USER drops of a user's schema (the session passes the Streams layer's,
    :class:`sluice.streams.schemadrop.SchemaDrop`)."""

    @property
    def empty(self) -> bool:
        """The schema holds no object."""

    def check(self) -> None:
        """Raise what would refuse the drop, changing nothing."""

    def drop(self) -> None:
        """Drop every object."""


class UserStatements:
    """Runs the user and grant SQL for one connection.  ``schema_objects(user)`` is what
    DROP USER … CASCADE drops of the user's schema."""

    def __init__(self, conn: "Connection", schema_objects: Callable[[str], SchemaObjects]) -> None:
        self._session_ctx = conn.context
        self._schema_objects = schema_objects

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
        elif kind == "CREATE ROLE":
            m = _CREATE_ROLE.match(text)
            if not m:
                raise ora(922, "CREATE ROLE name [NOT IDENTIFIED]")
            self.create_role(m.group(1))
        elif kind == "DROP ROLE":
            m = _DROP_ROLE.match(text)
            if not m:
                raise ora(922, "DROP ROLE name")
            self.drop_role(m.group(1))
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
        elif kind == "SET ROLE":
            m = _SET_ROLE.match(text)
            if not m:
                raise ora(922, "SET ROLE role [, role] | ALL [EXCEPT role [, role]] | NONE")
            if m.group(1):
                self.set_role("ONLY", "")
            elif m.group(2):
                self.set_role("EXCEPT" if m.group(3) else "ALL", m.group(3) or "")
            else:
                self.set_role("ONLY", m.group(4))
        else:
            raise ora(900)
        return 0

    # -- users --------------------------------------------------------------
    def _new_name(self, name: str, what: str, taken: int, privilege: str | None = None) -> str:
        """A name no user or role has (a user and a role share one namespace), for a
        superuser or (if given) a holder of the system ``privilege``; makes the bootstrap
        administrator a stored user and commits.  :raises: ORA-01031, ORA-``taken``."""
        if privilege is None or not self._session_ctx.authz.has_system(privilege):
            self._require_superuser()
        new = canonical(name, what)
        if new in self._security.users or new in ("SYS", BOOTSTRAP_USER, "PUBLIC") \
                or self._security.is_role(new):
            raise ora(taken, new)
        self._ensure_bootstrap()
        self._session_ctx.ddl_commit()
        return new

    def create_user(self, name: str, password: str) -> None:
        user = self._new_name(name, "user name", 1920)
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
        store = self._session_ctx.store
        if user == self._session_ctx.username or store.open_sessions([user]):
            raise ora(1940, user)       # connected: here, or in any session of any process
        schema = self._schema_objects(user)
        if not schema.empty and not cascade:
            raise ora(1922, user)
        self._session_ctx.ddl_commit()
        if not schema.empty:
            schema.check()      # what refuses the statement refuses it before anything goes
            schema.drop()
        for kind in ("SYSPRIV", "EXECPRIV", "ROLE", "QUEUEPRIV", "RULEPRIV", "TABPRIV", "PROXY"):
            for owner, obj, _ in store.catalog_objects(kind):
                if owner == user or (kind in _OBJECT_GRANTS and _object_owner(kind, obj) == user):
                    store.drop_catalog_object(kind, owner, obj)
        self._drop_grants_made_by(user)
        for agent, db_user, _ in store.catalog_objects("AGENTUSER"):
            if db_user == user:
                store.drop_catalog_object("AGENTUSER", agent, db_user)
        store.drop_catalog_object("USER", "SYS", user)

    def _drop_grants_made_by(self, user: str) -> None:
        """The object privileges ``user`` granted (WITH GRANT OPTION) go with it, and in
        turn those its grantees granted on from them, as a REVOKE from it would take them:
        a grant whose grantor is gone is not kept (a user re-created under the name finds
        nobody holding what its namesake gave)."""
        store = self._session_ctx.store
        lost: dict[tuple[str, str, str], set[str]] = {}     # (kind, object, privilege) -> who lost it
        changed = True
        while changed:
            changed = False
            for kind in ("QUEUEPRIV", "RULEPRIV", "TABPRIV"):
                for grantee, obj, spec in store.catalog_objects(kind):
                    gone = [p for p, g in spec.items() if isinstance(g, dict) and (
                        g.get("grantor") == user or g.get("grantor") in lost.get((kind, obj, p), ()))]
                    if not gone:
                        continue
                    kept = {p: g for p, g in spec.items() if p not in gone}
                    if kept:
                        store.put_catalog_object(kind, grantee, obj, kept, replace=True)
                    else:
                        store.drop_catalog_object(kind, grantee, obj)
                    for p in gone:
                        lost.setdefault((kind, obj, p), set()).add(grantee)
                    changed = True

    # -- roles --------------------------------------------------------------
    def create_role(self, name: str) -> None:
        """``CREATE ROLE name [NOT IDENTIFIED]``: a superuser or a holder of the CREATE ROLE
        system privilege; the creator holds the new role WITH ADMIN OPTION (Oracle: "the role
        is granted to you with the ADMIN OPTION"), so may grant, revoke and drop it.
        :raises: ORA-01031, ORA-01921 a user or role has the name."""
        role = self._new_name(name, "role name", 1921, "CREATE_ROLE")
        me, store = self._session_ctx.username, self._session_ctx.store
        store.put_catalog_object("ROLEDEF", "SYS", role, {}, replace=False)
        store.put_catalog_object("ROLE", me, role, {"grantor": me, "admin_option": True}, replace=True)

    def drop_role(self, name: str) -> None:
        """``DROP ROLE name``: a superuser, a holder of DROP ANY ROLE or of the role WITH
        ADMIN OPTION.  Its grants — to it and of it — go with it, so the users who held it
        lose what it gave at once.  :raises: ORA-01919 no such role, ORA-01031 (none of
        those, or a predefined role)."""
        role = canonical(name, "role name")
        if not self._security.is_role(role):
            raise ora(1919, role)
        authz = self._session_ctx.authz
        if role in PREDEFINED_ROLES or not (authz.has_system("DROP_ANY_ROLE") or role in self._administered()):
            raise ora(1031)
        store = self._session_ctx.store
        self._session_ctx.ddl_commit()
        for kind in ("SYSPRIV", "EXECPRIV", "ROLE", "QUEUEPRIV", "RULEPRIV", "TABPRIV"):
            for owner, obj, _ in store.catalog_objects(kind):
                if owner == role or (kind == "ROLE" and obj == role):
                    store.drop_catalog_object(kind, owner, obj)
        store.drop_catalog_object("ROLEDEF", "SYS", role)

    def set_role(self, mode: str, roles: str) -> None:
        """``SET ROLE r1, r2`` (``mode`` ONLY; NONE names none), ``SET ROLE ALL [EXCEPT r1,
        …]``: the roles the session's own calls count from now on, and SESSION_ROLES shows
        (what runs on the user's behalf counts none whatever is set).  Each role named must
        be one the user holds -- granted to it, to PUBLIC or to a role it holds.  Not DDL:
        the transaction goes on.  :raises: ORA-01924, and nothing changes."""
        ctx = self._session_ctx
        names = tuple(dict.fromkeys(canonical(r.strip(), "role name") for r in roles.split(",") if r.strip()))
        info = ctx.security.user(ctx.username)
        held = info.roles if info is not None else set()
        for role in names:
            if role not in held:
                raise ora(1924, role)
        ctx.session.set_roles(mode, names)
        ctx.authz.set_roles(mode, names)

    # -- GRANT / REVOKE -----------------------------------------------------
    def _parse_privileges(self, text: str, revoking: bool = False) -> list[tuple[str, str, tuple[str, ...]]]:
        """-> [(kind, name, object privileges)] with kind EXECPRIV, SYSPRIV, ROLE (no object
        privileges) or TABPRIV (name ``OWNER.NAME`` of a table or sequence -- unqualified, the
        caller's -- and the privileges listed before its ON: :meth:`_object_privileges`)."""
        out: list[tuple[str, str, tuple[str, ...]]] = []
        listed: list[str] = []       # object privileges waiting for their ON (``SELECT, INSERT ON t``)
        for item in (p.strip() for p in text.split(",")):
            upper = re.sub(r"\s+", " ", item.upper())
            if (m := _EXECUTE_ON.match(item)) and not listed:
                out.append(("EXECPRIV", self._executable(m.group(1)), ()))
            elif m := _OBJECT_ON.match(item):
                owner, name = split_qualified(m.group(2), self._session_ctx.username, "object name")
                what = self._object_privileges(", ".join([*listed, m.group(1)]), owner, name, revoking)
                out.append(("TABPRIV", f"{owner}.{name}", what))
                listed = []
            elif upper in TABLE_PRIVILEGES or _ALL.match(upper) or "(" in upper:
                listed.append(item)
                continue
            elif upper in SQL_SYSTEM_PRIVILEGES and not listed:
                out.append(("SYSPRIV", SQL_SYSTEM_PRIVILEGES[upper], ()))
            elif _ROLE_NAME.match(item) and not listed:
                role = canonical(item, "role name")
                if not self._security.is_role(role):
                    raise ora(1919, role)      # a name that is no privilege names a role
                out.append(("ROLE", role, ()))
            else:
                raise ora(990, item)
            if out[-1] in out[:-1]:
                raise ora(1711)
        if listed:
            raise ora(969)      # object privileges without their ON
        return out

    def _object_privileges(self, text: str, owner: str, name: str, revoking: bool) -> tuple[str, ...]:
        """The privileges ``text`` lists (``SELECT, INSERT``) on ``owner.name``: a sequence's
        are SELECT and ALTER (ORA-02205 for another), anything else's a table's (a name that
        is no sequence is a table: an evaluation context's may be the source database's, which
        Sluice does not hold).  ALL [PRIVILEGES] is every one of them -- in a REVOKE, every
        one the grants hold (Oracle's REVOKE ALL takes what there is).  :raises: ORA-01711
        one listed twice, ORA-00990, ORA-02224 EXECUTE on a table, SLU-00001 a column list."""
        valid = SEQUENCE_PRIVILEGES if sequences.exists(self._session_ctx.store, owner, name) else TABLE_PRIVILEGES
        if _ALL.match(text.strip()):
            return ("ALL",) if revoking else valid
        listed: list[str] = []
        for item in (p.strip() for p in text.split(",")):
            privilege = re.sub(r"\s+", " ", item.upper())
            if "(" in privilege:
                raise not_supported("column privileges (UPDATE (column) ON …)")
            if privilege not in TABLE_PRIVILEGES and privilege != "EXECUTE":
                raise ora(990, item)
            if privilege not in valid:
                raise ora(2205) if valid is SEQUENCE_PRIVILEGES else ora(2224)
            if privilege in listed:
                raise ora(1711)
            listed.append(privilege)
        return tuple(listed)

    def _executable(self, text: str) -> str:
        """What ``EXECUTE ON text`` names: a package of SYS (``DBMS_AQ``, ``SYS.DBMS_AQ``:
        the public synonyms Oracle resolves them through) by its name, or a routine as
        ``OWNER.NAME`` -- unqualified, of the grantor's schema, as Oracle resolves a name;
        quoted parts keep their case."""
        owner, name = split_qualified(text, "", "object name")
        if owner == "SYS" or (not owner and name.startswith("DBMS_")):
            return name
        return f"{owner or self._session_ctx.username}.{name}"

    def _grantees(self, text: str, public: bool = False) -> list[str]:
        """The users and roles named (with ``public``, PUBLIC too: every user).
        :raises: ORA-01917, ORA-01700 (one named twice)."""
        users = [canonical(u.strip(), "grantee") for u in text.split(",")]
        if len(set(users)) < len(users):
            raise ora(1700)
        for u in users:
            if self._security.user(u) is None and not self._security.is_role(u) \
                    and not (public and u == "PUBLIC"):
                raise ora(1917, u)
        return users

    def _check_role_grants(self, privs: list[tuple[str, str, tuple[str, ...]]], users: list[str], option: str) -> None:
        """A role is granted to a role that is not among its own (ORA-01934); an object
        privilege is not granted to a role WITH GRANT OPTION (ORA-01926)."""
        security = self._security
        for grantee in users:
            if not security.is_role(grantee):
                continue
            if option == "GRANT" and any(kind == "TABPRIV" for kind, _, _ in privs):
                raise ora(1926)
            for kind, name, _ in privs:
                if kind == "ROLE" and grantee in security.role_closure(name):
                    raise ora(1934)

    def _tables(self, privs: list[tuple[str, str, tuple[str, ...]]]) -> list[tuple[str, tuple[str, ...]]]:
        """The (object, privileges) of the tables and sequences of ``privs``, after checking
        the caller may grant and revoke the rest (the objects' own checks are the caller's): a
        superuser anything; a system privilege its holder WITH ADMIN OPTION (what
        DBMS_AQADM.GRANT_SYSTEM_PRIVILEGE and DBMS_RULE_ADM ask of theirs), a role its holder
        WITH ADMIN OPTION or a holder of GRANT ANY ROLE, EXECUTE on a routine its owner.
        :raises: ORA-01031, ORA-01932 (a role)."""
        tables = [(name, what) for kind, name, what in privs if kind == "TABPRIV"]
        authz = self._session_ctx.authz
        if len(tables) == len(privs) or authz.is_superuser():
            return tables
        me, info = self._session_ctx.username, authz.info()
        administered = self._administered()
        for kind, name, _ in privs:
            if kind == "ROLE":
                if not ("GRANT_ANY_ROLE" in info.system or name in administered):
                    raise ora(1932, name)
            elif not (kind == "TABPRIV" or (kind == "SYSPRIV" and name in info.admin_option)
                      or (kind == "EXECPRIV" and name.split(".", 1)[0] == me and "." in name)):
                raise ora(1031)
        return tables

    def _administered(self) -> set[str]:
        """The roles the session's user holds WITH ADMIN OPTION: granted so to it (CREATE
        ROLE does), to a role it holds or to PUBLIC."""
        me, info = self._session_ctx.username, self._session_ctx.authz.info()
        return {role for grantee, role, spec in self._session_ctx.store.catalog_objects("ROLE")
                if spec.get("admin_option") and (grantee in (me, "PUBLIC") or grantee in info.roles)}

    @staticmethod
    def _public_allowed(privs: list[tuple[str, str, tuple[str, ...]]]) -> bool:
        """PUBLIC may be named for tables, sequences and roles (a role granted to PUBLIC is
        every user's); Sluice keeps no system privilege or EXECUTE of PUBLIC's (ORA-01917)."""
        return all(kind in ("TABPRIV", "ROLE") for kind, _, _ in privs)

    @staticmethod
    def _not_to_owner(tables: list[tuple[str, tuple[str, ...]]], users: list[str]) -> None:
        """:raises: ORA-01749 an object's owner is a grantee (it holds every privilege on it)."""
        if any(t.split(".", 1)[0] in users for t, _ in tables):
            raise ora(1749)

    def grant(self, privileges: str, grantees: str, option: str) -> None:
        privs = self._parse_privileges(privileges)
        tables = self._tables(privs)
        if tables and option == "ADMIN":
            raise ora(993)      # an object privilege is granted WITH GRANT OPTION
        users = self._grantees(grantees, public=self._public_allowed(privs))
        self._not_to_owner(tables, users)
        self._check_role_grants(privs, users, option)
        for table, what in tables:
            for privilege in what:
                self._session_ctx.authz.check_grant_table(table, privilege)
        me, store = self._session_ctx.username, self._session_ctx.store
        self._session_ctx.ddl_commit()
        admins = {(kind, grantee, name) for kind in ("SYSPRIV", "ROLE")
                  for grantee, name, spec in store.catalog_objects(kind) if spec.get("admin_option")}
        for user in users:
            for kind, name, what in privs:
                if kind == "TABPRIV":      # {SELECT: {grant_option, grantor}, …}, as RULEPRIV rows
                    held = self._held_table(user, name)
                    for p in what:
                        held[p] = {"grant_option": option == "GRANT", "grantor": me}
                    store.put_catalog_object(kind, user, name, held, replace=True)
                    continue
                # granted again without the option, one held WITH ADMIN OPTION keeps it (Oracle
                # takes an ADMIN OPTION back only by revoking the grant)
                spec = {"grantor": me, "admin_option": option == "ADMIN" or (kind, user, name) in admins}
                store.put_catalog_object(kind, user, name, spec, replace=True)

    def revoke(self, privileges: str, grantees: str) -> None:
        privs = self._parse_privileges(privileges, revoking=True)
        tables = self._tables(privs)
        users = self._grantees(grantees, public=self._public_allowed(privs))
        self._not_to_owner(tables, users)
        store = self._session_ctx.store
        held = {(k, o, n) for k in ("EXECPRIV", "SYSPRIV", "ROLE") for o, n, _ in store.catalog_objects(k)}
        authz, me = self._session_ctx.authz, self._session_ctx.username
        taken: dict[tuple[str, str], list[str]] = {}     # (grantee, object) -> the privileges revoked
        for user in users:        # check everything first: a failed REVOKE changes nothing
            for kind, name, what in privs:
                if kind != "TABPRIV":
                    if (kind, user, name) not in held:
                        raise ora(1951, name, user) if kind == "ROLE" else ora(
                            1952, user) if kind == "SYSPRIV" else ora(1927)
                    continue
                grants = self._held_table(user, name)
                wanted = list(grants) if what == ("ALL",) else list(what)
                if not wanted or any(p not in grants for p in wanted):
                    raise ora(1927)
                if not (authz.is_superuser() or name.split(".", 1)[0] == me or all(
                        grants[p].get("grantor") == me for p in wanted)):
                    raise ora(1927)    # neither the object's owner nor the grantor
                taken[(user, name)] = wanted
        self._session_ctx.ddl_commit()
        for user in users:
            for kind, name, _ in privs:
                if kind == "TABPRIV":     # with the grants made from it WITH GRANT OPTION
                    self._security.revoke_object_privileges(kind, user, name, taken[(user, name)])
                else:
                    store.drop_catalog_object(kind, user, name)

    def _held_table(self, user: str, table: str) -> dict[str, dict]:
        for grantee, name, spec in self._session_ctx.store.catalog_objects("TABPRIV"):
            if grantee == user and name == table:
                return dict(spec)
        return {}
