"""``DBMS_STREAMS_ADM``: the Streams administration package.

This module starts with ``SET_UP_QUEUE`` (seeds 001/002 "Secure Queues",
"Transactional and Nontransactional Queues", "Commit-Time Queues"); the rule
generation procedures (ADD_TABLE_RULES …) join it with the Streams issues.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ora
from ..names import canonical, split_qualified
from .transform.adm import DeclarativeTransformations

if TYPE_CHECKING:
    from ..connection import Connection


class StreamsAdm(DeclarativeTransformations):
    """The DBMS_STREAMS_ADM package for one connection (the declarative transformation
    procedures: :mod:`sluice.streams.transform.adm`)."""

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn

    def set_up_queue(self, queue_table: str = "streams_queue_table", storage_clause: str | None = None,
                     queue_name: str = "streams_queue", queue_user: str | None = None,
                     comment: str | None = None) -> None:
        """Create a secure, transactional, commit-time ANYDATA queue (and its queue table)
        unless they exist, start it, and configure ``queue_user`` as a secure queue user:
        an AQ agent of the same name (reused if it exists), ENABLE_DB_ACCESS, and the
        ENQUEUE and DEQUEUE privileges.  EXECUTE on DBMS_AQ is not granted (seed 001).
        Run again with another ``queue_user``, it only configures that user."""
        conn = self._conn
        ctx = conn.context
        aqadm = conn.aqadm
        owner, qt_name = split_qualified(queue_table, conn.username, "queue table name")
        q_owner, q_name = split_qualified(queue_name, conn.username, "queue name")
        user = canonical(queue_user, "queue user") if queue_user else None
        if user is not None:
            ctx.authz.check_aq_administrator()
            if ctx.security.user(user) is None:
                raise ora(1918, user)
        table, queue = f'"{owner}"."{qt_name}"', f'"{q_owner}"."{q_name}"'   # already canonical
        if ctx.catalog.find_queue_table(owner, qt_name) is None:
            aqadm.create_queue_table(queue_table=table,
                                     queue_payload_type="SYS.ANYDATA", storage_clause=storage_clause,
                                     sort_list="COMMIT_TIME", multiple_consumers=True,
                                     message_grouping=aqadm.TRANSACTIONAL, comment=comment, secure=True)
        if ctx.catalog.find_queue(q_owner, q_name) is None:
            aqadm.create_queue(queue_name=queue, queue_table=table, comment=comment)
            aqadm.start_queue(queue_name=queue)
        if user is None:
            return
        if ctx.security.agent(user) is None:
            aqadm.create_aq_agent(agent_name=user)
        if user not in ctx.security.agent(user).db_users:
            aqadm.enable_db_access(agent_name=user, db_username=user)
        for privilege in ("ENQUEUE", "DEQUEUE"):
            aqadm.grant_queue_privilege(privilege=privilege, queue_name=queue, grantee=user)
