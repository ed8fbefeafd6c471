"""Issue 14 §1 DBMS_AQADM propagation schedules and §1 "Failures": SCHEDULE_PROPAGATION,
ALTER_PROPAGATION_SCHEDULE, DISABLE_/ENABLE_PROPAGATION_SCHEDULE, UNSCHEDULE_PROPAGATION,
VERIFY_QUEUE_TYPES, DBA_QUEUE_SCHEDULES; windows and Oracle's back-off (seed 003
"Propagation Scheduling", "Propagation Error Handling") driven by a clock of the test's."""

from __future__ import annotations

import math
from datetime import datetime

import pytest

import sluice
from sluice.streams.propagation.schedules import MAX_FAILURES, Schedule, next_time_offset

from ..conftest import make_queue
from .propkit import multi_queue as _mq, raises_ora as _raises, rows as _rows

T0 = 1_800_000_000.0


COLS = "DESTINATION, LATENCY, PROPAGATION_WINDOW, NEXT_TIME, SCHEDULE_DISABLED, FAILURES"


def test_schedule_propagation_defaults_and_exact_latency(conn):
    _mq(conn, "SRC")
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs2.net")
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs3.net", latency=0)
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs2.net", destination_queue="b.q",
                                    duration=600, next_time="SYSDATE + 1/24", latency=7)
    conn.aqadm.schedule_propagation(queue_name="src")            # queues of this site
    assert _rows(conn, f"SELECT {COLS} FROM DBA_QUEUE_SCHEDULES ORDER BY DESTINATION") == [
        ('"B"."Q"@DBS2.NET', 7.0, 600, "SYSDATE + 1/24", "N", 0),
        ("AQ$_LOCAL", 60.0, None, None, "N", 0),
        ("DBS2.NET", 60.0, None, None, "N", 0),      # Oracle's documented default: 60 s
        ("DBS3.NET", 0.0, None, None, "N", 0)]


def test_schedule_errors(conn):
    _mq(conn, "SRC")
    make_queue(conn, "SINGLE")
    aq = conn.aqadm
    _raises(24010, aq.schedule_propagation, queue_name="nope", destination="dbs2")
    _raises(24039, aq.schedule_propagation, queue_name="single", destination="dbs2")
    _raises(23605, aq.schedule_propagation, queue_name="src", destination="dbs2", latency=-1)
    _raises(23605, aq.schedule_propagation, queue_name="src", destination="dbs2", next_time="tomorrow")
    _raises(23605, aq.schedule_propagation, queue_name="src", destination="dbs2", duration=0)
    # a NaN passed '< 0' and failed in the store's NOT NULL column (sqlite3's IntegrityError);
    # an infinity or 1e300 has no date in DBA_QUEUE_SCHEDULES (PostgreSQL: out of range)
    for v in (math.nan, math.inf, 1e300, 10**400, 2**31):
        _raises(23605, aq.schedule_propagation, queue_name="src", destination="dbs2", latency=v)
        _raises(23605, aq.schedule_propagation, queue_name="src", destination="dbs2", duration=v)
    for v in (math.nan, math.inf, -math.inf, 1e300, 10**400, -5):
        with pytest.raises(sluice.InterfaceError, match="start_time"):
            aq.schedule_propagation(queue_name="src", destination="dbs2", start_time=v)
    assert _rows(conn, "SELECT * FROM DBA_QUEUE_SCHEDULES") == []
    aq.schedule_propagation(queue_name="src", destination="dbs3", start_time=253402300799,
                            latency=2**31 - 1, duration=2**31 - 1)           # the edges are taken
    aq.unschedule_propagation(queue_name="src", destination="dbs3")
    aq.schedule_propagation(queue_name="src", destination="dbs2")
    _raises(24041, aq.schedule_propagation, queue_name="src", destination="dbs2")
    _raises(24042, aq.unschedule_propagation, queue_name="src", destination="dbs9")
    _raises(24042, aq.alter_propagation_schedule, queue_name="src", destination="dbs2",
            destination_queue="x.y")
    _raises(24064, aq.enable_propagation_schedule, queue_name="src", destination="dbs2")
    assert len(_rows(conn, "SELECT * FROM DBA_QUEUE_SCHEDULES")) == 1     # nothing else changed


