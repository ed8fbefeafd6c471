"""``DBMS_APPLY_ADM``: an apply process's catalog entry — CREATE_APPLY, ALTER_APPLY,
DROP_APPLY — and :func:`apply_for_rules`, the apply process DBMS_STREAMS_ADM.ADD_*_RULES
creates when ``streams_type => 'apply'`` names one that does not exist.

``conn.apply_adm.create_apply(queue_name=…, apply_name=…)`` is
``DBMS_APPLY_ADM.CREATE_APPLY(queue_name => …, apply_name => …)``.  A new apply process
is DISABLED.  It dequeues from its queue as a subscriber named like itself, and (seed 001
"Secure Queues and Oracle Streams Clients") an AQ agent of that name is mapped to the
apply user, who may dequeue.  ``apply_database_link`` names the database it applies to by
DSN (DESIGN.md section 7: ``postgresql://…`` or ``sqlite:///…``); without one it applies to
the store's own database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ora
from ...model import Agent
from ...names import split_qualified
from ..capture.context import CaptureContext
from ..clientspec import streams_name as client_name
from ..clientchecks import client_queue, client_rule_set, client_user
from ..securequeue import secure_queue_user
from . import spec as specs
from .procedures import ApplyProcedures
from .targetdsn import check_link

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["ApplyAdm", "apply_for_rules"]


def _raw_hex(tag: Any) -> str | None:
    if tag is None:
        return None
    if isinstance(tag, (bytes, bytearray)):
        return bytes(tag).hex().upper()
    text = str(tag)
    try:
        return bytes.fromhex(text).hex().upper()
    except ValueError:
        raise ora(26667, f"apply_tag {tag!r}: a RAW value") from None


class ApplyAdm(ApplyProcedures):
    """The DBMS_APPLY_ADM package for one connection: the apply processes' catalog entries
    here; START_APPLY, STOP_APPLY, SET_PARAMETER and the per-table, handler and error-queue
    procedures from :class:`~.procedures.ApplyProcedures`."""

    def create_apply(self, queue_name: str, apply_name: str, rule_set_name: str | None = None,
                     message_handler: str | None = None, ddl_handler: str | None = None,
                     apply_user: str | None = None, apply_database_link: str | None = None,
                     apply_tag: Any = None, apply_captured: bool = False,
                     precommit_handler: str | None = None, negative_rule_set_name: str | None = None,
                     source_database: str | None = None) -> None:
        """Create the apply process (DISABLED).  :raises: ORA-26665 (a Streams process of
        that name exists), ORA-24010 (no queue), ORA-24141 (no rule set)."""
        ctx = self._ctx()
        name = client_name(apply_name, "apply_name")
        if specs.find(ctx, name) is not None or ctx.get_object("CAPTURE", "SYS", name) is not None \
                or ctx.get_object("MESSAGE_CONSUMER", "SYS", name) is not None:
            raise ora(26665, name)
        q = client_queue(ctx, queue_name)
        queue = (q.owner, q.name)
        positive = client_rule_set(ctx, rule_set_name)
        negative = client_rule_set(ctx, negative_rule_set_name)
        user = client_user(ctx, apply_user, "apply user")
        if apply_database_link is not None:
            apply_database_link = check_link(apply_database_link)
        spec = specs.ApplySpec(
            name=name, queue_owner=queue[0], queue_name=queue[1], apply_user=user,
            apply_captured=bool(apply_captured), rule_set_owner=positive[0], rule_set_name=positive[1],
            negative_rule_set_owner=negative[0], negative_rule_set_name=negative[1],
            message_handler=message_handler, ddl_handler=ddl_handler,
            precommit_handler=precommit_handler, apply_tag=_raw_hex(apply_tag),
            apply_database_link=apply_database_link or None, source_database=source_database.upper() if source_database else None,
        ).with_status(specs.DISABLED)
        ctx.ddl_commit()
        secure_queue_user(self._conn, name, user, queue, "DEQUEUE")
        subscribed = False
        try:
            if not any(s.name == name and s.address is None
                       for s in ctx.context.catalog.subscribers(ctx.queue(*queue))):
                self._conn.aqadm.add_subscriber(queue_name=f'"{queue[0]}"."{queue[1]}"',
                                                subscriber=Agent(f'"{name}"'))
                subscribed = True
            specs.save(ctx, spec, replace=False)
        except BaseException:
            if subscribed:
                self._conn.aqadm.remove_subscriber(queue_name=f'"{queue[0]}"."{queue[1]}"',
                                                   subscriber=Agent(f'"{name}"'))
            raise

    def alter_apply(self, apply_name: str, rule_set_name: str | None = None,
                    remove_rule_set: bool = False, message_handler: str | None = None,
                    remove_message_handler: bool = False, ddl_handler: str | None = None,
                    remove_ddl_handler: bool = False, apply_user: str | None = None,
                    apply_tag: Any = None, remove_apply_tag: bool = False,
                    precommit_handler: str | None = None, remove_precommit_handler: bool = False,
                    negative_rule_set_name: str | None = None,
                    remove_negative_rule_set: bool = False) -> None:
        """Change what is given, remove what is flagged.  :raises: ORA-26701 (no such
        apply process), ORA-24141 (no rule set), ORA-26667 (a value and its removal)."""
        ctx = self._ctx()
        spec = specs.load(ctx, client_name(apply_name, "apply_name"))
        for value, remove, what in ((rule_set_name, remove_rule_set, "rule_set_name"),
                                    (message_handler, remove_message_handler, "message_handler"),
                                    (ddl_handler, remove_ddl_handler, "ddl_handler"),
                                    (apply_tag, remove_apply_tag, "apply_tag"),
                                    (precommit_handler, remove_precommit_handler, "precommit_handler"),
                                    (negative_rule_set_name, remove_negative_rule_set,
                                     "negative_rule_set_name")):
            if value is not None and remove:
                raise ora(26667, f"{what} together with its removal")
        positive = client_rule_set(ctx, rule_set_name)
        negative = client_rule_set(ctx, negative_rule_set_name)
        user = client_user(ctx, apply_user, "apply user") if apply_user is not None else None
        tag = _raw_hex(apply_tag)
        ctx.ddl_commit()
        if user is not None and user != spec.apply_user:
            secure_queue_user(self._conn, spec.name, user, (spec.queue_owner, spec.queue_name), "DEQUEUE")
            spec.apply_user = user
        spec.alter_rule_sets(positive, rule_set_name is not None, remove_rule_set,
                             negative, negative_rule_set_name is not None, remove_negative_rule_set)
        for attr, value, remove in (("message_handler", message_handler, remove_message_handler),
                                    ("ddl_handler", ddl_handler, remove_ddl_handler),
                                    ("precommit_handler", precommit_handler, remove_precommit_handler),
                                    ("apply_tag", tag, remove_apply_tag)):
            if value is not None:
                setattr(spec, attr, value)
            elif remove:
                setattr(spec, attr, None)
        specs.save(ctx, spec)

    def drop_apply(self, apply_name: str, drop_unused_rule_sets: bool = False) -> None:
        """Drop a stopped apply process and its queue subscription; with
        ``drop_unused_rule_sets`` also its rule sets (and their rules) that no other
        apply process uses.  :raises: ORA-26666 while ENABLED."""
        ctx = self._ctx()
        spec = specs.load(ctx, client_name(apply_name, "apply_name"))
        if spec.status == specs.ENABLED:
            raise ora(26666, spec.name, ": stop it first (STOP_APPLY)")
        ctx.ddl_commit()
        queue = ctx.find_queue(spec.queue_owner, spec.queue_name)
        if queue is not None and any(s.name == spec.name and s.address is None
                                     for s in ctx.context.catalog.subscribers(queue)):
            self._conn.aqadm.remove_subscriber(queue_name=f'"{spec.queue_owner}"."{spec.queue_name}"',
                                               subscriber=Agent(f'"{spec.name}"'))
        ctx.drop_object(specs.KIND, specs.OWNER, spec.name)
        if drop_unused_rule_sets:
            others = specs.all_specs(ctx)
            used = {(s.rule_set_owner, s.rule_set_name) for s in others} | \
                   {(s.negative_rule_set_owner, s.negative_rule_set_name) for s in others}
            for owner, rs in ((spec.rule_set_owner, spec.rule_set_name),
                              (spec.negative_rule_set_owner, spec.negative_rule_set_name)):
                if rs is not None and (owner, rs) not in used and ctx.rule_set_exists(owner, rs):
                    self._conn.rule_adm.drop_rule_set(rule_set_name=f'"{owner}"."{rs}"',
                                                      delete_rules=True)


def apply_for_rules(conn: "Connection", apply_name: str, queue_name: str,
                    source_database: str | None = None, apply_captured: bool = True) -> specs.ApplySpec:
    """For DBMS_STREAMS_ADM.ADD_*_RULES with ``streams_type => 'apply'``: the apply process
    ``apply_name``, created (DISABLED, without rule sets; ``apply_captured`` TRUE for LCR
    rules, FALSE for message rules) on ``queue_name`` when it does not exist, as Oracle
    does.  :raises: ORA-26667 when it exists with another queue."""
    ctx = CaptureContext(conn)
    name = client_name(apply_name, "streams_name")
    found = specs.find(ctx, name)
    if found is None:
        ApplyAdm(conn).create_apply(queue_name=queue_name, apply_name=f'"{name}"',
                                    apply_captured=apply_captured, source_database=source_database)
        return specs.load(ctx, name)
    owner, qname = split_qualified(queue_name, ctx.username, "queue name")
    if (owner, qname) != (found.queue_owner, found.queue_name):
        raise ora(26667, f"queue_name {queue_name!r}: apply process {name} uses "
                         f"{found.queue_owner}.{found.queue_name}")
    return found
