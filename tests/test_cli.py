"""The sluice command (issue 2: init, sql, enqueue, dequeue, browse, queues, demo)."""

import os
import re
import socket
import subprocess
import sys

import pytest
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



def test_sql_says_what_a_role_statement_did(dsn):
    """SQL*Plus's feedback for CREATE ROLE / DROP ROLE as for users and grants (it printed
    nothing for them)."""
    r = _run(dsn, "sql", "CREATE ROLE cli_role;\nGRANT cli_role TO sluice;\nDROP ROLE cli_role;")
    assert r.exit_code == 0, r.output
    assert r.output.split("\n") == ["Role created.", "Grant succeeded.", "Role dropped.", ""]


def test_a_script_that_is_not_utf8_is_a_usage_error_before_any_of_it_runs(dsn, tmp_path):
    """A byte that is not UTF-8 in `sql -f` was ORA-00600 [UnicodeDecodeError]; on stdin the
    statements before it ran, then ORA-00900. Now a usage error naming the file and the offset,
    and nothing of the script has run."""
    assert _run(dsn, "init").exit_code == 0
    script = SETUP.encode() + b"SELECT 1 FROM dual;\n\xff;\n"
    bad = tmp_path / "bad.sql"
    bad.write_bytes(script)
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", "-f", str(bad)])
    assert r.exit_code == 2, r.output
    assert f"{bad}: not UTF-8 text: byte 0xFF at offset {len(SETUP) + 20} (invalid start byte)" in r.output
    assert "ORA-" not in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql"], input=script)
    assert r.exit_code == 2 and f"<stdin>: not UTF-8 text: byte 0xFF at offset {len(SETUP) + 20}" in r.output, r.output
    assert "PL/SQL procedure" not in r.output
    assert "CLI_Q" not in _run(dsn, "queues").output
    good = tmp_path / "good.sql"
    good.write_bytes(SETUP.encode() + "SELECT 'é' FROM dual;\n".encode())
    r = _run(dsn, "sql", "-f", str(good))
    assert r.exit_code == 0 and "PL/SQL procedure successfully completed." in r.output and "é" in r.output

