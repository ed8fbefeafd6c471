"""DBMS_RULE_ADM's privileges (PL/SQL Packages and Types Reference, DBMS_RULE_ADM; the
constants as its package specification dbmsread.sql numbers them).

Each procedure's usage notes say who may run it: create in one's own schema with
``CREATE_*_OBJ`` or anywhere with ``CREATE_ANY_*``; alter (ALTER_RULE, ADD_RULE and
REMOVE_RULE on the rule set, ALTER_EVALUATION_CONTEXT) as the owner, with ``ALTER_ON_*``
or ``ALTER_ANY_*``; drop as the owner or with ``DROP_ANY_*``; DBMS_RULE.EVALUATE as the
rule set's owner, with ``EXECUTE_ON_RULE_SET`` or ``EXECUTE_ANY_RULE_SET``; a rule or rule
set given an evaluation context needs its owner to be able to execute the context; ADD_RULE
needs the rule set's owner to be able to execute the rule.  "If a user owns the object,
then the user automatically is granted all privileges on the object" (GRANT_OBJECT_PRIVILEGE).
Refused, a call is ORA-01031 and changes nothing.
"""

from __future__ import annotations

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.rules.engine.types import VariableType

PASSWORD = "Pw-rules-1"
EC = "SYS.STREAMS$_EVALUATION_CONTEXT"


def code_of(call) -> int:
    with pytest.raises(DatabaseError) as e:
        call()
    return e.value.code


class Site:
    """The bootstrap administrator and three users: STRMADMIN (owns the objects), HR, SCOTT."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.admin = sluice.connect(dsn)
        cur = self.admin.cursor()
        for user in ("strmadmin", "hr", "scott"):
            cur.execute(f'CREATE USER {user} IDENTIFIED BY "{PASSWORD}"')
            cur.execute(f"GRANT CREATE SESSION TO {user}")
        self.conns = {u: sluice.connect(dsn, user=u, password=PASSWORD) for u in ("strmadmin", "hr", "scott")}
        self.adm = self.admin.rule_adm

    def __getitem__(self, user: str):
        return self.conns[user]

    def rows(self, sql: str) -> list[tuple]:
        cur = self.admin.cursor()
        cur.execute(sql)
        return cur.fetchall()

    def close(self) -> None:
        for c in self.conns.values():
            c.close()
        self.admin.close()


@pytest.fixture
def site(dsn):
    s = Site(dsn)
    yield s
    s.close()


def test_the_constants_are_oracles_and_plsql_blocks_name_them(site):
    """dbmsread.sql: CREATE_EVALUATION_CONTEXT_OBJ 1 … EXECUTE_ANY_RULE 15 (system),
    EXECUTE_ON_EVALUATION_CONTEXT 16 … ALL_ON_RULE 24 (object)."""
    adm = site.adm
    assert (adm.CREATE_EVALUATION_CONTEXT_OBJ, adm.EXECUTE_ANY_EVALUATION_CONTEXT, adm.CREATE_RULE_SET_OBJ,
            adm.EXECUTE_ANY_RULE_SET, adm.CREATE_RULE_OBJ, adm.EXECUTE_ANY_RULE) == (1, 5, 6, 10, 11, 15)
    assert (adm.EXECUTE_ON_EVALUATION_CONTEXT, adm.ALTER_ON_EVALUATION_CONTEXT, adm.ALL_ON_EVALUATION_CONTEXT,
            adm.EXECUTE_ON_RULE_SET, adm.ALTER_ON_RULE_SET, adm.ALL_ON_RULE_SET,
            adm.EXECUTE_ON_RULE, adm.ALTER_ON_RULE, adm.ALL_ON_RULE) == tuple(range(16, 25))
    cur = site.admin.cursor()
    cur.execute("BEGIN SYS.DBMS_RULE_ADM.GRANT_SYSTEM_PRIVILEGE(privilege => SYS.DBMS_RULE_ADM.CREATE_RULE_SET_OBJ,"
                " grantee => 'strmadmin', grant_option => FALSE); END;")
    site["strmadmin"].cursor().execute("BEGIN DBMS_RULE_ADM.CREATE_RULE_SET(rule_set_name => 'rs'); END;")
    cur.execute("BEGIN DBMS_RULE_ADM.GRANT_OBJECT_PRIVILEGE(privilege => DBMS_RULE_ADM.EXECUTE_ON_RULE_SET, "
                "object_name => 'strmadmin.rs', grantee => 'hr'); END;")
    site["hr"].rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context=EC)
    cur.execute("BEGIN DBMS_RULE_ADM.REVOKE_OBJECT_PRIVILEGE(DBMS_RULE_ADM.EXECUTE_ON_RULE_SET, "
                "'strmadmin.rs', 'hr'); END;")
    assert code_of(lambda: site["hr"].rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context=EC)) == 1031


KINDS = {   # kind -> (create in schema s, own-schema privilege, any-schema privilege, catalog view)
    "rule": (lambda c, s: c.rule_adm.create_rule(f"{s}.x", ":dml.get_object_owner() = 'HR'", EC),
             "CREATE_RULE_OBJ", "CREATE_ANY_RULE", "SELECT RULE_OWNER FROM DBA_RULES"),
    "rule_set": (lambda c, s: c.rule_adm.create_rule_set(f"{s}.x", EC),
                 "CREATE_RULE_SET_OBJ", "CREATE_ANY_RULE_SET", "SELECT RULE_SET_OWNER FROM DBA_RULE_SETS"),
    "evaluation_context": (
        lambda c, s: c.rule_adm.create_evaluation_context(f"{s}.x", variable_types=[VariableType("m", "NUMBER")]),
        "CREATE_EVALUATION_CONTEXT_OBJ", "CREATE_ANY_EVALUATION_CONTEXT",
        "SELECT EVALUATION_CONTEXT_OWNER FROM DBA_EVALUATION_CONTEXTS"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_create_needs_the_obj_privilege_in_ones_schema_and_the_any_privilege_elsewhere(site, kind):
    create, own, anywhere, view = KINDS[kind]
    hr = site["hr"]
    assert code_of(lambda: create(hr, "hr")) == 1031                   # not even in one's own schema
    assert site.rows(view) == []
    site.adm.grant_system_privilege(getattr(site.adm, own), "hr")
    create(hr, "hr")
    assert code_of(lambda: create(hr, "scott")) == 1031                # the _OBJ privilege is for HR's schema
    assert site.rows(view) == [("HR",)]
    site.adm.grant_system_privilege(getattr(site.adm, anywhere), "hr")
    create(hr, "scott")
    assert sorted(site.rows(view)) == [("HR",), ("SCOTT",)]
    site.adm.revoke_system_privilege(getattr(site.adm, anywhere), "hr")  # the next call is refused
    assert code_of(lambda: create(hr, "strmadmin")) == 1031
    assert sorted(site.rows(view)) == [("HR",), ("SCOTT",)]


def _objects(site):
    """STRMADMIN's rule R, rule set RS (R in it) and evaluation context CTX (variable :m)."""
    adm = site.adm
    adm.create_evaluation_context("strmadmin.ctx", variable_types=[VariableType("m", "NUMBER")])
    adm.create_rule("strmadmin.r", ":m = 5", "strmadmin.ctx")
    adm.create_rule("strmadmin.r2", ":m > 5", "strmadmin.ctx")
    adm.create_rule_set("strmadmin.rs", "strmadmin.ctx")
    adm.add_rule("strmadmin.r", "strmadmin.rs")


