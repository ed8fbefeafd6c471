"""SET_QUEUE_PARAMETER at the same time as another change of the sharded queue's catalog row.

A sharded queue's parameters and its exception queue's name share one SLUICE_CATALOG row
(kind SHARDED_QUEUE; the database level's parameters one of kind AQ_PARAMETERS).  Each
change reads the row, changes its part and writes it back: done in one store transaction
holding the row (PostgreSQL's row lock, SQLite's write lock), two sessions' changes both
stay.  The interleaving is forced, not hoped for: the first session's change of the row
(the ``change`` of ``sqlcatalog.merge_object``) runs the second session's whole call in a
thread before it returns, and gives it a bounded time to finish — held out by the lock, the second waits and
then reads the first's row; read before the transaction (the bug), it finishes and the
first writes its stale copy over it.
"""

from __future__ import annotations

import threading

import pytest

from sluice.store import sqlcatalog

# how long the first session's change waits for the second's call (which, held by the
# lock, cannot finish in it); well under PostgreSQL's DDL lock_timeout (5 s)
_GRACE = 1.0


def _meanwhile(monkeypatch, call):
    """While the next change of a catalog row holds the row it read (``merge_object``'s
    ``change``, in this thread), run ``call`` (another session's) in a thread.  Returns a
    function that waits for that thread and re-raises what it raised."""
    done, failed, started = threading.Event(), [], []
    real = sqlcatalog.merge_object

    def run():
        try:
            call()
        except BaseException as e:   # noqa: BLE001 — handed to the test's thread
            failed.append(e)
        finally:
            done.set()

    def merge(c, kind, owner, name, change, create):
        def held(spec):
            if not started:                     # the first session's, not the second's own
                started.append(threading.Thread(target=run, daemon=True))
                started[0].start()
                done.wait(_GRACE)
            return change(spec)
        return real(c, kind, owner, name, held, create)

    monkeypatch.setattr(sqlcatalog, "merge_object", merge)

    def finish():
        assert started, "the row was not changed in its store transaction"
        assert done.wait(30), "the other session's call did not end"
        if failed:
            raise failed[0]
    return finish


def test_set_queue_parameter_keeps_an_exception_queue_made_meanwhile(conn, conn2, monkeypatch):
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    finish = _meanwhile(monkeypatch, lambda: conn2.aqadm.create_exception_queue("TQ"))
    conn.aqadm.set_queue_parameter("TQ", "SHARD_NUM", 4)
    finish()
    for c in (conn, conn2):
        assert c.aqadm.get_queue_parameter("TQ", "SHARD_NUM") == 4
        q = c.context.catalog.queue("TQ")
        assert q.table.sharded_exception_queue == "AQ$_TQ_E"
    # the exception queue is the row's: a message past its retries goes there
    [(exc,)] = conn.cursor().execute(
        "SELECT NAME FROM USER_QUEUES WHERE QUEUE_TYPE = 'EXCEPTION_QUEUE'").fetchall()
    assert exc == "AQ$_TQ_E"


def test_create_exception_queue_keeps_a_parameter_set_meanwhile(conn, conn2, monkeypatch):
    """The other way round: CREATE_EXCEPTION_QUEUE holds the row while SET_QUEUE_PARAMETER
    runs (PostgreSQL: its read locks the row, or the parameter was overwritten)."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    finish = _meanwhile(monkeypatch, lambda: conn2.aqadm.set_queue_parameter("TQ", "SHARD_NUM", 4))
    conn.aqadm.create_exception_queue("TQ")
    finish()
    for c in (conn, conn2):
        assert c.aqadm.get_queue_parameter("TQ", "SHARD_NUM") == 4
        assert c.context.catalog.queue("TQ").table.sharded_exception_queue == "AQ$_TQ_E"


def test_two_set_queue_parameters_at_once_both_stay(conn, conn2, monkeypatch):
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    finish = _meanwhile(monkeypatch, lambda: conn2.aqadm.set_queue_parameter("TQ", "STICKY_DEQUEUE", 1))
    conn.aqadm.set_queue_parameter("TQ", "SHARD_NUM", 4)
    finish()
    for c in (conn, conn2):
        assert (c.aqadm.get_queue_parameter("TQ", "SHARD_NUM"),
                c.aqadm.get_queue_parameter("TQ", "STICKY_DEQUEUE")) == (4, 1)


def test_database_level_parameters_set_at_once_both_stay(conn, conn2, monkeypatch):
    """The database level's row does not exist before its first parameter: the second
    session waits for the first's new row rather than writing one of its own over it."""
    finish = _meanwhile(monkeypatch, lambda: conn2.aqadm.set_queue_parameter(None, "KEY_BASED_ENQUEUE", 1))
    conn.aqadm.set_queue_parameter(None, "SHARD_NUM", 8)
    finish()
    assert (conn.aqadm.get_queue_parameter(None, "SHARD_NUM"),
            conn.aqadm.get_queue_parameter(None, "KEY_BASED_ENQUEUE")) == (8, 1)


def test_a_parameter_of_a_queue_dropped_meanwhile_is_refused(conn, conn2, monkeypatch):
    """DROP_SHARDED_QUEUE between the queue's lookup and the row's change: ORA-24010, and no
    row is left behind for a queue that is gone."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    real = conn.context.store.merge_catalog_object

    def dropped_first(*args, **kwargs):
        conn2.aqadm.drop_sharded_queue("TQ")
        return real(*args, **kwargs)

    monkeypatch.setattr(conn.context.store, "merge_catalog_object", dropped_first)
    with pytest.raises(Exception, match="ORA-24010"):
        conn.aqadm.set_queue_parameter("TQ", "SHARD_NUM", 4)
    assert [o for o in conn.context.store.catalog_objects("SHARDED_QUEUE") if o[1] == "TQ"] == []
