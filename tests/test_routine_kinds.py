"""A procedure is no function and a function no procedure, as Oracle's compiler says:
``cursor.callfunc`` on a procedure is ORA-06550 with PLS-00222, ``cursor.callproc`` on a
function ORA-06550 with PLS-00221, and so is the same call written in a block.  Nothing
runs: the block is refused before it starts.  Both backends."""

import pytest

import sluice
from tests.conftest import make_queue


def _error(fn) -> str:
    with pytest.raises(sluice.DatabaseError) as e:
        fn()
    return str(e.value)


def test_callfunc_on_a_procedure_is_pls_00222(conn):
    make_queue(conn, start=False)
    cur = conn.cursor()
    text = _error(lambda: cur.callfunc("DBMS_AQADM.START_QUEUE", int, ["Q"]))
    assert text.startswith("ORA-06550: ")
    assert "PLS-00222: no function with name 'START_QUEUE' exists in this scope" in text
    with pytest.raises(sluice.DatabaseError, match="ORA-25207"):    # the procedure did not run
        conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))


def test_callproc_on_a_function_is_pls_00221(conn):
    cur = conn.cursor()
    text = _error(lambda: cur.callproc("UTL_RAW.LENGTH", [b"abc"]))
    assert text.startswith("ORA-06550: ")
    assert "PLS-00221: 'LENGTH' is not a procedure or is undefined" in text


def test_the_same_calls_in_a_block(conn):
    make_queue(conn)
    cur = conn.cursor()
    text = _error(lambda: cur.execute("DECLARE n NUMBER; BEGIN n := DBMS_AQADM.STOP_QUEUE('Q'); END;"))
    assert "PLS-00222: no function with name 'STOP_QUEUE' exists in this scope" in text
    text = _error(lambda: cur.execute("BEGIN DBMS_STREAMS.GET_TAG(); END;"))
    assert "PLS-00221: 'GET_TAG' is not a procedure or is undefined" in text


def test_the_right_kinds_still_run(conn):
    cur = conn.cursor()
    assert cur.callfunc("UTL_RAW.LENGTH", int, [b"abc"]) == 3
    cur.callproc("DBMS_OUTPUT.PUT_LINE", ["x"])
    assert cur.callproc("DBMS_AQADM.CREATE_QUEUE_TABLE", ["QT2", "RAW"]) == ["QT2", "RAW"]
