"""Issue 2, acceptance 3: the example blocks of seeds 001/002/003, run through ``sluice sql``.

Seeds 001 (Streams 11.1 "Staging and Propagation"), 002 (its 11.2 Japanese wording) and
003 (AQ introduction) describe AQ in prose: they print no PL/SQL block, CREATE or SELECT
statement.  ``test_seeds_print_no_statement_blocks`` scans them so that a statement added
to a seed cannot go untested; the other tests run, through ``sluice sql``, the
DBMS_AQADM calls their prose names with the parameters it names.
"""

import pathlib
import re

from click.testing import CliRunner

import sluice
from sluice.cli import main

SEEDS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "seeds"
# statement starts as SQL*Plus users type them (upper-case keywords, as the seeds print)
STATEMENT = re.compile(r"^\s*(BEGIN\s*$|BEGIN\s+\w+\.|DECLARE\b|EXEC(UTE)?\s+\w+\.\w+|"
                       r"CREATE\s+(OR\s+REPLACE\s+)?(TYPE|TABLE|USER|DATABASE)\b|SELECT\s.+\sFROM\s)",
                       re.M)

# (seed, first line of each statement block it prints) — none in these three seeds
BLOCKS_IN_SEEDS: dict[str, list[str]] = {"001": [], "002": [], "003": []}


def test_seeds_print_no_statement_blocks():
    # the scanner does find statements where a seed prints them (seed 000's blocks)
    (seed000,) = SEEDS.glob("000_*.txt")
    assert len(STATEMENT.findall(seed000.read_text())) >= 15
    for prefix, expected in BLOCKS_IN_SEEDS.items():
        (path,) = SEEDS.glob(f"{prefix}_*.txt")
        found = [m.group(0).strip() for m in STATEMENT.finditer(path.read_text())]
        assert found == expected, f"seed {prefix} prints statements now: {found}"


def _sql(dsn, text):
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", text], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


def test_commit_time_queue_as_the_seeds_describe(dsn):
    """Seed 001 "Commit-Time Queues": ``commit_time`` in CREATE_QUEUE_TABLE's sort_list;
    also ``priority, commit_time``."""
    _sql(dsn, """BEGIN
      DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'strmadmin.ct_qt', queue_payload_type => 'SYS.ANYDATA',
                                    sort_list => 'commit_time', multiple_consumers => FALSE,
                                    message_grouping => DBMS_AQADM.TRANSACTIONAL);
      DBMS_AQADM.CREATE_QUEUE(queue_name => 'strmadmin.ct_q', queue_table => 'strmadmin.ct_qt');
      DBMS_AQADM.START_QUEUE(queue_name => 'strmadmin.ct_q');
      DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'strmadmin.pct_qt', queue_payload_type => 'RAW',
                                    sort_list => 'priority, commit_time');
    END;""")
    out = _sql(dsn, "SELECT owner, queue_table, sort_order, message_grouping FROM dba_queue_tables "
                    "ORDER BY queue_table")
    assert "CT_QT" in out and "COMMIT_TIME" in out and "TRANSACTIONAL" in out
    assert "PRIORITY,COMMIT_TIME" in out


def test_enqueue_and_dequeue_blocks_in_plsql(dsn):
    """DBMS_AQ.ENQUEUE / DEQUEUE with the PL/SQL records, as AQ users write them."""
    _sql(dsn, """BEGIN
      DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'raw_qt', queue_payload_type => 'RAW');
      DBMS_AQADM.CREATE_QUEUE(queue_name => 'raw_q', queue_table => 'raw_qt', max_retries => 3,
                              retention_time => 0);
      DBMS_AQADM.START_QUEUE(queue_name => 'raw_q');
    END;""")
    _sql(dsn, """DECLARE
      enqueue_options     DBMS_AQ.ENQUEUE_OPTIONS_T;
      message_properties  DBMS_AQ.MESSAGE_PROPERTIES_T;
      message_handle      RAW(16);
    BEGIN
      FOR i IN 1..3 LOOP
        message_properties.correlation := 'order-' || i;
        message_properties.priority := i;
        DBMS_AQ.ENQUEUE(queue_name => 'raw_q', enqueue_options => enqueue_options,
                        message_properties => message_properties,
                        payload => UTL_RAW.CAST_TO_RAW('payload ' || i), msgid => message_handle);
      END LOOP;
      COMMIT;
    END;""")
    out = _sql(dsn, """DECLARE
      dequeue_options     DBMS_AQ.DEQUEUE_OPTIONS_T;
      message_properties  DBMS_AQ.MESSAGE_PROPERTIES_T;
      message_handle      RAW(16);
      payload             RAW(100);
    BEGIN
      dequeue_options.wait := DBMS_AQ.NO_WAIT;
      dequeue_options.correlation := 'order-2';
      DBMS_AQ.DEQUEUE(queue_name => 'raw_q', dequeue_options => dequeue_options,
                      message_properties => message_properties, payload => payload,
                      msgid => message_handle);
      DBMS_OUTPUT.PUT_LINE('got ' || UTL_RAW.CAST_TO_VARCHAR2(payload) || ' priority '
                           || message_properties.priority);
      COMMIT;
    END;""")
    assert "got payload 2 priority 2" in out
    with sluice.connect(dsn) as c:
        assert c.query("SELECT corr_id FROM aq$raw_qt ORDER BY corr_id", None)[1] == [
            ("order-1",), ("order-3",)]


def test_timeout_in_plsql_dequeue_is_25228(dsn):
    _sql(dsn, "BEGIN DBMS_AQADM.CREATE_QUEUE_TABLE('t_qt', 'RAW'); DBMS_AQADM.CREATE_QUEUE('t_q', 't_qt');"
              " DBMS_AQADM.START_QUEUE('t_q'); END;")
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", """DECLARE
      o DBMS_AQ.DEQUEUE_OPTIONS_T; p DBMS_AQ.MESSAGE_PROPERTIES_T; h RAW(16); d RAW(10);
    BEGIN o.wait := DBMS_AQ.NO_WAIT;
      DBMS_AQ.DEQUEUE('t_q', o, p, d, h); END;"""], catch_exceptions=False)
    assert r.exit_code == 1 and "ORA-25228" in r.output


def test_malformed_statements_change_nothing(dsn):
    for bad in ("BEGIN DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'x_qt' queue_payload_type => 'RAW'); END;",
                "BEGIN DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'x_qt', queue_payload_type => 'RAW'",
                "BEGIN DBMS_AQADM.NO_SUCH_PROC('x'); END;",
                "CREATE TYPE broken AS OBJECT (a VARCHAR2(10) b NUMBER)",
                "FROB the queue"):
        r = CliRunner().invoke(main, ["--dsn", dsn, "sql", bad], catch_exceptions=False)
        assert r.exit_code == 1 and "ORA-" in r.output, (bad, r.output)
    with sluice.connect(dsn) as c:
        assert c.query("SELECT COUNT(*) FROM user_queue_tables", None)[1] == [(0,)]
        assert c.query("SELECT COUNT(*) FROM dba_types", None)[1] == [(0,)]