def _condition(site, rule="R"):
    return site.rows(f"SELECT RULE_CONDITION FROM DBA_RULES WHERE RULE_NAME = '{rule}'")[0][0]


def test_alter_rule_needs_ownership_alter_on_rule_or_alter_any_rule(site):
    _objects(site)
    hr, adm = site["hr"], site.adm
    alter = lambda cond: hr.rule_adm.alter_rule("strmadmin.r", condition=cond)  # noqa: E731
    assert code_of(lambda: alter(":m = 6")) == 1031
    assert _condition(site) == ":m = 5"
    site["strmadmin"].rule_adm.alter_rule("r", condition=":m = 7")    # the owner may
    adm.grant_object_privilege(adm.ALTER_ON_RULE, "strmadmin.r", "hr")
    alter(":m = 6")
    assert _condition(site) == ":m = 6"
    assert code_of(lambda: hr.rule_adm.alter_rule("strmadmin.r2", condition=":m = 1")) == 1031   # that rule only
    adm.revoke_object_privilege(adm.ALTER_ON_RULE, "strmadmin.r", "hr")
    assert code_of(lambda: alter(":m = 8")) == 1031
    adm.grant_system_privilege(adm.ALTER_ANY_RULE, "hr")
    alter(":m = 8")
    assert _condition(site) == ":m = 8"


