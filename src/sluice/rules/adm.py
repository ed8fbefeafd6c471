"""``DBMS_RULE_ADM``: rules, rule sets and evaluation contexts, with Oracle's
procedure and parameter names in Oracle's order.

``conn.rule_adm.create_rule(rule_name="strmadmin.r", condition=":dml.…")`` is
``DBMS_RULE_ADM.CREATE_RULE(rule_name => 'strmadmin.r', condition => '…')``.

Every procedure validates completely before it stores anything: a condition
is parsed (syntax errors carry line and column) and checked against the
evaluation context it will be evaluated with — the rule's own, or, when the
rule has none, that of each rule set it is added to.  A problem is ORA-25448
("rule … has errors", or ORA-24172 "rule set … has errors" from ADD_RULE)
followed by the cause (ORA-00904 unknown variable or member, ORA-00932
inconsistent datatypes, …).  Like Oracle's, these procedures commit the
caller's open transaction first.

Who may run each procedure, and GRANT_SYSTEM_PRIVILEGE / GRANT_OBJECT_PRIVILEGE and
their REVOKE partners: :mod:`.privileges` (ORA-01031 when a privilege is missing).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..errors import DatabaseError, IntegrityError, InterfaceError, ora
from ..names import canonical, split_qualified
from ..objtypes import parse_datatype
from .engine.evaluator import parsed
from .engine.internal import EVALUATION_CONTINUE, EVALUATION_FAILURE, EVALUATION_SUCCESS, check_function
from .engine.ruleset import (EVALUATION_CONTEXT, MEMBER, RULE, RULE_SET, EvaluationContext, Rule, RuleSet,
                             RulesCatalog, Variable, function_name, member_key, rules_catalog)
from .engine.types import NVList, TableAlias, VariableType
from .lang.typecheck import check_condition, static_type_of_datatype
from .privileges import RulePrivileges, flag as _flag

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["RuleAdm"]

T = TypeVar("T")

# Streams clients whose work is built from a rule set's rules (a synchronous capture's
# triggers, sluice.streams.capture.sync) register here, this layer being below them:
# RULE_SET_CHECKS(conn, "OWNER.SET", [(rule, condition), ...]) may refuse the rules a change
# would give the set, before anything is stored; RULE_SET_CHANGED(conn, "OWNER.SET") runs after.
RULE_SET_CHECKS: list[Callable[["Connection", str, list[tuple[str, str]]], None]] = []
RULE_SET_CHANGED: list[Callable[["Connection", str], None]] = []

_SUPPLIED_TYPES = {"LCR$_ROW_RECORD": "SYS.LCR$_ROW_RECORD", "LCR$_DDL_RECORD": "SYS.LCR$_DDL_RECORD",
                   "ANYDATA": "SYS.ANYDATA"}


def _errors(code: int, owner: str, name: str, cause: DatabaseError, *more: str) -> DatabaseError:
    """ORA-25448 / ORA-24172 with the underlying error on the next line, as Oracle stacks them."""
    head = ora(code, owner, name, *more)
    return type(head)(f"{head.message}\n{cause.message}", code)


def _values(values: Any, name: str, type_name: str) -> list:
    """A list argument (``SYS.RE$..._LIST``), NULL as empty.  :raises: InterfaceError."""
    if not values:
        return []
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InterfaceError(f"{name} must be a list of {type_name} values")
    return list(values)

class RuleAdm(RulePrivileges):
    """The DBMS_RULE_ADM package for one connection."""

    # results of an evaluation function
    EVALUATION_SUCCESS = EVALUATION_SUCCESS
    EVALUATION_FAILURE = EVALUATION_FAILURE
    EVALUATION_CONTINUE = EVALUATION_CONTINUE

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn
        self._session_ctx = conn.context

    def _catalog(self, fresh: bool = True) -> RulesCatalog:
        self._session_ctx.check_open()
        return rules_catalog(self._session_ctx.store, fresh)

    def _decide(self, decide: Callable[[RulesCatalog], T]) -> T:
        """Decide on the catalog as this process last saw it (patched with its own
        writes, so bulk DDL costs no reload per call); a refusal is decided again
        on a freshly loaded catalog before it is believed."""
        try:
            return decide(self._catalog(fresh=False))
        except DatabaseError:
            return decide(self._catalog())

    def _key(self, name: str, what: str) -> tuple[str, str]:
        if not isinstance(name, str) or not name.strip():
            raise ora(904, f'"{name}"')
        if "@" in name:
            raise ora(904, f'"{name}"')  # rules engine DDL takes no database link
        return split_qualified(name, self._session_ctx.username, what)

    def _put(self, kind: str, owner: str, name: str, spec: dict, replace: bool,
             exists_code: int | None = None, *exists_args: str) -> None:
        self._session_ctx.ddl_commit()
        try:
            self._session_ctx.store.put_catalog_object(kind, owner, name, spec, replace=replace)
        except IntegrityError as e:
            if e.code == 955 and exists_code is not None:
                raise ora(exists_code, *exists_args) from None
            raise
        self._catalog(fresh=False).note(kind, owner, name, spec)

    def _drop(self, kind: str, owner: str, name: str) -> bool:
        self._session_ctx.ddl_commit()
        dropped = self._session_ctx.store.drop_catalog_object(kind, owner, name)
        self._catalog(fresh=False).note(kind, owner, name, None)
        if kind != MEMBER:
            self._drop_grants(kind, f"{owner}.{name}")
        return dropped

    def _check_sets(self, catalog: RulesCatalog, sets: list[str], rule: Rule | None = None,
                    removed: str | None = None) -> None:
        """Let RULE_SET_CHECKS refuse what the rule sets ``sets`` would hold: their rules,
        ``rule`` added or replacing its old form, ``removed`` gone."""
        if not RULE_SET_CHECKS:
            return
        for rs in dict.fromkeys(sets):
            rules = {m.rule: catalog.rule(m.rule).condition for m in catalog.members_of(rs)
                     if m.rule in catalog.rules}
            if rule is not None:
                rules[rule.qualified] = rule.condition
            rules.pop(removed, None)
            for check in RULE_SET_CHECKS:
                check(self._conn, rs, sorted(rules.items()))

    def _changed(self, sets: list[str]) -> None:
        for rs in dict.fromkeys(sets):
            for changed in RULE_SET_CHANGED:
                changed(self._conn, rs)

    # -- validation ---------------------------------------------------------------
    def _static_types(self, ctx: EvaluationContext) -> dict[str, Any]:
        types = {}
        for v in ctx.variables:
            if v.name is not None:
                types[v.name] = self._variable_type(v.type)[1]
        return types

    def _variable_type(self, text: Any) -> tuple[str, Any]:
        """``(canonical type text, static type)``; ORA-00902 for an unknown type."""
        if not isinstance(text, str) or not text.strip():
            raise ora(902, text)
        upper = text.strip().upper()
        supplied = _SUPPLIED_TYPES.get(upper.removeprefix("SYS."))
        if supplied:
            return supplied, supplied
        try:
            datatype = parse_datatype(text)
        except DatabaseError:
            raise ora(902, text) from None
        if datatype.kind != "OBJECT":
            return datatype.text, static_type_of_datatype(datatype.kind)
        try:
            objtype = self._conn.gettype(text.strip())
        except DatabaseError:
            raise ora(902, text) from None
        return objtype.qualified_name, objtype

    def _check(self, condition: str, ctx: EvaluationContext | None) -> None:
        tree = parsed(condition)
        if ctx is not None:
            check_condition(tree, self._static_types(ctx), ctx.aliases)

    def _context_name(self, catalog: RulesCatalog, name: str | None) -> str | None:
        if name is None:
            return None
        owner, ctx = self._key(name, "evaluation context name")
        return catalog.context(f"{owner}.{ctx}").qualified

    def _validate_rule(self, catalog: RulesCatalog, rule: Rule, in_sets: bool = True) -> None:
        """Check ``rule`` with every context it is evaluated with (its own and, if
        ``in_sets``, those of the rule sets it is in); ORA-25448 on error."""
        try:
            parsed(rule.condition)
            contexts = {rule.evaluation_context} if rule.evaluation_context else set()
            for member in catalog.sets_of_rule(rule.qualified) if in_sets else ():
                rs = catalog.rule_sets.get(member.rule_set)
                contexts.add(member.evaluation_context or rule.evaluation_context
                             or (rs.evaluation_context if rs else None))
            for ctx in contexts - {None}:
                self._check(rule.condition, catalog.context(ctx))
        except DatabaseError as e:
            raise _errors(25448, rule.owner, rule.name, e) from None

    def validate_condition(self, condition: str, evaluation_context: str | None = None,
                           variable_types: Any = None) -> None:
        """Parse ``condition`` and check it against ``evaluation_context`` (a stored or
        built-in one) or, given ``variable_types`` (``RE$VARIABLE_TYPE`` values), against
        a context of those variables; store nothing (Sluice: DBMS_STREAMS_ADM checks every
        rule it will generate before it creates any).  :raises: the condition's error
        (ORA-00936 …, ORA-00904 unknown member, ORA-00932 datatypes)."""
        text = self._condition_text(condition)
        if variable_types is not None:
            ctx = self._build_context(self._session_ctx.username, "CHECK", None, variable_types, None, None)
        else:
            catalog = self._catalog(fresh=False)
            name = self._context_name(catalog, evaluation_context)
            ctx = catalog.context(name) if name is not None else None
        self._check(text, ctx)

    # -- evaluation contexts ------------------------------------------------------
    def _build_context(self, owner: str, name: str, table_aliases: Any, variable_types: Any,
                       evaluation_function: str | None, comment: str | None) -> EvaluationContext:
        aliases: list[tuple[str, str]] = []
        for a in _values(table_aliases, "table_aliases", "SYS.RE$TABLE_ALIAS"):
            if not isinstance(a, TableAlias):
                raise InterfaceError("table_aliases must be SYS.RE$TABLE_ALIAS values")
            alias = canonical(a.table_alias, "table alias")
            if any(alias == x for x, _ in aliases):
                raise ora(24156, alias)
            aliases.append((alias, ".".join(split_qualified(a.table_name, owner, "table name"))))
        variables: list[Variable] = []
        for v in _values(variable_types, "variable_types", "SYS.RE$VARIABLE_TYPE"):
            if not isinstance(v, VariableType):
                raise InterfaceError("variable_types must be SYS.RE$VARIABLE_TYPE values")
            vname = canonical(v.variable_name, "variable name") if v.variable_name else None
            if vname is not None and any(vname == x.name for x in variables):
                raise ora(24157, vname)
            vtype, _ = self._variable_type(v.variable_type)
            value_fn = function_name(v.variable_value_function)
            method_fn = function_name(v.variable_method_function)
            for fn, role in ((value_fn, "value"), (method_fn, "method")):
                if fn is not None:
                    check_function(fn, role, owner)
            variables.append(Variable(vname, vtype, value_fn, method_fn))
        function = function_name(evaluation_function)
        if function is not None:
            check_function(function, "evaluation", owner)
        return EvaluationContext(owner, name, tuple(aliases), tuple(variables), function, comment)

    def create_evaluation_context(self, evaluation_context_name: str, table_aliases: Any = None,
                                  variable_types: Any = None, evaluation_function: str | None = None,
                                  evaluation_context_comment: str | None = None) -> None:
        """:raises: ORA-24145 exists, ORA-24156/24157 duplicate alias/variable,
        ORA-00902 unknown variable type, ORA-00904 unknown function."""
        owner, name = self._key(evaluation_context_name, "evaluation context name")
        self._checks.check_create(EVALUATION_CONTEXT, owner)

        def decide(catalog: RulesCatalog) -> EvaluationContext:
            if f"{owner}.{name}" in catalog.stored_contexts:
                raise ora(24145, owner, name)
            return self._build_context(owner, name, table_aliases, variable_types,
                                       evaluation_function, evaluation_context_comment)
        ctx = self._decide(decide)
        self._checks.check_reads_tables(owner, ctx)     # its owner reads its tables
        # a built-in context (SYS.STREAMS$_EVALUATION_CONTEXT) may be installed once, explicitly
        self._put(EVALUATION_CONTEXT, owner, name, ctx.to_spec(), False, 24145, owner, name)

    def alter_evaluation_context(self, evaluation_context_name: str, table_aliases: Any = None,
                                 remove_table_aliases: bool = False, variable_types: Any = None,
                                 remove_variable_types: bool = False,
                                 evaluation_function: str | None = None,
                                 remove_evaluation_function: bool = False,
                                 evaluation_context_comment: str | None = None,
                                 remove_eval_context_comment: bool = False) -> None:
        """Change what is given, remove what is flagged; dependent rules are re-checked."""
        owner, name = self._key(evaluation_context_name, "evaluation context name")
        catalog = self._catalog()
        old = catalog.context(f"{owner}.{name}")
        self._checks.check_alter(EVALUATION_CONTEXT, old.qualified)
        keep = lambda flag, new, current: None if _flag("remove", flag) else (new if new is not None else current)  # noqa: E731
        aliases = keep(remove_table_aliases, table_aliases,
                       [TableAlias(a, t) for a, t in old.table_aliases])
        variables = keep(remove_variable_types, variable_types,
                         [VariableType(*v) for v in old.variables])
        ctx = self._build_context(owner, name, aliases, variables,
                                  keep(remove_evaluation_function, evaluation_function,
                                       old.evaluation_function),
                                  keep(remove_eval_context_comment, evaluation_context_comment,
                                       old.comment))
        if table_aliases is not None:
            self._checks.check_reads_tables(owner, ctx)
        for rule in self._rules_using(catalog, ctx.qualified):
            try:
                self._check(rule.condition, ctx)
            except DatabaseError as e:
                raise _errors(25448, rule.owner, rule.name, e) from None
        self._put(EVALUATION_CONTEXT, owner, name, ctx.to_spec(), True)

    def _rules_using(self, catalog: RulesCatalog, context: str) -> list[Rule]:
        rules = {r.qualified: r for r in catalog.rules.values() if r.evaluation_context == context}
        for members in catalog.members.values():
            for m in members:
                if catalog.effective_context(m) == context and m.rule in catalog.rules:
                    rules[m.rule] = catalog.rules[m.rule]
        return list(rules.values())

    def drop_evaluation_context(self, evaluation_context_name: str, force: bool = False) -> None:
        """:raises: ORA-24150 unknown, ORA-24152 used by rules or rule sets (unless
        ``force``, which removes it from them first)."""
        owner, name = self._key(evaluation_context_name, "evaluation context name")
        catalog = self._catalog()
        qualified = catalog.context(f"{owner}.{name}").qualified
        self._checks.check_drop(EVALUATION_CONTEXT, qualified)
        if qualified not in catalog.stored_contexts:
            raise ora(24150, owner, name)  # a built-in one cannot be dropped
        users = [r for r in catalog.rules.values() if r.evaluation_context == qualified]
        sets = [s for s in catalog.rule_sets.values() if s.evaluation_context == qualified]
        members = [m for ms in catalog.members.values() for m in ms if m.evaluation_context == qualified]
        if (users or sets or members) and not _flag("force", force):
            raise ora(24152, owner, name)
        # force takes the context from the rules and rule sets using it (a rule set's
        # memberships included): altering them, which the caller must be able to do for
        # each — checked for all before anything changes
        for r in users:
            self._checks.check_alter(RULE, r.qualified)
        for rs in dict.fromkeys([s.qualified for s in sets] + [m.rule_set for m in members]):
            self._checks.check_alter(RULE_SET, rs)
        for r in users:
            self._put(RULE, r.owner, r.name, Rule(r.owner, r.name, r.condition, None,
                                                  r.action_context, r.comment).to_spec(), True)
        for s in sets:
            self._put(RULE_SET, s.owner, s.name, RuleSet(s.owner, s.name, None, s.comment).to_spec(), True)
        for m in members:
            self._drop(MEMBER, *member_key(m.rule_set, m.rule, m.evaluation_context))
        self._drop(EVALUATION_CONTEXT, owner, name)

    # -- rules ----------------------------------------------------------------------
    def create_rule(self, rule_name: str, condition: str, evaluation_context: str | None = None,
                    action_context: NVList | None = None, rule_comment: str | None = None) -> None:
        """:raises: ORA-24146 exists, ORA-24150 unknown context, ORA-25448 bad condition."""
        owner, name = self._key(rule_name, "rule name")
        self._checks.check_create(RULE, owner)
        text, actx = self._condition_text(condition), self._action_context(action_context)

        def decide(catalog: RulesCatalog) -> Rule:
            if f"{owner}.{name}" in catalog.rules:
                raise ora(24146, owner, name)
            rule = Rule(owner, name, text, self._context_name(catalog, evaluation_context), actx,
                        rule_comment)
            self._checks.check_uses_context(owner, rule.evaluation_context)
            self._validate_rule(catalog, rule, in_sets=False)  # a new rule is in no rule set
            return rule
        rule = self._decide(decide)
        self._put(RULE, owner, name, rule.to_spec(), False, 24146, owner, name)

    @staticmethod
    def _condition_text(condition: Any) -> str:
        if not isinstance(condition, str) or not condition.strip():
            raise ora(936)  # NULL conditions are not supported (seed 000)
        return condition

    @staticmethod
    def _action_context(action_context: Any) -> NVList | None:
        if action_context is None or isinstance(action_context, NVList):
            return action_context
        if isinstance(action_context, dict):
            return NVList(action_context)
        raise InterfaceError("action_context must be a SYS.RE$NV_LIST")

    def alter_rule(self, rule_name: str, condition: str | None = None,
                   evaluation_context: str | None = None, remove_evaluation_context: bool = False,
                   action_context: NVList | None = None, remove_action_context: bool = False,
                   rule_comment: str | None = None, remove_rule_comment: bool = False) -> None:
        owner, name = self._key(rule_name, "rule name")
        catalog = self._catalog()
        old = catalog.rule(f"{owner}.{name}")
        self._checks.check_alter(RULE, old.qualified)
        ctx = None if _flag("remove_evaluation_context", remove_evaluation_context) else (
            self._context_name(catalog, evaluation_context) if evaluation_context is not None
            else old.evaluation_context)
        actx = None if _flag("remove_action_context", remove_action_context) else (
            self._action_context(action_context) if action_context is not None else old.action_context)
        comment = None if _flag("remove_rule_comment", remove_rule_comment) else (
            rule_comment if rule_comment is not None else old.comment)
        text = self._condition_text(condition) if condition is not None else old.condition
        rule = Rule(owner, name, text, ctx, actx, comment)
        if evaluation_context is not None:
            self._checks.check_uses_context(owner, ctx)
        self._validate_rule(catalog, rule)
        sets = [m.rule_set for m in catalog.sets_of_rule(rule.qualified)]
        self._check_sets(catalog, sets, rule)
        self._put(RULE, owner, name, rule.to_spec(), True)
        self._changed(sets)

    def drop_rule(self, rule_name: str, force: bool = False) -> None:
        """:raises: ORA-24147 unknown, ORA-24148 in a rule set (unless ``force``,
        which removes it from every rule set first)."""
        owner, name = self._key(rule_name, "rule name")
        catalog = self._catalog()
        rule = catalog.rule(f"{owner}.{name}")
        self._checks.check_drop(RULE, rule.qualified)
        members = catalog.sets_of_rule(rule.qualified)
        if members and not _flag("force", force):
            raise ora(24148, owner, name)
        for m in members:  # memberships first: a crash in between leaves no dangling member
            self._drop(MEMBER, *member_key(m.rule_set, m.rule, m.evaluation_context))
        self._drop(RULE, owner, name)
        self._changed([m.rule_set for m in members])

    # -- rule sets --------------------------------------------------------------------
    def create_rule_set(self, rule_set_name: str, evaluation_context: str | None = None,
                        rule_set_comment: str | None = None) -> None:
        """:raises: ORA-24153 exists, ORA-24150 unknown evaluation context."""
        owner, name = self._key(rule_set_name, "rule set name")
        self._checks.check_create(RULE_SET, owner)

        def decide(catalog: RulesCatalog) -> RuleSet:
            if f"{owner}.{name}" in catalog.rule_sets:
                raise ora(24153, owner, name)
            return RuleSet(owner, name, self._context_name(catalog, evaluation_context),
                           rule_set_comment)
        rs = self._decide(decide)
        self._checks.check_uses_context(owner, rs.evaluation_context)
        self._put(RULE_SET, owner, name, rs.to_spec(), False, 24153, owner, name)

    def drop_rule_set(self, rule_set_name: str, delete_rules: bool = False) -> None:
        """Drop it; with ``delete_rules`` also its rules that are in no other rule set."""
        owner, name = self._key(rule_set_name, "rule set name")
        catalog = self._catalog()
        rs = catalog.rule_set(f"{owner}.{name}")
        self._checks.check_drop(RULE_SET, rs.qualified)
        members = catalog.members_of(rs.qualified)
        doomed: list[str] = []      # delete_rules: its rules that are in no other rule set
        if _flag("delete_rules", delete_rules):
            doomed = [rule for rule in dict.fromkeys(m.rule for m in members)
                      if not any(o.rule_set != rs.qualified for o in catalog.sets_of_rule(rule))]
        for rule in doomed:         # each is a DROP_RULE: checked for all before anything goes
            self._checks.check_drop(RULE, rule)
        for m in members:
            self._drop(MEMBER, *member_key(m.rule_set, m.rule, m.evaluation_context))
        self._drop(RULE_SET, owner, name)
        self._changed([rs.qualified])
        for rule in doomed:
            self._drop(RULE, *rule.split(".", 1))

    def add_rule(self, rule_name: str, rule_set_name: str, evaluation_context: str | None = None,
                 rule_comment: str | None = None) -> None:
        """Add the rule, evaluated with ``evaluation_context`` if given (else its own,
        else the rule set's).

        :raises: ORA-24147 / ORA-24141 unknown rule / rule set, ORA-24154 already
            there, ORA-24151 no evaluation context at all, ORA-24172 the condition
            does not fit the context.
        """
        r_owner, r_name = self._key(rule_name, "rule name")
        s_owner, s_name = self._key(rule_set_name, "rule set name")

        def decide(catalog: RulesCatalog) -> tuple[Rule, RuleSet, str | None]:
            rule = catalog.rule(f"{r_owner}.{r_name}")
            rs = catalog.rule_set(f"{s_owner}.{s_name}")
            ctx = self._context_name(catalog, evaluation_context)
            effective = ctx or rule.evaluation_context or rs.evaluation_context
            if effective is None:
                raise ora(24151, r_owner, r_name, s_owner, s_name)
            # an existing membership is the store's ORA-00955 on its key: ORA-24154 below
            try:
                self._check(rule.condition, catalog.context(effective))
            except DatabaseError as e:
                raise _errors(24172, s_owner, s_name, e) from None
            return rule, rs, ctx
        rule, rs, ctx = self._decide(decide)
        self._checks.check_add_rule(rule.qualified, rs.qualified, ctx)
        self._check_sets(self._catalog(fresh=False), [rs.qualified], rule)
        spec = {"rule_set": rs.qualified, "rule": rule.qualified, "evaluation_context": ctx,
                "comment": rule_comment, "seq": time.time_ns()}
        self._put(MEMBER, *member_key(rs.qualified, rule.qualified, ctx), spec, False,
                  24154, r_owner, r_name, s_owner, s_name)
        self._changed([rs.qualified])

    def remove_rule(self, rule_name: str, rule_set_name: str, evaluation_context: str | None = None,
                    all_evaluation_contexts: bool = False) -> None:
        """Remove the membership added with ``evaluation_context`` (or every one).

        :raises: ORA-24155 when the rule is not in the rule set that way.
        """
        r_owner, r_name = self._key(rule_name, "rule name")
        s_owner, s_name = self._key(rule_set_name, "rule set name")
        catalog = self._catalog()
        rule = catalog.rule(f"{r_owner}.{r_name}")
        rs = catalog.rule_set(f"{s_owner}.{s_name}")
        self._checks.check_alter(RULE_SET, rs.qualified)
        ctx = self._context_name(catalog, evaluation_context)
        every = _flag("all_evaluation_contexts", all_evaluation_contexts)
        members = [m for m in catalog.members_of(rs.qualified) if m.rule == rule.qualified
                   and (every or m.evaluation_context == ctx)]
        if not members:
            raise ora(24155, r_owner, r_name, s_owner, s_name)
        for m in members:
            self._drop(MEMBER, *member_key(m.rule_set, m.rule, m.evaluation_context))
        self._changed([rs.qualified])
