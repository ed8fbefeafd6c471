"""Seed 001 "Secure Queues and Oracle Streams Clients": a Streams client of a secure
queue is an AQ agent named like the client, mapped to the client's user, who holds the
queue privilege the client needs (ENQUEUE for a capture, DEQUEUE for an apply process
or a messaging client)."""

from __future__ import annotations

from typing import Any


def secure_queue_user(conn: Any, client: str, user: str, queue: tuple[str, str], privilege: str) -> None:
    """Make ``user`` the secure queue user of the agent ``client`` on ``queue`` (owner,
    name), creating the agent when it does not exist."""
    ctx = conn.context
    aqadm = conn.aqadm
    agent = ctx.security.agent(client)
    if agent is None:
        aqadm.create_aq_agent(agent_name=f'"{client}"')
        users: list[str] = []
    else:
        users = list(agent.db_users)
    if user not in users:
        aqadm.enable_db_access(agent_name=f'"{client}"', db_username=f'"{user}"')
    if user != queue[0]:
        aqadm.grant_queue_privilege(privilege=privilege, queue_name=f'"{queue[0]}"."{queue[1]}"',
                                    grantee=f'"{user}"')