def test_alter_and_drop_of_rule_sets_and_evaluation_contexts(site):
    _objects(site)
    hr, adm = site["hr"], site.adm
    assert code_of(lambda: hr.rule_adm.alter_evaluation_context("strmadmin.ctx", evaluation_context_comment="c")) == 1031
    adm.grant_object_privilege(adm.ALL_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "hr")      # ALTER and EXECUTE
    hr.rule_adm.alter_evaluation_context("strmadmin.ctx", evaluation_context_comment="c")
    assert site.rows("SELECT EVALUATION_CONTEXT_COMMENT FROM DBA_EVALUATION_CONTEXTS") == [("c",)]
    # dropping is the owner's, or DROP_ANY_*'s: object privileges do not give it
    for drop in (lambda: hr.rule_adm.drop_rule_set("strmadmin.rs"),
                 lambda: hr.rule_adm.drop_rule("strmadmin.r2"),
                 lambda: hr.rule_adm.drop_evaluation_context("strmadmin.ctx", force=True)):
        assert code_of(drop) == 1031
    assert site.rows("SELECT COUNT(*) FROM DBA_RULE_SETS") == [(1,)]
    assert site.rows("SELECT COUNT(*) FROM DBA_RULES") == [(2,)]
    site["strmadmin"].rule_adm.drop_rule("r2")
    adm.grant_system_privilege(adm.DROP_ANY_RULE_SET, "hr")
    hr.rule_adm.drop_rule_set("strmadmin.rs")
    assert site.rows("SELECT COUNT(*) FROM DBA_RULE_SETS") == [(0,)]
    assert code_of(lambda: hr.rule_adm.drop_rule("strmadmin.r")) == 1031
    adm.grant_system_privilege(adm.DROP_ANY_RULE, "hr")
    adm.grant_system_privilege(adm.DROP_ANY_EVALUATION_CONTEXT, "hr")
    hr.rule_adm.drop_rule("strmadmin.r")
    hr.rule_adm.drop_evaluation_context("strmadmin.ctx")
    assert site.rows("SELECT COUNT(*) FROM DBA_RULES") == [(0,)]


def test_add_and_remove_rule_need_alter_on_the_rule_set_and_its_owner_must_execute_the_rule(site):
    """ADD_RULE: ALTER_ON_RULE_SET / ALTER_ANY_RULE_SET / the rule set's owner; "Also, the
    rule set owner must meet at least one of: EXECUTE_ON_RULE on the rule, EXECUTE_ANY_RULE,
    be the rule owner"."""
    _objects(site)
    hr, adm = site["hr"], site.adm
    members = "SELECT RULE_NAME FROM DBA_RULE_SET_RULES ORDER BY RULE_NAME"
    assert code_of(lambda: hr.rule_adm.add_rule("strmadmin.r2", "strmadmin.rs")) == 1031
    assert code_of(lambda: hr.rule_adm.remove_rule("strmadmin.r", "strmadmin.rs")) == 1031
    adm.grant_object_privilege(adm.ALTER_ON_RULE_SET, "strmadmin.rs", "hr")
    hr.rule_adm.add_rule("strmadmin.r2", "strmadmin.rs")
    hr.rule_adm.remove_rule("strmadmin.r", "strmadmin.rs")
    assert site.rows(members) == [("R2",)]
    # HR's own rule: STRMADMIN (the rule set's owner) cannot execute it yet
    adm.grant_system_privilege(adm.CREATE_RULE_OBJ, "hr")
    hr.rule_adm.create_rule("hr_rule", ":m = 1")
    assert code_of(lambda: hr.rule_adm.add_rule("hr_rule", "strmadmin.rs")) == 1031
    assert site.rows(members) == [("R2",)]
    hr.rule_adm.grant_object_privilege(adm.EXECUTE_ON_RULE, "hr_rule", "strmadmin")      # the owner grants
    hr.rule_adm.add_rule("hr_rule", "strmadmin.rs")
    assert site.rows(members) == [("HR_RULE",), ("R2",)]


def test_evaluate_needs_ownership_execute_on_rule_set_or_execute_any_rule_set(site):
    _objects(site)
    hr, adm = site["hr"], site.adm

    def evaluate(conn):
        true_rules, _ = conn.rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context="strmadmin.ctx",
                                           variable_values={"m": 5})
        return [h.rule_name for h in true_rules]
    assert evaluate(site["strmadmin"]) == ["STRMADMIN.R"]
    assert code_of(lambda: evaluate(hr)) == 1031
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "hr")
    assert evaluate(hr) == ["STRMADMIN.R"]
    assert code_of(lambda: evaluate(site["scott"])) == 1031
    adm.revoke_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "hr")
    assert code_of(lambda: evaluate(hr)) == 1031                        # revoked: the next call
    adm.grant_system_privilege(adm.EXECUTE_ANY_RULE_SET, "scott")
    assert evaluate(site["scott"]) == ["STRMADMIN.R"]
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "public")    # every user
    assert evaluate(hr) == ["STRMADMIN.R"]
    adm.revoke_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "public")
    assert code_of(lambda: evaluate(hr)) == 1031


