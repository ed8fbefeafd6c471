"""Who exists and who may do what: users, roles, privileges, AQ agents.

Everything is kept in the store's generic catalog (``Store.put_catalog_object``),
one object per fact, so every backend stores it the same way:

=============  ==============  ======================  ===============================
kind           owner           name                    spec
=============  ==============  ======================  ===============================
USER           SYS             user name               password hash, superuser flag
SYSPRIV        grantee         privilege               admin_option, grantor
QUEUEPRIV      grantee|PUBLIC  OWNER.QUEUE             {privilege: {grant_option, grantor}}
RULEPRIV       grantee|PUBLIC  TYPE.OWNER.OBJECT       {ALTER|EXECUTE: {grant_option, grantor}}
TABPRIV        grantee|PUBLIC  OWNER.TABLE or          {SELECT|INSERT|…: {grant_option, grantor}}
                               OWNER.SEQUENCE
EXECPRIV       grantee         package (DBMS_AQ …) or  grantor
                               OWNER.ROUTINE
ROLE           grantee|PUBLIC  role                    grantor, admin_option
ROLEDEF        SYS             role (CREATE ROLE)      {}
AGENT          SYS             agent name              enable_http / smtp / anyp
AGENTUSER      agent name      database user           {}
PROXY          user            proxy user              {} (ALTER USER … CONNECT THROUGH)
=============  ==============  ======================  ===============================

RULEPRIV holds DBMS_RULE_ADM's object privileges; TYPE is RULE, RULE_SET or
EVALUATION_CONTEXT (the vocabulary is :mod:`sluice.rules.privileges`').  The rules
engine's system privileges (CREATE_RULE_OBJ …) are SYSPRIV rows like AQ's.

A grantee is a user or a role — predefined (CONNECT, AQ_ADMINISTRATOR_ROLE …: what they
give is ROLE_GRANTS) or made by CREATE ROLE — and a user holds what it was granted, what
its roles were granted, what theirs were, and so on (``SecurityCatalog.users``;
``direct`` keeps what each grantee was granted itself).  A role granted to PUBLIC is every
user's.  What a user does on its own behalf rather than in a session (a Streams client as
its user, the owner of a rule given an evaluation context: Oracle's definer's rights)
counts no role at all: ``SecurityCatalog.user(name, roles=False)`` (``own``), to which
the checks add PUBLIC's object grants as they do for a session.

TABPRIV holds the object privileges on tables and sequences (``GRANT SELECT, INSERT ON
scott.emp TO hr``, ``GRANT SELECT ON scott.emp_seq TO hr``; tables and sequences share one
namespace, so ``OWNER.NAME`` names one object): what a statement naming another schema's
table or sequence needs (:mod:`.objectaccess`), and the tables an evaluation context's table
aliases name (DBMS_RULE_ADM: "the rule owner must have the necessary privileges on all the
base objects accessed by the rule").  Those tables are the source database's, which Sluice
does not hold: a grant on a name that is no sequence names a table, it does not look it up.
``SELECT ANY TABLE`` is the SYSPRIV row SELECT_ANY_TABLE (INSERT / UPDATE / DELETE ANY TABLE,
SELECT / ALTER ANY SEQUENCE likewise).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from ..store.base import Store
from ..store.sqlschema import PREDEFINED_ROLES, ROLE_GRANTS   # what the predefined roles give

BOOTSTRAP_USER = "SLUICE"

# AQ system privileges (DBMS_AQADM names) and their SQL spellings
AQ_SYSTEM_PRIVILEGES = ("ENQUEUE_ANY", "DEQUEUE_ANY", "MANAGE_ANY")
SQL_SYSTEM_PRIVILEGES = {"ENQUEUE ANY QUEUE": "ENQUEUE_ANY", "DEQUEUE ANY QUEUE": "DEQUEUE_ANY",
                         "MANAGE ANY QUEUE": "MANAGE_ANY", "CREATE SESSION": "CREATE_SESSION",
                         "FORCE ANY TRANSACTION": "FORCE_ANY_TRANSACTION",
                         # Sluice's: read the monitoring views' figures over HTTP (/metrics,
                         # /dashboard); Oracle's SELECT_CATALOG_ROLE gives it too
                         "MONITOR": "MONITOR",
                         # read any table (an evaluation context's table alias names one), write
                         # any table, use any sequence (sluice.security.objectaccess)
                         **{p: p.replace(" ", "_") for p in (
                             "SELECT ANY TABLE", "INSERT ANY TABLE", "UPDATE ANY TABLE", "DELETE ANY TABLE",
                             "SELECT ANY SEQUENCE", "ALTER ANY SEQUENCE")},
                         # run any registered routine (an apply handler of another schema …)
                         "EXECUTE ANY PROCEDURE": "EXECUTE_ANY_PROCEDURE",
                         # make roles, drop and grant anyone's (CREATE ROLE, DROP / GRANT ANY ROLE)
                         "CREATE ROLE": "CREATE_ROLE", "DROP ANY ROLE": "DROP_ANY_ROLE",
                         "GRANT ANY ROLE": "GRANT_ANY_ROLE",
                         # table DDL at a cursor (sluice.store.tableddl)
                         **{p: p.replace(" ", "_") for p in (
                             "CREATE TABLE", "CREATE ANY TABLE", "ALTER ANY TABLE", "DROP ANY TABLE",
                             "CREATE ANY INDEX", "DROP ANY INDEX", "COMMENT ANY TABLE",
                             # views at a cursor (sluice.store.viewddl)
                             "CREATE VIEW", "CREATE ANY VIEW", "DROP ANY VIEW")},
                         # the rules engine's (DBMS_RULE_ADM.GRANT_SYSTEM_PRIVILEGE's constants)
                         **{f"{verb} {what}": priv for verb, what, priv in (
                             ("CREATE", "RULE", "CREATE_RULE_OBJ"),
                             ("CREATE", "RULE SET", "CREATE_RULE_SET_OBJ"),
                             ("CREATE", "EVALUATION CONTEXT", "CREATE_EVALUATION_CONTEXT_OBJ"),
                             *((verb, f"ANY {obj}", f"{verb}_ANY_{obj.replace(' ', '_')}")
                               for verb in ("CREATE", "ALTER", "DROP", "EXECUTE")
                               for obj in ("RULE", "RULE SET", "EVALUATION CONTEXT")))}}
QUEUE_PRIVILEGES = ("ENQUEUE", "DEQUEUE")
# the object privileges of a table and of a sequence (GRANT … ON; ALL [PRIVILEGES] is all of them)
TABLE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "ALTER", "INDEX", "REFERENCES")
SEQUENCE_PRIVILEGES = ("SELECT", "ALTER")


@dataclass
class UserInfo:
    name: str
    password: dict | None = None
    superuser: bool = False
    system: set[str] = field(default_factory=set)
    admin_option: set[str] = field(default_factory=set)
    execute: set[str] = field(default_factory=set)
    roles: set[str] = field(default_factory=set)
    queues: dict[str, dict[str, dict]] = field(default_factory=dict)   # OWNER.Q -> priv -> spec
    rule_objects: dict[str, dict[str, dict]] = field(default_factory=dict)  # TYPE OWNER.O -> priv -> spec
    tables: dict[str, dict[str, dict]] = field(default_factory=dict)   # OWNER.TABLE -> priv -> spec


_OBJECT_FIELDS = ("queues", "rule_objects", "tables")   # UserInfo's object privileges, in field order


@dataclass
class AgentInfo:
    name: str
    enable_http: bool = False
    enable_smtp: bool = False
    enable_anyp: bool = False
    certificate_location: str | None = None
    db_users: list[str] = field(default_factory=list)


def _closure(start: list[str], roles: dict[str, UserInfo]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        role = todo.pop()
        if role not in seen:
            seen.add(role)
            todo.extend(roles[role].roles if role in roles else ())
    return seen


def _with_roles(user: UserInfo, roles: dict[str, UserInfo], public: Iterable[str] = ()) -> UserInfo:
    """``user`` with what its roles give — those granted to it or to PUBLIC (``public``), to
    those, … (a predefined role's privileges are ROLE_GRANTS and what was granted to it).  Its
    own grants win where both hold an object privilege (a role's never carries the grant
    option)."""
    eff = UserInfo(user.name, user.password, user.superuser, set(user.system), set(user.admin_option),
                   set(user.execute), _closure([*user.roles, *public], roles),
                   *({obj: dict(privs) for obj, privs in getattr(user, f).items()} for f in _OBJECT_FIELDS))
    for name in eff.roles:
        eff.superuser = eff.superuser or name == "DBA"     # DBA makes a superuser
        given = ROLE_GRANTS.get(name, {})
        eff.system |= given.get("sys", set())
        eff.execute |= given.get("exec", set())
        eff.admin_option |= given.get("admin", set())
        role = roles.get(name)
        if role is None:
            continue
        eff.system |= role.system
        eff.admin_option |= role.admin_option
        eff.execute |= role.execute
        for f in _OBJECT_FIELDS:
            mine = getattr(eff, f)
            for obj, privs in getattr(role, f).items():
                held = mine.setdefault(obj, {})
                for privilege, spec in privs.items():
                    held.setdefault(privilege, spec)
    return eff


# the catalog kinds SecurityCatalog.refresh reads
_KINDS = ("USER", "ROLEDEF", "SYSPRIV", "EXECPRIV", "ROLE", "QUEUEPRIV", "RULEPRIV", "TABPRIV",
          "AGENT", "AGENTUSER", "PROXY")


class SecurityCatalog:
    """The security facts of one store, cached until the catalog changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version = -1
        self.users: dict[str, UserInfo] = {}      # with what their roles give
        self.own: dict[str, UserInfo] = {}        # users with what was granted to them only
        self.direct: dict[str, UserInfo] = {}     # users and roles: what was granted to each
        self.roles: dict[str, UserInfo] = {}      # predefined and CREATE ROLE's
        self.agents: dict[str, AgentInfo] = {}
        self.proxies: dict[str, set[str]] = {}
        self.public_queues: dict[str, dict[str, dict]] = {}         # granted to PUBLIC
        self.public_rule_objects: dict[str, dict[str, dict]] = {}   # granted to PUBLIC
        self.public_tables: dict[str, dict[str, dict]] = {}         # granted to PUBLIC
        self.public_roles: set[str] = set()                         # granted to PUBLIC

    def refresh(self) -> None:
        version = self.store.catalog_version()
        if version == self._version:
            return
        rows = self.store.catalog_objects_of(_KINDS)      # one read, not one per kind
        users: dict[str, UserInfo] = {}
        for _, name, spec in rows["USER"]:
            users[name] = UserInfo(name, spec.get("password"), bool(spec.get("superuser")))
        roles = {name: UserInfo(name) for name in (*PREDEFINED_ROLES,
                                                   *(n for _, n, _ in rows["ROLEDEF"]))}
        holders = {**roles, **users}       # whoever a grant may name (besides PUBLIC)
        for grantee, priv, spec in rows["SYSPRIV"]:
            if grantee in holders:
                holders[grantee].system.add(priv)
                if spec.get("admin_option"):
                    holders[grantee].admin_option.add(priv)
        for grantee, pkg, _ in rows["EXECPRIV"]:
            if grantee in holders:
                holders[grantee].execute.add(pkg)
        public_roles: set[str] = set()      # GRANT role TO PUBLIC: every user holds it
        for grantee, role, _ in rows["ROLE"]:
            if grantee in holders:
                holders[grantee].roles.add(role)
            elif grantee == "PUBLIC" and role in roles:
                public_roles.add(role)
        public_queues = self._object_grants(rows["QUEUEPRIV"], holders, "queues")
        public = self._object_grants(rows["RULEPRIV"], holders, "rule_objects")
        public_tables = self._object_grants(rows["TABPRIV"], holders, "tables")
        agents: dict[str, AgentInfo] = {}
        for _, name, spec in rows["AGENT"]:
            agents[name] = AgentInfo(name, bool(spec.get("enable_http")), bool(spec.get("enable_smtp")),
                                     bool(spec.get("enable_anyp")), spec.get("certificate_location"))
        for agent, db_user, _ in rows["AGENTUSER"]:
            if agent in agents:
                agents[agent].db_users.append(db_user)
        proxies: dict[str, set[str]] = {}
        for user, proxy, _ in rows["PROXY"]:
            proxies.setdefault(user, set()).add(proxy)
        self.direct, self.roles = holders, roles
        self.users = {name: _with_roles(u, roles, public_roles) for name, u in users.items()}
        self.public_roles = public_roles
        self.own = {name: replace(u, roles=set()) for name, u in users.items()}
        self.agents, self.proxies = agents, proxies
        self.public_queues = public_queues
        self.public_rule_objects = public
        self.public_tables = public_tables
        self._version = version

    def _object_grants(self, rows: list[tuple[str, str, dict]], users: dict[str, UserInfo],
                       field_name: str) -> dict[str, dict[str, dict]]:
        """Spread the grant ``rows`` of a kind (``{privilege: {grant_option, grantor}}`` per
        object) over the users' ``field_name``; returns PUBLIC's."""
        public: dict[str, dict[str, dict]] = {}
        for grantee, obj, spec in rows:
            if grantee == "PUBLIC":
                public[obj] = dict(spec)
            elif grantee in users:
                getattr(users[grantee], field_name)[obj] = dict(spec)
        return public

    def grantee(self, name: str) -> UserInfo | None:
        """What was granted to the user or role ``name`` itself (not through its roles)."""
        self.refresh()
        return self.direct.get(name) or self.user(name)     # SYS, a store's bootstrap user

    def queue_grants(self, grantee: str, queue: str) -> dict[str, dict]:
        """The queue privileges granted on ``queue`` (``OWNER.QUEUE``) to ``grantee`` itself
        — a user, a role or PUBLIC — as ``{privilege: {grant_option, grantor}}``."""
        self.refresh()
        if grantee == "PUBLIC":
            return dict(self.public_queues.get(queue, {}))
        info = self.grantee(grantee)
        return dict(info.queues.get(queue, {})) if info is not None else {}

    def revoke_object_privileges(self, kind: str, grantee: str, obj: str, privileges: Iterable[str]) -> None:
        """Take ``privileges`` on ``obj`` from ``grantee`` and, in turn, from whoever it
        granted them to, and so on: Oracle's revoke of an object privilege cascades to the
        grants made WITH GRANT OPTION from it.  ``kind`` is a catalog kind whose rows are
        ``{privilege: {grant_option, grantor}}`` (QUEUEPRIV, RULEPRIV, TABPRIV); a row left
        with no privilege goes.  The caller has checked the revoke and committed (DDL)."""
        store = self.store
        rows = {who: dict(spec) for who, name, spec in store.catalog_objects(kind) if name == obj}
        changed: set[str] = set()
        todo = [(grantee, list(privileges))]
        while todo:
            who, wanted = todo.pop()
            held = rows.get(who, {})
            taken = [p for p in wanted if held.pop(p, None) is not None]   # a grant goes once
            if not taken:
                continue
            changed.add(who)
            for other, spec in rows.items():
                theirs = [p for p in taken if spec.get(p, {}).get("grantor") == who]
                if theirs:
                    todo.append((other, theirs))
        for who in sorted(changed):
            if rows[who]:
                store.put_catalog_object(kind, who, obj, rows[who], replace=True)
            else:
                store.drop_catalog_object(kind, who, obj)

    def is_role(self, name: str) -> bool:
        self.refresh()
        return name in self.roles

    def role_closure(self, role: str) -> set[str]:
        """``role`` and the roles granted to it, and to those, …"""
        self.refresh()
        return _closure([role], self.roles)

    def user(self, name: str, roles: bool = True) -> UserInfo | None:
        """What the user ``name`` holds: with its roles', or (``roles`` False) only what was
        granted to it -- its rights on its own behalf, as Oracle's definer's rights, where
        no role is enabled (not even DBA: a superuser is the stored flag's).  PUBLIC's
        grants are the caller's to add (``public_*``)."""
        self.refresh()
        if name == "SYS":   # built in; reached only by AS SYSDBA (see users.authenticate)
            return UserInfo("SYS", None, True)
        u = (self.users if roles else self.own).get(name)
        if u is None and name == BOOTSTRAP_USER and not self.users:
            # a store nobody has initialised with users yet: the embedded default
            # user is its administrator, like SYS of a fresh database
            return UserInfo(name, None, True)
        return u

    def with_roles(self, name: str, mode: str, named: Iterable[str]) -> UserInfo | None:
        """What the user ``name`` holds in a session that SET ROLE: its own grants and
        those of the roles it enabled -- ``mode`` ALL every role (:meth:`user`), ONLY the
        ``named`` ones it holds (directly, through PUBLIC or another role) and theirs,
        EXCEPT those granted to it or PUBLIC but the ``named`` ones, and theirs (SET ROLE
        ALL EXCEPT).  A superuser by its stored flag or an enabled DBA."""
        self.refresh()
        if mode == "ALL" or name not in self.users:
            return self.user(name)
        named = set(named)
        if mode == "ONLY":
            start = [r for r in named if r in self.users[name].roles]
        else:
            start = [r for r in (*self.direct[name].roles, *self.public_roles) if r not in named]
        return _with_roles(self.own[name], self.roles, start)

    def agent(self, name: str) -> AgentInfo | None:
        self.refresh()
        return self.agents.get(name)
