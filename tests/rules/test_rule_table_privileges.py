"""The tables an evaluation context's table aliases name, and who may read them.

DBMS_RULE_ADM.CREATE_RULE's usage notes: "the rule owner must have the necessary privileges
on all the base objects accessed by the rule" — for a table alias, SELECT on its table (the
table's owner, ``GRANT SELECT ON owner.table``, to the user or PUBLIC, or SELECT ANY TABLE).
Sluice asks it of the owner of an evaluation context with table aliases (created, or its
aliases altered), of the owner of a rule or rule set given the context (CREATE_RULE,
ALTER_RULE, CREATE_RULE_SET, ADD_RULE's evaluation_context), and of DBMS_RULE.EVALUATE's
caller for each table it sends a row of (``table_values``: Oracle's are ROWIDs the rules
engine reads).  Missing, each is ORA-01031 and nothing changes.
"""

from __future__ import annotations

import pytest

from sluice.rules.engine.types import TableAlias, VariableType

from .test_rule_privileges import Site, code_of

EMP = [TableAlias("emp", "hr.employees")]


@pytest.fixture
def site(dsn):
    s = Site(dsn)
    yield s
    s.close()


def _contexts(site) -> list:
    return site.rows("SELECT EVALUATION_CONTEXT_OWNER, EVALUATION_CONTEXT_NAME FROM DBA_EVALUATION_CONTEXTS "
                     "ORDER BY 1, 2")


def test_an_evaluation_contexts_owner_must_read_the_tables_of_its_aliases(site):
    adm = site.adm
    adm.grant_system_privilege(adm.CREATE_EVALUATION_CONTEXT_OBJ, "scott")
    adm.grant_system_privilege(adm.CREATE_EVALUATION_CONTEXT_OBJ, "hr")
    scott = site["scott"].rule_adm
    assert code_of(lambda: scott.create_evaluation_context("ctx", table_aliases=EMP)) == 1031
    assert _contexts(site) == []
    site["hr"].rule_adm.create_evaluation_context("ctx", table_aliases=EMP)     # its own table
    # an administrator creating in SCOTT's schema: SCOTT is the one who reads the table
    assert code_of(lambda: adm.create_evaluation_context("scott.ctx", table_aliases=EMP)) == 1031
    site["hr"].cursor().execute("GRANT SELECT ON employees TO scott")         # the table's owner grants
    scott.create_evaluation_context("ctx", table_aliases=EMP)
    assert _contexts(site) == [("HR", "CTX"), ("SCOTT", "CTX")]
    # ALTER_EVALUATION_CONTEXT with new aliases asks again; one without aliases asks nothing
    site.admin.cursor().execute("REVOKE SELECT ON hr.employees FROM scott")
    assert code_of(lambda: scott.alter_evaluation_context(
        "ctx", table_aliases=[*EMP, TableAlias("j", "hr.jobs")])) == 1031
    assert site.rows("SELECT COUNT(*) FROM DBA_TAB_PRIVS WHERE TYPE = 'TABLE'") == [(0,)]
    scott.alter_evaluation_context("ctx", evaluation_context_comment="kept")
    scott.alter_evaluation_context("ctx", table_aliases=[TableAlias("mine", "scott.t")])
    scott.create_evaluation_context("vars_only", variable_types=[VariableType("m", "NUMBER")])


def _emp_context(site):
    """STRMADMIN's context CTX over HR.EMPLOYEES (STRMADMIN may read it), its rule R and
    rule set RS; SCOTT may execute CTX and RS and create rules and rule sets."""
    adm = site.adm
    site.admin.cursor().execute("GRANT SELECT ON hr.employees TO strmadmin")
    adm.create_evaluation_context("strmadmin.ctx", table_aliases=EMP)
    adm.create_rule("strmadmin.r", "emp.salary > 10", "strmadmin.ctx")
    adm.create_rule_set("strmadmin.rs", "strmadmin.ctx")
    adm.add_rule("strmadmin.r", "strmadmin.rs")
    adm.grant_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "scott")
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "strmadmin.rs", "scott")
    adm.grant_system_privilege(adm.CREATE_RULE_OBJ, "scott")
    adm.grant_system_privilege(adm.CREATE_RULE_SET_OBJ, "scott")


def _rules(site) -> list:
    return site.rows("SELECT RULE_OWNER, RULE_NAME, RULE_EVALUATION_CONTEXT_NAME FROM DBA_RULES ORDER BY 1, 2")


