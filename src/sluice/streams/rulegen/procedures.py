"""The bodies of DBMS_STREAMS_ADM's rule procedures (their signatures, with Oracle's
parameters, are :class:`sluice.streams.adm.StreamsAdm`'s).

Each builds the plans of the rules seed 000 says it creates — zero, one or two for
global, schema and table rules (DML and DDL), three for subset rules (INSERT, UPDATE,
DELETE, positive rule sets only), one for a message rule — and hands them to
:func:`.generate.add_rules` with the client its ``streams_type`` names.
"""

from __future__ import annotations

from typing import Any

from ...errors import ora
from ...names import split_qualified
from ...rules.engine.ruleset import rules_catalog
from ...rules.engine.types import NVList, VariableType
from ..clientspec import streams_name as client_name
from ..rowmigration import ROW_SUBSET
from . import conditions as cond
from .catalog import find_rule, drop_rule_record, generated_name, reserve_numbers
from .clients import Client, PropagationClient, drop_messaging_client
from .dictionary import Dictionary
from .generate import Plan, add_rules, quoted
from .subset import subset_conditions

__all__ = ["lcr_rules", "subset_rules", "message_rule", "remove_rule", "propagation_client"]

_MSG_VALUE_FUNCTION = "SYS.DBMS_STREAMS_INTERNAL.MSG_VARIABLE_VALUE_FUNCTION"


def _flag(name: str, value: Any) -> bool:
    if value is None or isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise ora(26667, f"{name} {value!r}: TRUE or FALSE")


def _global_name(source_database: Any) -> str | None:
    if source_database is None or not str(source_database).strip():
        return None
    return str(source_database).strip().upper()


def propagation_client(conn: Any, streams_name: Any, source_queue_name: Any, destination_queue_name: Any,
                       source_database: str | None, queue_to_queue: Any) -> Client:
    if streams_name is None:
        raise ora(26667, "streams_name: NULL (give the propagation's name)")
    if source_queue_name is None or destination_queue_name is None:
        raise ora(26667, "source_queue_name and destination_queue_name")
    return PropagationClient(conn, client_name(streams_name, "streams_name"), source_queue_name,
                             destination_queue_name, source_database, queue_to_queue)


def lcr_rules(conn: Any, level: str, client: Client, target: tuple[str, ...], include_dml: Any,
              include_ddl: Any, include_tagged_lcr: Any, source_database: Any, inclusion_rule: Any,
              and_condition: Any) -> tuple[str | None, str | None]:
    """Global (``target`` empty), schema (``(schema,)``) or table (``(owner, table)``) rules;
    returns (dml rule name, ddl rule name)."""
    dml, ddl = _flag("include_dml", include_dml), _flag("include_ddl", include_ddl)
    tagged, inclusion = _flag("include_tagged_lcr", include_tagged_lcr), _flag("inclusion_rule", inclusion_rule)
    source = _global_name(source_database)
    client.check(inclusion)
    if client.streams_type == "CAPTURE":
        _check_target(conn, client, target)
    plans = []
    for var, wanted in ((cond.DML, dml), (cond.DDL, ddl)):
        if not wanted:
            continue
        if level == "GLOBAL":
            text = cond.global_condition(var, tagged, source)
            # named after the database, as Oracle names global rules (DBS1 + a number)
            base = (source or conn.context.store.global_name()).split(".")[0]
        elif level == "SCHEMA":
            text = cond.schema_condition(var, target[0], tagged, source)
            base = target[0]
        else:
            text = cond.table_condition(var, target[0], target[1], tagged, source)
            base = target[1]
        text = cond.with_and_condition(text, and_condition, var)
        plans.append((var, Plan(base, text, {
            "streams_rule_type": level, "rule_type": var.upper(),
            "schema_name": target[0] if target else None,
            "object_name": target[1] if len(target) > 1 else None,
            "include_tagged_lcr": "YES" if tagged else "NO", "source_database": source,
            "and_condition": and_condition})))
    if not plans:
        return None, None
    names = add_rules(conn, client, [p for _, p in plans], inclusion)
    by_var = {var: name for (var, _), name in zip(plans, names)}
    return by_var.get(cond.DML), by_var.get(cond.DDL)


