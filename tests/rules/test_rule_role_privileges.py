"""DBMS_RULE_ADM's privileges granted to roles.

GRANT_SYSTEM_PRIVILEGE / GRANT_OBJECT_PRIVILEGE: "grantee: the name of the user or role for
which the privilege is granted".  A user holding the role (``GRANT role TO user``, or through
another role) holds what it was granted, from the next call; the role revoked from the user,
the privilege revoked from the role or the role dropped, it no longer does.  A role is given
no grant option on an object (ORA-01926).
"""

from __future__ import annotations

from sluice.rules.engine.types import TableAlias

from .test_rule_privileges import EC, _objects, code_of, site  # noqa: F401  (the fixture)


def _evaluate(conn) -> list[str]:
    hits, _ = conn.rule.evaluate(rule_set_name="strmadmin.rs", evaluation_context="strmadmin.ctx",
                                 variable_values={"m": 5})
    return [h.rule_name for h in hits]


def test_an_object_privilege_granted_to_a_role_counts_for_its_holders(site):
    _objects(site)
    adm, cur, hr = site.adm, site.admin.cursor(), site["hr"]
    cur.execute("CREATE ROLE rule_users")
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "rule_users")
    assert code_of(lambda: _evaluate(hr)) == 1031                 # HR does not hold the role yet
    cur.execute("GRANT rule_users TO hr")
    assert _evaluate(hr) == ["STRMADMIN.R"]
    cur.execute("REVOKE rule_users FROM hr")
    assert code_of(lambda: _evaluate(hr)) == 1031
    cur.execute("CREATE ROLE staff")                                # a role within a role
    cur.execute("GRANT rule_users TO staff")
    cur.execute("GRANT staff TO hr")
    assert _evaluate(hr) == ["STRMADMIN.R"]
    assert site.rows("SELECT GRANTEE, TABLE_NAME, PRIVILEGE, TYPE FROM DBA_TAB_PRIVS WHERE GRANTEE = 'RULE_USERS'") \
        == [("RULE_USERS", "RS", "EXECUTE", "RULE SET")]
    adm.revoke_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "rule_users")
    assert code_of(lambda: _evaluate(hr)) == 1031
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "rule_users")
    assert _evaluate(hr) == ["STRMADMIN.R"]
    cur.execute("DROP ROLE rule_users")
    assert code_of(lambda: _evaluate(hr)) == 1031
    assert site.rows("SELECT COUNT(*) FROM DBA_TAB_PRIVS WHERE GRANTEE = 'RULE_USERS'") == [(0,)]


def test_a_system_privilege_granted_to_a_role_counts_for_its_holders(site):
    adm, cur, hr = site.adm, site.admin.cursor(), site["hr"]
    cur.execute("CREATE ROLE rule_makers")
    cur.execute("GRANT rule_makers TO hr")
    assert code_of(lambda: hr.rule_adm.create_rule_set("rs", EC)) == 1031
    adm.grant_system_privilege(adm.CREATE_RULE_SET_OBJ, "rule_makers")
    hr.rule_adm.create_rule_set("rs", EC)
    assert site.rows("SELECT GRANTEE, PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE = 'RULE_MAKERS'") == [
        ("RULE_MAKERS", "CREATE RULE SET")]
    adm.revoke_system_privilege(adm.CREATE_RULE_SET_OBJ, "rule_makers")
    assert code_of(lambda: hr.rule_adm.create_rule_set("rs2", EC)) == 1031
    # nor may HR revoke from itself what it holds only through the role
    assert code_of(lambda: adm.revoke_system_privilege(adm.CREATE_RULE_SET_OBJ, "hr")) == 1952
    # a predefined role is a grantee too
    adm.grant_system_privilege(adm.CREATE_RULE_SET_OBJ, "aq_user_role")
    cur.execute("GRANT AQ_USER_ROLE TO scott")
    site["scott"].rule_adm.create_rule_set("rs", EC)
    assert site.rows("SELECT RULE_SET_OWNER FROM DBA_RULE_SETS ORDER BY 1") == [("HR",), ("SCOTT",)]


