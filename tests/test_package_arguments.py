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


def test_a_wrong_argument_to_the_session_api_is_a_sluice_error(dsn):
    """The same for the objects python-oracledb code handles: option and message property
    setters, connection.queue(), enqmany/deqmany, cursor.execute's statement and binds (sqlite3's
    ProgrammingError escaped for a missing bind, PostgreSQL said ORA-00900 'syntax error at
    ":"'; deqmany(2**70) reached SQLite as a datatype mismatch), LCR constructors' row lists."""
    conn = sluice.connect(dsn)
    try:
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name="Q", queue_table="QT")
        conn.aqadm.start_queue(queue_name="Q")
        q = conn.queue("Q")
        escaped = {}

        def probe(label, fn):
            try:
                fn()
            except sluice.Error:
                pass
            except Exception as e:   # noqa: BLE001 (what the test looks for)
                escaped.setdefault(label, f"{type(e).__module__}.{type(e).__name__}: {e}")
            finally:
                conn.rollback()

        wrong = WRONG + [2**70]
        for obj, label in ((q.enqoptions, "enqoptions"), (q.deqoptions, "deqoptions"),
                           (conn.msgproperties(payload=b"x"), "msgproperties")):
            for attr, prop in vars(type(obj)).items():
                if isinstance(prop, property) and prop.fset is not None:
                    for value in wrong:
                        probe((label, attr), lambda: setattr(obj, attr, value))
        q = conn.queue("Q")
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        select = "SELECT NAME FROM USER_QUEUES WHERE NAME = :1"
        for value in wrong:
            probe("connection.queue", lambda: conn.queue(value))
            probe("enqone", lambda: q.enqone(value))
            probe("enqmany", lambda: q.enqmany(value))
            probe("enqmany's messages", lambda: q.enqmany([value]))
            probe("deqmany", lambda: q.deqmany(value))
            probe("cursor.execute", lambda: conn.cursor().execute(value))
            probe("cursor.execute's binds", lambda: conn.cursor().execute(select, value))
            probe("cursor.execute's bind", lambda: conn.cursor().execute(select, [value]))
            probe("payload", lambda: q.enqone(conn.msgproperties(payload=value)))
            probe("recipients", lambda: conn.msgproperties(payload=b"x", recipients=value))
            probe("Agent", lambda: sluice.Agent(value))
            for values in ("old_values", "new_values"):
                probe(("RowLCR.construct", values), lambda: sluice.RowLCR.construct(
                    source_database_name="D", command_type="UPDATE", object_owner="A", object_name="B",
                    **{values: value}))
                probe(("RowLCR.construct's item", values), lambda: sluice.RowLCR.construct(
                    source_database_name="D", command_type="UPDATE", object_owner="A", object_name="B",
                    **{values: [value]}))
        assert escaped == {}, "\n".join(f"{k}: {v}" for k, v in sorted(escaped.items(), key=str))
        for statement, binds, code in ((select, None, "ORA-01008"), (select, {"other": 1}, "DPY-4008"),
                                       (select, 5, "DPY-2003")):
            with pytest.raises(sluice.Error) as e:
                conn.cursor().execute(statement, binds)
            assert e.value.full_code == code, (statement, binds)
        # a literal ':1' or '%' is no bind, and the session still works
        cur = conn.cursor()
        cur.execute("SELECT ':1' || '%' FROM DUAL")
        assert cur.fetchall() == [(":1%",)]
        q.enqone(conn.msgproperties(payload=b"ok"))
        conn.commit()
        assert [m.payload for m in q.deqmany(2**32 - 1)] == [b"ok"]
    finally:
        conn.close()
