"""Every package procedure (conn.aqadm, conn.aq, conn.rule_adm, conn.streams_adm, …) given
a value of the wrong kind for any one parameter fails with a sluice.Error, never with
Python's own TypeError / AttributeError or a driver's exception (sqlite3 refused to bind
a list as ALTER_QUEUE's comment after the catalog's copy had been changed; an integer
column_list, destination or reg_list count, a string for DBMS_AQ's option records)."""

from __future__ import annotations

import inspect

import pytest

import sluice

PACKAGES = ["aqadm", "aq", "rule_adm", "rule", "streams_adm", "capture_adm", "propagation_adm",
            "apply_adm", "transform"]
WRONG = [None, 123, 1.5, b"x", ["a"], {"a": 1}, "", " ", "a" * 200, "x'y", 'x"y', -1, True, object()]


def _calls(conn):
    """(package, procedure, parameter, keyword arguments) with one parameter wrong and the
    others' required values plain names ('Q' for queues, 'X' otherwise)."""
    for package in PACKAGES:
        p = getattr(conn, package)
        for name, fn in inspect.getmembers(p, callable):
            if name.startswith("_") or inspect.isclass(fn) or inspect.isbuiltin(fn):   # (clock = time.time)
                continue
            params = [x for x in inspect.signature(fn).parameters.values()
                      if x.kind in (x.POSITIONAL_OR_KEYWORD, x.KEYWORD_ONLY)]
            for wrong_one in params:
                for value in WRONG:
                    kwargs = {x.name: value if x is wrong_one else ("Q" if "queue" in x.name else "X")
                              for x in params if x.default is inspect.Parameter.empty or x is wrong_one}
                    yield package, name, wrong_one.name, fn, kwargs


def test_a_wrong_argument_is_a_sluice_error(dsn):
    conn = sluice.connect(dsn)
    try:
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW", multiple_consumers=True)
        conn.aqadm.create_queue(queue_name="Q", queue_table="QT")
        conn.aqadm.start_queue(queue_name="Q")
        escaped = {}
        n = 0
        for package, name, param, fn, kwargs in _calls(conn):
            n += 1
            try:
                fn(**kwargs)
            except sluice.Error:
                pass
            except Exception as e:   # noqa: BLE001 (what the test looks for)
                escaped.setdefault((package, name, param), f"{type(e).__module__}.{type(e).__name__}: {e}")
            finally:
                conn.rollback()
        assert n > 5000       # the packages are all there
        assert escaped == {}, "\n".join(f"{k}: {v}" for k, v in sorted(escaped.items()))
        # and the session still works (the calls with right values did what they do: the
        # queue may be stopped or gone by now)
        conn.aqadm.create_queue_table(queue_table="QT9", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name="Q9", queue_table="QT9")
        conn.aqadm.start_queue(queue_name="Q9")
        conn.queue("Q9").enqone(conn.msgproperties(payload=b"ok"))
        conn.commit()
        assert conn.queue("Q9").deqone().payload == b"ok"
    finally:
        conn.close()