def test_an_owners_roles_do_not_let_its_rule_use_an_evaluation_context(site):
    """The owner of a rule given a context with table aliases needs EXECUTE on the context
    and SELECT on the tables as the owner of a view needs its base tables' privileges: its
    rule is later evaluated with its rights, where Oracle counts no role (definer's rights)
    -- granted through a role, CREATE_RULE is refused (ORA-01031) even when the owner makes
    its own rule; granted to it, or to PUBLIC (which definer's rights keep), it is not.
    DBMS_RULE.EVALUATE's caller reads the tables for its table_values in its own call: its
    roles count there."""
    adm, cur = site.adm, site.admin.cursor()
    cur.execute("GRANT SELECT ON hr.employees TO strmadmin")
    adm.create_evaluation_context("strmadmin.ctx", table_aliases=[TableAlias("emp", "hr.employees")])
    adm.grant_system_privilege(adm.CREATE_RULE_OBJ, "scott")
    cur.execute("CREATE ROLE readers")
    cur.execute("GRANT readers TO scott")
    scott = site["scott"].rule_adm
    adm.grant_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "readers")
    cur.execute("GRANT SELECT ON hr.employees TO readers")
    cur.execute("GRANT SELECT ANY TABLE, EXECUTE ANY EVALUATION CONTEXT TO readers")
    assert code_of(lambda: scott.create_rule("r", "emp.salary > 5", "strmadmin.ctx")) == 1031   # the context
    adm.grant_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "scott")
    assert code_of(lambda: scott.create_rule("r", "emp.salary > 5", "strmadmin.ctx")) == 1031   # the table
    assert site.rows("SELECT COUNT(*) FROM DBA_RULES") == [(0,)]
    cur.execute("GRANT SELECT ON hr.employees TO PUBLIC")
    scott.create_rule("r", "emp.salary > 5", "strmadmin.ctx")
    cur.execute("REVOKE SELECT ON hr.employees FROM PUBLIC")
    assert code_of(lambda: scott.create_rule("r2", "emp.salary > 5", "strmadmin.ctx")) == 1031
    cur.execute("GRANT SELECT ON hr.employees TO scott")
    scott.create_rule("r2", "emp.salary > 5", "strmadmin.ctx")
    assert site.rows("SELECT RULE_OWNER, RULE_NAME FROM DBA_RULES ORDER BY 2") == [("SCOTT", "R"), ("SCOTT", "R2")]


def test_the_evaluate_callers_roles_let_it_read_the_tables_of_its_table_values(site):
    """DBMS_RULE.EVALUATE(table_values): the caller's own call, so SELECT on the table
    granted to a role it holds counts (and EXECUTE on the rule set through one too)."""
    from sluice.rules.engine.types import TableValue

    adm, cur = site.adm, site.admin.cursor()
    cur.execute("GRANT SELECT ON hr.employees TO strmadmin")
    adm.create_evaluation_context("strmadmin.ctx", table_aliases=[TableAlias("emp", "hr.employees")])
    adm.create_rule_set("strmadmin.rs", "strmadmin.ctx")
    cur.execute("CREATE ROLE evaluators")
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "evaluators")
    cur.execute("GRANT evaluators TO scott")
    scott = site["scott"].rule

    def evaluate():
        return scott.evaluate(rule_set_name="strmadmin.rs", evaluation_context="strmadmin.ctx",
                              table_values=[TableValue("emp", {"SALARY": 1})])
    assert code_of(evaluate) == 1031
    cur.execute("GRANT SELECT ON hr.employees TO evaluators")
    evaluate()


def test_a_role_gets_no_grant_option_on_a_rule_object(site):
    _objects(site)
    adm = site.adm
    site.admin.cursor().execute("CREATE ROLE rule_users")
    before = sorted(site.admin.context.store.catalog_objects("RULEPRIV"))
    assert code_of(lambda: adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "rule_users",
                                                      grant_option=True)) == 1926
    assert sorted(site.admin.context.store.catalog_objects("RULEPRIV")) == before