def test_an_evaluation_context_is_used_by_whom_may_execute_it(site):
    """CREATE_RULE / CREATE_RULE_SET / ALTER_RULE with an evaluation context: "the rule owner
    must … have EXECUTE_ON_EVALUATION_CONTEXT …, EXECUTE_ANY_EVALUATION_CONTEXT …, be the
    evaluation context owner".  Seed 000: PUBLIC may execute SYS.STREAMS$_EVALUATION_CONTEXT."""
    _objects(site)
    hr, adm = site["hr"], site.adm
    adm.grant_system_privilege(adm.CREATE_RULE_OBJ, "hr")
    adm.grant_system_privilege(adm.CREATE_RULE_SET_OBJ, "hr")
    hr.rule_adm.create_rule("streams_rule", ":dml.get_object_owner() = 'HR'", EC)   # PUBLIC's
    hr.rule_adm.create_rule_set("streams_rs", EC)
    assert code_of(lambda: hr.rule_adm.create_rule("r", ":m = 1", "strmadmin.ctx")) == 1031
    assert code_of(lambda: hr.rule_adm.create_rule_set("rs", "strmadmin.ctx")) == 1031
    hr.rule_adm.create_rule("r", ":m = 1")
    assert code_of(lambda: hr.rule_adm.alter_rule("r", evaluation_context="strmadmin.ctx")) == 1031
    assert site.rows("SELECT RULE_SET_NAME FROM DBA_RULE_SETS WHERE RULE_SET_OWNER = 'HR'") == [("STREAMS_RS",)]
    assert site.rows("SELECT RULE_EVALUATION_CONTEXT_NAME FROM DBA_RULES WHERE RULE_OWNER = 'HR' AND RULE_NAME = 'R'") == [(None,)]
    adm.grant_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "hr")
    hr.rule_adm.alter_rule("r", evaluation_context="strmadmin.ctx")
    hr.rule_adm.create_rule_set("rs", "strmadmin.ctx")
    # an administrator creating for HR checks HR's privileges, not its own
    adm.revoke_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "hr")
    assert code_of(lambda: adm.create_rule("hr.r9", ":m = 1", "strmadmin.ctx")) == 1031
    adm.grant_system_privilege(adm.EXECUTE_ANY_EVALUATION_CONTEXT, "hr")
    adm.create_rule("hr.r9", ":m = 1", "strmadmin.ctx")


def test_the_grant_option_lets_the_grantee_grant_on_and_revoking_takes_its_grants_back(site):
    _objects(site)
    hr, scott, adm = site["hr"], site["scott"], site.adm
    strm = site["strmadmin"].rule_adm
    # an object privilege: the owner grants with the grant option; granting a rule set on
    # also needs EXECUTE WITH GRANT OPTION on its rules (GRANT_OBJECT_PRIVILEGE's usage notes)
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "hr", grant_option=True)
    assert code_of(lambda: hr.rule_adm.grant_object_privilege(
        adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "scott")) == 1031
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE, "r", "hr", grant_option=True)
    hr.rule_adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "scott")
    scott.rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context="strmadmin.ctx")
    assert code_of(lambda: scott.rule_adm.grant_object_privilege(
        adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "hr")) == 1031      # SCOTT has no grant option
    assert code_of(lambda: hr.rule_adm.grant_object_privilege(      # EXECUTE only, not ALTER
        adm.ALTER_ON_RULE_SET, "strmadmin.rs", "scott")) == 1031
    strm.revoke_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "hr")     # takes SCOTT's with it
    assert code_of(lambda: scott.rule.evaluate(rule_set_name="strmadmin.rs",
                                               evaluation_context="strmadmin.ctx")) == 1031
    # a system privilege: the grant option is what lets one grant it
    assert code_of(lambda: hr.rule_adm.grant_system_privilege(adm.CREATE_ANY_RULE, "scott")) == 1031
    adm.grant_system_privilege(adm.CREATE_ANY_RULE, "hr", grant_option=True)
    hr.rule_adm.grant_system_privilege(adm.CREATE_ANY_RULE, "scott")
    scott.rule_adm.create_rule("hr.by_scott", ":m = 1")
    assert code_of(lambda: scott.rule_adm.grant_system_privilege(adm.CREATE_ANY_RULE, "strmadmin")) == 1031
    hr.rule_adm.revoke_system_privilege(adm.CREATE_ANY_RULE, "scott")
    assert code_of(lambda: scott.rule_adm.create_rule("hr.by_scott2", ":m = 1")) == 1031


