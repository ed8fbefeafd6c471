"""The driver's registry of functions travelling to Spark executors, and the rule actions
of the apply sink's transactions (below Spark: no session)."""

from __future__ import annotations

import pytest

import sluice
from sluice import RowLCR
from sluice.errors import DatabaseError
from sluice.pipeline.sinks import BadInput, install_shipped, ship_functions, source_transactions
from sluice.routines import registered_function


def double_name(lcr):
    lcr.set_value("NEW", "NAME", lcr.get_value("NEW", "NAME").value * 2)
    return lcr


def test_shipped_functions_are_registered_and_an_unloadable_one_says_why(tmp_path):
    suffix = str(id(tmp_path))   # names no other test registers
    sluice.register_function(f"ship.by_ref{suffix}", double_name)
    sluice.register_function(f"ship.by_value{suffix}", lambda lcr: None)
    shipped = ship_functions()
    assert {f"SHIP.BY_REF{suffix}", f"SHIP.BY_VALUE{suffix}"} <= set(shipped)
    # as an executor whose Python cannot import the function's module sees it
    import pickle
    from pyspark import cloudpickle
    broken = cloudpickle.dumps(double_name).replace(b"test_shipping", b"test_shippinX")
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(broken)
    install_shipped({f"SHIP.BROKEN{suffix}": broken, f"SHIP.BY_VALUE{suffix}": shipped[f"SHIP.BY_VALUE{suffix}"]})
    assert registered_function(f"ship.by_value{suffix}", "SLUICE")(object()) is None
    with pytest.raises(DatabaseError, match=r"ORA-00904.*not loadable on this executor.*ModuleNotFoundError"):
        registered_function(f"ship.broken{suffix}", "SLUICE")(None)


class _Row(dict):
    """A Spark Row as the sink's partition functions read it."""

    @property
    def __fields__(self):
        return list(self)


def _row(t: int, scn: int, rule: str | None, error: str | None = None) -> _Row:
    return _Row(error=error, user_data="{}" if error else None, msgid=bytes([t, scn % 256]), lcr_kind="ROW",
                commit_scn=t * 10 + 9, source_database_name="DBS1.NET", transaction_id=f"{t}.0.1",
                enq_tid=None, rule=rule, scn=scn)


def test_source_transactions_take_the_rule_actions_and_fail_a_transaction_whose_action_fails(monkeypatch):
    import sluice.pipeline.sinks as sinks
    monkeypatch.setattr(sinks, "payload_of", lambda row: RowLCR("DBS1.NET", "INSERT", "T", "X", None,
                                                                 row["transaction_id"], row["scn"], None, {"ID": 1}))
    from sluice.errors import ora
    from sluice.streams.apply import Item

    def actions(rule, message, enqueue):
        if rule == "R_GONE":
            raise ora(904, "X.GONE")
        if rule == "R_DROP":
            return None
        if rule == "R_MOVE":
            enqueue("Q", message)
            return Item(message, False)
        return Item(message)
    rows = [_row(1, 10, "R_MOVE"), _row(1, 11, None), _row(2, 20, "R_DROP"), _row(3, 30, "R_OK"),
            _row(3, 31, "R_GONE"), _row(3, 32, "R_OK"), _row(4, 40, None, error="bad")]
    out = source_transactions(rows, actions)
    assert [(t.commit_scn, len(t.items)) for t, _, _ in out] == [(19, 2), (29, 0), (39, 3), (None, 1)]
    (t1, f1, e1), (_, f2, _), (t3, f3, e3), (_, f4, _) = out
    assert f1 is None and [q for q, _ in e1] == ["Q"] and [i.execute for i in t1.items] == [False, True]
    assert f2 is None                                    # a captured transaction stays, empty
    assert f3.error.code == 904 and f3.index == 1 and e3 == []
    assert isinstance(f4, BadInput) and f4.error.code == 25215