def _check_target(conn: Any, client: Client, target: tuple[str, ...]) -> None:
    """A capture process captures changes of objects that exist at its source."""
    if not target:
        return
    dictionary = Dictionary(conn, client.source_spec(), for_capture=True)
    if len(target) == 1:
        dictionary.check_schema(target[0])
    else:
        dictionary.columns(*target)


def subset_rules(conn: Any, client: Client, owner: str, table: str, dml_condition: Any,
                 include_tagged_lcr: Any, source_database: Any,
                 and_condition: Any) -> tuple[str, str, str]:
    """The INSERT, UPDATE and DELETE subset rules; returns their names."""
    if not isinstance(dml_condition, str) or not dml_condition.strip():
        raise ora(26667, "dml_condition: NULL")
    tagged = _flag("include_tagged_lcr", include_tagged_lcr)
    source = _global_name(source_database)
    client.check(True)
    dictionary = Dictionary(conn, client.source_spec(), for_capture=client.streams_type == "CAPTURE")
    columns = dictionary.columns(owner, table)
    texts = subset_conditions(owner, table, dml_condition.strip(), columns, tagged, source)
    plans = []
    for operation in ("INSERT", "UPDATE", "DELETE"):
        action = NVList({ROW_SUBSET: operation}) if operation != "UPDATE" else None
        plans.append(Plan(table, cond.with_and_condition(texts[operation], and_condition, cond.DML), {
            "streams_rule_type": "TABLE", "rule_type": "DML", "schema_name": owner,
            "object_name": table, "subsetting_operation": operation,
            "dml_condition": dml_condition.strip(), "include_tagged_lcr": "YES" if tagged else "NO",
            "source_database": source, "and_condition": and_condition}, action))
    if client.streams_type == "CAPTURE":
        for plan in plans:          # checked before the table is changed
            conn.rule_adm.validate_condition(plan.condition, plan.evaluation_context)
            plan.checked = True
        dictionary.log_old_values(owner, table)
    insert, update, delete = add_rules(conn, client, plans, True)
    return insert, update, delete


def _message_context(conn: Any, type_name: str) -> tuple[str, str] | None:
    """The evaluation context (and its variable) earlier message rules of this type made in
    the user's schema: seed 000 "Evaluation Contexts for Message Rules" reuses it."""
    catalog = rules_catalog(conn.context.store)
    for qualified in sorted(catalog.stored_contexts):
        owner, name = qualified.split(".", 1)
        if owner != conn.username or not name.startswith("EVAL_CTX$_"):
            continue
        variables = catalog.context(qualified).variables
        if len(variables) == 1 and variables[0].type == type_name and \
                variables[0].value_function == _MSG_VALUE_FUNCTION:
            return qualified, variables[0].name
    return None


def message_rule(conn: Any, client: Client, message_type: Any, rule_condition: Any,
                 inclusion_rule: Any) -> str:
    """One rule on user messages of ``message_type``; returns its name."""
    inclusion = _flag("inclusion_rule", inclusion_rule)
    if not isinstance(rule_condition, str) or not rule_condition.strip():
        raise ora(26667, "rule_condition: NULL")
    objtype = conn.gettype(message_type)
    type_name = objtype.qualified_name
    type_owner, type_short = type_name.split(".", 1)
    client.check(inclusion)
    existing = _message_context(conn, type_name)
    if existing is not None:
        context, variable = existing
        new_context = None
    else:
        ctx_no, var_no = reserve_numbers(client.ctx, 2)
        context = f"{conn.username}.{generated_name('EVAL_CTX$_', ctx_no)}"
        variable = generated_name("VAR$_", var_no)
        new_context = [VariableType(variable, type_name, _MSG_VALUE_FUNCTION, None)]
    try:
        text = cond.rewrite_bind(rule_condition, "msg", f'"{variable}"')
    except Exception as e:
        raise ora(26667, f"rule_condition: {e}") from None
    conn.rule_adm.validate_condition(text, variable_types=new_context or
                                     [VariableType(variable, type_name, _MSG_VALUE_FUNCTION, None)])
    plan = Plan(type_short, text, {"message_type_owner": type_owner, "message_type_name": type_short,
                                   "message_rule_variable": variable}, evaluation_context=context,
                checked=True)

    def prepare(on_undo: Any) -> None:
        if new_context is not None:
            owner, name = context.split(".", 1)
            conn.rule_adm.create_evaluation_context(quoted(owner, name), variable_types=new_context)
            on_undo(lambda: conn.rule_adm.drop_evaluation_context(quoted(owner, name), force=True))
    (name,) = add_rules(conn, client, [plan], inclusion, rule_set_context=None, prepare=prepare)
    return name