def test_a_rule_or_rule_set_given_the_context_needs_its_owner_to_read_the_tables(site):
    """EXECUTE on the context is not enough: the rule owner must read HR.EMPLOYEES."""
    _emp_context(site)
    scott, adm = site["scott"].rule_adm, site.adm
    scott.create_rule("bare", "emp.salary > 5")
    scott.create_rule_set("bare_rs")
    before = (_rules(site), site.rows("SELECT COUNT(*) FROM DBA_RULE_SETS"),
              site.rows("SELECT COUNT(*) FROM DBA_RULE_SET_RULES"))
    for call in (lambda: scott.create_rule("r", "emp.salary > 5", "strmadmin.ctx"),
                 lambda: scott.create_rule_set("rs", "strmadmin.ctx"),
                 lambda: scott.alter_rule("bare", evaluation_context="strmadmin.ctx"),
                 lambda: scott.add_rule("bare", "bare_rs", evaluation_context="strmadmin.ctx")):
        assert code_of(call) == 1031
    assert (_rules(site), site.rows("SELECT COUNT(*) FROM DBA_RULE_SETS"),
            site.rows("SELECT COUNT(*) FROM DBA_RULE_SET_RULES")) == before
    site.admin.cursor().execute("GRANT SELECT ON hr.employees TO scott")
    scott.create_rule("r", "emp.salary > 5", "strmadmin.ctx")
    scott.create_rule_set("rs", "strmadmin.ctx")
    scott.alter_rule("bare", evaluation_context="strmadmin.ctx")
    scott.add_rule("bare", "bare_rs", evaluation_context="strmadmin.ctx")
    assert ("SCOTT", "R", "CTX") in _rules(site)
    # an administrator creating a rule for HR (which may execute the context): HR owns the table
    adm.grant_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "hr")
    adm.create_rule("hr.r", "emp.salary > 5", "strmadmin.ctx")


def test_evaluate_with_a_row_of_a_table_the_caller_may_not_read_is_refused(site):
    """table_values stand for rows of the aliases' tables (Oracle's are ROWIDs the rules
    engine reads for the caller); column_values are the caller's own values."""
    _emp_context(site)
    scott = site["scott"]

    def evaluate(**values):
        hits, _ = scott.rule.evaluate("strmadmin.rs", "strmadmin.ctx", **values)
        return [h.rule_name for h in hits]
    row = {"emp": {"SALARY": 20}}
    assert code_of(lambda: evaluate(table_values=row)) == 1031
    assert evaluate(column_values={"emp": {"salary": 20}}) == ["STRMADMIN.R"]
    assert evaluate() == []                                     # nothing sent: nothing read
    site["hr"].cursor().execute("GRANT SELECT ON employees TO scott")
    assert evaluate(table_values=row) == ["STRMADMIN.R"]
    site["hr"].cursor().execute("REVOKE SELECT ON employees FROM scott")
    assert code_of(lambda: evaluate(table_values=row)) == 1031  # revoked: the next call
    site["hr"].cursor().execute("GRANT SELECT ON employees TO PUBLIC")
    assert evaluate(table_values=row) == ["STRMADMIN.R"]
    site["hr"].cursor().execute("REVOKE SELECT ON employees FROM PUBLIC")
    site.admin.cursor().execute("GRANT SELECT ANY TABLE TO scott")
    assert evaluate(table_values=row) == ["STRMADMIN.R"]
    assert site.rows("SELECT PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE = 'SCOTT' AND PRIVILEGE LIKE 'SELECT%'") \
        == [("SELECT ANY TABLE",)]