def test_a_rule_set_is_granted_on_only_with_execute_on_its_rules(site):
    """GRANT_OBJECT_PRIVILEGE: "if the object is a rule set, then the user must have
    EXECUTE privilege on all the rules in the rule set with grant option or must own the
    rules in the rule set"."""
    _objects(site)
    adm = site.adm
    adm.grant_system_privilege(adm.CREATE_RULE_OBJ, "hr")
    site["hr"].rule_adm.create_rule("hr_rule", ":m = 1")
    site["hr"].rule_adm.grant_object_privilege(adm.EXECUTE_ON_RULE, "hr_rule", "strmadmin")
    site["strmadmin"].rule_adm.add_rule("hr.hr_rule", "rs")
    strm = site["strmadmin"].rule_adm
    assert code_of(lambda: strm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "scott")) == 1031
    site["hr"].rule_adm.grant_object_privilege(adm.EXECUTE_ON_RULE, "hr_rule", "strmadmin", grant_option=True)
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "scott")


def test_a_grant_to_public_with_the_grant_option_lets_every_user_grant_it_on(site):
    """An object privilege granted to PUBLIC WITH GRANT OPTION is every user's, the grant
    option too (as a queue privilege's: DBMS_AQADM.GRANT_QUEUE_PRIVILEGE); without it, PUBLIC's
    grant lets nobody grant on.  The grant made from it is the grantor's, and stays when
    PUBLIC's is revoked."""
    _objects(site)
    adm, strm, hr = site.adm, site["strmadmin"].rule_adm, site["hr"].rule_adm
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE, "r", "PUBLIC")
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "PUBLIC")
    assert code_of(lambda: hr.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "scott")) == 1031
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "PUBLIC", grant_option=True)
    # a rule set is granted on only with EXECUTE WITH GRANT OPTION on its rules: PUBLIC's counts
    assert code_of(lambda: hr.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "scott")) == 1031
    strm.grant_object_privilege(adm.EXECUTE_ON_RULE, "r", "PUBLIC", grant_option=True)
    hr.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "scott")
    assert code_of(lambda: hr.grant_object_privilege(adm.ALTER_ON_RULE_SET, "strmadmin.rs", "scott")) == 1031
    assert sorted(site.rows("SELECT GRANTEE, GRANTOR, GRANTABLE FROM DBA_TAB_PRIVS WHERE TABLE_NAME = 'RS'")) == [
        ("PUBLIC", "STRMADMIN", "YES"), ("SCOTT", "HR", "NO")]
    strm.revoke_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "PUBLIC")
    site["scott"].rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context="strmadmin.ctx")
    assert code_of(lambda: site["hr"].rule.evaluate(rule_set_name="strmadmin.rs",
                                                    evaluation_context="strmadmin.ctx")) == 1031


@pytest.mark.parametrize("call, code", [
    (lambda a: a.grant_system_privilege(99, "hr"), 990),                       # no such constant
    (lambda a: a.grant_system_privilege(a.EXECUTE_ON_RULE_SET, "hr"), 990),    # an object privilege
    (lambda a: a.grant_system_privilege("CREATE_RULE_OBJ", "hr"), 990),        # a name, not the number
    (lambda a: a.grant_system_privilege(a.CREATE_RULE_OBJ, "nobody"), 1917),
    (lambda a: a.grant_object_privilege(a.CREATE_RULE_OBJ, "strmadmin.rs", "hr"), 990),
    (lambda a: a.grant_object_privilege(a.EXECUTE_ON_RULE_SET, "strmadmin.nors", "hr"), 24141),
    (lambda a: a.grant_object_privilege(a.EXECUTE_ON_RULE, "strmadmin.rs", "hr"), 24147),
    (lambda a: a.grant_object_privilege(a.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.r", "hr"), 24150),
    (lambda a: a.grant_object_privilege(a.EXECUTE_ON_RULE_SET, "strmadmin.rs", "nobody"), 1917),
    (lambda a: a.grant_object_privilege(a.EXECUTE_ON_RULE_SET, "strmadmin.rs", "strmadmin"), 1749),
    (lambda a: a.revoke_system_privilege(a.CREATE_RULE_OBJ, "hr"), 1952),      # not granted
    (lambda a: a.revoke_object_privilege(a.EXECUTE_ON_RULE_SET, "strmadmin.rs", "hr"), 1927),
], ids=["unknown", "object-as-system", "name", "no-user", "system-as-object", "no-rule-set",
        "no-rule", "no-context", "no-grantee", "owner", "revoke-system", "revoke-object"])
def test_bad_grants_and_revokes_are_refused_and_change_nothing(site, call, code):
    _objects(site)
    adm = site.adm
    adm.grant_object_privilege(adm.ALTER_ON_RULE, "strmadmin.r", "scott")
    before = [sorted(site.admin.context.store.catalog_objects(k)) for k in ("SYSPRIV", "RULEPRIV")]
    assert code_of(lambda: call(adm)) == code
    assert [sorted(site.admin.context.store.catalog_objects(k)) for k in ("SYSPRIV", "RULEPRIV")] == before


def test_only_the_owner_or_the_grantor_revokes_and_a_dropped_object_takes_its_grants(site):
    _objects(site)
    adm, hr = site.adm, site["hr"]
    site["strmadmin"].rule_adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "rs", "hr")
    assert code_of(lambda: site["scott"].rule_adm.revoke_object_privilege(
        adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "hr")) == 1927
    hr.rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context="strmadmin.ctx")
    adm.drop_rule_set("strmadmin.rs")
    adm.create_rule_set("strmadmin.rs", "strmadmin.ctx")        # a new rule set of the name starts bare
    assert code_of(lambda: hr.rule.evaluate(rule_set_name="strmadmin.rs",
                                            evaluation_context="strmadmin.ctx")) == 1031