def remove_rule(conn: Any, rule_name: Any, streams_type: Any, streams_name: Any,
                drop_unused_rule: Any = True, inclusion_rule: Any = True) -> None:
    """DBMS_STREAMS_ADM.REMOVE_RULE: take the rule out of the client's positive (or
    negative) rule set and, with ``drop_unused_rule``, drop it when no rule set holds it
    any more; ``rule_name`` NULL removes every rule of that rule set.
    :raises: ORA-23605 (streams_type), ORA-26701 (no such client), ORA-24147 (no rule)."""
    inclusion = _flag("inclusion_rule", inclusion_rule)
    drop = _flag("drop_unused_rule", drop_unused_rule)
    kind = str(streams_type).strip().upper() if isinstance(streams_type, str) else None
    if kind not in ("CAPTURE", "SYNC_CAPTURE", "PROPAGATION", "APPLY", "DEQUEUE"):
        raise ora(23605, streams_type, "STREAMS_TYPE")
    name = client_name(streams_name, "streams_name")
    rule_set = _client_rule_set(conn, kind, name, inclusion)
    catalog = rules_catalog(conn.context.store)
    members = catalog.members_of(f"{rule_set[0]}.{rule_set[1]}") if rule_set else []
    if rule_name is None:
        targets = list(dict.fromkeys(m.rule for m in members))
    else:
        owner, rname = split_qualified(rule_name, conn.username, "rule name")
        qualified = f"{owner}.{rname}"
        catalog.rule(qualified)             # ORA-24147 when there is no such rule
        if not any(m.rule == qualified for m in members):
            raise ora(24155, owner, rname, *(rule_set or ("", "")))
        targets = [qualified]
    from ..capture.context import CaptureContext
    ctx = CaptureContext(conn)
    for qualified in targets:
        owner, rname = qualified.split(".", 1)
        conn.rule_adm.remove_rule(quoted(owner, rname), quoted(*rule_set), all_evaluation_contexts=True)
        record = find_rule(ctx, owner, rname)
        if record is not None and (record.rule_set_owner, record.rule_set_name) == rule_set:
            drop_rule_record(ctx, owner, rname)
        if drop and not rules_catalog(conn.context.store).sets_of_rule(qualified):
            conn.rule_adm.drop_rule(quoted(owner, rname))
    if kind == "DEQUEUE" and rule_name is None:
        _drop_messaging_client_if_empty(conn, name)


def _drop_messaging_client_if_empty(conn: Any, name: str) -> None:
    """A messaging client is dropped by removing its rules (REMOVE_RULE with rule_name NULL;
    DBMS_STREAMS_ADM has no DROP for it): once neither rule set holds a rule, the client and
    its subscription go."""
    catalog = rules_catalog(conn.context.store)
    sides = [_client_rule_set(conn, "DEQUEUE", name, side) for side in (True, False)]
    if any(rs is not None and catalog.members_of(f"{rs[0]}.{rs[1]}") for rs in sides):
        return
    drop_messaging_client(conn, name)


def _client_rule_set(conn: Any, kind: str, name: str, inclusion: bool) -> tuple[str, str] | None:
    from ..capture.context import CaptureContext
    ctx = CaptureContext(conn)
    catalog_kind = {"CAPTURE": "CAPTURE", "SYNC_CAPTURE": "SYNC_CAPTURE", "PROPAGATION": "PROPAGATION",
                    "APPLY": "APPLY", "DEQUEUE": "MESSAGE_CONSUMER"}[kind]
    spec = ctx.get_object(catalog_kind, "SYS", name)
    if spec is None:
        raise ora(26701, name)
    prefix = "rule_set" if inclusion else "negative_rule_set"
    rs_name = spec.get(f"{prefix}_name")
    if rs_name is None:
        return None
    return spec.get(f"{prefix}_owner") or conn.username, rs_name

