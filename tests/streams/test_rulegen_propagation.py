"""ADD_*_PROPAGATION_RULES: the propagation created as Oracle creates it (or extended), its
rule sets, and "Row Migration During Propagation" (seed 000, figure 6-3) when it runs."""

from __future__ import annotations

import re

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.rules.adm import RuleAdm
from sluice.streams import RowLCR
from sluice.streams.propagation.runner import PropagationRunner
from tests.conftest import pg_create_shared
from tests.streams.propkit import Sites, drain
from tests.streams.test_rulegen_seed import rows


@pytest.fixture
def site(dsn, tmp_path):
    sites = Sites(dsn, tmp_path)
    a = sites.open("dbs1")
    a.streams_adm.set_up_queue(queue_table="src_qt", queue_name="src")
    a.streams_adm.set_up_queue(queue_table="dst_qt", queue_name="dst")
    a.aqadm.add_subscriber("dst", sluice.Agent("APPLY"))
    if dsn.startswith("sqlite"):
        import sqlite3
        raw = sqlite3.connect(sites.dsn_of("dbs1").removeprefix("sqlite:///"))
        raw.execute("CREATE TABLE employees (employee_id NUMBER, department_id NUMBER)")
        raw.commit()
        raw.close()
    else:
        pg_create_shared("CREATE SCHEMA IF NOT EXISTS hr",
                         "CREATE TABLE IF NOT EXISTS hr.employees (employee_id numeric, department_id numeric)")
    yield a
    sites.close()


def lcr(name, command="INSERT", old=None, new=None, owner="HR"):
    return RowLCR.construct(source_database_name="dbs1", command_type=command, object_owner=owner,
                            object_name=name, old_values=old, new_values=new)


def test_propagation_rules_and_row_migration(site):
    a = site
    adm = a.streams_adm
    adm.add_subset_propagation_rules("hr.employees", "department_id = 50", "p", "src", "dst")
    dml, ddl = adm.add_table_propagation_rules("hr.secret", "p", "src", "dst", include_tagged_lcr=True,
                                               inclusion_rule=False)
    adm.add_global_propagation_rules("p", "src", "dst", include_dml=False, include_ddl=True)
    prop, = rows(a, "SELECT propagation_name, rule_set_name, negative_rule_set_name FROM dba_propagation")
    assert prop["PROPAGATION_NAME"] == "P"
    assert re.fullmatch(r"RULESET\$_\d+", prop["RULE_SET_NAME"])
    assert re.fullmatch(r"RULESET\$_\d+", prop["NEGATIVE_RULE_SET_NAME"])
    kinds = sorted((r["RULE_SET_TYPE"], r["STREAMS_RULE_TYPE"], r["RULE_TYPE"], r["SUBSETTING_OPERATION"] or "")
                   for r in rows(a, "SELECT * FROM dba_streams_rules WHERE streams_type = 'PROPAGATION'"))
    assert kinds == [("NEGATIVE", "TABLE", "DML", ""), ("POSITIVE", "GLOBAL", "DDL", ""),
                     ("POSITIVE", "TABLE", "DML", "DELETE"), ("POSITIVE", "TABLE", "DML", "INSERT"),
                     ("POSITIVE", "TABLE", "DML", "UPDATE")]
    q = a.queue("SRC", "SYS.ANYDATA")
    for m in (lcr("EMPLOYEES", "UPDATE", old={"employee_id": 1, "department_id": 50},
                  new={"department_id": 80}),                               # out: a DELETE
              lcr("EMPLOYEES", "UPDATE", old={"employee_id": 2, "department_id": 80},
                  new={"department_id": 50}),                               # in: an INSERT
              lcr("EMPLOYEES", "INSERT", new={"employee_id": 3, "department_id": 10}),   # outside
              lcr("SECRET", new={"x": 1})):
        q.enqone(a.msgproperties(payload=m))
    a.commit()
    PropagationRunner(a).run_once(force=True)
    got = [(m.payload.get_command_type(), {u.column_name: u.data.value for u in m.payload.get_values("NEW")},
            {u.column_name: u.data.value for u in m.payload.get_values("OLD")})
           for m in drain(a, "DST", "APPLY", "SYS.ANYDATA")]
    assert got == [("DELETE", {}, {"EMPLOYEE_ID": 1, "DEPARTMENT_ID": 50}),
                   ("INSERT", {"EMPLOYEE_ID": 2, "DEPARTMENT_ID": 50}, {})]


def test_message_propagation_rule(site):
    a = site
    a.cursor().execute("CREATE TYPE msg_t AS OBJECT (region VARCHAR2(20))")
    name = a.streams_adm.add_message_propagation_rule("msg_t", ":msg.region = 'EUROPE'", "pm", "src", "dst")
    r, = rows(a, "SELECT streams_type, streams_name, message_type_name, rule_name FROM dba_streams_message_rules")
    assert (r["STREAMS_TYPE"], r["STREAMS_NAME"], r["MESSAGE_TYPE_NAME"]) == ("PROPAGATION", "PM", "MSG_T")
    assert name == f"SLUICE.{r['RULE_NAME']}"


def test_a_failed_call_drops_the_propagation_it_created(site, monkeypatch):
    def broken(self, *a, **k):
        raise DatabaseError("ORA-00600: injected", 600)
    monkeypatch.setattr(RuleAdm, "add_rule", broken)
    with pytest.raises(DatabaseError, match="injected"):
        site.streams_adm.add_schema_propagation_rules("hr", "p", "src", "dst")
    assert rows(site, "SELECT * FROM dba_propagation") == [] and rows(site, "SELECT * FROM dba_rules") == []
    with pytest.raises(DatabaseError, match="ORA-26667"):
        site.streams_adm.add_global_propagation_rules(None, "src", "dst")
