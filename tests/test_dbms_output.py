"""DBMS_OUTPUT read back by a python-oracledb program, on both stores: python-oracledb's
``dbms_output`` sample (ENABLE, blocks that PUT_LINE, then GET_LINE until status 1, or
GET_LINES in chunks through an ``arrayvar``) and Oracle's buffer rules: off until ENABLE,
DISABLE empties it, ORU-10027 past ENABLE's size, unread lines dropped by the next PUT,
an empty line NULL.  ``cursor.output`` (every line of the statement) is unchanged."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import raised_code

PUT_FIVE = "begin for i in 1..5 loop dbms_output.put_line('line ' || i); end loop; end;"


def _get_line(cur):
    line, status = cur.var(str), cur.var(int)
    cur.callproc("dbms_output.get_line", (line, status))
    return line.getvalue(), status.getvalue()


def _all_lines(cur):
    lines = []
    while True:
        line, status = _get_line(cur)
        if status != 0:
            return lines
        lines.append(line)


def test_get_line_reads_what_blocks_put_after_enable(conn):
    cur = conn.cursor()
    cur.callproc("dbms_output.enable")
    cur.execute(PUT_FIVE)
    cur.execute("begin dbms_output.put('a'); dbms_output.put('b'); dbms_output.new_line; end;")
    assert _all_lines(cur) == ["line 1", "line 2", "line 3", "line 4", "line 5", "ab"]
    assert _get_line(cur) == (None, 1)


def test_the_buffer_is_off_until_enable(conn):
    cur = conn.cursor()
    cur.execute(PUT_FIVE)
    assert cur.output == [f"line {i}" for i in range(1, 6)]      # the statement's own lines
    assert _get_line(cur) == (None, 1)


def test_get_lines_in_chunks_through_an_arrayvar(conn):
    """python-oracledb's samples/dbms_output.py, verbatim but for the chunk size."""
    cur = conn.cursor()
    cur.callproc("dbms_output.enable")
    cur.execute("""
        begin
            dbms_output.put_line('This is the python-oracledb manual');
            dbms_output.put_line('');
            dbms_output.put_line('Demonstrating use of DBMS_OUTPUT');
        end;""")
    cur.execute(PUT_FIVE)
    chunk_size = 3
    lines_var = cur.arrayvar(str, chunk_size)
    num_lines_var = cur.var(int)
    num_lines_var.setvalue(0, chunk_size)
    got = []
    while True:
        cur.callproc("dbms_output.get_lines", (lines_var, num_lines_var))
        num_lines = num_lines_var.getvalue()
        got.extend(lines_var.getvalue()[:num_lines])
        if num_lines < chunk_size:
            break
    assert got == ["This is the python-oracledb manual", None, "Demonstrating use of DBMS_OUTPUT",
                   "line 1", "line 2", "line 3", "line 4", "line 5"]


def test_disable_empties_the_buffer_and_stops_the_statement_lines(conn):
    cur = conn.cursor()
    cur.callproc("dbms_output.enable")
    cur.execute(PUT_FIVE)
    cur.callproc("dbms_output.disable")
    cur.execute(PUT_FIVE)
    assert cur.output == [] and _get_line(cur) == (None, 1)
    cur.callproc("dbms_output.enable")
    cur.execute("begin dbms_output.put_line('again'); end;")
    assert _all_lines(cur) == ["again"]


def test_lines_a_get_left_unread_are_dropped_by_the_next_put(conn):
    cur = conn.cursor()
    cur.callproc("dbms_output.enable")
    cur.execute(PUT_FIVE)
    assert _get_line(cur) == ("line 1", 0)
    cur.execute("begin dbms_output.put_line('next message'); end;")
    assert _all_lines(cur) == ["next message"]


def test_a_full_buffer_is_oru_10027_as_ora_20000(conn):
    cur = conn.cursor()
    cur.callproc("dbms_output.enable", [2000])
    code = raised_code(lambda: cur.execute(
        "begin for i in 1..100 loop dbms_output.put_line(rpad('x', 100, 'x')); end loop; end;"))
    assert code == "ORA-20000"
    with pytest.raises(sluice.DatabaseError, match="ORU-10027: buffer overflow, limit of 2000 bytes"):
        cur.execute("begin dbms_output.put_line(rpad('x', 2001, 'x')); end;")


def test_each_connection_has_its_own_buffer(conn, dsn):
    other = sluice.connect(dsn)
    try:
        cur, theirs = conn.cursor(), other.cursor()
        cur.callproc("dbms_output.enable")
        theirs.callproc("dbms_output.enable")
        theirs.execute("begin dbms_output.put_line('theirs'); end;")
        cur.execute("begin dbms_output.put_line('mine'); end;")
        assert _all_lines(cur) == ["mine"] and _all_lines(theirs) == ["theirs"]
    finally:
        other.close()
