"""CLOB / NCLOB / BLOB columns fetched as python-oracledb fetches them: ``sluice.LOB`` objects
under ``defaults.fetch_lobs`` (True, python-oracledb's default), str / bytes with
``fetch_lobs=False`` (the default, or ``execute(…, fetch_lobs=False)``) or an output type
handler's ``DB_TYPE_LONG`` / ``DB_TYPE_LONG_RAW`` var (python-oracledb's documented idiom);
an object type's LOB attribute as a LOB; ``AsyncLOB`` objects on an async connection.  A user's
column is a LOB when its table declares it CLOB / NCLOB / BLOB (SQLite's declared type, a
PostgreSQL domain of that name); RAW and VARCHAR2 columns stay bytes and str."""

from __future__ import annotations

import asyncio

import pytest

import sluice
from tests.conftest import make_queue, nowait
from tests.sqlhelpers import create_table, raised_code

TEXT = "héllo wörld"          # non-ASCII: a CLOB counts characters, a BLOB bytes
ASTRAL = "a😀b"                # beyond U+FFFF: two UCS-2 code points to Oracle


@pytest.fixture
def docs(conn, dsn):
    """``conn`` with a table DOCS (ID, BODY CLOB, NBODY NCLOB, PIC BLOB, R RAW, V VARCHAR2)
    of two rows, the second all NULL."""
    if dsn.startswith("postgresql"):      # PostgreSQL: the types are domains of those names
        for name, base in (("clob", "text"), ("nclob", "text"), ("blob", "bytea")):
            create_table(dsn, f"CREATE DOMAIN {name} AS {base}")
        raw, varchar = "bytea", "varchar(20)"
    else:
        raw, varchar = "RAW(10)", "VARCHAR2(20)"
    create_table(dsn, f"CREATE TABLE docs (id INTEGER, body CLOB, nbody NCLOB, pic BLOB, r {raw}, v {varchar})")
    cur = conn.cursor()
    cur.execute("INSERT INTO docs VALUES (:1, :2, :3, :4, :5, :6)", [1, TEXT, ASTRAL, "é".encode() + b"\x00\xff",
                                                                    b"\x01", "plain"])
    cur.execute("INSERT INTO docs (id) VALUES (2)")
    conn.commit()
    return conn


def test_default_fetch_gives_lob_objects(docs):
    cur = docs.cursor()
    cur.execute("SELECT body, nbody, pic, r, v FROM docs ORDER BY id")
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_CLOB, sluice.DB_TYPE_NCLOB, sluice.DB_TYPE_BLOB,
                                               sluice.DB_TYPE_RAW, sluice.DB_TYPE_VARCHAR]
    (body, nbody, pic, r, v), empty = cur.fetchall()
    assert isinstance(body, sluice.LOB) and body.type is sluice.DB_TYPE_CLOB
    assert nbody.type is sluice.DB_TYPE_NCLOB and pic.type is sluice.DB_TYPE_BLOB
    assert (r, v) == (b"\x01", "plain")                   # RAW and VARCHAR2 stay bytes and str
    assert empty == (None,) * 5                           # NULL is None, not a LOB
    assert body.read() == TEXT and body.size() == 11 and str(body) == TEXT
    assert body.read(2, 4) == "éllo" and body.read(8) == "örld" and body.read(11, 5) == "d"
    assert pic.read() == b"\xc3\xa9\x00\xff" and pic.size() == 4 and pic.read(2, 2) == b"\xa9\x00"
    assert nbody.size() == 4 and nbody.read(2, 2) == "😀" and nbody.read(4) == "b"
    assert body.getchunksize() > 0 and not body.isopen()
    assert raised_code(body.read, 0) == "DPY-2030" and raised_code(body.read, 1, 0) == "DPY-2047"
    assert raised_code(body.fileexists) == "DPY-3026" and raised_code(pic.getfilename) == "DPY-3026"
    body.write("H")                                       # the fetched LOB is the caller's copy
    assert body.read(1, 5) == "Héllo"


def test_star_and_an_alias_of_a_lob_column(docs):
    cur = docs.cursor()
    cur.execute("SELECT * FROM docs WHERE id = 1")
    row = cur.fetchone()
    assert [type(v) for v in row[1:4]] == [sluice.LOB] * 3
    cur.execute("SELECT d.body AS b, upper(v) FROM docs d WHERE id = 1")
    b, upper = cur.fetchone()
    assert b.read() == TEXT and upper == "PLAIN"


