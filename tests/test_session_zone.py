"""The session's time zone, as Oracle 10.2+ and python-oracledb have it, on both stores.

AQ keeps its times in UTC and the AQ$ views show them in the session's time zone
(``CAST(FROM_TZ(enq_time, '00:00') AT TIME ZONE sessiontimezone AS DATE)``), as do the
other monitoring views; CURRENT_DATE / CURRENT_TIMESTAMP / LOCALTIMESTAMP are that zone's
wall clock, SYSDATE / SYSTIMESTAMP the server's.  A session starts in ORA_SDTZ's zone, else
the offset of the client's local time at logon (python-oracledb's thin mode sends
``ALTER SESSION SET TIME_ZONE`` so); ALTER SESSION SET TIME_ZONE changes it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
import time
import zoneinfo

import pytest

import sluice
from tests.conftest import PG_BASE, drop_schema, make_queue, pg_admin
from tests.test_dual import india  # noqa: F401  (india: a fixture)
from tests.streams.test_propagation import _raw
from tests.sqlhelpers import create_table, query_rows, raised_code

PLUS5 = dt.timezone(dt.timedelta(hours=5))


@pytest.fixture(autouse=True)
def utc_host(monkeypatch):
    """The host's clock in UTC and no ORA_SDTZ (before the sessions log on), whatever the
    machine's: a new session's zone is then '+00:00'."""
    monkeypatch.delenv("ORA_SDTZ", raising=False)
    monkeypatch.setenv("TZ", "UTC0")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _wall(tz) -> dt.datetime:
    return dt.datetime.now(tz).replace(tzinfo=None)


def _near(value, expected, seconds=60) -> bool:
    return type(value) is dt.datetime and abs(value - expected) < dt.timedelta(seconds=seconds)


def _enqueue(conn) -> None:
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()


def _zone(conn) -> str:
    (zone,), = query_rows(conn, "SELECT SESSIONTIMEZONE FROM DUAL")
    return zone


def test_alter_session_time_zone_moves_the_views_dates_and_the_session_clock(conn):
    _enqueue(conn)
    conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+05:00'")
    assert query_rows(conn, "SELECT SESSIONTIMEZONE, DBTIMEZONE FROM DUAL") == [("+05:00", "+00:00")]
    (enq, ts), = query_rows(conn, "SELECT enq_time, enq_timestamp FROM aq$q_qt")
    assert _near(enq, _wall(PLUS5), 10) and ts.replace(microsecond=0) == enq
    # a naive datetime bind is the session zone's wall clock, compared as it is
    since = "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time > :since"
    minute = dt.timedelta(minutes=1)
    assert [query_rows(conn, since, {"since": _wall(PLUS5) + d}) for d in (-minute, minute)] == [[(1,)], [(0,)]]
    # CURRENT_DATE and LOCALTIMESTAMP are the session zone's, SYSDATE the host's
    (current, local, sysdate), = query_rows(conn, "SELECT CURRENT_DATE, LOCALTIMESTAMP, SYSDATE FROM DUAL")
    assert _near(current, _wall(PLUS5), 10) and _near(local, _wall(PLUS5), 10)
    assert _near(sysdate, dt.datetime.now(), 10)
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time > CURRENT_DATE - 1/24 "
                       "AND enq_time < CURRENT_TIMESTAMP + INTERVAL '1' MINUTE") == [(1,)]
    # the other monitoring views too: V$SESSION's LOGON_TIME
    (logon,), *_ = query_rows(conn, "SELECT logon_time FROM v$session WHERE username = USER")
    assert _near(logon, _wall(PLUS5))


def test_a_region_a_return_to_local_and_dbtimezone(conn, conn2):
    _enqueue(conn)
    cur = conn.cursor()
    cur.execute("alter session set time_zone = 'europe/paris'")      # Oracle's names: any case
    assert _zone(conn) == "Europe/Paris"
    (enq,), = query_rows(conn, "SELECT enq_time FROM aq$q_qt")
    assert _near(enq, _wall(zoneinfo.ZoneInfo("Europe/Paris")), 10)
    (other,), = query_rows(conn2, "SELECT enq_time FROM aq$q_qt")      # another session: its own zone
    assert _zone(conn2) == "+00:00" and _near(other, dt.datetime.now(), 10)
    cur.execute("ALTER SESSION SET TIME_ZONE = '-03:30'")
    assert _zone(conn) == "-03:30"
    assert query_rows(conn, "SELECT enq_time FROM aq$q_qt") == [(other - dt.timedelta(hours=3, minutes=30),)]
    cur.execute("ALTER SESSION SET TIME_ZONE = LOCAL")            # the zone it logged on in
    assert _zone(conn) == "+00:00" and query_rows(conn, "SELECT enq_time FROM aq$q_qt") == [(other,)]
    cur.execute("ALTER SESSION SET TIME_ZONE = '+05:00'")
    cur.execute("ALTER SESSION SET TIME_ZONE = DBTIMEZONE")
    assert _zone(conn) == "+00:00"


def test_plsql_reads_the_session_zones_clock_too(conn):
    from sluice.plsql import execute
    conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+05:00'")
    binds = dict.fromkeys(("d", "s", "l", "c"))
    execute(conn, "BEGIN :d := CURRENT_DATE; :s := SYSDATE; :l := LOCALTIMESTAMP; :c := CURRENT_TIMESTAMP; END;",
            binds)
    assert _near(binds["d"], _wall(PLUS5), 10) and binds["d"].microsecond == 0
    assert _near(binds["l"], _wall(PLUS5), 10) and _near(binds["s"], dt.datetime.now(), 10)
    assert binds["c"].utcoffset() == dt.timedelta(hours=5)


def test_alter_session_stays_when_the_transaction_rolls_back(conn, dsn):
    """ALTER SESSION is no part of the transaction (PostgreSQL would undo its setting)."""
    _enqueue(conn)
    create_table(dsn, "CREATE TABLE notes (n INTEGER)")
    conn.cursor().execute("INSERT INTO notes (n) VALUES (1)")     # an open transaction
    conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+05:00'")
    conn.rollback()
    assert _zone(conn) == "+05:00" and query_rows(conn, "SELECT COUNT(*) FROM notes") == [(0,)]
    (enq,), = query_rows(conn, "SELECT enq_time FROM aq$q_qt")
    assert _near(enq, _wall(PLUS5), 10)


def test_a_bad_time_zone_is_refused_and_changes_nothing(conn):
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET TIME_ZONE = '+02:00'")
    for sql, code in (("ALTER SESSION SET TIME_ZONE = 'Mars/Olympus'", "ORA-01882"),
                      ("ALTER SESSION SET TIME_ZONE = '+15:00'", "ORA-01874"),
                      ("ALTER SESSION SET TIME_ZONE = '+05:75'", "ORA-01875"),
                      ("ALTER SESSION SET TIME_ZONE = '../etc/passwd'", "ORA-01882"),
                      ("ALTER SESSION SET TIME_ZONE = Europe/Paris", "ORA-00922"),
                      ("ALTER SESSION SET TIME_ZONE", "ORA-00922"),
                      ("ALTER SESSION SET TIME_ZONE = '+05:00' NLS_DATE_FORMAT = 'YYYY-BOGUS'", "ORA-01821"),
                      ("ALTER SESSION SET TIME_ZONE = '+05:00' CURRENT_SCHEMA = scott", "SLU-00001"),
                      ("ALTER SESSION TIME_ZONE = '+05:00'", "ORA-02248")):
        assert raised_code(lambda: cur.execute(sql)) == code, sql
    assert _zone(conn) == "+02:00"


def test_ora_sdtz_names_a_new_sessions_zone(dsn, monkeypatch):
    monkeypatch.setenv("ORA_SDTZ", "Asia/Kolkata")
    conn = sluice.connect(dsn)
    try:
        _enqueue(conn)
        assert _zone(conn) == "Asia/Kolkata"
        kolkata = _wall(zoneinfo.ZoneInfo("Asia/Kolkata"))
        (enq, current), = query_rows(conn, "SELECT enq_time, CURRENT_DATE FROM aq$q_qt")
        assert _near(enq, kolkata, 10) and _near(current, kolkata, 10)
        conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+01:00'")
        conn.cursor().execute("ALTER SESSION SET TIME_ZONE = LOCAL")
        assert _zone(conn) == "Asia/Kolkata"
    finally:
        conn.close()
    monkeypatch.setenv("ORA_SDTZ", "Nowhere/Land")      # python-oracledb's logon fails so
    assert raised_code(lambda: sluice.connect(dsn)) == "ORA-01882"
    monkeypatch.setenv("ORA_SDTZ", "DB_TZ")
    conn = sluice.connect(dsn)
    try:
        assert _zone(conn) == "+00:00"
    finally:
        conn.close()


def test_the_zone_is_the_hosts_offset_at_logon(conn, india):  # noqa: F811
    """python-oracledb's session zone is the client's offset when it logs on: a session
    opened in UTC stays there when the host's clock moves (CURRENT_DATE with it, SYSDATE
    with the host); one opened after is 5:30 ahead."""
    _enqueue(conn)
    assert _zone(conn) == "+00:00"
    (enq, current, sysdate), = query_rows(conn, "SELECT enq_time, CURRENT_DATE, SYSDATE FROM aq$q_qt")
    assert _near(enq, _wall(dt.timezone.utc), 10) and _near(current, _wall(dt.timezone.utc), 10)
    assert _near(sysdate, dt.datetime.now(), 10) and sysdate - current > dt.timedelta(hours=5)
    later = sluice.connect(conn.dsn)
    try:
        assert _zone(later) == "+05:30"
        (enq,), = query_rows(later, "SELECT enq_time FROM aq$q_qt")
        assert _near(enq, dt.datetime.now(), 10)
    finally:
        later.close()


def test_the_sqlite_views_dates_are_written_as_sqlites_strftime_wrote_them():
    """SQLite's views gave ``strftime('%Y-%m-%d %H:%M:%f', s, 'unixepoch')``: the session
    zone's text has the same form, milliseconds rounded alike."""
    from sluice.store.sessionzone import ViewClock, parse
    clock = ViewClock(parse("+00:00"))
    c = sqlite3.connect(":memory:")
    for s in (0, 1.0005, 1.0004999, 1764511234.5675, 1764511234.9996, 951782400.25, -1.5, 253402300799.0):
        assert clock.view_date(s) == c.execute("SELECT strftime('%Y-%m-%d %H:%M:%f', ?, 'unixepoch')",
                                               (s,)).fetchone()[0], s
    assert clock.view_date(None) is None and clock.view_date(1e300) is None
    assert ViewClock(parse("-03:30")).view_date(0) == "1969-12-31 20:30:00.000"


