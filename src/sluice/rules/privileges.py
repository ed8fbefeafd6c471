"""The rules engine's privileges: DBMS_RULE_ADM's GRANT_* / REVOKE_* procedures and
what each DBMS_RULE_ADM / DBMS_RULE procedure asks of its caller.

Oracle's constants (``DBMS_RULE_ADM.CREATE_RULE_OBJ`` = 11, ``EXECUTE_ON_RULE_SET`` = 19,
as its package specification numbers them) name fifteen system privileges — create in
one's own schema (``*_OBJ``), create / alter / drop / execute in any schema (``*_ANY_*``)
— and three object privileges per object type (ALTER, EXECUTE, ALL = both).  The usage
notes of each procedure say who may run it (PL/SQL Packages and Types Reference,
DBMS_RULE_ADM):

* CREATE_RULE / CREATE_RULE_SET / CREATE_EVALUATION_CONTEXT: the owner of the new object
  holding ``CREATE_*_OBJ``, or a holder of ``CREATE_ANY_*``;
* ALTER_RULE / ALTER_EVALUATION_CONTEXT: the owner, ``ALTER_ON_*`` on the object, or
  ``ALTER_ANY_*``; ADD_RULE / REMOVE_RULE likewise on the rule set;
* DROP_*: the owner or ``DROP_ANY_*``;
* DBMS_RULE.EVALUATE: the rule set's owner, ``EXECUTE_ON_RULE_SET`` or ``EXECUTE_ANY_RULE_SET``;
* a rule or rule set given an evaluation context: its *owner* must be able to execute
  the context (the context's owner, ``EXECUTE_ON_EVALUATION_CONTEXT``, or
  ``EXECUTE_ANY_EVALUATION_CONTEXT`` unless SYS owns the context); ADD_RULE: the rule
  set's owner must be able to execute the rule (and the context given);
* the tables an evaluation context's table aliases name: "the rule owner must have the
  necessary privileges on all the base objects accessed by the rule" (CREATE_RULE's usage
  notes) — SELECT on each (its owner, a grant of SELECT to it or PUBLIC, or SELECT ANY
  TABLE), asked of the owner of the evaluation context when it is created or its aliases
  altered, and of the owner of a rule or rule set given the context, as the EXECUTE above;
  DBMS_RULE.EVALUATE's ``table_values`` stand for rows of those tables (Oracle's are their
  ROWIDs, which the rules engine reads): the caller must be able to SELECT each one's table.

Missing, each is ORA-01031 and nothing changes.  A grantee may be a role: a user holds
what its roles hold (GRANT role TO user; revoked or dropped, it no longer does) in its own
calls -- not in what is asked of an owner (the owner of a rule, rule set or context: its
object is used later with its rights, Oracle's definer's rights, where no role counts but
PUBLIC's grants do).  PUBLIC may execute the built-in
SYS.STREAMS$_EVALUATION_CONTEXT (seed 000, "Evaluation Context for Global, Schema,
Table, and Subset Rules"); a system-created message rule's context is executed by its
owner only (seed 000, "Evaluation Contexts for Message Rules"), which is what owning it
gives.  A superuser has every privilege; so has a Streams administrator (see
``Authorizer.has_rule_system``).  Sluice lets an administrator create rule objects in a
schema that is no database user: nobody there holds or lacks a privilege, so checks
made on such an owner's behalf pass.

The facts live in the security catalog (SYSPRIV and RULEPRIV rows, see
:mod:`sluice.security.catalog`); this layer reads them through the session's
``security`` and ``authz`` (the one enforcement point), never importing them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ..errors import ora
from ..model import check_flag as flag
from ..names import canonical
from .engine.ruleset import (EVALUATION_CONTEXT, RULE, RULE_SET, STREAMS_CONTEXT, EvaluationContext,
                             RulesCatalog, rules_catalog)

if TYPE_CHECKING:
    from ..context import SessionContext

__all__ = ["CONSTANTS", "SYSTEM_PRIVILEGES", "OBJECT_PRIVILEGES", "RulePrivileges", "check_evaluate"]

_TYPES = (EVALUATION_CONTEXT, RULE_SET, RULE)
_ANY_NAME = {EVALUATION_CONTEXT: "EVALUATION_CONTEXT", RULE_SET: "RULE_SET", RULE: "RULE"}
_OBJ_NAME = {EVALUATION_CONTEXT: "EVALUATION_CONTEXT_OBJ", RULE_SET: "RULE_SET_OBJ", RULE: "RULE_OBJ"}

# DBMS_RULE_ADM's numbering (its package specification, dbmsread.sql)
SYSTEM_PRIVILEGES: dict[int, str] = {}
OBJECT_PRIVILEGES: dict[int, tuple[str, str, tuple[str, ...]]] = {}   # n -> (name, type, grants)
for _i, _t in enumerate(_TYPES):
    for _j, _name in enumerate((f"CREATE_{_OBJ_NAME[_t]}", *(f"{v}_ANY_{_ANY_NAME[_t]}" for v in
                                                            ("CREATE", "ALTER", "DROP", "EXECUTE")))):
        SYSTEM_PRIVILEGES[1 + 5 * _i + _j] = _name
    for _j, (_verb, _grants) in enumerate((("EXECUTE", ("EXECUTE",)), ("ALTER", ("ALTER",)),
                                           ("ALL", ("ALTER", "EXECUTE")))):
        OBJECT_PRIVILEGES[16 + 3 * _i + _j] = (f"{_verb}_ON_{_ANY_NAME[_t]}", _t, _grants)
CONSTANTS = {**{n: k for k, n in SYSTEM_PRIVILEGES.items()},
             **{n: k for k, (n, _, _) in OBJECT_PRIVILEGES.items()}}

# evaluation contexts every user may execute (Oracle grants EXECUTE on it to PUBLIC)
PUBLIC_EXECUTE = frozenset({STREAMS_CONTEXT})


def object_key(kind: str, qualified: str) -> str:
    """How a grant names its object in the security catalog: ``"RULE_SET.HR.RS"``."""
    return f"{kind}.{qualified}"


def _number(privilege: Any, known: dict) -> int:
    if isinstance(privilege, bool) or not isinstance(privilege, int) or privilege not in known:
        raise ora(990, privilege)
    return privilege


class Checks:
    """Who may do what to rule objects, for one session."""

    def __init__(self, session_ctx: "SessionContext") -> None:
        self._ctx = session_ctx

    def _unrestricted(self, user: str | None) -> bool:
        """Acting for ``user`` (None: the caller) needs no privilege: a superuser, or a
        schema that is no database user."""
        if user is None:
            return self._ctx.authz.is_superuser()
        info = self._ctx.security.user(user, roles=False)     # on its behalf: no role counts
        return info is None or info.superuser

    def holds(self, kind: str, qualified: str, privilege: str, user: str | None = None) -> bool:
        """``user`` may ALTER or EXECUTE the object: owns it, holds the ANY privilege or a
        grant of the object privilege."""
        if self._unrestricted(user):
            return True
        who = user or self._ctx.username
        if qualified.split(".", 1)[0] == who:
            return True
        authz = self._ctx.authz
        any_ok = authz.has_rule_system(f"{privilege}_ANY_{_ANY_NAME[kind]}", user)
        if kind == EVALUATION_CONTEXT and privilege == "EXECUTE" and qualified.startswith("SYS."):
            any_ok = False     # "… and the owner of the evaluation context must not be SYS"
            if qualified in PUBLIC_EXECUTE:
                return True
        return any_ok or authz.has_rule_object(object_key(kind, qualified), privilege, user)

    def require(self, allowed: bool) -> None:
        if not allowed:
            raise ora(1031)

    def check_create(self, kind: str, owner: str) -> None:
        if self._unrestricted(None):
            return
        authz = self._ctx.authz
        self.require(authz.has_rule_system(f"CREATE_ANY_{_ANY_NAME[kind]}")
                     or (owner == self._ctx.username and authz.has_rule_system(f"CREATE_{_OBJ_NAME[kind]}")))

    def check_alter(self, kind: str, qualified: str) -> None:
        self.require(self.holds(kind, qualified, "ALTER"))

    def check_drop(self, kind: str, qualified: str) -> None:
        if self._unrestricted(None) or qualified.split(".", 1)[0] == self._ctx.username:
            return
        self.require(self._ctx.authz.has_rule_system(f"DROP_ANY_{_ANY_NAME[kind]}"))

    def check_uses_context(self, owner: str, context: str | None) -> None:
        """The owner of a rule or rule set being given ``context`` must be able to execute it
        and to read the tables of its table aliases."""
        if context is not None:
            self.require(self.holds(EVALUATION_CONTEXT, context, "EXECUTE", owner))
            self.check_reads_tables(owner, rules_catalog(self._ctx.store, fresh=False).context(context))

    def check_reads_tables(self, owner: str | None, context: EvaluationContext,
                           aliases: Iterable[str] | None = None) -> None:
        """``owner`` (None: the caller) may SELECT the table of each of ``context``'s table
        aliases (only those of ``aliases`` if given).  :raises: ORA-01031."""
        if self._unrestricted(owner):
            return
        wanted = None if aliases is None else set(aliases)
        for alias, table in context.table_aliases:
            if wanted is None or alias in wanted:
                self.require(self._ctx.authz.has_table_privilege(table, "SELECT", owner))

    def check_add_rule(self, rule: str, rule_set: str, context: str | None) -> None:
        self.check_alter(RULE_SET, rule_set)
        rs_owner = rule_set.split(".", 1)[0]
        self.require(self.holds(RULE, rule, "EXECUTE", rs_owner))
        self.check_uses_context(rs_owner, context)


def check_evaluate(session_ctx: "SessionContext", rule_set: str, context: EvaluationContext | None = None,
                   table_aliases: Iterable[str] = ()) -> None:
    """DBMS_RULE.EVALUATE: the rule set's owner, EXECUTE_ON_RULE_SET or EXECUTE_ANY_RULE_SET;
    and SELECT on the table of each of ``context``'s ``table_aliases`` sent a row."""
    checks = Checks(session_ctx)
    checks.require(checks.holds(RULE_SET, rule_set, "EXECUTE"))
    if context is not None:
        checks.check_reads_tables(None, context, table_aliases)