def test_a_queue_administrator_creates_rule_objects_in_its_schema_and_grants_that_on(site):
    """catqueue.sql grants AQ_ADMINISTRATOR_ROLE CREATE_EVALUATION_CONTEXT_OBJ,
    CREATE_RULE_SET_OBJ and CREATE_RULE_OBJ WITH GRANT OPTION; a Streams administrator (in
    Sluice a queue administrator) has the rules engine's ANY privileges, as
    DBMS_STREAMS_AUTH.GRANT_ADMIN_PRIVILEGE gives them, so DBMS_STREAMS_ADM's
    system-created rules keep working for it."""
    site.admin.cursor().execute("GRANT AQ_ADMINISTRATOR_ROLE TO strmadmin")
    strm = site["strmadmin"].rule_adm
    strm.create_rule_set("rs", EC)
    strm.create_rule("r", ":dml.get_object_owner() = 'HR'", EC)
    strm.add_rule("r", "rs")
    strm.grant_system_privilege(strm.CREATE_RULE_SET_OBJ, "hr")
    site["hr"].rule_adm.create_rule_set("hr_rs")
    assert code_of(lambda: site["hr"].rule_adm.grant_system_privilege(strm.CREATE_RULE_SET_OBJ, "scott")) == 1031
    # the queue administrator's privileges granted one by one make a Streams administrator too
    site.admin.cursor().execute("GRANT EXECUTE ON DBMS_AQADM, MANAGE ANY QUEUE TO scott")
    site["scott"].rule_adm.create_rule_set("hr.made_by_scott", EC)        # CREATE_ANY_RULE_SET
    site["scott"].rule.evaluate(rule_set_name="hr.hr_rs", evaluation_context=EC)   # EXECUTE_ANY_RULE_SET


def test_sql_grants_name_the_rules_engine_system_privileges(site):
    """Oracle's SQL names of these system privileges: GRANT CREATE RULE SET TO hr is
    GRANT_SYSTEM_PRIVILEGE(CREATE_RULE_SET_OBJ, 'hr')."""
    site.admin.cursor().execute("GRANT CREATE RULE SET, EXECUTE ANY RULE SET TO hr")
    site["hr"].rule_adm.create_rule_set("rs", EC)
    site.adm.create_rule_set("strmadmin.rs", EC)
    site["hr"].rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context=EC)
    site.admin.cursor().execute("REVOKE EXECUTE ANY RULE SET FROM hr")
    assert code_of(lambda: site["hr"].rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context=EC)) == 1031