def test_next_time_without_a_date_is_ora_23605_and_changes_nothing(conn):
    """A zero divisor raised ZeroDivisionError; a number of days no float holds made every
    window NaN; days past the year 9999 have no DATE (Oracle: ORA-01476, ORA-01841)."""
    _mq(conn, "SRC")
    aq = conn.aqadm
    bad = ("SYSDATE + 1/0", "SYSDATE + 0/0", "SYSDATE + 1/0.0", "SYSDATE + " + "9" * 400,
           "SYSDATE + 3000000")
    for nt in bad:
        _raises(23605, aq.schedule_propagation, queue_name="src", destination="dbs2", duration=60,
                next_time=nt)
    assert _rows(conn, "SELECT * FROM DBA_QUEUE_SCHEDULES") == []
    aq.schedule_propagation(queue_name="src", destination="dbs2", duration=60, next_time="SYSDATE + 1/24")
    for nt in bad:
        _raises(23605, aq.alter_propagation_schedule, queue_name="src", destination="dbs2", duration=5,
                next_time=nt, latency=1)
    assert _rows(conn, f"SELECT {COLS} FROM DBA_QUEUE_SCHEDULES") == [
        ("DBS2", 60.0, 60, "SYSDATE + 1/24", "N", 0)]
    aq.alter_propagation_schedule(queue_name="src", destination="dbs2", duration=5,
                                  next_time="SYSDATE + 2000000")         # about 5476 years: taken
    assert next_time_offset("SYSDATE + 2000000") == 2000000 * 86400.0


def test_next_time_takes_the_days_as_oracle_examples_write_them(conn):
    """'SYSDATE + 1/(24*60)' (a window a minute after the last ended), '10/86400', '1/24/60':
    an arithmetic of numbers, as Oracle evaluates NEXT_TIME; it was ORA-23605 unless written
    'n' or 'n/m'.  What is not numbers stays ORA-23605, as does going back in time."""
    _mq(conn, "SRC")
    for text, seconds in (("SYSDATE + 1/(24*60)", 60.0), ("sysdate+10/86400", 10.0), ("SYSDATE + 1/24/60", 60.0),
                          ("SYSDATE + (1/24)", 3600.0), ("SYSDATE + 1.5e-3", 129.6), ("SYSDATE", 0.0)):
        assert next_time_offset(text) == pytest.approx(seconds), text
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs2", duration=30,
                                    next_time="SYSDATE + 1/(24*60)")
    assert _rows(conn, f"SELECT {COLS} FROM DBA_QUEUE_SCHEDULES") == [
        ("DBS2", 60.0, 30, "SYSDATE + 1/(24*60)", "N", 0)]
    for bad in ("SYSDATE - 1", "SYSDATE + -1", "SYSDATE + 1 - 2", "SYSDATE + __import__('os')", "SYSDATE + 1e400",
                "SYSDATE + " + "(" * 500 + "1" + ")" * 500, "TRUNC(1) + 1"):
        _raises(23605, conn.aqadm.alter_propagation_schedule, queue_name="src", destination="dbs2",
                next_time=bad)