class RulePrivileges:
    """DBMS_RULE_ADM.GRANT_SYSTEM_PRIVILEGE / REVOKE_SYSTEM_PRIVILEGE /
    GRANT_OBJECT_PRIVILEGE / REVOKE_OBJECT_PRIVILEGE, mixed into RuleAdm.  Each is DDL:
    it commits the caller's open transaction, and checks everything before it stores."""

    _session_ctx: "SessionContext"
    if TYPE_CHECKING:    # RuleAdm's
        def _catalog(self, fresh: bool = True) -> RulesCatalog: ...
        def _key(self, name: str, what: str) -> tuple[str, str]: ...

    @property
    def _checks(self) -> Checks:
        return Checks(self._session_ctx)

    def _user(self, name: Any, what: str, public: bool = False) -> str:
        """A user or role (or, with ``public``, PUBLIC: every user).  :raises: ORA-01917."""
        if not isinstance(name, str):
            raise ora(1917, name)
        user = canonical(name, what)
        security = self._session_ctx.security
        if security.user(user) is None and not security.is_role(user) and not (public and user == "PUBLIC"):
            raise ora(1917, user)
        return user

    def _write(self, kind: str, owner: str, name: str, spec: dict | None) -> None:
        store = self._session_ctx.store
        if spec:
            store.put_catalog_object(kind, owner, name, spec, replace=True)
        else:
            store.drop_catalog_object(kind, owner, name)

    # -- system privileges ------------------------------------------------------------
    def _system_privilege(self, privilege: Any) -> str:
        name = SYSTEM_PRIVILEGES[_number(privilege, SYSTEM_PRIVILEGES)]
        authz = self._session_ctx.authz
        if not (authz.is_superuser() or name in authz.info().admin_option):
            raise ora(1031)     # granting and revoking need the privilege WITH GRANT OPTION
        return name

    def grant_system_privilege(self, privilege: int, grantee: str, grant_option: bool = False) -> None:
        """:raises: ORA-00990 not a system privilege constant, ORA-01031 the caller does
        not hold it with the grant option, ORA-01917 no such user."""
        name = self._system_privilege(privilege)
        user = self._user(grantee, "grantee")
        option = flag("grant_option", grant_option)
        self._session_ctx.ddl_commit()
        self._write("SYSPRIV", user, name, {"admin_option": option, "grantor": self._session_ctx.username})

    def revoke_system_privilege(self, privilege: int, revokee: str) -> None:
        """:raises: ORA-01952 the revokee does not hold it (and ORA-00990, 01031, 01917)."""
        name = self._system_privilege(privilege)
        user = self._user(revokee, "revokee")
        if not any(o == user and n == name for o, n, _ in self._session_ctx.store.catalog_objects("SYSPRIV")):
            raise ora(1952, user)
        self._session_ctx.ddl_commit()
        self._write("SYSPRIV", user, name, None)

    # -- object privileges ------------------------------------------------------------
    def _object(self, privilege: Any, object_name: Any) -> tuple[str, str, tuple[str, ...]]:
        """``(kind, qualified name, privileges)``; the object must exist."""
        _, kind, grants = OBJECT_PRIVILEGES[_number(privilege, OBJECT_PRIVILEGES)]
        owner, name = self._key(object_name, "object name")
        catalog = self._catalog()
        qualified = {EVALUATION_CONTEXT: catalog.context, RULE_SET: catalog.rule_set,
                     RULE: catalog.rule}[kind](f"{owner}.{name}").qualified
        return kind, qualified, grants

    def _held(self, user: str, key: str) -> dict[str, dict]:
        for o, n, spec in self._session_ctx.store.catalog_objects("RULEPRIV"):
            if o == user and n == key:
                return dict(spec)
        return {}

    def grant_object_privilege(self, privilege: int, object_name: str, grantee: str,
                               grant_option: bool = False) -> None:
        """:raises: ORA-00990 not an object privilege constant, ORA-24141 / 24147 / 24150
        no such rule set / rule / evaluation context, ORA-01031 the caller neither owns
        the object nor holds the privilege with the grant option (for a rule set: nor
        EXECUTE with the grant option on each of its rules it does not own), ORA-01917
        no such user or role (PUBLIC is every user), ORA-01749 the grantee owns the object,
        ORA-01926 the grant option for a role."""
        kind, qualified, grants = self._object(privilege, object_name)
        user = self._user(grantee, "grantee", public=True)
        option = flag("grant_option", grant_option)
        me, owner = self._session_ctx.username, qualified.split(".", 1)[0]
        if user == owner:
            raise ora(1749)
        if option and self._session_ctx.security.is_role(user):
            raise ora(1926)
        authz = self._session_ctx.authz
        key = object_key(kind, qualified)
        if not authz.is_superuser():
            if owner != me and not all(authz.has_rule_object(key, p, grant_option=True) for p in grants):
                raise ora(1031)
            if kind == RULE_SET:
                for m in self._catalog(fresh=False).members_of(qualified):
                    if m.rule.split(".", 1)[0] != me and not authz.has_rule_object(
                            object_key(RULE, m.rule), "EXECUTE", grant_option=True):
                        raise ora(1031)
        held = self._held(user, key)
        for p in grants:
            held[p] = {"grant_option": option, "grantor": me}
        self._session_ctx.ddl_commit()
        self._write("RULEPRIV", user, key, held)

    def revoke_object_privilege(self, privilege: int, object_name: str, revokee: str) -> None:
        """Revoke, and with it what the revokee granted on from it (the grant option's
        grants).  :raises: ORA-01927 the revokee does not hold it or the caller neither
        owns the object nor granted it (and ORA-00990, 01917, 01749, 24141/24147/24150)."""
        kind, qualified, grants = self._object(privilege, object_name)
        user = self._user(revokee, "revokee", public=True)
        me, owner = self._session_ctx.username, qualified.split(".", 1)[0]
        if user == owner:
            raise ora(1749)
        key = object_key(kind, qualified)
        held = self._held(user, key)
        mine = [p for p in grants if p in held]
        if not mine:
            raise ora(1927)
        if not (self._session_ctx.authz.is_superuser() or owner == me
                or all(held[p].get("grantor") == me for p in mine)):
            raise ora(1927)
        self._session_ctx.ddl_commit()
        self._session_ctx.security.revoke_object_privileges("RULEPRIV", user, key, mine)

    def _drop_grants(self, kind: str, qualified: str) -> None:
        """An object dropped takes its grants with it (a new one of the name starts bare)."""
        key = object_key(kind, qualified)
        store = self._session_ctx.store
        for grantee, name, _ in store.catalog_objects("RULEPRIV"):
            if name == key:
                store.drop_catalog_object("RULEPRIV", grantee, name)


for _name, _value in CONSTANTS.items():    # DBMS_RULE_ADM.CREATE_RULE_OBJ … as package constants
    setattr(RulePrivileges, _name, _value)
