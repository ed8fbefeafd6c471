"""A process that drops connections without closing them (issue 11, item 1), run by
``test_dropped_connections.py`` as ``python dropworker.py MODE`` with its arguments as JSON on stdin; prints one
JSON report.  In a process of its own, a hang is a timeout the test reports (with the
stacks faulthandler prints) instead of a stuck test suite, and thread and descriptor
counts are the process's own.

churn   THREADS threads each connect PER_THREAD times, alternating between two stores of
        their own, half of the connections held in a reference cycle (only the collector
        frees them), collections forced at random points; enqueue + commit, dequeue +
        commit, sometimes an open transaction left behind.
stores  THREADS threads share the given stores, connect to each once and drop the
        connection (plus a cyclic second one every other store); reports threads and
        descriptors before, and after gc.collect() once the reaper has closed everything.
"""

from __future__ import annotations

import faulthandler
import gc
import json
import os
import random
import sys
import threading
import time

import sluice


class App:
    """What user code often looks like: an object holding a connection and a bound method
    of itself (a reference cycle), so only the garbage collector ever frees it."""

    def __init__(self, dsn: str) -> None:
        self.conn = sluice.connect(dsn)
        self.on_message = self.handle          # the cycle

    def handle(self, msg) -> None:
        pass


def churn(stores: list[str], threads: int, per_thread: int) -> dict:
    gc.set_threshold(50, 2, 2)      # collections inside open_store, a store's start-up, a commit
    enqueued = [0] * threads
    dequeued = [0] * threads
    errors: list[str] = []

    def work(k: int) -> None:
        rnd = random.Random(k)
        try:
            for i in range(per_thread):
                store = stores[(2 * k + i % 2) % len(stores)]
                if rnd.random() < 0.5:
                    app = App(store)
                    conn = app.conn
                else:
                    conn = sluice.connect(store)          # freed at once (reference count)
                q = conn.queue("DROPQ")
                q.deqoptions.wait = sluice.DEQ_NO_WAIT
                q.enqone(conn.msgproperties(payload=b"%d:%d" % (k, i)))
                conn.commit()
                enqueued[k] += 1
                if i % 2 and q.deqone() is not None:
                    conn.commit()
                    dequeued[k] += 1
                if i % 3 == 0:                            # dropped inside a transaction
                    q.enqone(conn.msgproperties(payload=b"never"))
                if rnd.random() < 0.05:
                    gc.collect()
                del q, conn
                app = None
        except BaseException as e:
            errors.append(repr(e))

    started = time.monotonic()
    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return {"elapsed": time.monotonic() - started, "enqueued": sum(enqueued),
            "dequeued": sum(dequeued), "errors": errors}


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _settled(count, start: int, timeout: float = 60.0) -> int:
    """``count()`` once back at ``start`` (the reaper closes asynchronously) or at timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        gc.collect()
        if count() <= start:
            break
        time.sleep(0.05)
    return count()


def stores(dsns: list[str], make_queue: bool, threads: int = 1) -> dict:
    threads0, fds0 = threading.active_count(), _fds()
    errors: list[str] = []

    def work(mine: list[str]) -> None:
        try:
            for i, dsn in enumerate(mine):
                conn = sluice.connect(dsn)
                if make_queue:
                    conn.aqadm.create_queue_table(queue_table="DROPQ_QT", queue_payload_type="RAW")
                    conn.aqadm.create_queue(queue_name="DROPQ", queue_table="DROPQ_QT")
                    conn.aqadm.start_queue(queue_name="DROPQ")
                q = conn.queue("DROPQ")
                q.enqone(conn.msgproperties(payload=b"x"))
                conn.commit()
                if i % 2:
                    app = App(dsn)        # a second, cyclic connection to the same store
                    del app
                del q, conn               # never closed
                if i % 10 == 9:           # the cyclic ones wait for a collection, as in any program
                    gc.collect()
        except BaseException as e:
            errors.append(repr(e))

    started = time.monotonic()
    workers = [threading.Thread(target=work, args=(dsns[k::threads],)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    elapsed = time.monotonic() - started
    del workers
    gc.collect()
    now_threads = _settled(threading.active_count, threads0)
    fds = _settled(_fds, fds0)
    return {"elapsed": elapsed, "errors": errors, "threads0": threads0, "threads": now_threads,
            "fds0": fds0, "fds": fds, "names": [t.name for t in threading.enumerate()],
            "open_fds": sorted(os.readlink(f"/proc/self/fd/{f}") for f in os.listdir("/proc/self/fd")
                               if os.path.exists(f"/proc/self/fd/{f}"))}


if __name__ == "__main__":
    faulthandler.dump_traceback_later(float(os.environ.get("DROPWORKER_DUMP_AFTER", "100")), exit=True)
    mode, args = sys.argv[1], json.load(sys.stdin)
    report = churn(**args) if mode == "churn" else stores(**args)
    print(json.dumps(report), flush=True)
    os._exit(0)   # report printed; do not let a stuck thread hold the interpreter's exit
