"""Oracle's rule for committed DDL: the next statement of any session sees it.  Another
process stops, drops or alters a queue and commits; this process's next enqueue or dequeue
must follow the change, not its cached catalog.

On PostgreSQL this process learns of another process's catalog change by the NOTIFY its
listener thread receives (store/pglisten.py), usually within milliseconds but after the
DDL call returned in the other process; the tests hold those notifications back (and the
idle listener's backstop) so that the window is there every time, not by chance.  SQLite's
catalog counter is shared memory the other process bumps before its DDL call returns
(store/locks.py): the same tests check that it has no window."""

import subprocess
import sys

import pytest

import sluice
from tests.aq.test_processes import _child_env
from tests.conftest import make_queue, nowait
from tests.sqlhelpers import raised_code


@pytest.fixture
def held(conn, monkeypatch):
    """``conn``'s store hears no other process's catalog change until the test ends (then
    every held notification is delivered): the NOTIFY still on its way."""
    listener = getattr(conn.context.store, "listener", None)
    kept: list[str] = []
    if listener is not None:
        on_notify = listener.on_notify
        monkeypatch.setattr(listener, "on_notify", lambda payload: kept.append(payload))
        monkeypatch.setattr(listener, "on_idle", lambda: None)
    yield conn
    if listener is not None:
        monkeypatch.undo()
        for payload in kept:
            on_notify(payload)


def _elsewhere(dsn: str, code: str) -> None:
    """Run ``code`` (``c``: a connection) in another process, committed when it returns."""
    script = f"import sluice\nwith sluice.connect({dsn!r}) as c:\n" + "".join(
        f"    {line}\n" for line in code.strip().splitlines())
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_child_env(), timeout=120)
    assert out.returncode == 0, out.stderr


def _enqueue(conn, payload: bytes = b"m") -> None:
    conn.queue("Q").enqone(conn.msgproperties(payload=payload))


def test_a_queue_dropped_elsewhere_is_gone_for_the_next_enqueue(held, dsn):
    make_queue(held)
    _enqueue(held)
    held.commit()
    _elsewhere(dsn, "c.aqadm.drop_queue_table(queue_table='Q_QT', force=True)")
    assert raised_code(lambda: _enqueue(held)) == "ORA-24010"
    held.rollback()


def test_a_queue_dropped_elsewhere_is_gone_for_the_next_dequeue(held, dsn):
    make_queue(held)
    _enqueue(held)
    held.commit()
    assert nowait(held.queue("Q"), mode=sluice.DEQ_BROWSE).deqone() is not None
    _elsewhere(dsn, "c.aqadm.drop_queue_table(queue_table='Q_QT', force=True)")
    assert raised_code(lambda: nowait(held.queue("Q")).deqone()) == "ORA-24010"
    held.rollback()