def test_the_grants_show_in_dba_sys_privs_and_dba_tab_privs(site):
    """Oracle lists system privileges by their SQL names in DBA_SYS_PRIVS (GRANTEE,
    PRIVILEGE, ADMIN_OPTION) and object privileges in DBA_TAB_PRIVS (GRANTEE, OWNER,
    TABLE_NAME, GRANTOR, PRIVILEGE, GRANTABLE, HIERARCHY, TYPE)."""
    _objects(site)
    adm = site.adm
    adm.grant_system_privilege(adm.CREATE_RULE_SET_OBJ, "hr", grant_option=True)
    adm.grant_system_privilege(adm.EXECUTE_ANY_EVALUATION_CONTEXT, "hr")
    adm.grant_object_privilege(adm.ALL_ON_RULE_SET, "strmadmin.rs", "hr", grant_option=True)
    site["strmadmin"].rule_adm.grant_object_privilege(adm.EXECUTE_ON_RULE, "r", "scott")
    assert site.rows("SELECT PRIVILEGE, ADMIN_OPTION FROM DBA_SYS_PRIVS WHERE GRANTEE = 'HR' "
                     "ORDER BY PRIVILEGE") == [("CREATE RULE SET", "YES"), ("CREATE SESSION", "NO"),
                                               ("EXECUTE ANY EVALUATION CONTEXT", "NO")]
    assert site.rows("SELECT GRANTEE, OWNER, TABLE_NAME, GRANTOR, PRIVILEGE, GRANTABLE, TYPE FROM DBA_TAB_PRIVS "
                     "WHERE OWNER = 'STRMADMIN' ORDER BY GRANTEE, PRIVILEGE") == [
        ("HR", "STRMADMIN", "RS", "SLUICE", "ALTER", "YES", "RULE SET"),
        ("HR", "STRMADMIN", "RS", "SLUICE", "EXECUTE", "YES", "RULE SET"),
        ("SCOTT", "STRMADMIN", "R", "STRMADMIN", "EXECUTE", "NO", "RULE")]
    adm.revoke_object_privilege(adm.ALTER_ON_RULE_SET, "strmadmin.rs", "hr")
    assert site.rows("SELECT PRIVILEGE FROM DBA_TAB_PRIVS WHERE GRANTEE = 'HR'") == [("EXECUTE",)]
    # USER_SYS_PRIVS / USER_TAB_PRIVS: the user's own (as grantee, owner or grantor)
    cur = site["scott"].cursor()
    cur.execute("SELECT USERNAME, PRIVILEGE FROM USER_SYS_PRIVS")
    assert cur.fetchall() == [("SCOTT", "CREATE SESSION")]
    cur.execute("SELECT GRANTEE, TABLE_NAME, PRIVILEGE FROM USER_TAB_PRIVS")
    assert cur.fetchall() == [("SCOTT", "R", "EXECUTE")]
    cur = site["strmadmin"].cursor()
    cur.execute("SELECT GRANTEE, TABLE_NAME, PRIVILEGE FROM USER_TAB_PRIVS ORDER BY GRANTEE")
    assert cur.fetchall() == [("HR", "RS", "EXECUTE"), ("SCOTT", "R", "EXECUTE")]


def test_a_streams_administrators_message_rule_context_is_executed_by_its_owner_only(site):
    """Seed 000, "Evaluation Contexts for Message Rules": the system-created evaluation
    context "is created in the schema that owns the rule.  Only the user who owns this
    evaluation context is granted the EXECUTE privilege on it."  The Streams administrator
    here is a queue administrator (AQ_ADMINISTRATOR_ROLE), not a superuser."""
    from tests.streams.test_rulegen_seed import CREATE_TYPE

    site.admin.cursor().execute("GRANT AQ_ADMINISTRATOR_ROLE TO strmadmin")
    strm = site["strmadmin"]
    strm.cursor().execute(CREATE_TYPE.rstrip().rstrip("/"))
    strm.streams_adm.set_up_queue()
    rule = strm.streams_adm.add_message_rule("region_pri_msg", ":msg.region = 'EUROPE'", "dequeue", "msg_client")
    assert rule.startswith("STRMADMIN.REGION_PRI_MSG")
    [(owner, ctx)] = site.rows("SELECT EVALUATION_CONTEXT_OWNER, EVALUATION_CONTEXT_NAME FROM DBA_EVALUATION_CONTEXTS")
    assert owner == "STRMADMIN"
    site.adm.grant_system_privilege(site.adm.CREATE_RULE_OBJ, "hr")
    [(var,)] = site.rows("SELECT MESSAGE_RULE_VARIABLE FROM DBA_STREAMS_MESSAGE_RULES")
    condition = f":{var}.region = 'ASIA'"
    assert code_of(lambda: site["hr"].rule_adm.create_rule("r", condition, f"strmadmin.{ctx}")) == 1031
    assert site.rows("SELECT COUNT(*) FROM DBA_RULES WHERE RULE_OWNER = 'HR'") == [(0,)]
    strm.rule_adm.create_rule("r_own", condition, f'"{ctx}"')          # its owner may


# privilege -> (object it is granted on, or None for a system privilege; what HR then may do;
# whether the same call is refused again once revoked: a drop or a create cannot be tried twice
# — the second create fails on the name, before its evaluation context is looked at)
def _add_r_to_hr_rs(hr):
    hr.rule_adm.add_rule("strmadmin.r", "hr.rs")