def test_select_on_a_table_is_granted_by_its_owner_or_with_the_grant_option(site):
    hr, scott, strm = (site[u].cursor() for u in ("hr", "scott", "strmadmin"))
    assert code_of(lambda: scott.execute("GRANT SELECT ON hr.employees TO strmadmin")) == 1031
    assert code_of(lambda: hr.execute("GRANT SELECT ON employees TO hr")) == 1749
    assert code_of(lambda: hr.execute("GRANT SELECT ON employees TO nobody")) == 1917
    assert code_of(lambda: hr.execute("REVOKE SELECT ON employees FROM scott")) == 1927   # not granted
    assert code_of(lambda: hr.execute("GRANT SELECT ON employees TO scott WITH ADMIN OPTION")) == 993
    assert code_of(lambda: scott.execute("GRANT SELECT ON hr.employees, CREATE SESSION TO strmadmin")) == 1031
    assert site.rows("SELECT COUNT(*) FROM DBA_TAB_PRIVS WHERE TYPE = 'TABLE'") == [(0,)]
    hr.execute("GRANT SELECT ON employees TO scott WITH GRANT OPTION")
    scott.execute("GRANT SELECT ON hr.employees TO strmadmin")
    assert code_of(lambda: strm.execute("GRANT SELECT ON hr.employees TO hr")) == 1749
    assert site.rows("SELECT GRANTEE, OWNER, TABLE_NAME, GRANTOR, PRIVILEGE, GRANTABLE, TYPE FROM DBA_TAB_PRIVS "
                     "WHERE TYPE = 'TABLE' ORDER BY GRANTEE") == [
        ("SCOTT", "HR", "EMPLOYEES", "HR", "SELECT", "YES", "TABLE"),
        ("STRMADMIN", "HR", "EMPLOYEES", "SCOTT", "SELECT", "NO", "TABLE")]
    assert code_of(lambda: strm.execute("REVOKE SELECT ON hr.employees FROM scott")) == 1927   # not its grant
    hr.execute("REVOKE SELECT ON employees FROM scott")       # takes STRMADMIN's, granted on, with it
    assert site.rows("SELECT COUNT(*) FROM DBA_TAB_PRIVS WHERE TYPE = 'TABLE'") == [(0,)]
    cur = site["scott"].cursor()
    cur.execute("SELECT TABLE_NAME FROM USER_TAB_PRIVS")
    assert cur.fetchall() == []


def test_select_granted_to_public_with_the_grant_option_is_granted_on_by_anyone(site):
    """As a queue or rule object privilege to PUBLIC: WITH GRANT OPTION, every user may
    grant it on; without, nobody (SELECT ANY TABLE gives no grant option either)."""
    hr, scott = site["hr"].cursor(), site["scott"].cursor()
    hr.execute("GRANT SELECT ON employees TO PUBLIC")
    site.admin.cursor().execute("GRANT SELECT ANY TABLE TO scott")
    assert code_of(lambda: scott.execute("GRANT SELECT ON hr.employees TO strmadmin")) == 1031
    hr.execute("GRANT SELECT ON employees TO PUBLIC WITH GRANT OPTION")
    scott.execute("GRANT SELECT ON hr.employees TO strmadmin")
    assert site.rows("SELECT GRANTEE, GRANTOR, GRANTABLE FROM DBA_TAB_PRIVS WHERE TYPE = 'TABLE' "
                     "ORDER BY GRANTEE") == [("PUBLIC", "HR", "YES"), ("STRMADMIN", "SCOTT", "NO")]


def test_the_tables_of_the_aliases_show_in_dba_evaluation_context_tables(site):
    """DBA_ / ALL_ / USER_EVALUATION_CONTEXT_TABLES (Oracle Database Reference): the tables
    whose SELECT the users of a context need."""
    adm = site.adm
    adm.create_evaluation_context("hr.ctx", table_aliases=[*EMP, TableAlias("dept", "departments")])
    adm.create_evaluation_context("hr.bare", variable_types=[VariableType("m", "NUMBER")])
    assert site.rows("SELECT EVALUATION_CONTEXT_OWNER, EVALUATION_CONTEXT_NAME, TABLE_ALIAS, TABLE_NAME "
                     "FROM DBA_EVALUATION_CONTEXT_TABLES ORDER BY TABLE_ALIAS") == [
        ("HR", "CTX", "DEPT", "HR.DEPARTMENTS"), ("HR", "CTX", "EMP", "HR.EMPLOYEES")]
    assert site.rows("SELECT COUNT(*) FROM ALL_EVALUATION_CONTEXT_TABLES") == [(2,)]
    cur = site["hr"].cursor()
    cur.execute("SELECT EVALUATION_CONTEXT_NAME, TABLE_ALIAS FROM USER_EVALUATION_CONTEXT_TABLES ORDER BY 2")
    assert cur.fetchall() == [("CTX", "DEPT"), ("CTX", "EMP")]
    adm.alter_evaluation_context("hr.ctx", remove_table_aliases=True)
    assert site.rows("SELECT COUNT(*) FROM DBA_EVALUATION_CONTEXT_TABLES") == [(0,)]