def test_alter_disable_enable_unschedule(conn):
    _mq(conn, "SRC")
    aq = conn.aqadm
    aq.schedule_propagation(queue_name="src", destination="dbs2", latency=5)
    aq.alter_propagation_schedule(queue_name="src", destination="dbs2", duration=30,
                                  next_time="SYSDATE + 1", latency=1)
    assert _rows(conn, f"SELECT {COLS} FROM DBA_QUEUE_SCHEDULES") == [("DBS2", 1.0, 30, "SYSDATE + 1", "N", 0)]
    aq.alter_propagation_schedule(queue_name="src", destination="dbs2")   # NULLs: defaults
    assert _rows(conn, f"SELECT {COLS} FROM DBA_QUEUE_SCHEDULES") == [("DBS2", 60.0, None, None, "N", 0)]
    aq.disable_propagation_schedule(queue_name="src", destination="dbs2")
    _raises(24065, aq.disable_propagation_schedule, queue_name="src", destination="dbs2")
    assert _rows(conn, "SELECT SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES") == [("Y",)]
    aq.enable_propagation_schedule(queue_name="src", destination="dbs2")
    assert _rows(conn, "SELECT SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES") == [("N",)]
    aq.unschedule_propagation(queue_name="src", destination="dbs2")
    assert _rows(conn, "SELECT * FROM DBA_QUEUE_SCHEDULES") == []


def test_schedule_procedures_as_plsql(conn):
    _mq(conn, "SRC")
    conn.cursor().execute("""
        BEGIN
          DBMS_AQADM.SCHEDULE_PROPAGATION(queue_name => 'src', destination => 'dbs2.net',
                                          latency => 0, destination_queue => 'strmadmin.q');
          DBMS_AQADM.DISABLE_PROPAGATION_SCHEDULE(queue_name => 'src', destination => 'dbs2.net',
                                                  destination_queue => 'strmadmin.q');
        END;""")
    assert _rows(conn, "SELECT DESTINATION, SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES") == [
        ('"STRMADMIN"."Q"@DBS2.NET', "Y")]
    conn.cursor().execute("BEGIN DBMS_AQADM.UNSCHEDULE_PROPAGATION('src', 'dbs2.net', 'strmadmin.q'); END;")
    assert _rows(conn, "SELECT * FROM DBA_QUEUE_SCHEDULES") == []


def test_verify_queue_types(conn):
    _mq(conn, "A")
    _mq(conn, "B")
    make_queue(conn, "J", payload="JSON", multiple_consumers=True)
    assert conn.aqadm.verify_queue_types(src_queue_name="a", dest_queue_name="b") == 1
    assert conn.aqadm.verify_queue_types(src_queue_name="a", dest_queue_name="j") == 0


# -- windows and back-off with the test's clock -----------------------------------------------
def test_backoff_30s_doubling_and_disabled_after_16_failures():
    s = Schedule("S", "Q", "DBS2", start_time=T0)
    now = T0
    waits = []
    for n in range(1, MAX_FAILURES + 1):
        assert s.due(now), n
        s.record_failure(now, "ORA-12541: TNS:no listener")
        assert s.failures == n
        if n < MAX_FAILURES:
            waits.append(s.next_run - now)
            assert not s.due(s.next_run - 0.001)
            now = s.next_run
    assert waits == [30.0 * 2 ** k for k in range(MAX_FAILURES - 1)]   # 30, 60, 120 … s
    assert s.disabled == 1 and not s.due(now + 10 ** 9) and s.wake_at(now) is None
    assert s.last_error_msg.startswith("ORA-12541") and s.last_error_time == now
    s.enable(now + 5)                                       # the administrator fixed it
    assert s.failures == 0 and s.due(now + 5)


def test_a_success_resets_the_failures():
    s = Schedule("S", "Q", "DBS2", start_time=T0)
    s.record_failure(T0, "boom")
    s.record_failure(T0 + 30, "boom")
    assert s.next_run == T0 + 30 + 60
    s.record_success(T0 + 90, number=3, nbytes=300, elapsed=0.5)
    assert s.failures == 0 and s.due(T0 + 90)
    s.record_failure(T0 + 100, "boom")
    assert s.next_run == T0 + 130                           # 30 s again