EVERY_PRIVILEGE = {
    "CREATE_ANY_EVALUATION_CONTEXT": (None, lambda hr: hr.rule_adm.create_evaluation_context("scott.c"), True),
    "ALTER_ANY_EVALUATION_CONTEXT": (None, lambda hr: hr.rule_adm.alter_evaluation_context(
        "strmadmin.ctx", evaluation_context_comment="c"), True),
    "ALTER_ON_EVALUATION_CONTEXT": ("strmadmin.ctx", lambda hr: hr.rule_adm.alter_evaluation_context(
        "strmadmin.ctx", evaluation_context_comment="c"), True),
    "ALL_ON_EVALUATION_CONTEXT": ("strmadmin.ctx", lambda hr: hr.rule_adm.create_rule(
        "x", ":m = 1", "strmadmin.ctx"), False),
    "EXECUTE_ON_EVALUATION_CONTEXT": ("strmadmin.ctx", lambda hr: hr.rule_adm.create_rule(
        "x", ":m = 1", "strmadmin.ctx"), False),
    "EXECUTE_ANY_EVALUATION_CONTEXT": (None, lambda hr: hr.rule_adm.create_rule_set("x", "strmadmin.ctx"), False),
    "DROP_ANY_EVALUATION_CONTEXT": (None, lambda hr: hr.rule_adm.drop_evaluation_context("strmadmin.ctx2"), False),
    "CREATE_ANY_RULE_SET": (None, lambda hr: hr.rule_adm.create_rule_set("scott.x"), True),
    "ALTER_ANY_RULE_SET": (None, lambda hr: hr.rule_adm.add_rule("strmadmin.r2", "strmadmin.rs"), False),
    "ALTER_ON_RULE_SET": ("strmadmin.rs", lambda hr: hr.rule_adm.remove_rule("strmadmin.r", "strmadmin.rs"), False),
    "ALL_ON_RULE_SET": ("strmadmin.rs", lambda hr: hr.rule.evaluate("strmadmin.rs", "strmadmin.ctx"), True),
    "EXECUTE_ON_RULE_SET": ("strmadmin.rs", lambda hr: hr.rule.evaluate("strmadmin.rs", "strmadmin.ctx"), True),
    "EXECUTE_ANY_RULE_SET": (None, lambda hr: hr.rule.evaluate("strmadmin.rs", "strmadmin.ctx"), True),
    "DROP_ANY_RULE_SET": (None, lambda hr: hr.rule_adm.drop_rule_set("strmadmin.rs"), False),
    "CREATE_ANY_RULE": (None, lambda hr: hr.rule_adm.create_rule("scott.x", ":m = 1"), True),
    "ALTER_ANY_RULE": (None, lambda hr: hr.rule_adm.alter_rule("strmadmin.r", rule_comment="c"), True),
    "ALTER_ON_RULE": ("strmadmin.r", lambda hr: hr.rule_adm.alter_rule("strmadmin.r", rule_comment="c"), True),
    "ALL_ON_RULE": ("strmadmin.r", _add_r_to_hr_rs, False),
    "EXECUTE_ON_RULE": ("strmadmin.r", _add_r_to_hr_rs, False),
    "EXECUTE_ANY_RULE": (None, _add_r_to_hr_rs, False),
    "DROP_ANY_RULE": (None, lambda hr: hr.rule_adm.drop_rule("strmadmin.r2"), False),
}


def _rule_catalog(site) -> list:
    store = site.admin.context.store
    return [sorted(store.catalog_objects(k)) for k in ("RULE", "RULE_SET", "RULE_SET_RULE", "EVALUATION_CONTEXT")]


@pytest.mark.parametrize("privilege", list(EVERY_PRIVILEGE))
def test_every_privilege_allows_its_call_and_without_it_the_call_changes_nothing(site, privilege):
    """Table 150-12 / 150-14 of DBMS_RULE_ADM: each object and system privilege, one call
    it allows (HR also holds the CREATE_*_OBJ privileges and owns the rule set HR.RS)."""
    on, call, again = EVERY_PRIVILEGE[privilege]
    _objects(site)
    adm = site.adm
    adm.create_evaluation_context("strmadmin.ctx2")
    adm.create_rule_set("hr.rs")
    for p in ("CREATE_RULE_OBJ", "CREATE_RULE_SET_OBJ", "CREATE_EVALUATION_CONTEXT_OBJ"):
        adm.grant_system_privilege(getattr(adm, p), "hr")
    hr = site["hr"]
    before = _rule_catalog(site)
    assert code_of(lambda: call(hr)) == 1031
    assert _rule_catalog(site) == before
    if on is None:
        adm.grant_system_privilege(getattr(adm, privilege), "hr")
    else:
        adm.grant_object_privilege(getattr(adm, privilege), on, "hr")
    call(hr)
    if on is None:
        adm.revoke_system_privilege(getattr(adm, privilege), "hr")
    else:
        adm.revoke_object_privilege(getattr(adm, privilege), on, "hr")
    if again:
        assert code_of(lambda: call(hr)) == 1031
