"""Who exists and who may do what: users, roles, privileges, AQ agents.

Everything is kept in the store's generic catalog (``Store.put_catalog_object``),
one object per fact, so every backend stores it the same way:

=============  ==============  ======================  ===============================
kind           owner           name                    spec
=============  ==============  ======================  ===============================
USER           SYS             user name               password hash, superuser flag
SYSPRIV        grantee         privilege               admin_option, grantor
QUEUEPRIV      grantee         OWNER.QUEUE             {privilege: {grant_option, grantor}}
RULEPRIV       grantee|PUBLIC  TYPE.OWNER.OBJECT       {ALTER|EXECUTE: {grant_option, grantor}}
EXECPRIV       grantee         package (DBMS_AQ …) or  grantor
                               OWNER.ROUTINE
ROLE           grantee         role                    grantor
AGENT          SYS             agent name              enable_http / smtp / anyp
AGENTUSER      agent name      database user           {}
PROXY          user            proxy user              {} (ALTER USER … CONNECT THROUGH)
=============  ==============  ======================  ===============================

RULEPRIV holds DBMS_RULE_ADM's object privileges; TYPE is RULE, RULE_SET or
EVALUATION_CONTEXT (the vocabulary is :mod:`sluice.rules.privileges`').  The rules
engine's system privileges (CREATE_RULE_OBJ …) are SYSPRIV rows like AQ's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.base import Store

BOOTSTRAP_USER = "SLUICE"

# AQ system privileges (DBMS_AQADM names) and their SQL spellings
AQ_SYSTEM_PRIVILEGES = ("ENQUEUE_ANY", "DEQUEUE_ANY", "MANAGE_ANY")
SQL_SYSTEM_PRIVILEGES = {"ENQUEUE ANY QUEUE": "ENQUEUE_ANY", "DEQUEUE ANY QUEUE": "DEQUEUE_ANY",
                         "MANAGE ANY QUEUE": "MANAGE_ANY", "CREATE SESSION": "CREATE_SESSION",
                         "FORCE ANY TRANSACTION": "FORCE_ANY_TRANSACTION",
                         # Sluice's: read the monitoring views' figures over HTTP (/metrics,
                         # /dashboard); Oracle's SELECT_CATALOG_ROLE gives it too
                         "MONITOR": "MONITOR",
                         # run any registered routine (an apply handler of another schema …)
                         "EXECUTE ANY PROCEDURE": "EXECUTE_ANY_PROCEDURE",
                         # the rules engine's (DBMS_RULE_ADM.GRANT_SYSTEM_PRIVILEGE's constants)
                         **{f"{verb} {what}": priv for verb, what, priv in (
                             ("CREATE", "RULE", "CREATE_RULE_OBJ"),
                             ("CREATE", "RULE SET", "CREATE_RULE_SET_OBJ"),
                             ("CREATE", "EVALUATION CONTEXT", "CREATE_EVALUATION_CONTEXT_OBJ"),
                             *((verb, f"ANY {obj}", f"{verb}_ANY_{obj.replace(' ', '_')}")
                               for verb in ("CREATE", "ALTER", "DROP", "EXECUTE")
                               for obj in ("RULE", "RULE SET", "EVALUATION CONTEXT")))}}
# what Oracle's catqueue.sql gives AQ_ADMINISTRATOR_ROLE WITH GRANT OPTION
RULE_OBJ_PRIVILEGES = {"CREATE_RULE_OBJ", "CREATE_RULE_SET_OBJ", "CREATE_EVALUATION_CONTEXT_OBJ"}
# what Oracle's predefined roles give, as far as AQ is concerned
ROLE_GRANTS = {
    "CONNECT": {"sys": {"CREATE_SESSION"}, "exec": set()},
    "RESOURCE": {"sys": set(), "exec": set()},
    "AQ_USER_ROLE": {"sys": set(), "exec": {"DBMS_AQ", "DBMS_AQIN", "DBMS_AQJMS"}},
    "AQ_ADMINISTRATOR_ROLE": {"sys": {"ENQUEUE_ANY", "DEQUEUE_ANY", "MANAGE_ANY", *RULE_OBJ_PRIVILEGES},
                              "admin": set(RULE_OBJ_PRIVILEGES),
                              "exec": {"DBMS_AQ", "DBMS_AQADM", "DBMS_AQIN", "DBMS_AQJMS",
                                       "DBMS_AQELM"}},
    "SELECT_CATALOG_ROLE": {"sys": {"MONITOR"}, "exec": set()},
    "DBA": {"sys": set(), "exec": set()},   # DBA makes a superuser (see UserInfo)
}
QUEUE_PRIVILEGES = ("ENQUEUE", "DEQUEUE")


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


@dataclass
class AgentInfo:
    name: str
    enable_http: bool = False
    enable_smtp: bool = False
    enable_anyp: bool = False
    certificate_location: str | None = None
    db_users: list[str] = field(default_factory=list)


class SecurityCatalog:
    """The security facts of one store, cached until the catalog changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._version = -1
        self.users: dict[str, UserInfo] = {}
        self.agents: dict[str, AgentInfo] = {}
        self.proxies: dict[str, set[str]] = {}
        self.public_rule_objects: dict[str, dict[str, dict]] = {}   # granted to PUBLIC

    def refresh(self) -> None:
        version = self.store.catalog_version()
        if version == self._version:
            return
        users: dict[str, UserInfo] = {}
        for _, name, spec in self.store.catalog_objects("USER"):
            users[name] = UserInfo(name, spec.get("password"), bool(spec.get("superuser")))
        for grantee, priv, spec in self.store.catalog_objects("SYSPRIV"):
            if grantee in users:
                users[grantee].system.add(priv)
                if spec.get("admin_option"):
                    users[grantee].admin_option.add(priv)
        for grantee, pkg, _ in self.store.catalog_objects("EXECPRIV"):
            if grantee in users:
                users[grantee].execute.add(pkg)
        for grantee, role, _ in self.store.catalog_objects("ROLE"):
            if grantee in users:
                u = users[grantee]
                u.roles.add(role)
                u.superuser = u.superuser or role == "DBA"
                u.system |= ROLE_GRANTS.get(role, {}).get("sys", set())
                u.execute |= ROLE_GRANTS.get(role, {}).get("exec", set())
                u.admin_option |= ROLE_GRANTS.get(role, {}).get("admin", set())
        for grantee, queue, spec in self.store.catalog_objects("QUEUEPRIV"):
            if grantee in users:
                users[grantee].queues[queue] = dict(spec)
        public: dict[str, dict[str, dict]] = {}
        for grantee, obj, spec in self.store.catalog_objects("RULEPRIV"):
            if grantee == "PUBLIC":
                public[obj] = dict(spec)
            elif grantee in users:
                users[grantee].rule_objects[obj] = dict(spec)
        agents: dict[str, AgentInfo] = {}
        for _, name, spec in self.store.catalog_objects("AGENT"):
            agents[name] = AgentInfo(name, bool(spec.get("enable_http")), bool(spec.get("enable_smtp")),
                                     bool(spec.get("enable_anyp")), spec.get("certificate_location"))
        for agent, db_user, _ in self.store.catalog_objects("AGENTUSER"):
            if agent in agents:
                agents[agent].db_users.append(db_user)
        proxies: dict[str, set[str]] = {}
        for user, proxy, _ in self.store.catalog_objects("PROXY"):
            proxies.setdefault(user, set()).add(proxy)
        self.users, self.agents, self.proxies = users, agents, proxies
        self.public_rule_objects = public
        self._version = version

    def user(self, name: str) -> UserInfo | None:
        self.refresh()
        if name == "SYS":   # built in; reached only by AS SYSDBA (see users.authenticate)
            return UserInfo("SYS", None, True)
        u = self.users.get(name)
        if u is None and name == BOOTSTRAP_USER and not self.users:
            # a store nobody has initialised with users yet: the embedded default
            # user is its administrator, like SYS of a fresh database
            return UserInfo(name, None, True)
        return u

    def agent(self, name: str) -> AgentInfo | None:
        self.refresh()
        return self.agents.get(name)