def test_a_script_with_a_byte_order_mark_runs(dsn, tmp_path):
    """A script saved with a UTF-8 byte order mark (Notepad's default) ran its first
    statement with the mark in front: ORA-06550 and nothing set up. The mark is skipped,
    from a file and from stdin; a non-UTF-8 byte's offset still counts the file's bytes."""
    script = b"\xef\xbb\xbf" + SETUP.encode() + "SELECT 'é' FROM dual;\n".encode()
    (tmp_path / "bom.sql").write_bytes(script)
    r = _run(dsn, "sql", "-f", str(tmp_path / "bom.sql"))
    assert r.exit_code == 0 and "PL/SQL procedure successfully completed." in r.output and "é" in r.output, r.output
    assert "SLUICE.CLI_Q" in _run(dsn, "queues").output
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql"], input=b"\xef\xbb\xbfSELECT 'x' FROM dual;\n")
    assert r.exit_code == 0 and "1 row selected." in r.output, r.output
    (tmp_path / "bad.sql").write_bytes(b"\xef\xbb\xbfSELECT 1 FROM dual;\n\xff;\n")
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", "-f", str(tmp_path / "bad.sql")])
    assert r.exit_code == 2 and "byte 0xFF at offset 23" in r.output, r.output


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_commands_that_use_a_store_do_not_make_one(backend, tmp_path):
    """browse, queues, top, enqueue, dequeue and pipeline status on a DSN where no store is
    made an empty store (a new SQLite file, a new PostgreSQL schema with its catalog) and
    then said the queue did not exist, or showed nothing. Now ORA-27041 / ORA-12154 saying
    there is no store, and nothing is made; init still makes one."""
    import psycopg

    from tests.conftest import PG_BASE
    if backend == "sqlite":
        where = tmp_path / "nothing.db"
        dsn, code = f"sqlite:///{where}", "ORA-27041"

        def made():
            return where.exists()
    else:
        schema = f"cli_none_{os.getpid()}"
        dsn, code = f"{PG_BASE}{'&' if '?' in PG_BASE else '?'}schema={schema}", "ORA-12154"

        def made():
            with psycopg.connect(PG_BASE) as c:
                return c.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is not None
    for args in (["browse", "q"], ["queues"], ["top", "--once"], ["enqueue", "q", "x"], ["dequeue", "q"],
                 ["pipeline", "status"]):
        r = CliRunner().invoke(main, ["--dsn", dsn, *args])
        assert r.exit_code == 1 and code in r.output and "sluice init" in r.output, (args, r.output)
        assert not made(), args
    try:
        assert _run(dsn, "init").exit_code == 0 and made()
        assert _run(dsn, "queues").exit_code == 0
    finally:
        if backend == "postgresql":
            with psycopg.connect(PG_BASE, autocommit=True) as c:
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_demo_runs(dsn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["demo", "--dsn", dsn], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "exception queue" in r.output and "Done." in r.output


# -- front doors never show a traceback (issue 11, item 7) ----------------------------------

ONE_LINE_ERROR = re.compile(r"error: (ORA|SLU|DPY)-\d{4,5}: \S.*\n")


def _bad_stores(tmp_path):
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("plain text, not an SQLite database, long enough to have a header\n")
    return {"missing directory": (f"sqlite:///{tmp_path}/no/such/dir/x.db", "ORA-27041"),
            "unwritable": ("sqlite:////sys/sluice-cli-test.db", "ORA-27041"),
            "not SQLite": (f"sqlite:///{not_sqlite}", "ORA-01157"),
            "unknown scheme": ("oracle://scott@dbhost/orclpdb", "ORA-12154"),
            "server refuses": ("postgresql://postgres@127.0.0.1:1/test", "ORA-12541")}


# every command of the CLI, with the arguments that take it to its store
# (demo names its store with its own --dsn; idap talks to a servlet, not to a store)
COMMANDS = {
    "init": lambda dsn: ["--dsn", dsn, "init"],
    "sql": lambda dsn: ["--dsn", dsn, "sql", "SELECT * FROM user_queues"],
    "enqueue": lambda dsn: ["--dsn", dsn, "enqueue", "q", "hello"],
    "dequeue": lambda dsn: ["--dsn", dsn, "dequeue", "q"],
    "browse": lambda dsn: ["--dsn", dsn, "browse", "q"],
    "queues": lambda dsn: ["--dsn", dsn, "queues"],
    "serve": lambda dsn: ["--dsn", dsn, "serve", "--port", "0"],
    "demo": lambda dsn: ["demo", "--dsn", dsn],
    "run": lambda dsn: ["--dsn", dsn, "run"],
    "compare": lambda dsn: ["compare", "HR.EMP", "--source", dsn, "--target", dsn],
    "pipeline": lambda dsn: ["--dsn", dsn, "pipeline", "status"],
    "top": lambda dsn: ["--dsn", dsn, "top", "--once"],
}
IDAP = {  # a servlet that is not there
    "send": ["idap", "--url", "http://127.0.0.1:1", "--agent", "a", "--agent-password", "p", "send", "Q", "x"],
    "receive": ["idap", "--url", "http://127.0.0.1:1", "--agent", "a", "--agent-password", "p", "receive", "Q"],
}


def _clean_failure(code, stdout, stderr, expected):
    assert code == 1, (code, stdout, stderr)
    assert ONE_LINE_ERROR.fullmatch(stderr), stderr
    assert expected in stderr, stderr
    assert "Traceback" not in stdout + stderr


def test_every_command_refuses_a_bad_store_in_one_line(tmp_path):
    from sluice.idap.commands import idap
    assert set(COMMANDS) | {"idap"} == set(main.commands)   # a new command needs a case here
    assert set(IDAP) == set(idap.commands)
    for what, (dsn, expected) in _bad_stores(tmp_path).items():
        for name, args in COMMANDS.items():
            r = CliRunner().invoke(main, args(dsn))
            assert r.exception is None or isinstance(r.exception, SystemExit), (what, name, r.exception)
            _clean_failure(r.exit_code, r.stdout, r.stderr, expected)
    for name, args in IDAP.items():
        r = CliRunner().invoke(main, args)
        _clean_failure(r.exit_code, r.stdout, r.stderr, "ORA-12541")


def _sluice(*args, cwd=None):
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SLUICE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "sluice.cli", *args], env=env, cwd=cwd, timeout=120,
                          capture_output=True, text=True)


