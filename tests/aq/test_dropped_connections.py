"""Connections dropped without ``close()`` (issue 11, item 1).

python-oracledb users drop connections all the time (scripts, notebooks, test suites).
The garbage collector then finalises them wherever it happens to run — possibly in a
thread holding the store registry's lock or a store's write lock, which closing needs.
The work runs in a process of its own (``dropworker.py``): a hang becomes a timeout
with the stacks faulthandler prints, and thread and descriptor counts are its own.
"""

from __future__ import annotations

import collections
import gc
import json
import os
import subprocess
import sys
import time
import types
import uuid
from pathlib import Path

import pytest

import sluice

from ..conftest import BACKENDS, PG_BASE, drop_schema, make_queue

WORKER = Path(__file__).with_name("dropworker.py")
THREADS, PER_THREAD, STORES = 4, 500, 2000


def _run_worker(mode: str, timeout: float = 600, **args) -> dict:
    # The bound tells a hang from slowness: 2,000 PostgreSQL stores opened one by one take
    # ~90 ms each on this VM in its slow phases (3 min); a hang never ends at all.
    try:
        proc = subprocess.run([sys.executable, str(WORKER), mode], input=json.dumps(args),
                              capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, DROPWORKER_DUMP_AFTER=str(timeout - 20)))
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"the process dropping connections hung:\n{(e.stderr or b'')[-4000:]!r}") from None
    assert proc.returncode == 0, f"rc {proc.returncode}:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _store_variants(dsn: str, tmp_path: Path, n: int) -> list[str]:
    """``n`` DSNs for ``n`` stores (SQLite: files; PostgreSQL: the fixture's schema under
    ``n`` connection strings, each a store of its own in the process)."""
    if dsn.startswith("sqlite"):
        return [f"sqlite:///{tmp_path / f'v{i}.db'}" for i in range(n)]
    return [f"{dsn}&application_name=v{i}" for i in range(n)]


def test_threads_dropping_unclosed_connections_never_hang(dsn, tmp_path):
    # Each thread alternates between two stores of its own, so nearly every connect opens
    # a store afresh (under the registry's lock, with the collector running inside) while
    # the thread's previous connection may still wait for the collector.
    stores = _store_variants(dsn, tmp_path, 2 * THREADS)
    databases = stores if dsn.startswith("sqlite") else stores[:1]   # PostgreSQL: one schema
    for store in databases:
        with sluice.connect(store) as setup:
            make_queue(setup, "DROPQ")
    report = _run_worker("churn", stores=stores, threads=THREADS, per_thread=PER_THREAD)
    assert not report["errors"], report["errors"]
    # a hang fails through the worker's timeout; the time itself is a figure, not an
    # assertion (issue 11: "well inside a minute" on a quiet machine; a loaded box varies)
    print(f"churn of {THREADS} x {PER_THREAD} dropped connections: {report['elapsed']:.1f} s")
    remaining = 0
    for store in databases:   # everything committed is there, nothing a dropped transaction held
        with sluice.connect(store) as check:
            remaining += check.query("SELECT COUNT(*) FROM AQ$DROPQ_QT WHERE QUEUE = 'DROPQ'",
                                     None)[1][0][0]
    assert remaining == report["enqueued"] - report["dequeued"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropped_connections_to_many_stores_leave_no_threads_or_files(backend, tmp_path):
    if backend == "sqlite":
        dsns = [f"sqlite:///{tmp_path / f'd{i}.db'}" for i in range(STORES)]
        report = _run_worker("stores", dsns=dsns, make_queue=True)
    else:
        schema = "t_" + uuid.uuid4().hex[:12]
        base = f"{PG_BASE}?schema={schema}"
        try:
            with sluice.connect(base) as first:
                make_queue(first, "DROPQ")
            report = _run_worker("stores", dsns=[f"{base}&application_name=d{i}" for i in range(STORES)],
                                 make_queue=False, threads=THREADS)
        finally:
            drop_schema(schema)
    assert not report["errors"], report["errors"]
    assert report["threads"] == report["threads0"], report["names"]
    assert report["fds"] == report["fds0"], report["open_fds"]


def test_the_aq_conformance_flow_runs_in_one_process_without_ever_closing_a_connection(request, tmp_path):
    """tests/aq is one xdist group (conftest's ``NEVER_CLOSE_GROUP``): one worker process runs
    all of it in turn, its ``conn`` fixtures dropping their connections instead of closing
    them. Only the tests of other groups are not in it: this module's own (they drop thousands
    in a process of their own) and the kill -9 fleets (their connections live in the children).
    Until 2026-11-30 a test re-ran tests/aq so in a subprocess: every test twice, 634 s of CI."""
    from .. import conftest

    here = Path(__file__).resolve()
    listed = subprocess.run([sys.executable, "-m", "pytest", str(here.parent), "-o", "addopts=", "-q",
                             "--collect-only", "-p", "no:cacheprovider"],
                            cwd=here.parents[2], capture_output=True, text=True, timeout=300)
    items = [types.SimpleNamespace(nodeid=line, path=here.parents[2] / line.split("::")[0])
             for line in listed.stdout.splitlines() if line.startswith("tests/aq/")]
    groups = collections.Counter(conftest._group(item) for item in items)
    assert set(groups) == {conftest.NEVER_CLOSE_GROUP, "pg-connections", "kill9"}, groups
    assert groups[conftest.NEVER_CLOSE_GROUP] > 600, groups     # all the flow, both stores
    flow = next(item for item in items if conftest._group(item) == conftest.NEVER_CLOSE_GROUP)
    assert conftest.never_closes(flow) and not conftest.never_closes(request.node)
    flow.funcargs = {}

    # and a connection the flow's fixture lets go is not closed by it: the collector finds it
    # (the reaper thread closes it), as a script's would be
    c = sluice.connect(f"sqlite:///{tmp_path / 'flow.db'}")
    make_queue(c, "FLOWQ")
    c.queue("FLOWQ").enqone(c.msgproperties(payload=b"left open"))   # a transaction left open
    context = c.context
    conftest._finish(c, types.SimpleNamespace(node=flow), "conn")
    assert not context.closed
    del c
    assert _closed_by_the_reaper(context)
    with sluice.connect(f"sqlite:///{tmp_path / 'flow.db'}") as check:   # rolled back
        assert check.query("SELECT COUNT(*) FROM AQ$FLOWQ_QT", None)[1][0][0] == 0

    # nor is one that a fixture built on it holds (a queue of it: test_bad_input's
    # queue_with_one), torn down before it: its value in funcargs let go too
    c = sluice.connect(f"sqlite:///{tmp_path / 'flow.db'}")
    flow.funcargs = {"conn": c, "queue_with_one": c.queue("FLOWQ")}
    context = c.context
    conftest._finish(c, types.SimpleNamespace(node=flow), "conn")
    del c
    assert _closed_by_the_reaper(context)


def _closed_by_the_reaper(context) -> bool:
    """Whether a connection let go (its last reference deleted by the caller) is closed by
    the reaper thread within 30 s of a collection."""
    gc.collect()
    deadline = time.monotonic() + 30
    while not context.closed and time.monotonic() < deadline:
        time.sleep(0.05)
    return context.closed
