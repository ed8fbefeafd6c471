"""``DBMS_STREAMS_ADM``: the Streams administration package.

``SET_UP_QUEUE`` (seeds 001/002 "Secure Queues", "Transactional and Nontransactional
Queues", "Commit-Time Queues"), ``REMOVE_QUEUE`` and the rule procedures of seed 000 "System-Created
Rules": ADD_GLOBAL_RULES, ADD_SCHEMA_RULES, ADD_TABLE_RULES, ADD_SUBSET_RULES,
ADD_MESSAGE_RULE, their propagation variants and REMOVE_RULE, with Oracle's parameters
in Oracle's order.  ``conn.streams_adm.add_table_rules(table_name='hr.locations',
streams_type='apply', …)`` returns ``(dml_rule_name, ddl_rule_name)``; in PL/SQL they
are the OUT parameters.  The bodies are :mod:`sluice.streams.rulegen`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ora
from ..names import canonical, split_qualified
from ..aq.adminargs import flag
from ..aq.sharded import unsupported
from ..routines import out_params
from .queueclients import check_queue_drop, clients_of, drop_clients
from .rulegen import procedures as rg
from .rulegen.clients import client_for
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
        an AQ agent of the same name (reused if it exists and is no other user's),
        ENABLE_DB_ACCESS, and the ENQUEUE and DEQUEUE privileges.  EXECUTE on DBMS_AQ is
        not granted (seed 001).
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
        agent = ctx.security.agent(user)
        if agent is None:
            aqadm.create_aq_agent(agent_name=user)
        # seed 001: "If an agent with this name already exists and is associated with the
        # queue user only, then the existing agent is used"; one that other users' sessions
        # act through is left alone (mapping it would give them the queue user's rights):
        # the queue user is configured as a secure queue user "if possible"
        if agent is None or not agent.db_users:     # (mapped to the user only: nothing to do)
            aqadm.enable_db_access(agent_name=user, db_username=user)
        for privilege in ("ENQUEUE", "DEQUEUE"):
            aqadm.grant_queue_privilege(privilege=privilege, queue_name=queue, grantee=user)

    def remove_queue(self, queue_name: str, cascade: bool = False,
                     drop_unused_queue_table: bool = True) -> None:
        """Stop and drop the queue; with ``cascade`` first the Streams clients that use it
        (without: ORA-26668 while there is one, :mod:`.queueclients`); with
        ``drop_unused_queue_table`` then its queue table, when no other queue is in it and
        its exception queue holds no message.  :raises: ORA-24010 (no such queue), ORA-24011
        (an exception queue: it goes with its queue table), ORA-26668, ORA-00054 (a session
        holds one of its messages; checked before a client is dropped or the queue stopped)."""
        conn = self._conn
        ctx = conn.context
        q = ctx.catalog.queue(queue_name)
        ctx.authz.check_admin(q.owner)
        if q.is_exception_queue or q.table.sharded:     # what DROP_QUEUE refuses, refused first
            raise ora(24011, q.qualified) if q.is_exception_queue else \
                unsupported("REMOVE_QUEUE (use DBMS_AQADM.DROP_SHARDED_QUEUE)")
        drop_table = flag("drop_unused_queue_table", drop_unused_queue_table)
        clients = clients_of(ctx.store, [(q.owner, q.name)])
        if not flag("cascade", cascade):
            check_queue_drop(ctx, [(q.owner, q.name)])
        ctx.ddl_commit()
        if ctx.store.queue_in_use(q.owner, q.name):
            # DROP_QUEUE would refuse it after the clients were gone and the queue stopped
            raise ora(54)
        drop_clients(conn, clients)
        quoted = f'"{q.owner}"."{q.name}"'
        conn.aqadm.stop_queue(queue_name=quoted)
        conn.aqadm.drop_queue(queue_name=quoted)
        if not drop_table:
            return
        left = ctx.catalog.queues_of(q.table)
        if all(r.is_exception_queue and not ctx.store.count_messages(r) for r in left):
            conn.aqadm.drop_queue_table(queue_table=f'"{q.owner}"."{q.table.name}"', force=True)

    # -- system-created rules (seed 000) -----------------------------------------------
    @out_params("dml_rule_name", "ddl_rule_name")
    def add_global_rules(self, streams_type: str, streams_name: str | None = None,
                         queue_name: str = "streams_queue", include_dml: bool = True,
                         include_ddl: bool = False, include_tagged_lcr: bool = False,
                         source_database: str | None = None, dml_rule_name: None = None,
                         ddl_rule_name: None = None, inclusion_rule: bool = True,
                         and_condition: str | None = None) -> tuple[str | None, str | None]:
        """Rules for every change of a database (capture) or every LCR of a queue."""
        client = client_for(self._conn, streams_type, streams_name, queue_name, source_database)
        return rg.lcr_rules(self._conn, "GLOBAL", client, (), include_dml, include_ddl,
                            include_tagged_lcr, source_database, inclusion_rule, and_condition)

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_schema_rules(self, schema_name: str, streams_type: str, streams_name: str | None = None,
                         queue_name: str = "streams_queue", include_dml: bool = True,
                         include_ddl: bool = False, include_tagged_lcr: bool = False,
                         source_database: str | None = None, dml_rule_name: None = None,
                         ddl_rule_name: None = None, inclusion_rule: bool = True,
                         and_condition: str | None = None) -> tuple[str | None, str | None]:
        """Rules for a schema and the objects in it.  :raises: ORA-01435 (capture: no such
        schema at the source)."""
        schema = canonical(schema_name, "schema name")
        client = client_for(self._conn, streams_type, streams_name, queue_name, source_database)
        return rg.lcr_rules(self._conn, "SCHEMA", client, (schema,), include_dml, include_ddl,
                            include_tagged_lcr, source_database, inclusion_rule, and_condition)

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_table_rules(self, table_name: str, streams_type: str, streams_name: str | None = None,
                        queue_name: str = "streams_queue", include_dml: bool = True,
                        include_ddl: bool = False, include_tagged_lcr: bool = False,
                        source_database: str | None = None, dml_rule_name: None = None,
                        ddl_rule_name: None = None, inclusion_rule: bool = True,
                        and_condition: str | None = None) -> tuple[str | None, str | None]:
        """Rules for one table.  :raises: ORA-00942 (capture: no such table at the source)."""
        table = split_qualified(table_name, self._conn.username, "table name")
        client = client_for(self._conn, streams_type, streams_name, queue_name, source_database,
                            table=table)
        return rg.lcr_rules(self._conn, "TABLE", client, table, include_dml, include_ddl,
                            include_tagged_lcr, source_database, inclusion_rule, and_condition)

    @out_params("insert_rule_name", "update_rule_name", "delete_rule_name")
    def add_subset_rules(self, table_name: str, dml_condition: str, streams_type: str = "apply",
                         streams_name: str | None = None, queue_name: str = "streams_queue",
                         include_tagged_lcr: bool = False, source_database: str | None = None,
                         insert_rule_name: None = None, update_rule_name: None = None,
                         delete_rule_name: None = None,
                         and_condition: str | None = None) -> tuple[str, str, str]:
        """The INSERT, UPDATE and DELETE rules of a row subset, in the positive rule set.
        :raises: ORA-00942 (no such table), ORA-00904 (the condition reads no column)."""
        table = split_qualified(table_name, self._conn.username, "table name")
        client = client_for(self._conn, streams_type, streams_name, queue_name, source_database,
                            table=table)
        return rg.subset_rules(self._conn, client, *table, dml_condition, include_tagged_lcr,
                               source_database, and_condition)

    @out_params("rule_name")
    def add_message_rule(self, message_type: str, rule_condition: str, streams_type: str,
                         streams_name: str | None = None, queue_name: str = "streams_queue",
                         inclusion_rule: bool = True, rule_name: None = None) -> str:
        """A rule on user-enqueued messages of ``message_type`` (``:msg`` in the
        condition), for an apply process or a messaging client."""
        if str(streams_type).strip().lower() not in ("apply", "dequeue"):
            raise ora(23605, streams_type, "STREAMS_TYPE")
        client = client_for(self._conn, streams_type, streams_name, queue_name, None,
                            apply_captured=False)
        return rg.message_rule(self._conn, client, message_type, rule_condition, inclusion_rule)

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_global_propagation_rules(self, streams_name: str, source_queue_name: str,
                                     destination_queue_name: str, include_dml: bool = True,
                                     include_ddl: bool = False, include_tagged_lcr: bool = False,
                                     source_database: str | None = None, dml_rule_name: None = None,
                                     ddl_rule_name: None = None, inclusion_rule: bool = True,
                                     and_condition: str | None = None,
                                     queue_to_queue: bool | None = None) -> tuple[str | None, str | None]:
        client = rg.propagation_client(self._conn, streams_name, source_queue_name,
                                       destination_queue_name, source_database, queue_to_queue)
        return rg.lcr_rules(self._conn, "GLOBAL", client, (), include_dml, include_ddl,
                            include_tagged_lcr, source_database, inclusion_rule, and_condition)

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_schema_propagation_rules(self, schema_name: str, streams_name: str, source_queue_name: str,
                                     destination_queue_name: str, include_dml: bool = True,
                                     include_ddl: bool = False, include_tagged_lcr: bool = False,
                                     source_database: str | None = None, dml_rule_name: None = None,
                                     ddl_rule_name: None = None, inclusion_rule: bool = True,
                                     and_condition: str | None = None,
                                     queue_to_queue: bool | None = None) -> tuple[str | None, str | None]:
        schema = canonical(schema_name, "schema name")
        client = rg.propagation_client(self._conn, streams_name, source_queue_name,
                                       destination_queue_name, source_database, queue_to_queue)
        return rg.lcr_rules(self._conn, "SCHEMA", client, (schema,), include_dml, include_ddl,
                            include_tagged_lcr, source_database, inclusion_rule, and_condition)

    @out_params("dml_rule_name", "ddl_rule_name")
    def add_table_propagation_rules(self, table_name: str, streams_name: str, source_queue_name: str,
                                    destination_queue_name: str, include_dml: bool = True,
                                    include_ddl: bool = False, include_tagged_lcr: bool = False,
                                    source_database: str | None = None, dml_rule_name: None = None,
                                    ddl_rule_name: None = None, inclusion_rule: bool = True,
                                    and_condition: str | None = None,
                                    queue_to_queue: bool | None = None) -> tuple[str | None, str | None]:
        table = split_qualified(table_name, self._conn.username, "table name")
        client = rg.propagation_client(self._conn, streams_name, source_queue_name,
                                       destination_queue_name, source_database, queue_to_queue)
        return rg.lcr_rules(self._conn, "TABLE", client, table, include_dml, include_ddl,
                            include_tagged_lcr, source_database, inclusion_rule, and_condition)

    @out_params("insert_rule_name", "update_rule_name", "delete_rule_name")
    def add_subset_propagation_rules(self, table_name: str, dml_condition: str, streams_name: str,
                                     source_queue_name: str, destination_queue_name: str,
                                     include_tagged_lcr: bool = False, source_database: str | None = None,
                                     insert_rule_name: None = None, update_rule_name: None = None,
                                     delete_rule_name: None = None, and_condition: str | None = None,
                                     queue_to_queue: bool | None = None) -> tuple[str, str, str]:
        table = split_qualified(table_name, self._conn.username, "table name")
        client = rg.propagation_client(self._conn, streams_name, source_queue_name,
                                       destination_queue_name, source_database, queue_to_queue)
        return rg.subset_rules(self._conn, client, *table, dml_condition, include_tagged_lcr,
                               source_database, and_condition)

    @out_params("rule_name")
    def add_message_propagation_rule(self, message_type: str, rule_condition: str, streams_name: str,
                                     source_queue_name: str, destination_queue_name: str,
                                     inclusion_rule: bool = True, queue_to_queue: bool | None = None,
                                     rule_name: None = None) -> str:
        client = rg.propagation_client(self._conn, streams_name, source_queue_name,
                                       destination_queue_name, None, queue_to_queue)
        return rg.message_rule(self._conn, client, message_type, rule_condition, inclusion_rule)

    def remove_rule(self, rule_name: str | None, streams_type: str, streams_name: str,
                    drop_unused_rule: bool = True, inclusion_rule: bool = True) -> None:
        """Take a rule (NULL: every rule) out of the client's positive or negative rule
        set; with ``drop_unused_rule`` drop it once no rule set holds it."""
        rg.remove_rule(self._conn, rule_name, streams_type, streams_name, drop_unused_rule,
                       inclusion_rule)