def test_windows_duration_and_next_time():
    assert next_time_offset("SYSDATE + 1/24") == 3600 and next_time_offset("sysdate") == 0
    assert next_time_offset(None) is None
    s = Schedule("S", "Q", "DBS2", start_time=T0, duration=600, next_time="SYSDATE + 1/24")
    assert not s.due(T0 - 1) and s.wake_at(T0 - 1) == T0
    assert s.due(T0) and s.due(T0 + 599)
    assert not s.due(T0 + 600) and s.wake_at(T0 + 600) == T0 + 4200      # 600 s + 1 h
    assert s.window(T0 + 4300) == (T0 + 4200, T0 + 4800, T0 + 8400)
    assert s.due(T0 + 4300)
    forever = Schedule("S", "Q", "DBS2", start_time=T0)
    assert forever.window(T0 + 10 ** 8)[1] == math.inf


def test_a_null_next_time_repeats_a_finite_window_back_to_back():
    """Seed 001 "Propagation Jobs": "The next time is NULL, which means that propagation
    restarts as soon as it finishes the current duration" -- the seeds' only words on a NULL
    NEXT_TIME (seed 003 says nothing of it), so a finite window is followed at once by the
    next, never disabled.  (DBMS_AQADM's PL/SQL reference, not a seed, says propagation
    stops at the end of the current window instead.)"""
    s = Schedule("S", "Q", "DBS2", start_time=T0, duration=600)
    assert s.window(T0 + 1) == (T0, T0 + 600, T0 + 600)
    assert s.due(T0 + 599) and s.due(T0 + 600) and s.due(T0 + 10 ** 6)
    assert s.window(T0 + 601) == (T0 + 600, T0 + 1200, T0 + 1200) and not s.disabled


def _local(*args):
    """POSIX seconds of a local date and time (SYSDATE is the host's local time)."""
    return datetime(*args).timestamp()


@pytest.mark.parametrize("next_time, start, later", [
    # every day at 02:00 (DBMS_AQADM's "start the window at the same time every day")
    ("TRUNC(SYSDATE) + 1 + 2/24", (2027, 3, 1, 2), [(2027, 3, 2, 2), (2027, 3, 3, 2)]),
    ("trunc(sysdate, 'DD') + 26/24", (2027, 3, 1, 2), [(2027, 3, 2, 2), (2027, 3, 3, 2)]),
    # every Sunday at midnight
    ("NEXT_DAY(TRUNC(SYSDATE), 'SUNDAY')", (2027, 3, 7), [(2027, 3, 14), (2027, 3, 21)]),
    ("NEXT_DAY(TRUNC(SYSTIMESTAMP), 'sun')", (2027, 3, 7), [(2027, 3, 14), (2027, 3, 21)]),
    # the first of every month; the last day of every month at 23:00
    ("ADD_MONTHS(TRUNC(SYSDATE, 'MM'), 1)", (2027, 1, 1), [(2027, 2, 1), (2027, 3, 1), (2027, 4, 1)]),
    ("LAST_DAY(TRUNC(SYSDATE)) + 1", (2027, 1, 1), [(2027, 2, 1), (2027, 3, 1)]),
    ("LAST_DAY(ADD_MONTHS(TRUNC(SYSDATE), 1)) + 23/24", (2027, 1, 31, 23), [(2027, 2, 28, 23), (2027, 3, 31, 23)]),
    # every hour on the hour
    ("TRUNC(SYSDATE, 'HH24') + 1/24", (2027, 3, 1, 5), [(2027, 3, 1, 6), (2027, 3, 1, 7)]),
], ids=["day-0200", "day-fmt", "sunday", "sunday-abbrev", "month-first", "month-last-day", "month-end-2300",
        "hourly"])
