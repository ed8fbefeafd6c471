"""``conn.createlob``: python-oracledb's temporary CLOB / NCLOB / BLOB, written and read
at 1-based offsets, trimmed, opened and closed, and bound to DML on the user's own
tables (text and bytes, as the stores keep them) on both stores; misuse gets
python-oracledb's and Oracle's errors."""

from __future__ import annotations

import pickle

import pytest

import sluice
from tests.sqlhelpers import create_table
from tests.sqlhelpers import raised_code


def test_clob_write_read_size_trim(conn):
    lob = conn.createlob(sluice.DB_TYPE_CLOB)
    assert isinstance(lob, sluice.LOB) and lob.type is sluice.DB_TYPE_CLOB and lob.size() == 0
    lob.write("hello")
    lob.write(" world", 6)
    assert lob.read() == "hello world" and lob.read(7) == "world" and lob.read(1, 4) == "hell"
    lob.write("X", 14)                      # past the end: the gap is blanks, as Oracle's CLOB
    assert lob.read() == "hello world  X" and lob.size() == 14
    lob.trim(5)
    assert str(lob) == "hello" and lob.size() == 5
    assert pickle.loads(pickle.dumps(lob)) == "hello"
    assert lob.getchunksize() > 0


def test_blob_and_nclob(conn):
    blob = conn.createlob(sluice.DB_TYPE_BLOB, b"\x01\x02")
    blob.write(b"\x09", 4)
    assert blob.read() == b"\x01\x02\x00\x09" and blob.size() == 4
    nclob = conn.createlob(sluice.DB_TYPE_NCLOB, "ünï")
    assert nclob.read() == "ünï" and nclob.size() == 3


def test_open_close(conn):
    lob = conn.createlob(sluice.DB_TYPE_CLOB)
    assert not lob.isopen()
    lob.open()
    assert lob.isopen()
    assert raised_code(lob.open) == "ORA-22293"
    lob.close()
    assert not lob.isopen()
    assert raised_code(lob.close) == "ORA-22289"


def test_misuse(conn):
    with pytest.raises(TypeError):
        conn.createlob(sluice.DB_TYPE_VARCHAR)
    clob = conn.createlob(sluice.DB_TYPE_CLOB, "abc")
    blob = conn.createlob(sluice.DB_TYPE_BLOB)
    with pytest.raises(TypeError):
        clob.write(b"bytes")
    with pytest.raises(TypeError):
        blob.write("text")
    assert raised_code(lambda: clob.read(0)) == "DPY-2030"
    assert raised_code(lambda: clob.read(1, 0)) == "DPY-2047"
    assert raised_code(lambda: clob.write("x", 0)) == "DPY-2030"
    assert raised_code(lambda: clob.trim(4)) == "ORA-22926"
    assert raised_code(lambda: clob.trim(1, newSize=2)) == "DPY-2014"
    assert clob.read() == "abc"


def test_lobs_bind_to_dml_on_both_stores(conn, dsn):
    binary = "BLOB" if dsn.startswith("sqlite") else "BYTEA"
    create_table(dsn, f"CREATE TABLE docs (id INTEGER, body TEXT, img {binary})")
    cur = conn.cursor()
    body = conn.createlob(sluice.DB_TYPE_CLOB, "chapter one")
    img = conn.createlob(sluice.DB_TYPE_BLOB, b"\x89PNG")
    cur.execute("INSERT INTO docs (id, body, img) VALUES (:1, :2, :3)", [1, body, img])
    body.write("two", 9)
    cur.execute("INSERT INTO docs (id, body, img) VALUES (:id, :body, :img)", id=2, body=body, img=img)
    # (SQLite's img is declared BLOB: python-oracledb fetches a BLOB column as a LOB, so this
    # reads the contents with fetch_lobs=False; PostgreSQL's BYTEA is a RAW: bytes either way)
    cur.execute("SELECT id, body, img FROM docs ORDER BY id", fetch_lobs=False)
    assert cur.fetchall() == [(1, "chapter one", b"\x89PNG"), (2, "chapter two", b"\x89PNG")]


def test_an_async_connections_lob_and_input_type_handler(dsn):
    import asyncio
    # the store first: a PostgreSQL test schema not taken from the pool exists only once a
    # store is opened in it (the fresh-clone CI met "no schema has been selected")
    sluice.connect(dsn).close()
    create_table(dsn, "CREATE TABLE docs (id INTEGER, body TEXT)")

    async def main():
        async with sluice.connect_async(dsn) as connection:
            lob = await connection.createlob(sluice.DB_TYPE_CLOB, "abc")
            await lob.write("d", 4)
            assert await lob.size() == 4 and await lob.read(2, 2) == "bc" and lob.type is sluice.DB_TYPE_CLOB
            connection.inputtypehandler = lambda cursor, value, arraysize: \
                cursor.var(str, inconverter=str.upper) if isinstance(value, str) else None
            cursor = connection.cursor()
            await cursor.execute("INSERT INTO docs (id, body) VALUES (:1, :2)", [1, lob])
            await cursor.execute("INSERT INTO docs (id, body) VALUES (:1, :2)", [2, "efg"])
            await cursor.execute("SELECT body FROM docs ORDER BY id")
            return await cursor.fetchall()

    assert asyncio.run(main()) == [("abcd",), ("EFG",)]
