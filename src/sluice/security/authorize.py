"""The one enforcement point: may the connected user do this to that queue?

Seed 003: a queue's owner may do anything with it; "a queue administrator can
invoke Oracle Database Advanced Queuing administrative and operational interfaces
on any queue" (MANAGE_ANY, and ENQUEUE_ANY / DEQUEUE_ANY for the operations);
other users need a queue privilege (ENQUEUE, DEQUEUE or ALL) granted by the
owner.  Seed 001: using a queue also needs EXECUTE on DBMS_AQ (or
DBMS_STREAMS_MESSAGING); administering needs EXECUTE on DBMS_AQADM.  Seeds
001/002 "Secure Queues": on a secure queue a user who is not the owner must act
through an AQ agent mapped to it by ENABLE_DB_ACCESS — the sender of an enqueue,
the consumer of a dequeue.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..errors import ora
from ..model import Agent
from ..names import canonical
from ..store.base import QueueInfo
from .catalog import BOOTSTRAP_USER, SecurityCatalog, UserInfo
from .objectaccess import StatementAccess


class Authorizer:
    """Privilege checks for one connection (user ``user``), or (``roles`` False) for what
    runs on ``user``'s behalf rather than in its session -- a Streams client as its capture
    or apply user, a propagation as its source queue's owner: Oracle's definer's rights,
    where no role counts (its Streams documentation: the privileges of an apply or capture
    user must be granted to it explicitly, not through a role); PUBLIC's grants do.

    Checks made for another user named explicitly (``user=`` of :meth:`has_rule_system`,
    :meth:`has_rule_object`, :meth:`has_table_privilege`: the owner of a rule, rule set or
    evaluation context, whose stored object is later used with its rights) count no role
    either; checks of the connected user's own call count its roles."""

    def __init__(self, catalog: SecurityCatalog, user: str, roles: bool = True) -> None:
        self.catalog = catalog
        self.username = user
        self.roles = roles
        self._super_version = -1
        self._super = False
        self._set_role: tuple[str, frozenset[str]] = ("ALL", frozenset())
        self._enabled: tuple[int, UserInfo | None] = (-1, None)    # (catalog version, info)
        self.statements = StatementAccess(self)     # the tables and sequences statements name

    def set_roles(self, mode: str, named: Iterable[str] = ()) -> None:
        """SET ROLE: from now on the session's own calls count only the roles it enabled
        (``mode`` ALL / ONLY / EXCEPT, see ``SecurityCatalog.with_roles``)."""
        self._set_role = (mode, frozenset(named))
        self._enabled = (-1, None)
        self._super_version = -1

    # -- facts --------------------------------------------------------------
    def info(self) -> UserInfo:
        u = self._current()
        if u is None:  # the user was dropped while connected
            raise ora(1017)
        return u

    def _current(self) -> UserInfo | None:
        """What the user holds here (None: it no longer exists): with every role, the roles
        SET ROLE enabled, or (on its behalf) none."""
        if not self.roles or self._set_role[0] == "ALL":
            return self.catalog.user(self.username, self.roles)
        version = self.catalog.store.catalog_version()
        if self._enabled[0] != version:
            self._enabled = (version, self.catalog.with_roles(self.username, *self._set_role))
        return self._enabled[1]

    def is_superuser(self) -> bool:
        # asked on every operation: cached until the catalog changes
        version = self.catalog.store.catalog_version()
        if self._super_version != version:
            self._super = self.info().superuser
            self._super_version = version
        return self._super

    def has_system(self, privilege: str) -> bool:
        u = self.info()
        return u.superuser or privilege in u.system

    def has_execute(self, *packages: str) -> bool:
        u = self.info()
        return u.superuser or any(p in u.execute for p in packages)

    def has_queue_privilege(self, queue: QueueInfo, privilege: str) -> bool:
        """Owner, the ANY system privilege, or a grant of the privilege (or ALL) to the
        user, one of its roles or PUBLIC (every user)."""
        u = self.info()
        if u.superuser or queue.owner == self.username:
            return True
        if f"{privilege}_ANY" in u.system:
            return True
        return _granted(self._queue_grants(u, queue), privilege)

    def _queue_grants(self, u: UserInfo, queue: QueueInfo) -> tuple[dict[str, dict], dict[str, dict]]:
        """What ``u`` (with its roles) and PUBLIC were granted on ``queue``."""
        return (u.queues.get(queue.qualified, {}), self.catalog.public_queues.get(queue.qualified, {}))

    # -- the rules engine's privileges (DBMS_RULE_ADM; which one each procedure needs
    # is sluice.rules.privileges') ----------------------------------------------------
    def _user_or_self(self, user: str | None) -> UserInfo | None:
        """The connected user (None), or ``user`` on its own behalf: without its roles."""
        return self.info() if user is None else self.catalog.user(user, roles=False)

    def has_rule_system(self, privilege: str, user: str | None = None) -> bool:
        """``user`` (default: the connected one) holds the rules engine system privilege.
        A Streams administrator (Sluice's is a queue administrator: EXECUTE on DBMS_AQADM
        and MANAGE_ANY) holds them all, as DBMS_STREAMS_AUTH.GRANT_ADMIN_PRIVILEGE gives
        Oracle's the ANY privileges of rules, rule sets and evaluation contexts."""
        u = self._user_or_self(user)
        if u is None:
            return False
        return (u.superuser or privilege in u.system
                or ("DBMS_AQADM" in u.execute and "MANAGE_ANY" in u.system))

    def has_rule_object(self, obj: str, privilege: str, user: str | None = None,
                        grant_option: bool = False) -> bool:
        """``user`` holds ``privilege`` (ALTER or EXECUTE) on the rule object ``obj``
        (``"RULE_SET.OWNER.NAME"``) by a grant to it or to PUBLIC, with the grant
        option if asked (PUBLIC's WITH GRANT OPTION lets every user grant it on, as a
        queue's does).  Ownership and system privileges are the caller's to check."""
        u = self._user_or_self(user)
        if u is None:
            return False
        return _granted((u.rule_objects.get(obj, {}), self.catalog.public_rule_objects.get(obj, {})),
                        privilege, grant_option)

    # -- tables and sequences: a statement's (.objectaccess), an evaluation context's -----
    def has_table_privilege(self, table: str, privilege: str = "SELECT", user: str | None = None,
                            grant_option: bool = False, kind: str = "TABLE") -> bool:
        """``user`` (default: the connected one) may ``privilege`` (SELECT, INSERT …) the table
        ``OWNER.TABLE`` (``kind`` SEQUENCE: the sequence): owns it (its schema), holds the ANY
        system privilege (SELECT ANY TABLE, SELECT ANY SEQUENCE …), or a grant of it to itself,
        one of its roles or PUBLIC — with the grant option if asked (then the ANY privilege
        does not count; PUBLIC's WITH GRANT OPTION does, as a queue's; the owner may always
        grant).  A schema that is no database user reads every table: nobody there holds or
        lacks a privilege."""
        u = self._user_or_self(user)
        if u is None:
            return user is not None and user != "PUBLIC"
        if u.superuser or table.split(".", 1)[0] == u.name:
            return True
        if not grant_option and f"{privilege}_ANY_{kind}" in u.system:
            return True
        return _granted((u.tables.get(table, {}), self.catalog.public_tables.get(table, {})),
                        privilege, grant_option)

    def check_object(self, obj: str, privilege: str, kind: str = "TABLE") -> None:
        """The connected user's statement may ``privilege`` the table (``kind`` SEQUENCE: the
        sequence) ``OWNER.NAME`` of another schema (:meth:`has_table_privilege`).  Else, as
        Oracle answers: ORA-01031 when the user holds some privilege on it -- an object
        privilege, or an ANY system privilege of its kind, by which it sees the object --
        and otherwise the object is not there for it: ORA-00942 (a sequence: ORA-02289)."""
        if self.has_table_privilege(obj, privilege, kind=kind):
            return
        if self.sees(obj, kind):
            raise ora(1031)
        raise ora(2289) if kind == "SEQUENCE" else ora(942)

    def sees(self, obj: str, kind: str = "TABLE") -> bool:
        """The connected user may do something with the table (``kind`` SEQUENCE: the
        sequence) ``OWNER.NAME``: owns it, is a superuser, holds some object privilege on it
        (granted to it, a role of it or PUBLIC) or an ANY system privilege of its kind --
        what ALL_SEQUENCES lists, and what ORA-01031 rather than 'does not exist' answers."""
        u = self.info()
        return (u.superuser or obj.split(".", 1)[0] == u.name or bool(u.tables.get(obj))
                or bool(self.catalog.public_tables.get(obj)) or any(p.endswith(f"_ANY_{kind}") for p in u.system))

    def check_grant_table(self, table: str, privilege: str = "SELECT") -> None:
        """GRANT SELECT ON a table: a superuser, its owner, or a holder of the privilege
        WITH GRANT OPTION.  :raises: ORA-01031."""
        if not self.has_table_privilege(table, privilege, grant_option=True):
            raise ora(1031)

    # -- checks -------------------------------------------------------------
    def check_enqueue(self, queue: QueueInfo, senders: Iterable[Agent | None]) -> None:
        if self.is_superuser():
            return
        self._check_package_use()
        self._check_enqueue_rights(queue, senders)

    def check_propagated_enqueue(self, queue: QueueInfo, senders: Iterable[Agent | None]) -> None:
        """This user owns the source queue of a propagation into ``queue`` of the same
        database: seed 001 "Message Propagation Between Queues", "The user who owns the
        source queue is the user who propagates messages, and this user must have the
        necessary privileges" — ENQUEUE on the destination queue and, on a secure one, the
        messages' senders mapped to the user, as the database link's user needs at a remote
        destination.  No EXECUTE on DBMS_AQ: the propagation enqueues by itself.
        :raises: ORA-01918 (the user was dropped), ORA-01031, ORA-25224, ORA-24093."""
        if self.catalog.user(self.username) is None:
            raise ora(1918, self.username)
        if self.is_superuser():
            return
        self._check_enqueue_rights(queue, senders)

    def _check_enqueue_rights(self, queue: QueueInfo, senders: Iterable[Agent | None]) -> None:
        if not self.has_queue_privilege(queue, "ENQUEUE"):
            raise ora(1031)
        if queue.table.secure and queue.owner != self.username:
            for sender in senders:
                if sender is None or not sender.name:
                    raise ora(25224)
                self._check_agent_mapping(sender.name)

    def check_dequeue(self, queue: QueueInfo, consumer: str | None) -> None:
        if self.is_superuser():
            return
        self._check_package_use()
        if not self.has_queue_privilege(queue, "DEQUEUE"):
            raise ora(1031)
        if queue.table.secure and queue.owner != self.username:
            if not consumer:
                raise ora(24093, "(none)", self.username)
            self._check_agent_mapping(consumer)

    def check_client_dequeue(self, queue: QueueInfo, client: str) -> None:
        """An apply process whose ``apply_user`` this is dequeues from ``queue``: see
        :meth:`check_client_enqueue`, with DEQUEUE."""
        self._check_client(queue, "DEQUEUE", client)

    def check_client_enqueue(self, queue: QueueInfo, client: str) -> None:
        """A capture process whose ``capture_user`` this is enqueues into ``queue`` as the AQ
        agent named like it (seed 001 "Secure Queues and Oracle Streams Clients"): the
        ENQUEUE privilege and, on a secure queue the user does not own, that agent mapped
        to the user.  No EXECUTE on DBMS_AQ: a Streams process uses the queue by itself,
        not through the package.  :raises: ORA-01918 (the user was dropped), ORA-01031,
        ORA-24093."""
        self._check_client(queue, "ENQUEUE", client)

    def _check_client(self, queue: QueueInfo, privilege: str, client: str) -> None:
        if self.catalog.user(self.username) is None:
            raise ora(1918, self.username)
        if self.is_superuser():
            return
        if not self.has_queue_privilege(queue, privilege):
            raise ora(1031)
        if queue.table.secure and queue.owner != self.username:
            self._check_agent_mapping(client)

    def may_execute(self, routine: str) -> bool:
        """This user may run the routine ``OWNER.NAME`` (a procedure or function registered
        with :func:`sluice.register_function`): it owns it, holds EXECUTE ANY PROCEDURE, or was
        granted EXECUTE on it (``GRANT EXECUTE ON owner.name TO user``).  False for a user
        that no longer exists."""
        u = self._current()
        if u is None:
            return False
        return (u.superuser or routine.split(".", 1)[0] == self.username
                or "EXECUTE_ANY_PROCEDURE" in u.system or routine in u.execute)

    def check_execute(self, routine: str) -> None:
        """:meth:`may_execute`, or what Oracle says of a call to a procedure the caller may
        not execute (to it the procedure is not there): ORA-06550 with PLS-00201."""
        if not self.may_execute(routine):
            raise ora(6550, 1, 7, f"PLS-00201: identifier '{routine}' must be declared")

    def check_admin(self, schema: str, package: str = "DBMS_AQADM") -> None:
        """Administer objects of ``schema`` through ``package`` (queues and queue tables
        through DBMS_AQADM, transformations through DBMS_TRANSFORM …)."""
        if self.is_superuser():
            return
        if not self.has_execute(package):
            raise ora(1031)
        if schema != self.username and not self.has_system("MANAGE_ANY"):
            raise ora(1031)

    def check_monitor(self) -> None:
        """Read the monitoring figures of the whole store over HTTP (``/metrics``,
        ``/dashboard``): the MONITOR system privilege (``GRANT MONITOR TO u``), which
        SELECT_CATALOG_ROLE gives too, or a superuser.  :raises: ORA-01031."""
        if not self.has_system("MONITOR"):
            raise ora(1031)

    def check_aq_administrator(self) -> None:
        """Agents, system privileges: a queue administrator's work."""
        if self.is_superuser():
            return
        if not (self.has_execute("DBMS_AQADM") and self.has_system("MANAGE_ANY")):
            raise ora(1031)

    def check_grant_queue(self, queue: QueueInfo, privileges: Iterable[str]) -> None:
        """Owner, queue administrator, or a holder of the privilege WITH GRANT OPTION (a
        grant to PUBLIC WITH GRANT OPTION lets every user grant it on, as Oracle's)."""
        if self.is_superuser() or queue.owner == self.username:
            return
        if self.has_execute("DBMS_AQADM") and self.has_system("MANAGE_ANY"):
            return
        grants = self._queue_grants(self.info(), queue)
        if all(_granted(grants, p, grant_option=True) for p in privileges):
            return
        raise ora(1031)

    def _check_package_use(self) -> None:
        if not self.has_execute("DBMS_AQ", "DBMS_STREAMS_MESSAGING"):
            raise ora(1031)

    def _check_agent_mapping(self, agent_name: str) -> None:
        name = canonical(agent_name, "agent name")
        agent = self.catalog.agent(name)
        if agent is None or self.username not in agent.db_users:
            raise ora(24093, name, self.username)


