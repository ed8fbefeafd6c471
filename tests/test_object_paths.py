"""Attribute paths of an object payload typed at a cursor (``q.user_data.title``) answer as
Oracle answers them, on both stores (:mod:`sluice.store.objpaths`)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.sqlhelpers import create_table
from tests.sqlhelpers import query_code, query_headed


@pytest.fixture
def books(conn):
    cur = conn.cursor()
    cur.execute("CREATE TYPE author_t AS OBJECT (name VARCHAR2(30), born DATE)")
    cur.execute("CREATE TYPE book AS OBJECT (title VARCHAR2(40), pages NUMBER, author author_t)")
    conn.aqadm.create_queue_table(queue_table="BOOK_QT", queue_payload_type="BOOK")
    conn.aqadm.create_queue(queue_name="BOOKS", queue_table="BOOK_QT")
    conn.aqadm.start_queue(queue_name="BOOKS")
    book, author = conn.gettype("BOOK"), conn.gettype("AUTHOR_T")
    q = conn.queue("BOOKS", book)
    for title, pages, name in [("Short", 50, "Ann"), ("Middle", 150, "Bob"), ("Long", 300, None)]:
        b = book.newobject()
        b.TITLE, b.PAGES = title, pages
        if name:
            a = author.newobject()
            a.NAME, a.BORN = name, dt.datetime(1970, 1, len(name))
            b.AUTHOR = a
        q.enqone(conn.msgproperties(payload=b))
    conn.commit()
    return conn


@pytest.mark.parametrize("sql, headings, rows", [
    # the AQ$ view and the queue table itself, in WHERE and ORDER BY
    ("SELECT q.user_data.title, q.user_data.pages FROM AQ$BOOK_QT q WHERE q.user_data.pages > 100 "
     "ORDER BY q.user_data.pages", ["USER_DATA.TITLE", "USER_DATA.PAGES"], [("Middle", 150), ("Long", 300)]),
    ("SELECT t.user_data.title FROM BOOK_QT t ORDER BY t.user_data.pages DESC",
     ["USER_DATA.TITLE"], [("Long",), ("Middle",), ("Short",)]),
    # a NUMBER is a number (300 > 50 as numbers, not as text), a DATE a datetime
    ("SELECT max(q.user_data.pages) FROM AQ$BOOK_QT q", ["MAX(Q.USER_DATA.PAGES)"], [(300,)]),
    ("SELECT q.user_data.author.name, q.user_data.author.born FROM AQ$BOOK_QT q "
     "WHERE q.user_data.author.name IS NOT NULL ORDER BY 1",
     ["USER_DATA.AUTHOR.NAME", "USER_DATA.AUTHOR.BORN"],
     [("Ann", dt.datetime(1970, 1, 3)), ("Bob", dt.datetime(1970, 1, 3))]),
    # GROUP BY, an expression's heading, an alias, spaces and case in the path
    ("SELECT count(*) n, q.user_data.pages * 2 FROM AQ$BOOK_QT q WHERE Q . User_Data . pages < 200 "
     "GROUP BY q.user_data.pages ORDER BY 2", ["N", "Q.USER_DATA.PAGES*2"], [(1, 100), (1, 300)]),
    ("SELECT upper(q.user_data.title) t FROM AQ$BOOK_QT q WHERE q.user_data.title = 'Short'", ["T"], [("SHORT",)]),
    ("SELECT * FROM (SELECT q.user_data.title FROM AQ$BOOK_QT q WHERE q.user_data.pages = 50)",
     ["USER_DATA.TITLE"], [("Short",)]),
    # through a subquery's alias (its USER_DATA the queue table's)
    ("SELECT s.user_data.title FROM (SELECT * FROM AQ$BOOK_QT WHERE msg_state = 'READY') s "
     "WHERE s.user_data.pages > 100 ORDER BY 1", ["USER_DATA.TITLE"], [("Long",), ("Middle",)]),
])
def test_attribute_paths(books, sql, headings, rows):
    assert query_headed(books, sql) == (headings, rows)


@pytest.mark.parametrize("sql", [
    "SELECT q.user_data.isbn FROM AQ$BOOK_QT q",                 # no such attribute
    "SELECT q.user_data.author.age FROM AQ$BOOK_QT q",
    "SELECT q.user_data.title.x FROM AQ$BOOK_QT q",              # an attribute of a VARCHAR2
    # Oracle requires a table alias (Object-Relational Developer's Guide, "When Table
    # Aliases Are Required"): the view's or table's own name is none
    "SELECT user_data.title FROM AQ$BOOK_QT",
    "SELECT AQ$BOOK_QT.user_data.title FROM AQ$BOOK_QT",
    "SELECT msg_id FROM BOOK_QT WHERE user_data.pages > 1",
])
def test_bad_paths_are_ora_00904(books, sql):
    assert query_code(books, sql) == "ORA-00904"


def test_paths_in_dml(books, dsn):
    create_table(dsn, "CREATE TABLE long_books (title VARCHAR(40), pages INTEGER)")
    cur = books.cursor()
    cur.execute("INSERT INTO long_books (title, pages) SELECT q.user_data.title, q.user_data.pages "
                "FROM AQ$BOOK_QT q WHERE q.user_data.pages > :n", n=100)
    assert cur.rowcount == 2
    books.commit()
    assert query_headed(books, "SELECT title, pages FROM long_books ORDER BY pages") == (
        ["TITLE", "PAGES"], [("Middle", 150), ("Long", 300)])


def test_paths_in_a_hierarchy(books):
    """Paths inside CONNECT BY's PRIOR, CONNECT_BY_ROOT and SYS_CONNECT_BY_PATH (sqlhierarchy)."""
    assert query_headed(books, "SELECT CONNECT_BY_ROOT q.user_data.title, SYS_CONNECT_BY_PATH(q.user_data.title, '>'), "
                        "LEVEL FROM AQ$BOOK_QT q START WITH q.user_data.title = 'Short' "
                        "CONNECT BY PRIOR q.user_data.pages * 3 = q.user_data.pages") == (
        ["CONNECT_BY_ROOTQ.USER_DATA.TITLE", "SYS_CONNECT_BY_PATH(Q.USER_DATA.TITLE,'>')", "LEVEL"],
        [("Short", ">Short", 1), ("Short", ">Short>Middle", 2)])
