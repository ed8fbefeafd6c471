"""Declarative rule-based transformations (DBMS_STREAMS_ADM.RENAME_SCHEMA / RENAME_TABLE /
ADD_COLUMN / DELETE_COLUMN / RENAME_COLUMN / KEEP_COLUMNS): the procedures, their catalog
(DBA_STREAMS_TRANSFORMATIONS) and what they do to a row LCR (seed 000 "Information About
Declarative Rule-Based Transformations": internal modifications of a row LCR)."""

from __future__ import annotations

import pytest

import sluice
from sluice import DDLLCR, RowLCR
from sluice.rules.engine.ruleset import STREAMS_CONTEXT
from sluice.streams.transform import transform
from sluice.streams.transform.adm import declarative_transformations


def declare_all(conn) -> None:
    conn.rule_adm.create_rule("R1", ":dml.get_object_owner() = 'HR'", STREAMS_CONTEXT)
    adm = conn.streams_adm
    adm.keep_columns("r1", "hr.regions", "region_id, region_name, note, extra")
    adm.delete_column("r1", "hr.regions", "note")
    adm.rename_column("r1", "hr.regions", "region_name", "name")
    adm.add_column("r1", "hr.regions", "origin", "DBS1")
    adm.rename_table("r1", "hr.regions", "hr.areas")
    adm.rename_schema("r1", "hr", "hr2", step_number=1)   # a later step: after the table's rename


def test_procedures_fill_the_catalog_and_refuse_bad_input(conn):
    declare_all(conn)
    rows = conn.query("SELECT DECLARATIVE_TYPE, PRECEDENCE, STEP_NUMBER, TABLE_NAME FROM "
                      "DBA_STREAMS_TRANSFORMATIONS ORDER BY STEP_NUMBER, PRECEDENCE", None)[1]
    assert rows == [("KEEP COLUMNS", 1, 0, "REGIONS"), ("DELETE COLUMN", 2, 0, "REGIONS"),
                    ("RENAME COLUMN", 3, 0, "REGIONS"), ("ADD COLUMN", 4, 0, "REGIONS"),
                    ("RENAME TABLE", 5, 0, "REGIONS"), ("RENAME SCHEMA", 6, 1, None)]
    conn.streams_adm.add_column("r1", "hr.regions", "origin", "DBS1")        # the same again: still one
    assert len(declarative_transformations(conn.context.store)["SLUICE.R1"]) == 6
    conn.streams_adm.rename_schema("r1", "hr", "hr2", step_number=1, operation="REMOVE")
    assert len(declarative_transformations(conn.context.store)["SLUICE.R1"]) == 5
    for call, code in [(lambda: conn.streams_adm.rename_schema("nope", "a", "b"), "ORA-24147"),
                       (lambda: conn.streams_adm.delete_column("r1", "t", "c", value_type="X"), "ORA-06502"),
                       (lambda: conn.streams_adm.rename_schema("r1", "a", "b", operation="DROP"), "ORA-06502"),
                       (lambda: conn.streams_adm.rename_schema("r1", "a", "b", operation="REMOVE"), "ORA-01403")]:
        with pytest.raises(sluice.DatabaseError) as e:
            call()
        assert e.value.full_code == code
    assert len(declarative_transformations(conn.context.store)["SLUICE.R1"]) == 5


def test_a_row_lcr_transformed_in_order(conn):
    declare_all(conn)
    ts = declarative_transformations(conn.context.store)["SLUICE.R1"]
    upd = RowLCR("DBS1.NET", "UPDATE", "HR", "REGIONS", None, "1.1", 1,
                 {"REGION_ID": 1, "REGION_NAME": "Europe", "NOTE": "n", "SECRET": "s"}, {"REGION_NAME": "Asia"})
    transform(upd, ts)
    assert (upd.get_object_owner(), upd.get_object_name()) == ("HR2", "AREAS")
    assert {u.column_name: u.data.value for u in upd.get_values("OLD")} == {"REGION_ID": 1, "NAME": "Europe"}
    assert {u.column_name: u.data.value for u in upd.get_values("NEW", "N")} == {"NAME": "Asia", "ORIGIN": "DBS1"}
    ins = RowLCR("DBS1.NET", "INSERT", "HR", "JOBS", None, "1.1", 2, None, {"ID": 1})
    transform(ins, ts)   # another table: only the schema's rename
    assert (ins.get_object_owner(), ins.get_object_name(), [u.column_name for u in ins.get_values("NEW")]) == \
        ("HR2", "JOBS", ["ID"])
    ddl = DDLLCR("DBS1.NET", "CREATE TABLE", "HR", "REGIONS", "TABLE", "CREATE TABLE regions (x NUMBER)")
    assert transform(ddl, ts).get_object_owner() == "HR"   # row LCRs only
