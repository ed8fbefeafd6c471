"""A type mismatch on PostgreSQL ("operator does not exist: text + integer") is Oracle's
ORA-00932 inconsistent datatypes, not ORA-00904 invalid identifier (store/pgconn.translate)."""

from __future__ import annotations

import pytest

import sluice
from tests.test_view_date_fetch import _enqueued
from tests.sqlhelpers import query_rows, raised_code


def test_a_type_mismatch_is_ora_00932(conn, dsn):
    """An operator between types that have none: Oracle's ORA-00932 inconsistent datatypes
    (PostgreSQL's "operator does not exist" was ORA-00904 invalid identifier).  SQLite
    converts the operands itself: the same statements answer there."""
    _enqueued(conn)
    mismatches = {"SELECT msg_id + 1 FROM aq$q_qt": "expected NUMBER got CHAR",
                  "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time > 5": "expected DATE got NUMBER",
                  "SELECT COUNT(*) FROM aq$q_qt WHERE user_data = 5": "expected BINARY got NUMBER",
                  "SELECT -msg_state FROM aq$q_qt": "expected NUMBER got CHAR"}
    for sql, message in mismatches.items():
        if dsn.startswith("sqlite"):
            query_rows(conn, sql)
            continue
        with pytest.raises(sluice.DatabaseError) as e:
            query_rows(conn, sql)
        assert e.value.full_code == "ORA-00932" and str(e.value).endswith(message), str(e.value)
    assert raised_code(lambda: query_rows(conn, "SELECT no_such_column FROM aq$q_qt")) == "ORA-00904"    # still
