"""Text the database character set (AL32UTF8) cannot hold -- a lone surrogate anywhere, a
NUL character on PostgreSQL -- is ORA-06502 "character string conversion failed" for
values, binds and message properties, ORA-25215 for a payload; never a UnicodeEncodeError
(or ORA-00600), and nothing is stored."""

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from tests.conftest import make_queue, nowait, table_rows

BAD = "a\ud800"


def _code(excinfo) -> str:
    return excinfo.value.full_code


def _queues(conn):
    make_queue(conn, "R", payload="RAW")
    make_queue(conn, "X", payload="XMLTYPE")


@pytest.mark.parametrize("payload,queue", [(BAD, "R"), ("<a>\ud800</a>", "X")])
def test_payload_that_is_no_utf8_text_is_ora_25215(conn, payload, queue):
    _queues(conn)
    q = conn.queue(queue)
    with pytest.raises(sluice.DatabaseError) as e:
        q.enqmany([conn.msgproperties(payload=b"ok" if queue == "R" else "<ok/>"),
                   conn.msgproperties(payload=payload)])
    assert _code(e) == "ORA-25215"
    conn.commit()
    assert table_rows(conn, f"{queue}_QT") == []


def test_properties_that_do_not_convert_are_ora_06502(conn):
    _queues(conn)
    q = conn.queue("R")
    for props in (dict(correlation=BAD), dict(sender_id=sluice.Agent("A", BAD))):
        with pytest.raises(sluice.DatabaseError) as e:
            q.enqone(conn.msgproperties(payload=b"x", **props))
        assert _code(e) == "ORA-06502"
    conn.commit()
    assert table_rows(conn, "R_QT") == []
    q.enqone(conn.msgproperties(payload=b"x", correlation="C"))
    conn.commit()
    for opt in ("correlation", "condition"):
        nowait(q)
        setattr(q.deqoptions, opt, BAD if opt == "correlation" else f"corrid = '{BAD}'")
        with pytest.raises(sluice.DatabaseError) as e:
            q.deqone()
        assert _code(e) == "ORA-06502"
        setattr(q.deqoptions, opt, None)
    assert nowait(q).deqone().correlation == "C"


def test_statement_text_and_binds_that_do_not_convert_are_ora_06502(conn):
    cur = conn.cursor()
    for sql, binds in (("SELECT :a FROM dual", {"a": BAD}), ("SELECT :1 FROM dual", [BAD]),
                       (f"SELECT '{BAD}' FROM dual", None)):
        with pytest.raises(sluice.DatabaseError) as e:
            cur.execute(sql, binds)
        assert _code(e) == "ORA-06502"
    assert cur.execute("SELECT :a FROM dual", a="é").fetchall() == [("é",)]


def test_object_attributes_that_do_not_convert_are_ora_06502(conn):
    conn.create_type("OT", "OBJECT", [("R", "RAW(10)"), ("B", "BLOB"), ("C", "CLOB"),
                                      ("V", "VARCHAR2(10 CHAR)")], None, None, False)
    obj = conn.gettype("OT").newobject()
    for name in ("R", "B", "C", "V"):
        with pytest.raises(sluice.DatabaseError) as e:
            setattr(obj, name, BAD)
        assert _code(e) == "ORA-06502"
        assert getattr(obj, name) is None
    with pytest.raises(sluice.DatabaseError) as e:
        sluice.objtypes.jms_text_message(conn.context.catalog, BAD)
    assert _code(e) == "ORA-06502"


def test_nul_in_text_converts_on_sqlite_and_is_ora_06502_on_postgresql(conn):
    make_queue(conn, "R", payload="RAW")
    q = conn.queue("R")
    cur = conn.cursor()
    if conn.context.store.dialect == "sqlite":
        assert cur.execute("SELECT :a FROM dual", a="a\x00b").fetchall() == [("a\x00b",)]
        return
    with pytest.raises(sluice.DatabaseError) as e:
        cur.execute("SELECT :a FROM dual", a="a\x00b")
    assert _code(e) == "ORA-06502"
    with pytest.raises(sluice.DatabaseError) as e:
        q.enqone(conn.msgproperties(payload=b"x", correlation="a\x00b"))
        conn.commit()
    assert _code(e) == "ORA-06502"
    conn.rollback()
    assert table_rows(conn, "R_QT") == []
    q.enqone(conn.msgproperties(payload=b"x", correlation="C"))
    conn.commit()
    assert nowait(q).deqone().correlation == "C"


def test_cli_argument_bytes_that_are_no_utf8(dsn):
    run = lambda *a: CliRunner().invoke(main, ["--dsn", dsn, *a])   # noqa: E731
    assert run("init").exit_code == 0
    with sluice.connect(dsn) as conn:
        make_queue(conn, "R", payload="RAW")
    undecodable = b"\xff".decode("utf-8", "surrogateescape")   # how argv delivers it
    r = run("enqueue", "R", undecodable)
    assert r.exit_code != 0 and "ORA-25215" in r.output and "ORA-00600" not in r.output
    r = run("enqueue", "R", "x", "--correlation", undecodable)
    assert r.exit_code != 0 and "ORA-06502" in r.output and "ORA-00600" not in r.output
    with sluice.connect(dsn) as conn:
        assert table_rows(conn, "R_QT") == []