def test_fetch_lobs_false_gives_str_and_bytes(docs):
    cur = docs.cursor()
    cur.execute("SELECT body, nbody, pic, r FROM docs WHERE id = 1", fetch_lobs=False)
    assert cur.fetchall() == [(TEXT, ASTRAL, b"\xc3\xa9\x00\xff", b"\x01")]
    # python-oracledb fetches them as LONGs then, and its description says so
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_LONG, sluice.DB_TYPE_LONG_NVARCHAR,
                                               sluice.DB_TYPE_LONG_RAW, sluice.DB_TYPE_RAW]
    before = sluice.defaults.fetch_lobs
    sluice.defaults.fetch_lobs = False
    try:
        assert cur.execute("SELECT body, pic FROM docs WHERE id = 1").fetchall() == [(TEXT, b"\xc3\xa9\x00\xff")]
        cur.execute("SELECT body FROM docs WHERE id = 1", fetch_lobs=True)    # the statement's own
        assert isinstance(cur.fetchone()[0], sluice.LOB)
    finally:
        sluice.defaults.fetch_lobs = before


def test_output_type_handler_long_idiom_gives_str_and_bytes(docs):
    def handler(cursor, metadata):      # python-oracledb's documented idiom
        if metadata.type_code is sluice.DB_TYPE_CLOB:
            return cursor.var(sluice.DB_TYPE_LONG, arraysize=cursor.arraysize)
        if metadata.type_code is sluice.DB_TYPE_BLOB:
            return cursor.var(sluice.DB_TYPE_LONG_RAW, arraysize=cursor.arraysize)
    docs.outputtypehandler = handler
    cur = docs.cursor()
    cur.execute("SELECT id, body, nbody, pic FROM docs ORDER BY id")
    (i, body, nbody, pic), empty = cur.fetchall()
    assert (i, body, pic) == (1, TEXT, b"\xc3\xa9\x00\xff") and empty == (2, None, None, None)
    assert isinstance(nbody, sluice.LOB) and nbody.read() == ASTRAL     # the handler left it: a LOB
    assert [d[1] for d in cur.description][1:] == [sluice.DB_TYPE_CLOB, sluice.DB_TYPE_NCLOB, sluice.DB_TYPE_BLOB]

    def old_style(cursor, name, default_type, size, precision, scale):
        if default_type is sluice.DB_TYPE_CLOB:
            return cursor.var(str, arraysize=cursor.arraysize, outconverter=str.upper)
    cur.outputtypehandler = old_style
    assert cur.execute("SELECT body FROM docs WHERE id = 1").fetchall() == [(TEXT.upper(),)]
    # a var of a LOB type gives LOBs even with fetch_lobs=False
    cur.outputtypehandler = lambda cursor, metadata: cursor.var(sluice.DB_TYPE_CLOB) \
        if metadata.name == "V" else None
    v, body = cur.execute("SELECT v, body FROM docs WHERE id = 1", fetch_lobs=False).fetchone()
    assert isinstance(v, sluice.LOB) and v.read() == "plain" and body == TEXT
    assert cur.description[1][1] is sluice.DB_TYPE_LONG


def test_an_object_types_lob_attributes_are_lobs(conn):
    conn.cursor().execute("CREATE TYPE doc_t AS OBJECT (id NUMBER, body CLOB, pic BLOB)")
    doc_t = conn.gettype("DOC_T")
    make_queue(conn, payload="DOC_T")
    doc = doc_t.newobject()
    doc.ID, doc.BODY = 1, TEXT
    assert isinstance(doc.BODY, sluice.LOB) and doc.BODY.read(2, 4) == "éllo" and doc.BODY.size() == 11
    assert doc.PIC is None
    doc.PIC = conn.createlob(sluice.DB_TYPE_BLOB, b"\x00\x01")     # a LOB given to a LOB attribute
    doc.BODY.write("!", 12)                                         # writes the object's value
    assert doc.BODY.read() == TEXT + "!"
    assert raised_code(setattr, doc, "BODY", conn.createlob(sluice.DB_TYPE_BLOB)) == "DPY-3014"
    q = conn.queue("Q", doc_t)
    q.enqone(conn.msgproperties(payload=doc))
    conn.commit()
    got = nowait(q).deqone().payload
    assert got.BODY.type is sluice.DB_TYPE_CLOB and got.BODY.read() == TEXT + "!"
    assert got.PIC.type is sluice.DB_TYPE_BLOB and got.PIC.read() == b"\x00\x01" and got.PIC.size() == 2