def test_a_calendar_next_time_starts_each_window_when_its_date_function_says(next_time, start, later):
    """DBMS_AQADM.SCHEDULE_PROPAGATION: NEXT_TIME is the "date function to compute the start
    of the next propagation window from the end of the current window" — Oracle's examples
    use TRUNC(SYSDATE) and NEXT_DAY for windows at a time of day or week, which no fixed
    period says (a month has no fixed length)."""
    t0 = _local(*start)
    s = Schedule("S", "Q", "DBS2", start_time=t0, duration=600, next_time=next_time)
    assert s.window(t0 + 1) == (t0, t0 + 600, _local(*later[0]))
    assert s.due(t0 + 599) and not s.due(t0 + 600) and s.wake_at(t0 + 600) == _local(*later[0])
    for at, after in zip(later, later[1:]):
        w = _local(*at)
        assert s.window(w + 300) == (w, w + 600, _local(*after)) and s.due(w + 300)
        assert s.window(w + 900)[0] == w and not s.due(w + 900)     # between windows


def test_a_calendar_next_time_that_is_not_later_starts_the_next_window_at_once():
    """TRUNC(SYSDATE) alone is before the end of the window: the next one starts at its end."""
    t0 = _local(2027, 3, 1, 10)
    s = Schedule("S", "Q", "DBS2", start_time=t0, duration=600, next_time="TRUNC(SYSDATE)")
    assert s.window(t0 + 1) == (t0, t0 + 600, t0 + 600)
    assert s.window(t0 + 6000 + 5) == (t0 + 6000, t0 + 6600, t0 + 6600) and s.due(t0 + 6005)


def test_calendar_next_times_as_schedule_propagation_takes_them(conn):
    _mq(conn, "SRC")
    conn.cursor().execute("""
        BEGIN
          DBMS_AQADM.SCHEDULE_PROPAGATION(queue_name => 'src', destination => 'dbs2.net', duration => 3600,
                                          next_time => 'TRUNC(SYSDATE) + 1 + 2/24');
        END;""")
    assert _rows(conn, "SELECT NEXT_TIME, PROPAGATION_WINDOW FROM DBA_QUEUE_SCHEDULES") == [
        ("TRUNC(SYSDATE) + 1 + 2/24", 3600)]
    bad = ("TRUNC(SYSDATE, 'XX')", "NEXT_DAY(SYSDATE, 'FUNDAY')", "ADD_MONTHS(SYSDATE)", "TRUNC(SYSDATE) * 2",
           "TRUNC(SYSDATE) + __import__('os')", "ADD_MONTHS(SYSDATE, 1e12)", "TRUNC(SYSDATE) + 3000000",
           "TRUNC(SYSDATE", "TRUNC(SYSDATE)) + 1", "LAST_DAY(1)", "NEXT_DAY(SYSDATE, 1)", "TRUNC(SYSDATE) + 1e400",
           "TRUNC(" * 5000 + "SYSDATE" + ")" * 5000)
    for nt in bad:
        _raises(23605, conn.aqadm.alter_propagation_schedule, queue_name="src", destination="dbs2.net",
                duration=60, next_time=nt)
    assert _rows(conn, "SELECT NEXT_TIME, PROPAGATION_WINDOW FROM DBA_QUEUE_SCHEDULES") == [
        ("TRUNC(SYSDATE) + 1 + 2/24", 3600)]


def test_a_retry_past_the_window_slips_to_the_next_window_and_stays_there():
    s = Schedule("S", "Q", "DBS2", start_time=T0, duration=100, next_time="SYSDATE + 1/24")
    s.record_failure(T0 + 50, "boom")            # +30 s is inside the window
    assert s.next_run == T0 + 80
    s.record_failure(T0 + 80, "boom")            # +60 s would be past its end
    assert s.next_run == T0 + 100 + 3600
    s.record_failure(T0 + 3700, "boom")          # +120 s is inside, but once slipped: next window
    assert s.next_run == T0 + 2 * 3700


def test_statistics_per_window():
    s = Schedule("S", "Q", "DBS2", start_time=T0, duration=100)   # back-to-back windows
    s.record_success(T0 + 1, 10, 1000, 0.2, dequeue_time=0.05, pickle_time=0.01)
    s.record_success(T0 + 2, 5, 500, 0.1)
    s.record_success(T0 + 150, 4, 400, 0.1)
    assert (s.total_number, s.total_bytes, s.max_number, s.max_bytes, s.windows) == (19, 1900, 15, 1500, 2)
    assert s.total_time == pytest.approx(0.4) and s.elapsed_dequeue_time == pytest.approx(0.05)