def test_a_regions_view_dates_follow_its_summer_time():
    """A region's offset changes with the date (one tz look-up per quarter of an hour)."""
    from sluice.store.sessionzone import ViewClock, parse
    paris = ViewClock(parse("Europe/Paris"))
    utc = dt.datetime(2026, 3, 29, 1, tzinfo=dt.timezone.utc).timestamp()     # summer time begins
    assert [paris.view_date(utc + d) for d in (-0.001, 0, 3600 * 24 * 210)] == [
        "2026-03-29 01:59:59.999", "2026-03-29 03:00:00.000", "2026-10-25 02:00:00.000"]
    assert paris.view_date(utc + 3600 * 24 * 210 - 1) == "2026-10-25 02:59:59.000"   # (summer time's last second)
    howe = ViewClock(parse("Australia/Lord_Howe"))           # a half-hour change
    tz = zoneinfo.ZoneInfo("Australia/Lord_Howe")
    for s in range(1775318400 - 7200, 1775318400 + 7200, 450):
        assert howe.view_date(s) == dt.datetime.fromtimestamp(s, tz).strftime("%Y-%m-%d %H:%M:%S.000"), s


def test_an_older_stores_utc_views_are_made_again_in_the_session_zone(dsn):
    """A store of schema version 23 had its views' dates in UTC: opened again, its views
    (the catalog's and AQ$) show them in the session's zone."""
    from sluice.store.dialect import POSTGRESQL, SQLITE
    from sluice.store.sqlschema import SCHEMA_VERSION, aq_view_select, catalog_ddl, table_name, view_name
    sqlite = dsn.startswith("sqlite:")
    new, utc, mark = (SQLITE, "strftime('%Y-%m-%d %H:%M:%f', {x}, 'unixepoch')", "'unixepoch'") if sqlite else \
        (POSTGRESQL, "(to_timestamp({x}) AT TIME ZONE 'UTC')", "TIME ZONE 'UTC'")
    old = dataclasses.replace(new, _epoch=utc, _epoch_joined=utc, zone_join="")
    conn = sluice.connect(dsn)
    _enqueue(conn)
    qt, = conn.context.store.queue_tables()
    conn.close()
    views = [s for s in catalog_ddl(old) if s.startswith(old.create_view) and mark in s]
    names = [s[len(old.create_view):].split()[0] for s in views]
    assert "DBA_QUEUE_SCHEDULES" in names
    _raw(dsn, [f"DROP VIEW {n}" for n in names if sqlite] + views +
         [f"DROP VIEW {view_name(qt)}", f"CREATE VIEW {view_name(qt)} AS {aq_view_select(qt, old, table_name(qt))}",
          "UPDATE SLUICE_META SET VALUE = '23' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert query_rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == \
            [(str(SCHEMA_VERSION),)]
        conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+05:00'")
        (enq,), = query_rows(conn, "SELECT enq_time FROM aq$q_qt")
        assert _near(enq, _wall(PLUS5), 10)
        texts = _raw_rows(dsn, "SELECT sql FROM sqlite_master WHERE type = 'view'" if sqlite else
                          "SELECT definition FROM pg_views WHERE schemaname = current_schema()")
        assert texts and not [t for t, in texts if mark in t and "sluice_zone_shift" not in t]
    finally:
        conn.close()


# POSIX seconds a view shows: the epoch, before it, fractions that round, a leap day, Paris's
# and Lord Howe's summer time changing, the last day of year 9999
_SECONDS = (0, -1.5, 1.0005, 1.0004999, 951782400.25, 1764511234.567891,
            dt.datetime(2026, 3, 29, 1, tzinfo=dt.timezone.utc).timestamp() - 0.001,
            dt.datetime(2026, 3, 29, 1, tzinfo=dt.timezone.utc).timestamp(),
            1775318400 - 1, 1775318400 + 1799.5, 253402214400.0)
_ZONES = ("+00:00", "+05:30", "-03:00", "-09:30", "+14:00", "-12:00", "+05:45",
          "Europe/Paris", "Australia/Lord_Howe", "America/St_Johns", "UTC")


@pytest.fixture
def pg_dsn():
    import uuid
    schema = "t_" + uuid.uuid4().hex[:12]
    pg_admin().close()
    yield f"{PG_BASE}?schema={schema}"
    drop_schema(schema)


def test_postgresql_aq_view_reads_the_zone_once_with_the_same_dates(pg_dsn):
    """PostgreSQL's AQ$ view reads the session's zone once a statement (SLUICE_SESSION_ZONE()
    in its FROM; an offset zone shifts by an interval; not called by a statement reading no
    date) instead of reading the setting and looking the zone's name up per date (~1.6x the
    time of SELECT *): the dates are those
    of the per-date conversion, every zone, offset or region, and a connection not Sluice's
    (no sluice.time_zone) still sees its own TimeZone's."""
    import psycopg

    from sluice.store.dialect import POSTGRESQL
    from sluice.store.sessionzone import parse
    from sluice.store.sqlschema import table_name, view_name
    conn = sluice.connect(pg_dsn)
    try:
        make_queue(conn, "Q")
        conn.queue("Q").enqmany([conn.msgproperties(payload=b"x") for _ in _SECONDS])
        conn.commit()
        qt, = conn.context.store.queue_tables()
    finally:
        conn.close()
    view, table = view_name(qt), table_name(qt)
    head, _, schema = pg_dsn.partition("?schema=")
    per_date = POSTGRESQL.epoch_to_timestamp      # the conversion each date made (session-zone)
    shown = f"SELECT LOCAL_ORDER_NO, ENQ_TIME, ENQ_TIMESTAMP, DEQ_TIME, DELAY FROM {view} ORDER BY 1"
    before = (f"SELECT SEQ, {per_date('ENQ_TIME')}, {per_date('ENQ_TIME')}, {per_date('DEQ_TIME')}, "
              f"{per_date('DELAY')} FROM {table} ORDER BY 1")
    with psycopg.connect(head, autocommit=True, options=f'-c search_path="{schema}"') as c:
        seqs = [r[0] for r in c.execute(f"SELECT SEQ FROM {table} ORDER BY SEQ")]
        c.cursor().executemany(f"UPDATE {table} SET ENQ_TIME = %s, DEQ_TIME = %s, DELAY = %s WHERE SEQ = %s",
                               [(s, s + 0.25 if i % 2 else None, s if i % 3 else None, seq)
                                for i, (s, seq) in enumerate(zip(_SECONDS, seqs))])
        plan = "\n".join(r[0] for r in c.execute(f"EXPLAIN {shown}"))
        assert plan.count("sluice_session_zone") == 1, plan          # once a statement
        plan = "\n".join(r[0] for r in c.execute(f"EXPLAIN SELECT COUNT(*), MAX(MSG_STATE) FROM {view}"))
        assert "sluice_session_zone" not in plan, plan                # not at all: no date read
        for zone in _ZONES:
            c.execute("SELECT set_config('sluice.time_zone', %s, false)", (parse(zone).postgres,))
            got = c.execute(shown).fetchall()
            assert got == c.execute(before).fetchall(), zone
            assert len(got) == len(_SECONDS) and got[0][2] is not None
        c.execute("SELECT set_config('sluice.time_zone', %s, false)", ("+05:30",))   # not Sluice's form
        assert c.execute(shown).fetchall() == c.execute(before).fetchall()
    for zone in ("America/St_Johns", "<+05:30>-05:30", "UTC"):        # a connection not Sluice's
        with psycopg.connect(head, autocommit=True,
                             options=f'-c search_path="{schema}" -c TimeZone={zone}') as c:
            assert c.execute(shown).fetchall() == c.execute(before).fetchall(), zone


def _raw_rows(dsn, sql):
    if dsn.startswith("sqlite:"):
        c = sqlite3.connect(dsn.removeprefix("sqlite:///"))
        try:
            return c.execute(sql).fetchall()
        finally:
            c.close()
    import psycopg
    head, _, schema = dsn.partition("?schema=")
    with psycopg.connect(head, autocommit=True, options=f'-c search_path="{schema}"') as c:
        return c.execute(sql).fetchall()
