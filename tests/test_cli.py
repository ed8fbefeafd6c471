"""The sluice command (issue 2: init, sql, enqueue, dequeue, browse, queues, demo)."""

import re

from click.testing import CliRunner

from sluice.cli import main

SETUP = """
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'cli_qt', queue_payload_type => 'RAW',
                                sort_list => 'priority,enq_time');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'cli_q', queue_table => 'cli_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'cli_q');
END;
/
"""


def _run(dsn, *args, input=None):
    r = CliRunner().invoke(main, ["--dsn", dsn, *args], input=input, catch_exceptions=False)
    return r


def test_init_sql_enqueue_dequeue_browse_queues(dsn, tmp_path):
    assert _run(dsn, "init").exit_code == 0
    script = tmp_path / "setup.sql"
    script.write_text(SETUP)
    r = _run(dsn, "sql", "-f", str(script))
    assert r.exit_code == 0 and "PL/SQL procedure successfully completed." in r.output
    r = _run(dsn, "enqueue", "cli_q", "low", "--priority", "5")
    assert r.exit_code == 0 and re.fullmatch(r"[0-9A-F]{32}\n", r.output)
    assert _run(dsn, "enqueue", "cli_q", "high", "--priority", "1", "--correlation", "C1").exit_code == 0
    r = _run(dsn, "browse", "cli_q")
    assert r.output.index("high") < r.output.index("low")
    r = _run(dsn, "queues")
    assert "SLUICE.CLI_Q" in r.output and "AQ$_CLI_QT_E" in r.output
    r = _run(dsn, "sql", "SELECT corr_id, msg_state FROM aq$cli_qt WHERE corr_id = 'C1'")
    assert "C1" in r.output and "READY" in r.output and "1 row selected." in r.output
    r = _run(dsn, "dequeue", "cli_q", "--count", "5")
    assert "high" in r.output and "low" in r.output
    assert "no message" in _run(dsn, "dequeue", "cli_q").output


def test_sql_errors_exit_nonzero_with_the_ora_code(dsn):
    r = _run(dsn, "sql", "BEGIN DBMS_AQADM.START_QUEUE(queue_name => 'nope'); END;")
    assert r.exit_code == 1 and "ORA-24010" in r.output
    r = _run(dsn, "sql", "BEGIN DBMS_AQADM.START_QUEUE(queue_name => 'nope' END;")
    assert r.exit_code == 1 and "ORA-06550" in r.output


def test_demo_runs(dsn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["demo", "--dsn", dsn], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "exception queue" in r.output and "Done." in r.output
