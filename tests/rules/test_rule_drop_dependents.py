"""What DROP_RULE_SET(delete_rules => TRUE) and DROP_EVALUATION_CONTEXT(force => TRUE) do to
other owners' objects needs the privileges of doing it to them directly (DBMS_RULE_ADM's usage
notes: DROP_RULE "the owner of the rule, or DROP_ANY_RULE"; a rule or rule set is altered —
its evaluation context removed — by its owner, with ALTER_ON_* or ALTER_ANY_*).

delete_rules drops the rule set's rules that are in no other rule set: each one another user
owns needs DROP ANY RULE.  force takes the context from the rules and rule sets (memberships
included) using it: each one another user owns needs ALTER on it.  Everything is checked
before anything is dropped: refused, the call is ORA-01031 and changes nothing.
"""

from __future__ import annotations

import pytest

from sluice.errors import InterfaceError

from .test_rule_privileges import _objects, _rule_catalog, code_of, site  # noqa: F401  (the fixture)


def _hr_may_use_strmadmins_objects(site) -> None:
    adm = site.adm
    for p in ("CREATE_RULE_OBJ", "CREATE_RULE_SET_OBJ"):
        adm.grant_system_privilege(getattr(adm, p), "hr")
    adm.grant_object_privilege(adm.EXECUTE_ON_EVALUATION_CONTEXT, "strmadmin.ctx", "hr")
    for rule in ("strmadmin.r", "strmadmin.r2"):
        adm.grant_object_privilege(adm.EXECUTE_ON_RULE, rule, "hr")


def _rules(site) -> list[tuple]:
    return sorted(site.rows("SELECT RULE_OWNER, RULE_NAME FROM DBA_RULES"))


def test_delete_rules_needs_drop_any_rule_for_the_other_owners_rules_it_drops(site):
    _objects(site)                      # STRMADMIN.R is in STRMADMIN.RS; R2 in no rule set
    _hr_may_use_strmadmins_objects(site)
    hr = site["hr"]
    hr.rule_adm.create_rule("own", ":m = 1", "strmadmin.ctx")
    hr.rule_adm.create_rule_set("rs")
    for rule in ("own", "strmadmin.r", "strmadmin.r2"):
        hr.rule_adm.add_rule(rule, "rs")
    before = _rule_catalog(site)
    # R2 would go (in HR.RS only): STRMADMIN's, and HR may not drop it
    assert code_of(lambda: hr.rule_adm.drop_rule_set("rs", delete_rules=True)) == 1031
    assert _rule_catalog(site) == before
    with pytest.raises(InterfaceError):         # a bad flag, refused before anything goes too
        hr.rule_adm.drop_rule_set("rs", delete_rules="yes")
    assert _rule_catalog(site) == before
    site.adm.grant_system_privilege(site.adm.DROP_ANY_RULE, "hr")
    hr.rule_adm.drop_rule_set("rs", delete_rules=True)
    # HR.OWN and STRMADMIN.R2 dropped; STRMADMIN.R stays in STRMADMIN.RS
    assert _rules(site) == [("STRMADMIN", "R")]
    assert site.rows("SELECT RULE_SET_OWNER, RULE_SET_NAME FROM DBA_RULE_SETS") == [("STRMADMIN", "RS")]


def test_delete_rules_keeps_the_rules_of_other_rule_sets_and_needs_nothing_for_them(site):
    _objects(site)
    _hr_may_use_strmadmins_objects(site)
    hr = site["hr"]
    hr.rule_adm.create_rule_set("rs")
    hr.rule_adm.add_rule("strmadmin.r", "rs")       # also in STRMADMIN.RS: not dropped
    hr.rule_adm.drop_rule_set("rs", delete_rules=True)
    assert _rules(site) == [("STRMADMIN", "R"), ("STRMADMIN", "R2")]
    assert site.rows("SELECT RULE_SET_OWNER FROM DBA_RULE_SETS") == [("STRMADMIN",)]


def test_force_needs_alter_on_the_other_owners_rules_and_rule_sets_using_the_context(site):
    _objects(site)
    _hr_may_use_strmadmins_objects(site)
    hr, strm = site["hr"], site["strmadmin"]
    hr.rule_adm.create_rule("own", ":m = 1", "strmadmin.ctx")            # a rule using it
    hr.rule_adm.create_rule_set("rs_ctx", "strmadmin.ctx")               # a rule set using it
    hr.rule_adm.create_rule("own2", ":m = 2")
    hr.rule_adm.create_rule_set("rs")
    hr.rule_adm.add_rule("own2", "rs", evaluation_context="strmadmin.ctx")   # a membership using it
    drop = lambda: strm.rule_adm.drop_evaluation_context("ctx", force=True)  # noqa: E731
    # its owner may drop it, but not take it from HR's objects without ALTER on each
    for privilege, on in (("ALTER_ON_RULE", "own"), ("ALTER_ON_RULE_SET", "rs"), ("ALTER_ON_RULE_SET", "rs_ctx")):
        before = _rule_catalog(site)
        assert code_of(drop) == 1031, privilege
        assert _rule_catalog(site) == before
        hr.rule_adm.grant_object_privilege(getattr(site.adm, privilege), on, "strmadmin")
    drop()
    assert site.rows("SELECT COUNT(*) FROM DBA_EVALUATION_CONTEXTS") == [(0,)]
    assert site.rows("SELECT RULE_EVALUATION_CONTEXT_NAME FROM DBA_RULES WHERE RULE_OWNER = 'HR'") == [
        (None,), (None,)]
    assert site.rows("SELECT RULE_SET_EVAL_CONTEXT_NAME FROM DBA_RULE_SETS WHERE RULE_SET_OWNER = 'HR'") == [
        (None,), (None,)]


def test_force_with_alter_any_rule_and_rule_set(site):
    _objects(site)
    _hr_may_use_strmadmins_objects(site)
    hr, strm = site["hr"], site["strmadmin"]
    hr.rule_adm.create_rule("own", ":m = 1", "strmadmin.ctx")
    hr.rule_adm.create_rule_set("rs_ctx", "strmadmin.ctx")
    adm = site.adm
    adm.grant_system_privilege(adm.ALTER_ANY_RULE, "strmadmin")
    assert code_of(lambda: strm.rule_adm.drop_evaluation_context("ctx", force=True)) == 1031
    adm.grant_system_privilege(adm.ALTER_ANY_RULE_SET, "strmadmin")
    strm.rule_adm.drop_evaluation_context("ctx", force=True)
    assert site.rows("SELECT COUNT(*) FROM DBA_EVALUATION_CONTEXTS") == [(0,)]
