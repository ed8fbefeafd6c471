"""Declarative transformations compiled to Columns (:func:`sluice.pipeline.transform.declarative`):
the k-th transformation of every rule is one projection (a row has one TRUE rule, so the
rules' transformations never meet on a row), and each row comes out as the Python path
(:func:`sluice.streams.transform.transform`) makes its LCR."""

from __future__ import annotations

from sluice import RowLCR
from sluice.pipeline import transform as compiled
from sluice.rules.compile.typed.lcrschema import lcr_row
from sluice.rules.engine.ruleset import STREAMS_CONTEXT
from sluice.streams.transform import transform
from sluice.streams.transform.adm import declarative_transformations
from tests.pipeline.test_stagedapply import _frame
from tests.pipeline.test_setapply import _rows
from tests.streams.test_declarative import declare_all

SIDES = ("old_values", "new_values", "old_types", "new_types")


def _projections(df) -> int:
    return sum(line.lstrip(" :+-").startswith("Project [")
               for line in df._jdf.queryExecution().analyzed().toString().splitlines())


def test_each_rules_transformations_in_order_one_projection_per_step(conn, spark):
    declare_all(conn)   # R1: six transformations of HR's rows, in order
    conn.rule_adm.create_rule("R2", ":dml.get_object_owner() = 'OE'", STREAMS_CONTEXT)
    conn.streams_adm.rename_column("r2", "oe.emp", "name", "title")
    conn.streams_adm.add_column("r2", "oe.emp", "origin", "DBS2")
    conn.rule_adm.create_rule("R3", ":dml.get_object_owner() = 'OE'", STREAMS_CONTEXT)
    conn.streams_adm.delete_column("r3", "oe.emp", "name")
    by_rule = declarative_transformations(conn.context.store)
    lcrs = [("SLUICE.R1", RowLCR("DBS1.NET", "UPDATE", "HR", "REGIONS", None, "1.1", 1,
                                 {"REGION_ID": 1, "REGION_NAME": "Europe", "NOTE": "n", "SECRET": "s"},
                                 {"REGION_NAME": "Asia"})),
            ("SLUICE.R1", RowLCR("DBS1.NET", "INSERT", "HR", "JOBS", None, "1.2", 2, None, {"ID": 1})),
            ("SLUICE.R2", RowLCR("DBS1.NET", "UPDATE", "OE", "EMP", None, "1.3", 3,
                                 {"ID": 1, "NAME": "a"}, {"NAME": "b"})),
            ("SLUICE.R3", RowLCR("DBS1.NET", "DELETE", "OE", "EMP", None, "1.4", 4, {"ID": 1, "NAME": "a"}, None)),
            ("SLUICE.R2", RowLCR("DBS1.NET", "INSERT", "OE", "DEPT", None, "1.5", 5, None, {"NAME": "x"})),
            (None, RowLCR("DBS1.NET", "INSERT", "HR", "REGIONS", None, "1.6", 6, None, {"NOTE": "kept"}))]
    rows = [r.asDict() | {"rule": rule} for r, (rule, _) in zip(_rows([[m] for _, m in lcrs]), lcrs)]
    frame = _frame(spark, rows)
    out = compiled.declarative(frame, by_rule)
    assert _projections(out) - _projections(frame) == max(len(ts) for ts in by_rule.values())
    got = {r["seq"]: r for r in out.collect()}
    for seq, (rule, lcr) in enumerate(lcrs, 1):
        want = lcr_row(transform(lcr, by_rule.get(rule, ())))
        row = got[seq]
        assert (row["object_owner"], row["object_name"]) == (want["object_owner"], want["object_name"])
        for side in SIDES:
            assert dict(row[side] or {}) == dict(want[side] or {}), (seq, side)


def _emp(i: int) -> RowLCR:
    return RowLCR.construct(source_database_name="DBS1.NET", command_type="INSERT", object_owner="HR",
                            object_name="EMP", transaction_id=f"{i}.0.1", scn=i, new_values={"ID": i})


def odd_ids_fail(lcr):
    if lcr.get_value("NEW", "ID").value % 2:
        raise ValueError("odd id")
    return lcr


def test_a_custom_transformation_that_fails_or_returns_no_lcr_is_ora_25229():
    """`sluice pipeline run --transform R=mod:fn` with a function that raises on some rows
    ended the run with ORA-00600 and Spark's whole stack and plan; one that returned no LCR
    (a dict) was written to the warehouse as an empty DDL LCR.  Both are now ORA-25229
    naming the rule, the function and the cause, as a propagation's transformation error is
    (seed 003 "Message Transformation"; sluice.streams.propagation.job); None still discards
    the LCR and a sluice error stays the function's own."""
    import pytest

    import sluice

    assert compiled.transformed(odd_ids_fail, "SLUICE.R_HR", _emp(2)).get_value("NEW", "ID").value == 2
    assert compiled.transformed(lambda lcr: None, "SLUICE.R_HR", _emp(1)) is None
    with pytest.raises(sluice.DatabaseError) as e:
        compiled.transformed(odd_ids_fail, "SLUICE.R_HR", _emp(1))
    assert str(e.value) == ("ORA-25229: error on transformation of message by SLUICE.R_HR: "
                            "tests.pipeline.test_transform:odd_ids_fail failed: ValueError: odd id")
    for wrong, name in (({"ID": 1}, "dict"), ("text", "str"), (lcr_row(_emp(1)), "dict")):
        with pytest.raises(sluice.DatabaseError) as e:
            compiled.transformed(lambda lcr, w=wrong: w, "HR.R", _emp(1))
        assert e.value.code == 25229 and e.value.message.endswith(f"returned a {name}, not a row or DDL LCR")

    def own(lcr):
        raise sluice.DatabaseError("ORA-01403: no data found", 1403)
    with pytest.raises(sluice.DatabaseError) as e:
        compiled.transformed(own, "HR.R", _emp(1))
    assert e.value.code == 1403