def test_bad_input_in_real_processes(tmp_path):
    """The issue's repro and a few more, as a user's shell sees them."""
    bad = _bad_stores(tmp_path)
    runs = [
        (["--dsn", f"sqlite:////{tmp_path}/no/such/dir/x.db", "queues"], "ORA-27041"),
        (COMMANDS["enqueue"](bad["unknown scheme"][0]), "ORA-12154"),
        (COMMANDS["serve"](bad["server refuses"][0]), "ORA-12541"),
        (COMMANDS["demo"](bad["not SQLite"][0]), "ORA-01157"),
        (COMMANDS["sql"](bad["unwritable"][0]), "ORA-27041"),
        (IDAP["receive"], "ORA-12541"),
    ]
    for args, expected in runs:
        r = _sluice(*args, cwd=tmp_path)
        _clean_failure(r.returncode, r.stdout, r.stderr, expected)
    r = _sluice("--version")
    assert r.returncode == 0 and re.fullmatch(r"sluice \d+\.\d+\.\d+\S*\n", r.stdout), r.stdout + r.stderr


def test_bad_input_on_a_good_store(dsn, tmp_path):
    assert _run(dsn, "init").exit_code == 0
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    cases = [
        (["enqueue", "no_such_q", "x"], "ORA-24010"),
        (["dequeue", "no_such_q"], "ORA-24010"),
        (["browse", "no_such_q"], "ORA-24010"),
        (["sql", "CREATE TYPE t AS OBJECT (a NUMBER);\n/\nBEGIN DBMS_AQADM.CREATE_QUEUE_TABLE("
          "queue_table => 'tq', queue_payload_type => 't'); DBMS_AQADM.CREATE_QUEUE(queue_name => 'oq', "
          "queue_table => 'tq'); DBMS_AQADM.START_QUEUE(queue_name => 'oq'); END;\n/"], None),
        (["enqueue", "oq", "not json"], "ORA-25215"),
        (["browse", "oq", "--condition", "no_such_column = 1"], "ORA-00904"),
        (["serve", "--port", str(busy.getsockname()[1])], "ORA-12542"),
        (["serve", "--host", "no-such-host.invalid"], "ORA-12545"),
    ]
    try:
        for args, expected in cases:
            r = CliRunner().invoke(main, ["--dsn", dsn, *args])
            if expected is None:
                assert r.exit_code == 0, r.output
            else:
                _clean_failure(r.exit_code, r.stdout, r.stderr, expected)
    finally:
        busy.close()


def test_numbers_out_of_range_are_refused_before_anything_starts(tmp_path):
    """A port past 65535 was taken modulo 65536 (serve listened on another port); a pool,
    worker count or session timeout of 0 (or a pool_min above pool_max) killed the server's
    start-up with a traceback in its log; a negative batch size ran a pipeline. Now each is a
    usage error naming the option, before a store, a server or Spark is touched (or a server
    asked)."""
    from sluice.idap import IdapConfig
    from sluice.pipeline.stages import PipelineSpec

    dsn = f"sqlite:///{tmp_path / 'never-made.db'}"
    for args, option in [
            (["serve", "--port", "99999"], "--port"), (["serve", "--port", "-1"], "--port"),
            (["serve", "--pool-max", "0"], "--pool-max"), (["serve", "--pool-min", "-1"], "--pool-min"),
            (["serve", "--pool-min", "60", "--pool-max", "50"], "--pool-min"),
            (["serve", "--session-timeout", "0"], "--session-timeout"),
            (["serve", "--max-request-bytes", "0"], "--max-request-bytes"), (["serve", "--workers", "0"], "--workers"),
            (["serve", "--max-batch-bytes", "0"], "--max-batch-bytes"),
            (["run", "--stop-timeout", "-1"], "--stop-timeout"),
            (["pipeline", "run", "--queue", "Q", "--warehouse", "wh", "--max-messages-per-batch", "0"],
             "--max-messages-per-batch"),
            (["pipeline", "report", str(tmp_path), "volume", "--top", "0"], "--top"),
            # a count of 0 was refused only once the store had been made (dequeue, browse) or
            # by the server (idap receive: ORA-19202); a negative wait once the store was made
            (["dequeue", "Q", "--count", "0"], "--count"), (["dequeue", "Q", "--wait", "-5"], "--wait"),
            (["browse", "Q", "--count", "-3"], "--count"),
            (["idap", "--agent", "a", "--agent-password", "p", "receive", "Q", "--count", "0"], "--count")]:
        r = CliRunner().invoke(main, ["--dsn", dsn, *args])
        assert r.exit_code == 2 and "Invalid value for" in r.output and option in r.output, (args, r.output)
        assert "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == []      # no store, no warehouse, no checkpoints
    for bad in ({"pool_max": 0}, {"pool_min": 51}, {"pool_min": -1}, {"session_timeout": 0}, {"workers": 0},
                {"max_request_bytes": 0}, {"max_batch_bytes": 0}, {"max_sessions": 0}, {"inline_max_bytes": -1}, {"monitor_max_age": -1}):
        with pytest.raises(ValueError, match="invalid servlet settings: " + next(iter(bad))):
            IdapConfig(dsn, **bad)
    for bad in ({"max_messages_per_batch": 0}, {"apply_tasks": -2}, {"partitions": 0}, {"max_messages_per_batch": 1.5}):
        with pytest.raises(ValueError, match=next(iter(bad)) + " must be a positive integer"):
            PipelineSpec("p", dsn, "Q", **bad)


