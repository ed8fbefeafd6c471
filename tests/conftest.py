"""Fixtures shared by the whole suite.

``dsn`` is parametrised over every backend: each behavioural test runs on each.
A backend that is listed here but unavailable makes its tests FAIL, never skip.

PostgreSQL: each test gets a schema of its own in the database of
``SLUICE_TEST_PG`` (default ``postgresql://postgres@127.0.0.1:5432/test``): a store
reset to a fresh one's state and renamed after the test before it, or a new schema
(tests/pgschemas.py); after the test it is reset for the next, or dropped. Under
pytest-xdist each worker has a database of its own (``_worker_database``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
import uuid

import psycopg
import pytest

import sluice
from sluice.security import passwords

# Users' password hashes made by the tests cost scrypt n=2**10 instead of the product's 2**14
# (~2.5 ms of CPU instead of ~40 ms; 698 hashes and checks in 154 tests of tests/security,
# tests/idap/test_protocol.py and tests/rules/test_rule_privileges.py took 27 CPU-s). Each hash
# keeps its parameters, so servers the tests start check them as made; tests/security asserts the
# product's own cost (DESIGN-NOTES "Test suite time").
PRODUCT_PASSWORD_COST = dict(passwords.COST)
passwords.COST["n"] = 2**10

BACKENDS = ["sqlite", "postgresql"]
PG_BASE = os.environ.get("SLUICE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


# setup.sh's tablespace on tmpfs: each PostgreSQL test creates and drops a store of ~25 tables,
# on this VM's ext4 disk (mounted with discard) 0.55-0.66 s of wall and 150 ms of server CPU
# each, in the tablespace 0.18-0.33 s and 100 ms (2026-11-30). The tests prove process-crash
# safety (kill -9 of clients and of the server), which tmpfs keeps; not power loss.
TEST_TABLESPACE = "sluice_test_mem"


def _worker_database() -> tuple[str, str, int] | None:
    """Under pytest-xdist each worker runs its PostgreSQL tests in a database of its own,
    created when this module is imported (before any other conftest or test module reads
    SLUICE_TEST_PG or PG_BASE) and dropped when the worker ends. Logical decoding reads one
    database's WAL: a capture test decoding while another worker drops its schemas in the
    same database can fail with "could not map filenode ... to relation OID" (seen when two
    checkouts' suites shared the database). Subprocesses inherit the setting."""
    global PG_BASE
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or os.environ.get("SLUICE_TEST_WORKER_DB"):   # not a worker, or its child
        return None
    db = f"sluice_test_{worker}_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(PG_BASE, autocommit=True, connect_timeout=5) as admin:
            try:   # relation files on tmpfs when setup.sh made the tablespace (speed only)
                admin.execute(f"CREATE DATABASE {db} TABLESPACE {TEST_TABLESPACE}")
            except psycopg.Error:
                admin.execute(f"CREATE DATABASE {db}")
    except psycopg.Error:
        return None   # the server is down: PostgreSQL tests fail through pg_admin(), SQLite ones run
    admin_dsn, (base, _, query) = PG_BASE, PG_BASE.partition("?")
    PG_BASE = base.rsplit("/", 1)[0] + "/" + db + (f"?{query}" if query else "")
    os.environ["SLUICE_TEST_PG"], os.environ["SLUICE_TEST_WORKER_DB"] = PG_BASE, db
    return admin_dsn, db, os.getpid()


_WORKER_DB = _worker_database()


def pg_admin() -> psycopg.Connection:
    """A plain connection to the test database (fails the test when the server is down)."""
    try:
        return psycopg.connect(PG_BASE, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        raise AssertionError(f"PostgreSQL is not reachable at {PG_BASE} (start it with "
                             f"pg_ctlcluster --skip-systemctl-redirect 15 main start): {e}") from None


_SCHEMA_POOL = None


def pg_schemas():
    """This process's pool of reset PostgreSQL test schemas (tests/pgschemas.py)."""
    global _SCHEMA_POOL
    if _SCHEMA_POOL is None:
        from tests.pgschemas import SchemaPool
        _SCHEMA_POOL = SchemaPool(PG_BASE)
    return _SCHEMA_POOL


def drop_schema(schema: str) -> None:
    with pg_admin() as admin:
        admin.execute("SET lock_timeout = '20s'")
        admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def pg_create_shared(*statements: str) -> None:
    """Objects tests share in the test database (schema ``hr``, never dropped): created under
    an advisory lock, since two sessions running the same CREATE ... IF NOT EXISTS at once can
    still collide on the catalog's unique index (pytest-xdist workers, other checkouts' runs)."""
    with pg_admin() as admin, admin.transaction():
        admin.execute("SELECT pg_advisory_xact_lock(hashtext('sluice-tests-shared-objects'))")
        for statement in statements:
            admin.execute(statement)


@pytest.fixture(params=BACKENDS)
def dsn(request, tmp_path) -> str:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / ('t-' + uuid.uuid4().hex[:8] + '.db')}"
        return
    if request.param == "postgresql":
        with pg_test_schema() as schema:
            yield f"{PG_BASE}?schema={schema}"
        return
    raise AssertionError(f"unknown backend {request.param}")


@contextlib.contextmanager
def new_pg_schema():
    """A schema name nobody uses yet (the server checked); the schema is dropped after."""
    schema = "t_" + uuid.uuid4().hex[:12]
    pg_admin().close()
    yield schema
    drop_schema(schema)


@contextlib.contextmanager
def pg_test_schema():
    """The schema of a PostgreSQL test's store: a reset store's from this process's pool or a
    new one, reset and kept for the next test after, or dropped (tests/pgschemas.py); with
    SLUICE_TEST_SCHEMA_POOL=0 a new one, dropped after (as before the pool)."""
    if os.environ.get("SLUICE_TEST_SCHEMA_POOL") == "0":
        with new_pg_schema() as schema:
            yield schema
        return
    schema = pg_schemas().take()
    yield schema
    pg_schemas().give_back(schema)


# SLUICE_TEST_NEVER_CLOSE=1: every test's fixtures drop their connections instead of
# closing them, as scripts and notebooks do. tests/aq's own tests always do (issue 11 item 1:
# "the whole conformance flow of tests/aq in one process without ever calling close()"): they
# are one xdist group, NEVER_CLOSE_GROUP, so one worker process runs them all in turn.
NEVER_CLOSE = os.environ.get("SLUICE_TEST_NEVER_CLOSE") == "1"
NEVER_CLOSE_GROUP = "aq-never-close"


def never_closes(item) -> bool:
    """Whether the ``conn`` fixtures of test ``item`` drop their connections unclosed."""
    return NEVER_CLOSE or _group(item) == NEVER_CLOSE_GROUP


def _finish(c: sluice.Connection, request, name: str) -> None:
    if never_closes(request.node):   # pytest holds fixture values until teardown: let go now
        # of every fixture, not only this one's: those built on it (test_bad_input's
        # queue_with_one, a queue of it) are torn down already but their values, still in
        # funcargs, held the connection open past the test; 19 of 22 schemas the pool dropped
        # in a tests/aq run (the others' finalisers keep their own values: nothing else uses these)
        request.node.funcargs.clear()
        gc.collect()  # and a test's tracebacks (pytest.raises) hold it in reference cycles
    else:
        c.close()


@pytest.fixture
def conn(dsn, request):
    c = sluice.connect(dsn)
    yield c
    _finish(c, request, "conn")


@pytest.fixture
def conn2(dsn, conn, request):
    """A second session on the same store (another application)."""
    c = sluice.connect(dsn)
    yield c
    _finish(c, request, "conn2")


def make_queue(conn, name="Q", table=None, payload="RAW", start=True, **qt_kwargs):
    """Create queue table + queue (Oracle's names), start it, return the queue name."""
    qkw = {k: qt_kwargs.pop(k) for k in ("max_retries", "retry_delay", "retention_time")
           if k in qt_kwargs}
    table = table or f"{name}_QT"
    conn.aqadm.create_queue_table(queue_table=table, queue_payload_type=payload, **qt_kwargs)
    conn.aqadm.create_queue(queue_name=name, queue_table=table, **qkw)
    if start:
        conn.aqadm.start_queue(queue_name=name)
    return name


def nowait(q, mode=None, navigation=None):
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    if mode is not None:
        q.deqoptions.mode = mode
    if navigation is not None:
        q.deqoptions.navigation = navigation
    return q


def hold_message(session, queue, consumer="S1"):
    """``session`` dequeues ``consumer``'s first message of ``queue`` without committing:
    it holds it (locked) until its commit or rollback.  Returns the payload."""
    q = nowait(session.queue(queue))
    q.deqoptions.consumername = consumer
    m = q.deqone()
    assert m is not None
    return m.payload


def table_rows(conn, table, cols="QUEUE, MSG_STATE, CORR_ID"):
    return conn.query(f"SELECT {cols} FROM AQ${table} ORDER BY LOCAL_ORDER_NO", None)[1]


def wait_until(predicate, timeout=5.0) -> bool:
    """Poll ``predicate`` (for background work: the time manager, another process) until it
    holds or ``timeout`` seconds pass; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# pytest's basetemp (every tmp_path, so every SQLite test store) on tmpfs when the user gave
# no --basetemp: the same numbered pytest-of-USER/pytest-N directories pytest makes in the
# system's temporary directory, cleaned the same way (the last two runs kept: pyproject.toml tmp_path_retention_count), under
# /dev/shm when it and the machine's memory have SHM_ROOM free. The tests prove process-crash
# safety (kill -9), which tmpfs keeps, not power loss (as TEST_TABLESPACE); the full-disk
# tests mount a tmpfs of their own or cap the file size (tests/store/test_sqlite_full.py).
# DESIGN-NOTES "Test suite time".
SHM, SHM_ROOM = "/dev/shm", 8 << 30


def _basetemp_on_tmpfs(config) -> None:
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    try:
        room = os.statvfs(SHM)
    except OSError:
        return
    try:   # tmpfs pages are memory: the machine's available memory, not only the mount's room
        with open("/proc/meminfo") as f:
            memory = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return
    if os.access(SHM, os.W_OK | os.X_OK) and min(room.f_bavail * room.f_frsize, memory) >= SHM_ROOM:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = SHM    # read by pytest's getbasetemp, on first use


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): run on one pytest-xdist worker "
                                       "(with --dist loadgroup)")
    # Hypothesis asks gc.get_referrers() whether a Random that trio registers (imported late, by
    # anyio) is held: referrers frozen by pytest_collection_finish are invisible to it, so it warns.
    config.addinivalue_line("filterwarnings", "ignore:It looks like `register_random`:"
                                              "hypothesis.errors.HypothesisWarning")
    _basetemp_on_tmpfs(config)


def pytest_collection_finish(session):
    """What exists once the tests are collected (modules, parametrisations: ~86k objects) lives
    until the worker ends: frozen out of the cyclic collector, a full collection no longer walks
    it. ``_finish`` collects after each test of the never-close group (its dropped connections
    sit in the tests' reference cycles): 99 of those took 14.8 s, 150 ms each; frozen, 0.5 s
    (DESIGN-NOTES "Test suite time")."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)   # after the session fixtures' teardown, before xdist reports back
def pytest_sessionfinish(session):
    if _SCHEMA_POOL is not None:
        if os.environ.get("SLUICE_TEST_POOL_STATS"):   # how often a schema was reused, and why not
            print(f"\nschema pool {os.environ.get('PYTEST_XDIST_WORKER', '')}: reused {_SCHEMA_POOL.reused}, "
                  f"dropped {_SCHEMA_POOL.dropped} {_SCHEMA_POOL.why}", file=sys.stderr)
            if os.environ["SLUICE_TEST_POOL_STATS"] == "2":
                print("\n".join(_SCHEMA_POOL.log), file=sys.stderr)
        _SCHEMA_POOL.close()
    if _WORKER_DB is None or _WORKER_DB[2] != os.getpid():
        return
    admin_dsn, db, _ = _WORKER_DB
    try:
        with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=5) as admin:
            for (slot,) in admin.execute("SELECT slot_name FROM pg_replication_slots WHERE database = %s",
                                         (db,)).fetchall():
                admin.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    except psycopg.Error as e:   # a slot still held by a process a test left: say so, go on
        print(f"\nleft PostgreSQL database {db} behind: {e}", file=sys.stderr)


# Under pytest-xdist (pyproject.toml's addopts: ``-n 4 --dist loadgroup``) the tests of a
# group run one after another on one worker (DESIGN-NOTES "Test suite time"):
GROUPS = {
    # the process's PostgreSQL connections: the 2,000-store checks, the churn and the
    # never-close conformance run hold many at once: one after another, beside the other
    # workers' tests (setup.sh raises max_connections to 300 for them all)
    "aq/test_dropped_connections.py": "pg-connections",
    # fleets of processes SIGKILLed again and again: one fleet at a time per group, two groups.
    # Their kills wait for the fleet's progress (tests/killschedule.py: a fleet on a timer
    # alone, starved by two Spark JVMs beside it, committed nothing between two kills), so a
    # loaded worker only makes them slower. One group was CI's critical path (2026-11-28: its
    # tests summed 1,267 s of a 1,490 s run on the slow VM): split in two of ~600 s each
    "streams/test_propagation_crash.py": "kill9-apply", "streams/test_apply_crash.py": "kill9-apply",
    "store/test_pg_restart.py": "kill9-apply",
    "aq/test_crash.py": "kill9", "streams/test_host_run.py": "kill9",
    "streams/test_capture_crash.py": "kill9", "streams/test_sync_capture_crash.py": "kill9",
    # `sluice pipeline run` drivers of their own, killed and stopped (not the shared
    # SparkSession): beside the "spark" group, which alone was CI's critical path. With
    # -n 2 on 2026-11-28 test_kill9 took 523 s and the rest 537 s with test_cluster; with -n 4
    # (CI 2026-11-29: the suite 1,056 s, nearly all of it the "spark" group's) test_kill9 took
    # ~300 s, so the other tests that start drivers of their own -- the standalone cluster
    # (~140 s) and the late Python worker (~95 s) -- joined it
    # the shared SparkSession's tests in two groups, each with its JVM (a session per worker):
    # together they were CI's longest chain (1,832 s of a 2,915-s run under load, 2026-11-30;
    # test_spark_pipeline 668 s of it), so the second JVM's start (~20 s of CPU) pays
    "pipeline/test_documents.py": "spark-b", "pipeline/test_restart.py": "spark-b",
    "pipeline/test_sink_forget_delivered.py": "spark-b", "pipeline/test_capturedarrow.py": "spark-b",
    "pipeline/test_stagedapply.py": "spark-b",
    "pipeline/test_kill9.py": "spark-drivers",
    "pipeline/test_cluster.py": "spark-drivers",
    "pipeline/test_restart.py::test_sluice_pipeline_run_goes_on_after_a_late_python_worker": "spark-drivers",
}
# Long tests outside the groups (the --durations report of a CI run): they start first, so
# that no worker begins one of them when the others are already done.
LONGEST = ("streams/test_propagation_http.py",)


def _group(item) -> str | None:
    path = item.nodeid.split("::", 1)[0].removeprefix("tests/")
    test = item.nodeid.split("[", 1)[0].removeprefix("tests/")   # one test (all its parameters)
    if test in GROUPS:
        return GROUPS[test]
    if path in GROUPS:
        return GROUPS[path]
    if path.startswith("aq/"):
        # the rest of tests/aq: one process never closing a connection (NEVER_CLOSE_GROUP).
        # Until 2026-11-30 a test re-ran tests/aq so in a subprocess: 634 s of CPU in CI,
        # every test run twice; beside the many-stores checks the flow peaked at 58 client
        # connections (sampled each second), far below max_connections = 300
        return NEVER_CLOSE_GROUP
    if "spark" in getattr(item, "fixturenames", ()) or f"{os.sep}pipeline{os.sep}" in str(item.path):
        return "spark"     # every test that uses the one SparkSession or starts Spark: one JVM
    # a module-scoped fixture (a browser, a served site) is made once per worker that runs one
    # of the module's tests: keep the module on one worker, as a serial run shares it
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(d and d[-1].scope == "module" for d in defs.values()):
        return path
    return None


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Each test of a group gets its ``xdist_group`` mark. xdist hands out the largest work
    units first (the Spark group, then the other groups); of the single tests, LONGEST's come
    first, then the rest in collection order."""
    for item in items:
        group = _group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    if hasattr(config, "workerinput"):        # an xdist worker: its order is what it reports
        longest = [item for item in items if any(item.nodeid.startswith("tests/" + p) for p in LONGEST)]
        chosen = set(map(id, longest))
        items[:] = longest + [item for item in items if id(item) not in chosen]
    result = yield                            # the other hooks, xdist's among them
    # xdist 3.8 groups a test by appending "@group" to item._nodeid; pytest 9.2 keeps the id
    # in item._id (a NodeId), so without this the groups are silently ignored (Spark tests
    # spread over every worker, one JVM each).
    for item in items:
        grouped = getattr(item, "_nodeid", None)
        if grouped and hasattr(item, "_id") and grouped != item.nodeid:
            item._id = type(item._id).parse(grouped)
    return result


@pytest.fixture(scope="session")
def spark():
    """The one SparkSession of a test run (DESIGN.md section 5): ``local[2]``, no UI, two
    shuffle partitions; the JVM starts once, for the rules and the pipeline tests alike."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("sluice-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.ansi.enabled", "true")
               # the JIT's first tier only, one GC thread: the JVM's C2 compiler threads took half
               # its CPU in a test run (idle cores hide it; CI has none: DESIGN-NOTES "Test suite time")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