def _granted(grants: Iterable[dict[str, dict]], privilege: str, grant_option: bool = False) -> bool:
    """One of ``grants`` (``{privilege: {grant_option, grantor}}``: to the user, its roles,
    PUBLIC) holds ``privilege``, WITH GRANT OPTION if ``grant_option``."""
    return any(privilege in g and (not grant_option or bool(g[privilege].get("grant_option")))
               for g in grants)


class CatalogRows:
    """What the security catalog says of ``user`` on its own behalf (no role), as SQL
    conditions on the store's ``catalog`` table, for what runs without Python (a synchronous
    capture's trigger): the rows are read each time the SQL runs, so a GRANT or REVOKE
    counts at once.  ``json_text(document, key)``: the store's dialect's."""

    def __init__(self, json_text: Callable[[str, str], str], catalog: str, user: str) -> None:
        self.json_text, self.catalog, self.user = json_text, catalog, user

    @staticmethod
    def lit(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    def row(self, kind: str, owner: str, name: str, extra: str = "") -> str:
        lit = self.lit
        return (f"EXISTS (SELECT 1 FROM {self.catalog} WHERE KIND = {lit(kind)} AND OWNER = {lit(owner)} "
                f"AND NAME = {lit(name)}{extra})")

    def holds(self, privilege: str) -> str:
        """The ``extra`` of an object grant's row (``{privilege: …}``) that holds ``privilege``."""
        return f" AND {self.json_text('SPEC', privilege)} IS NOT NULL"

    @property
    def _no_users(self) -> str:
        return f"NOT EXISTS (SELECT 1 FROM {self.catalog} WHERE KIND = 'USER')"

    @property
    def exists(self) -> str:
        """The user exists (the embedded administrator of a store without users does)."""
        exists = self.row("USER", "SYS", self.user)
        return f"({exists} OR {self._no_users})" if self.user == BOOTSTRAP_USER else exists

    @property
    def superuser(self) -> str:
        """A superuser by its stored flag (not DBA: no role counts)."""
        flag = self.row("USER", "SYS", self.user,
                        f" AND CAST({self.json_text('SPEC', 'superuser')} AS TEXT) IN ('1', 'true')")
        return f"{flag} OR {self._no_users}" if self.user == BOOTSTRAP_USER else flag


def client_refusals(json_text: Callable[[str, str], str], catalog: str, user: str, queue: QueueInfo,
                    privilege: str, client: str) -> list[tuple[str, str]]:
    """:meth:`Authorizer._check_client` for what runs without Python: a synchronous capture's
    trigger, which enqueues as its ``client`` agent for ``user`` inside the writer's
    transaction.  ``[(condition, error text)]`` in the order the check raises them (ORA-01918,
    ORA-01031, ORA-24093): the first condition that holds refuses.  What is fixed when the
    trigger is made (the queue's owner and security, who ``user`` is) is decided here; the
    grants are read from the ``catalog`` table's rows each time (:class:`CatalogRows`).  The
    trigger enqueues on the capture user's behalf (``Authorizer(…, roles=False)``): what
    counts is a superuser's stored flag, the ANY privilege or the queue privilege granted to
    the user itself or to PUBLIC, the agent's mapping -- no role, not even DBA or a
    predefined one."""
    if user == "SYS":
        return []
    facts = CatalogRows(json_text, catalog, user)
    row = facts.row
    refusals = [(f"NOT {facts.exists}", str(ora(1918, user)))]
    if queue.owner == user:
        return refusals
    held = facts.holds(privilege)
    privileged = " OR ".join([
        facts.superuser,
        row("SYSPRIV", user, f"{privilege}_ANY"),
        row("QUEUEPRIV", user, queue.qualified, held),
        # a queue privilege granted to PUBLIC is every user's
        row("QUEUEPRIV", "PUBLIC", queue.qualified, held)])
    refusals.append((f"NOT ({privileged})", str(ora(1031))))
    if queue.table.secure:
        agent = canonical(client, "agent name")
        refusals.append((f"NOT ({facts.superuser} OR {row('AGENTUSER', agent, user)})",
                         str(ora(24093, agent, user))))
    return refusals


def rule_object_refusals(json_text: Callable[[str, str], str], catalog: str, user: str, obj: str,
                         privilege: str, any_privilege: str) -> list[tuple[str, str]]:
    """``user`` (on its own behalf: no role) may ``privilege`` (EXECUTE) the rule object
    ``obj`` (``"RULE_SET.OWNER.NAME"``) -- what ``rules.privileges.Checks.holds`` asks, with
    :meth:`Authorizer.has_rule_system` and :meth:`Authorizer.has_rule_object` -- as SQL for
    what runs without Python: ``[(condition, ORA-01031)]``, empty when nothing can refuse
    (its owner, SYS).  A superuser's stored flag, ``any_privilege`` (EXECUTE_ANY_RULE_SET),
    a Streams administrator's EXECUTE on DBMS_AQADM with MANAGE_ANY, or the object privilege
    granted to the user or PUBLIC count.  A user that does not exist is refused nothing here
    (nobody holds or lacks a privilege there, as in ``Checks``): what it does is refused
    with ORA-01918 elsewhere."""
    owner = obj.split(".")[1]
    if user in ("SYS", owner):
        return []
    facts = CatalogRows(json_text, catalog, user)
    row, held = facts.row, facts.holds(privilege)
    privileged = " OR ".join([
        facts.superuser,
        row("SYSPRIV", user, any_privilege),
        f"({row('EXECPRIV', user, 'DBMS_AQADM')} AND {row('SYSPRIV', user, 'MANAGE_ANY')})",
        row("RULEPRIV", user, obj, held),
        row("RULEPRIV", "PUBLIC", obj, held)])
    return [(f"{facts.exists} AND NOT ({privileged})", str(ora(1031)))]