def test_compare_refuses_a_bad_key_or_predicate_in_one_line(tmp_path):
    """`sluice compare` with a key column the tables lack (was ORA-26688 "no key ... (give
    key columns)" though one was given), a predicate that does not parse (was ORA-00600),
    a negative --max-rows (listed all but the last row); --max-rows caps the listing."""
    import sqlite3

    dsns = []
    for name in ("a", "b"):
        with sqlite3.connect(tmp_path / f"{name}.db") as c:
            c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            c.execute("CREATE TABLE nokey (id INTEGER, v TEXT)")
            c.executemany("INSERT INTO t VALUES (?, ?)", [(i, name) for i in range(5)])
        dsns.append(f"sqlite:///{tmp_path / name}.db")
    both = ["--source", dsns[0], "--target", dsns[1]]
    for args, expected in [(["T", "--key", "nope"], 'ORA-00904: "NOPE" (a key column SLUICE.T'),
                           (["T", "--where", "id >"], "ORA-00900: invalid SQL statement: comparing the rows WHERE id >"),
                           (["NOKEY"], "ORA-26688")]:
        r = CliRunner().invoke(main, ["compare", *args, *both])
        _clean_failure(r.exit_code, r.stdout, r.stderr, expected)
    r = CliRunner().invoke(main, ["compare", "T", "--max-rows", "-1", *both])
    assert r.exit_code == 2 and "Invalid value for '--max-rows'" in r.output
    r = CliRunner().invoke(main, ["compare", "T", "--max-rows", "2", "--where", "id < 4", *both])
    assert r.exit_code == 2 and "4 rows; replica SLUICE.T: 5 rows" in r.output and "2 rows selected" in r.output, r.output



def test_compare_makes_no_database_that_is_not_there(tmp_path):
    """`sluice compare` against SQLite files that were not there made them (empty, 4 KB
    each) before failing with ORA-00942; it only reads: ORA-27041 naming the file, and
    nothing made."""
    import sqlite3

    with sqlite3.connect(tmp_path / "real.db") as c:
        c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    real = f"sqlite:///{tmp_path / 'real.db'}"
    for source, target, missing in [(f"sqlite:///{tmp_path / 'new1.db'}", f"sqlite:///{tmp_path / 'new2.db'}", "new1.db"),
                                    (real, f"sqlite:///{tmp_path / 'new2.db'}", "new2.db"),
                                    (f"sqlite:///{tmp_path / 'new1.db'}", real, "new1.db")]:
        r = CliRunner().invoke(main, ["compare", "T", "--source", source, "--target", target])
        _clean_failure(r.exit_code, r.stdout, r.stderr,
                       f"ORA-27041: unable to open file {tmp_path / missing}: No such file or directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real.db"]

def test_an_unforeseen_failure_is_one_line_too(dsn, monkeypatch):
    def broken(*a, **k):
        raise KeyError("boom")
    assert _run(dsn, "init").exit_code == 0
    monkeypatch.setattr("sluice.cli._print_table", broken)
    monkeypatch.delenv("SLUICE_DEBUG", raising=False)
    r = CliRunner().invoke(main, ["--dsn", dsn, "queues"])
    _clean_failure(r.exit_code, r.stdout, r.stderr, "ORA-00600")
    assert "KeyError" in r.stderr
    monkeypatch.setenv("SLUICE_DEBUG", "1")            # the traceback when asked for
    r = CliRunner().invoke(main, ["--dsn", dsn, "queues"])
    assert isinstance(r.exception, KeyError)


def test_version():
    from importlib.metadata import version
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and r.output == f"sluice {version('sluice')}\n"