def _notes(conn, *subscribers: tuple[str, str | None]):
    """A queue Q of NOTE_T (BODY CLOB) — multi-consumer with ``subscribers`` (name, rule)
    when given — holding the notes "first" and "second", committed; NOTE_T."""
    conn.cursor().execute("CREATE TYPE note_t AS OBJECT (body CLOB)")
    note_t = conn.gettype("NOTE_T")
    make_queue(conn, payload="NOTE_T", multiple_consumers=bool(subscribers))
    for name, rule in subscribers:
        conn.aqadm.add_subscriber(queue_name="Q", subscriber=sluice.Agent(name), rule=rule)
    q = conn.queue("Q", note_t)
    for text in ("first", "second"):
        note = note_t.newobject()
        note.BODY = text
        q.enqone(conn.msgproperties(payload=note))
    conn.commit()
    return note_t


def test_an_object_types_lob_attribute_in_a_dequeue_condition(conn):
    """Sluice's own reads of a LOB attribute (a dequeue condition) see its text."""
    q = conn.queue("Q", _notes(conn))
    q.deqoptions.condition = "tab.user_data.body = 'second'"
    assert nowait(q).deqone().payload.BODY.read() == "second"


def test_a_subscriber_rule_on_an_object_types_lob_attribute(conn):
    """A subscriber's rule reads a LOB attribute's text (Sluice's own reader of the
    attribute, not the LOB python-oracledb's callers get)."""
    note_t = _notes(conn, ("SECOND", "tab.user_data.body = 'second'"), ("ALL", None))
    q = nowait(conn.queue("Q", note_t))
    q.deqoptions.consumername = "SECOND"
    assert [m.payload.BODY.read() for m in q.deqmany(10)] == ["second"]


def test_plsql_and_idap_read_a_lob_attributes_contents(conn):
    """A PL/SQL block compares a CLOB attribute as text; an IDAP payload writes a BLOB
    attribute's bytes as hex; a rule condition's path reads the text (Sluice's own readers
    of the attribute)."""
    from lxml import etree

    from sluice.idap.payload import xml_from_value
    cur = conn.cursor()
    cur.execute("CREATE TYPE doc_t AS OBJECT (id NUMBER, body CLOB, pic BLOB)")
    same = cur.var(int)
    cur.execute("DECLARE d doc_t := doc_t(1, 'hello', NULL); "
                "BEGIN IF d.body = 'hello' THEN :n := 1; ELSE :n := 0; END IF; END;", n=same)
    assert same.getvalue() == 1
    doc = conn.gettype("DOC_T").newobject()
    doc.BODY, doc.PIC = "text", b"\x01\xff"
    parent = etree.Element("message_payload")
    xml_from_value(parent, doc, "DOC_T", None)
    texts = {etree.QName(e).localname: e.text for e in parent[0]}
    assert texts == {"BODY": "text", "PIC": "01FF"}
    from sluice.rules.compile.python import get_path      # a rule condition's attribute path
    assert get_path(doc, ("BODY",)) == "text"


def test_asyncio_gives_async_lobs(dsn, docs):
    async def main():
        async with sluice.connect_async(dsn) as connection:
            cursor = connection.cursor()
            await cursor.execute("SELECT body, pic FROM docs WHERE id = 1")
            body, pic = await cursor.fetchone()
            assert not isinstance(body, sluice.LOB) and body.type is sluice.DB_TYPE_CLOB
            assert await body.read(2, 4) == "éllo" and await body.size() == 11
            assert await pic.read() == b"\xc3\xa9\x00\xff" and await pic.size() == 4
            await cursor.execute("SELECT body FROM docs WHERE id = 1", fetch_lobs=False)
            assert await cursor.fetchall() == [(TEXT,)]
            (lob,), = await connection.fetchall("SELECT body FROM docs WHERE id = 1")
            assert await lob.read() == TEXT
            assert await connection.fetchone("SELECT body FROM docs WHERE id = 1", fetch_lobs=False) == (TEXT,)
    asyncio.run(main())


def test_a_raw_queues_user_data_is_a_blob(conn):
    """Seed 003 "Propagation of Messages with LOBs": "In RAW queues the message payload is
    stored as a BLOB" — the queue table's and its AQ$ view's USER_DATA fetch as LOBs; MSG_ID
    stays as it was."""
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"\x00payload"))
    conn.commit()
    cur = conn.cursor()
    for sql in ("SELECT user_data, msg_id FROM aq$q_qt", "SELECT user_data, msgid FROM q_qt"):
        cur.execute(sql)
        assert cur.description[0][1] is sluice.DB_TYPE_BLOB and cur.description[1][1] is not sluice.DB_TYPE_BLOB
        data, msgid = cur.fetchone()
        assert data.read() == b"\x00payload" and data.size() == 8 and not isinstance(msgid, sluice.LOB)
    assert cur.execute("SELECT user_data FROM aq$q_qt", fetch_lobs=False).fetchall() == [(b"\x00payload",)]
