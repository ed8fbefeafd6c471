"""Several processes on one embedded database: locks across processes, crash recovery."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import sluice
from tests.conftest import make_queue, nowait

_CHILD = textwrap.dedent("""
    import sys, time, sluice
    conn = sluice.connect(sys.argv[1])
    q = conn.queue("Q")
    q.deqoptions.wait = 5
    m = q.deqone()
    print(m.payload.decode(), flush=True)
    time.sleep(60)          # killed here, mid-transaction
""")


def _child_env():
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_killed_consumer_releases_its_message_without_counting_a_retry(conn, dsn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqmany([conn.msgproperties(payload=b"first"), conn.msgproperties(payload=b"second")])
    conn.commit()
    child = subprocess.Popen([sys.executable, "-c", _CHILD, dsn], stdout=subprocess.PIPE,
                             env=_child_env())
    try:
        assert child.stdout.readline().strip() == b"first"
        # the child holds "first": this process skips it
        nowait(q, navigation=sluice.DEQ_FIRST_MSG)
        assert q.deqone().payload == b"second"
        conn.rollback()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    time.sleep(0.1)
    got = [(m.payload, m.attempts) for m in q.deqmany(10)]
    assert (b"first", 0) in got          # available again, the killed attempt not counted
    assert (b"second", 1) in got         # the rolled-back attempt was counted
