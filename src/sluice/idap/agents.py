"""Who is asking, and as which database user the servlet acts (seed 004 "Using HTTP",
"Authorizing Users", "Database Sessions").

**Authentication.**  The HTTP user *is* the AQ agent (the "Internet user").  Oracle
leaves authenticating it to the web server (an Apache user file, Example 17-23);
Sluice is its own web server and keeps no separate user file, so an agent proves
who it is with the password of the Sluice database user of the same name
(``CREATE USER john IDENTIFIED BY welcome`` for agent JOHN — as in seed 004's HTTP
propagation, whose database link ``CONNECT TO john IDENTIFIED BY welcome`` carries
the agent's credentials).  That user needs no privilege at all: the password is
the only thing used, and a user without a password cannot authenticate over HTTP.
What the agent may do comes only from the AQ agent JOHN: it must exist, be enabled
for HTTP (``CREATE_AQ_AGENT(…, enable_http => TRUE)``) and be mapped to database
users (``ENABLE_DB_ACCESS``).  Verified credentials are remembered (keyed by a
keyed hash, never the password) until the user's stored password changes, so
scrypt runs once per agent, not once per request.

**Database user.**  For each request with a destination the servlet takes the first
mapped database user that may do the operation there, as the AQ layer's one
enforcement point (:class:`~sluice.security.Authorizer`) decides, and that the
servlet super-user may open a proxy session for: the session's current user first
(so its open transaction goes on), then the queue's owner (Example "OE.OE_NEW_ORDERS_QUE
is in the OE schema"), then the others by name.  An agent mapped to more than one
database user needs each of them to hold FORCE ANY TRANSACTION (Example 17-26).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..errors import DatabaseError, ora
from ..model import Agent
from ..names import split_qualified
from ..security.authorize import Authorizer
from ..security.catalog import AgentInfo
from ..security.httpauth import PasswordCheck
from ..security.proxy import may_proxy
from ..store.base import QueueInfo

if TYPE_CHECKING:
    from ..connection import Connection

_CACHE_LIMIT = 10_000


def explain(error: DatabaseError, explanation: str) -> DatabaseError:
    """The same error (class, code) with an explanation on a second line."""
    return type(error)(f"{error}\n{explanation}", error.code)


class AgentPolicy:
    """Authentication and the choice of database user, on the servlet super-user's
    catalog (``control``: the connection the servlet opened as itself)."""

    def __init__(self, control: "Connection") -> None:
        self.control = control
        self.proxy_user = control.username
        self._passwords = PasswordCheck(lambda: self._security)
        # choices made, valid while the catalog (users, grants, agents, queues) is unchanged
        self._choices: dict[tuple, tuple[str, QueueInfo]] = {}
        self._choices_version = -1

    @property
    def _security(self):
        return self.control.context.security

    # -- authentication (security.httpauth) ------------------------------------------------
    def authenticate_cached(self, username: str, password: str) -> str | None:
        """The agent name when these credentials were verified before and the user's
        password has not changed since; None otherwise (fast: no scrypt)."""
        return self._passwords.authenticate_cached(username, password)

    def authenticate(self, username: str, password: str) -> str | None:
        """The agent name when ``username``/``password`` are a Sluice user's, else None
        (runs scrypt on a cache miss: call it from a worker thread)."""
        return self._passwords.authenticate(username, password)

    # -- authorisation ----------------------------------------------------------------
    def agent(self, name: str) -> AgentInfo:
        """The AQ agent ``name``, enabled for HTTP and mapped to database users.

        :raises DatabaseError: ORA-24088 (no such agent), ORA-01031 (not enabled for
            HTTP), ORA-24093 (mapped to no database user).
        """
        agent = self._security.agent(name)
        if agent is None:
            raise ora(24088, name)
        if not agent.enable_http:
            raise explain(ora(1031), f"AQ agent {name} is not enabled for HTTP access "
                                     f"(DBMS_AQADM.ALTER_AQ_AGENT(agent_name => '{name}', "
                                     f"enable_http => TRUE))")
        if not agent.db_users:
            raise explain(ora(24093, name, "(none)"),
                          f"map it with DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => '{name}', "
                          f"db_username => …)")
        return agent

    def choose(self, agent: AgentInfo, destination: str, operation: str,
               senders: Iterable[Agent | None] = (), consumer: str | None = None,
               current: str | None = None, in_transaction: bool = False) -> tuple[str, QueueInfo]:
        """(database user, queue) for ``operation`` (ENQUEUE or DEQUEUE) on ``destination``.

        :raises DatabaseError: ORA-24010 (no mapped user sees such a queue), ORA-01031
            with the reasons when no mapped user may do it, or when the session's open
            transaction belongs to another user.
        """
        senders = list(senders)
        version = self.control.context.store.catalog_version()
        key = (agent.name, destination, operation, tuple(senders), consumer, current, in_transaction)
        if version == self._choices_version:
            hit = self._choices.get(key)
            if hit is not None:
                return hit
        else:
            self._choices, self._choices_version = {}, version
        choice = self._choose(agent, destination, operation, senders, consumer, current, in_transaction)
        if len(self._choices) < _CACHE_LIMIT:
            self._choices[key] = choice
        return choice

    def _choose(self, agent: AgentInfo, destination: str, operation: str, senders: list[Agent | None],
                consumer: str | None, current: str | None, in_transaction: bool) -> tuple[str, QueueInfo]:
        catalog = self.control.context.catalog
        queues: dict[str, QueueInfo] = {}
        first_name = None
        for user in agent.db_users:
            owner, name = split_qualified(destination, user, "queue name")
            first_name = first_name or f"{owner}.{name}"
            q = catalog.find_queue(owner, name)
            if q is not None:
                queues[user] = q
        if not queues:
            raise ora(24010, first_name or destination)
        reasons: list[str] = []
        for user in self._order(list(queues), queues, current):
            reason = self._refusal(agent, user, queues[user], operation, senders, consumer)
            if reason is None:
                if in_transaction and current is not None and user != current:
                    raise explain(ora(1031), f"this HTTP session's open transaction is database user "
                                             f"{current}'s; {queues[user].qualified} needs {user}: "
                                             f"commit or roll back first")
                return user, queues[user]
            reasons.append(f"{user}: {reason}")
        raise explain(ora(1031), f"no database user mapped to AQ agent {agent.name} may "
                                 f"{operation.lower()} {next(iter(queues.values())).qualified} ("
                                 + "; ".join(reasons) + ")")

    @staticmethod
    def _order(users: list[str], queues: dict[str, QueueInfo], current: str | None) -> list[str]:
        def rank(user: str) -> tuple:
            return (user != current, user != queues[user].owner, user)
        return sorted(users, key=rank)

    def _refusal(self, agent: AgentInfo, user: str, queue: QueueInfo, operation: str,
                 senders: list[Agent | None], consumer: str | None) -> str | None:
        """Why ``user`` cannot serve this request, or None when it can."""
        security = self._security
        try:
            may_proxy(security, self.proxy_user, user)
            authz = Authorizer(security, user)
            if operation == "ENQUEUE":
                authz.check_enqueue(queue, senders)
            else:
                authz.check_dequeue(queue, consumer)
        except DatabaseError as e:
            return str(e).splitlines()[0]
        info = security.user(user)
        if len(agent.db_users) > 1 and not (info.superuser or "FORCE_ANY_TRANSACTION" in info.system):
            return ("lacks FORCE ANY TRANSACTION, which every database user of an agent "
                    "mapped to several needs")
        return None
