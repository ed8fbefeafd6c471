"""The security procedures of ``DBMS_AQADM``: privileges and AQ agents.

Mixed into :class:`sluice.aq.admin.AqAdm`, so they are ``conn.aqadm.<proc>`` and
``DBMS_AQADM.<PROC>`` like every other DBMS_AQADM procedure; parameters in
Oracle's order.  Each call is DDL: it commits the caller's open transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ora
from ..model import check_flag
from ..names import canonical
from .catalog import AQ_SYSTEM_PRIVILEGES, QUEUE_PRIVILEGES

if TYPE_CHECKING:
    from ..context import SessionContext


class SecurityAdm:
    """DBMS_AQADM.GRANT_* / REVOKE_* / *_AQ_AGENT / *_DB_ACCESS."""

    _session_ctx: "SessionContext"

    # -- helpers ------------------------------------------------------------
    def _grantee(self, name: str, public: bool = False) -> str:
        """A user or a role (or, with ``public``, PUBLIC: every user).  :raises: ORA-01917."""
        user = canonical(name, "grantee")
        security = self._session_ctx.security
        if security.user(user) is None and not security.is_role(user) and not (public and user == "PUBLIC"):
            raise ora(1917, user)
        return user

    def _put(self, kind: str, owner: str, name: str, spec: dict) -> None:
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object(kind, owner, name, spec, replace=True)

    def _drop(self, kind: str, owner: str, name: str) -> None:
        self._session_ctx.ddl_commit()
        self._session_ctx.store.drop_catalog_object(kind, owner, name)

    # -- system privileges (seed 003 "System-Level Access Control") ----------
    def _system_privilege(self, privilege: str) -> str:
        """The AQ system privilege named, if the caller may grant and revoke it."""
        priv = str(privilege).strip().upper()
        if priv not in AQ_SYSTEM_PRIVILEGES:
            raise ora(990, privilege)
        authz = self._session_ctx.authz
        if not (authz.is_superuser() or priv in authz.info().admin_option):
            raise ora(1031)
        return priv

    def grant_system_privilege(self, privilege: str, grantee: str, admin_option: bool = False) -> None:
        priv = self._system_privilege(privilege)
        user = self._grantee(grantee)
        self._put("SYSPRIV", user, priv, {"admin_option": check_flag("admin_option", admin_option),
                                          "grantor": self._session_ctx.username})

    def revoke_system_privilege(self, privilege: str, grantee: str) -> None:
        priv = self._system_privilege(privilege)
        user = self._grantee(grantee)
        if priv not in self._session_ctx.security.grantee(user).system:     # not a role's
            raise ora(1952, user)
        self._drop("SYSPRIV", user, priv)

    # -- queue privileges (seed 003 "Queue-Level Access Control") ------------
    # grantee: "the grantee(s); can be a user, a role, or the PUBLIC role" (DBMS_AQADM's
    # GRANT_QUEUE_PRIVILEGE); PUBLIC's grant is every user's (Authorizer.has_queue_privilege)
    @staticmethod
    def _queue_privileges(privilege: str) -> tuple[str, ...]:
        priv = str(privilege).strip().upper()
        if priv == "ALL":
            return QUEUE_PRIVILEGES
        if priv not in QUEUE_PRIVILEGES:
            raise ora(990, privilege)
        return (priv,)

    def grant_queue_privilege(self, privilege: str, queue_name: str, grantee: str,
                              grant_option: bool = False) -> None:
        privs = self._queue_privileges(privilege)
        option = check_flag("grant_option", grant_option)
        queue = self._session_ctx.catalog.queue(queue_name)
        self._session_ctx.authz.check_grant_queue(queue, privs)
        user = self._grantee(grantee, public=True)
        if option and self._session_ctx.security.is_role(user):
            raise ora(1926)
        held = self._session_ctx.security.queue_grants(user, queue.qualified)
        for p in privs:
            held[p] = {"grant_option": option, "grantor": self._session_ctx.username}
        self._put("QUEUEPRIV", user, queue.qualified, held)

    def revoke_queue_privilege(self, privilege: str, queue_name: str, grantee: str) -> None:
        """Revoke, and with it what the grantee granted on from it WITH GRANT OPTION (an
        object privilege's revoke cascades).  :raises: ORA-01927 the grantee does not hold
        it, or the caller neither owns the queue nor granted it (and ORA-00990, ORA-01917)."""
        privs = self._queue_privileges(privilege)
        queue = self._session_ctx.catalog.queue(queue_name)
        user = self._grantee(grantee, public=True)
        held = self._session_ctx.security.queue_grants(user, queue.qualified)
        authz = self._session_ctx.authz
        for p in privs:
            spec = held.get(p)
            if spec is None:
                raise ora(1927)
            if not (authz.is_superuser() or queue.owner == self._session_ctx.username
                    or spec.get("grantor") == self._session_ctx.username):
                raise ora(1927)
        self._session_ctx.ddl_commit()
        self._session_ctx.security.revoke_object_privileges("QUEUEPRIV", user, queue.qualified, privs)

    # -- AQ agents (seed 004 "Authorizing Users") -----------------------------
    def create_aq_agent(self, agent_name: str, certificate_location: str | None = None,
                        enable_http: bool = False, enable_smtp: bool = False,
                        enable_anyp: bool = False) -> None:
        self._session_ctx.authz.check_aq_administrator()
        name = canonical(agent_name, "agent name")
        if self._session_ctx.security.agent(name) is not None:
            raise ora(24089, name)
        self._put("AGENT", "SYS", name, self._agent_spec(certificate_location, enable_http,
                                                         enable_smtp, enable_anyp))

    def alter_aq_agent(self, agent_name: str, certificate_location: str | None = None,
                       enable_http: bool = False, enable_smtp: bool = False,
                       enable_anyp: bool = False) -> None:
        self._session_ctx.authz.check_aq_administrator()
        name = canonical(agent_name, "agent name")
        if self._session_ctx.security.agent(name) is None:
            raise ora(24088, name)
        self._put("AGENT", "SYS", name, self._agent_spec(certificate_location, enable_http,
                                                         enable_smtp, enable_anyp))

    def drop_aq_agent(self, agent_name: str) -> None:
        self._session_ctx.authz.check_aq_administrator()
        name = canonical(agent_name, "agent name")
        agent = self._session_ctx.security.agent(name)
        if agent is None:
            raise ora(24088, name)
        self._session_ctx.ddl_commit()
        store = self._session_ctx.store
        for user in agent.db_users:
            store.drop_catalog_object("AGENTUSER", name, user)
        store.drop_catalog_object("AGENT", "SYS", name)

    @staticmethod
    def _agent_spec(certificate_location, enable_http, enable_smtp, enable_anyp) -> dict:
        return {"certificate_location": certificate_location, "enable_http": check_flag("enable_http", enable_http),
                "enable_smtp": check_flag("enable_smtp", enable_smtp),
                "enable_anyp": check_flag("enable_anyp", enable_anyp)}

    def enable_db_access(self, agent_name: str, db_username: str) -> None:
        """Give the agent the privileges of the database user (seed 004 Example 17-25)."""
        self._session_ctx.authz.check_aq_administrator()
        name = canonical(agent_name, "agent name")
        if self._session_ctx.security.agent(name) is None:
            raise ora(24088, name)
        user = canonical(db_username, "user name")
        if self._session_ctx.security.user(user) is None:
            raise ora(1918, user)
        self._put("AGENTUSER", name, user, {})

    def disable_db_access(self, agent_name: str, db_username: str) -> None:
        self._session_ctx.authz.check_aq_administrator()
        name = canonical(agent_name, "agent name")
        agent = self._session_ctx.security.agent(name)
        if agent is None:
            raise ora(24088, name)
        user = canonical(db_username, "user name")
        if user not in agent.db_users:
            raise ora(24095, name, user)
        self._drop("AGENTUSER", name, user)
