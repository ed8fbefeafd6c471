"""Numbers a cursor fetches are python-oracledb's, on both stores: a NUMBER is an int when
whole and a float otherwise (PostgreSQL's numeric would be a Decimal, SQLite's 2.0 a
float) — the monitoring views' counts, retries and priorities included —, and every one a
``Decimal`` when ``sluice.defaults.fetch_decimals`` is set.  ``cursor.description`` has
python-oracledb's 7-tuples with its ``DB_TYPE_*`` constants."""

from __future__ import annotations

from decimal import Decimal

import pytest

import sluice
from tests.conftest import make_queue


def _row(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    row, = cur.fetchall()
    return row


def _types(row):
    return [type(v) for v in row]


def _queue_with_messages(conn):
    make_queue(conn, "Q", max_retries=3, retry_delay=0)
    q = conn.queue("Q")
    for priority in (1, 2):
        props = conn.msgproperties(payload=b"m", priority=priority)
        q.enqone(props)
    conn.commit()


def test_whole_numbers_are_ints_and_fractions_floats(conn):
    row = _row(conn, "SELECT 2.5, 2.0, 7/2, 4/2, 3, 0.1 + 0.2, ROUND(2.5), AVG(x), SUM(x) "
                     "FROM (SELECT 1 AS x FROM dual UNION ALL SELECT 2 FROM dual) t")
    assert row == (2.5, 2, 3.5, 2, 3, pytest.approx(0.3), 3, 1.5, 3)
    assert _types(row) == [float, int, float, int, int, float, int, float, int]


def test_the_views_numbers_are_ints(conn):
    _queue_with_messages(conn)
    row = _row(conn, "SELECT COUNT(*), SUM(msg_priority), MAX(retry_count), MIN(msg_priority) FROM aq$q_qt")
    assert row == (2, 3, 0, 1)
    assert _types(row) == [int] * 4
    row = _row(conn, "SELECT max_retries, retry_delay FROM dba_queues WHERE name = 'Q'")
    assert row == (3, 0) and _types(row) == [int] * 2
    row = _row(conn, "SELECT v.waiting, v.ready, v.expired, v.total_wait, v.average_wait "
                     "FROM v$aq v JOIN user_queues q ON q.qid = v.qid WHERE q.name = 'Q'")
    assert row[:3] == (0, 2, 0)
    assert _types(row[:3]) == [int] * 3
    assert all(type(v) in (int, float) for v in row[3:])        # seconds waited: whole or not


def test_fetch_decimals_gives_decimals(conn, monkeypatch):
    _queue_with_messages(conn)
    monkeypatch.setattr(sluice.defaults, "fetch_decimals", True)
    row = _row(conn, "SELECT COUNT(*), SUM(msg_priority), 2.5, 7/2, 4/2, 2.0, 'x' FROM aq$q_qt")
    assert row == (2, 3, Decimal("2.5"), Decimal("3.5"), 2, 2, "x")
    assert _types(row) == [Decimal] * 6 + [str]
    # as Oracle's NUMBER has them: no trailing zeros
    assert [str(v) for v in row[:6]] == ["2", "3", "2.5", "3.5", "2", "2"]
    monkeypatch.setattr(sluice.defaults, "fetch_decimals", False)
    assert _types(_row(conn, "SELECT COUNT(*), 2.5 FROM aq$q_qt")) == [int, float]


def test_fetch_decimals_is_python_oracledbs_default():
    assert sluice.defaults.fetch_decimals is False


def test_description_has_python_oracledbs_types(conn):
    _queue_with_messages(conn)
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*) AS N, 7/2 AS HALF, MAX(msg_state) AS STATE FROM aq$q_qt")
    n, half, state = cur.description
    assert n == ("N", sluice.DB_TYPE_NUMBER, 127, None, 0, -127, True)     # an unconstrained NUMBER
    assert half == ("HALF", sluice.DB_TYPE_NUMBER, 127, None, 0, -127, True)
    assert state[:2] == ("STATE", sluice.DB_TYPE_VARCHAR) and len(state) == 7
    assert sluice.DB_TYPE_NUMBER.name == "DB_TYPE_NUMBER"