def test_statistics_columns_in_the_view(conn):
    _mq(conn, "SRC")
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs2")
    cols = conn.query("SELECT * FROM DBA_QUEUE_SCHEDULES", None)[0]
    for col in ("TOTAL_NUMBER", "TOTAL_BYTES", "MAX_NUMBER", "MAX_BYTES", "AVG_NUMBER", "AVG_SIZE",
                "AVG_TIME", "TOTAL_TIME", "ELAPSED_DEQUEUE_TIME", "ELAPSED_PICKLE_TIME", "LAST_RUN_DATE",
                "LAST_RUN_TIME", "NEXT_RUN_DATE", "NEXT_RUN_TIME", "SCHEDULE_DISABLED", "FAILURES",
                "LAST_ERROR_MSG", "LAST_ERROR_DATE", "LAST_ERROR_TIME"):
        assert col in cols, col


def test_seed_003_style_schedule_block(conn):
    """The parameters as DBMS_AQADM's documentation passes them: SYSDATE, a duration in
    seconds, a date function for the next window, a latency."""
    _mq(conn, "SRC")
    conn.cursor().execute("""
        BEGIN
          DBMS_AQADM.SCHEDULE_PROPAGATION(queue_name => 'src', destination => 'dbs2.net',
                                          start_time => SYSDATE, duration => 3600,
                                          next_time => 'SYSDATE + 1', latency => 10);
        END;""")
    [(window, next_time, latency, start_date)] = _rows(
        conn, "SELECT PROPAGATION_WINDOW, NEXT_TIME, LATENCY, START_DATE FROM DBA_QUEUE_SCHEDULES")
    assert (window, next_time, latency) == (3600, "SYSDATE + 1", 10.0) and start_date is not None


@pytest.mark.parametrize("how", ["drop_queue", "drop_queue_table_force"])
def test_dropping_the_source_queue_unschedules_its_propagation(conn, how):
    """DBMS_AQADM.DROP_QUEUE: "All the queue data is deleted as part of the drop
    operation"; DROP_QUEUE_TABLE with force: "All queues in the table are stopped and
    dropped automatically".  A queue's propagation schedules are its data (Oracle's
    DBA_QUEUE_SCHEDULES lists only schedules of existing queues): they go with it, as by
    UNSCHEDULE_PROPAGATION — none is left to run, failing with ORA-24010, and the queue
    created again under the name can be scheduled afresh (no ORA-24041)."""
    _mq(conn, "SRC")
    _mq(conn, "OTHER")
    for q in ("src", "other"):
        conn.aqadm.schedule_propagation(queue_name=q, destination="dbs2")
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs2", destination_queue="b.q")
    conn.aqadm.schedule_propagation(queue_name="src")
    conn.aqadm.disable_propagation_schedule(queue_name="src")
    if how == "drop_queue":
        conn.aqadm.stop_queue(queue_name="src")
        conn.aqadm.drop_queue(queue_name="src")
    else:
        conn.aqadm.drop_queue_table(queue_table="src_qt", force=True)
    assert _rows(conn, "SELECT QNAME, DESTINATION FROM DBA_QUEUE_SCHEDULES") == [("OTHER", "DBS2")]
    assert _rows(conn, "SELECT QNAME FROM SLUICE_QUEUE_SCHEDULES") == [("OTHER",)]
    if how == "drop_queue":
        conn.aqadm.create_queue(queue_name="src", queue_table="src_qt")
    else:
        _mq(conn, "SRC")
    conn.aqadm.schedule_propagation(queue_name="src", destination="dbs2")
    assert _rows(conn, "SELECT QNAME, DESTINATION FROM DBA_QUEUE_SCHEDULES ORDER BY QNAME") == [
        ("OTHER", "DBS2"), ("SRC", "DBS2")]
