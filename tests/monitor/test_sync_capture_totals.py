"""The LCRs a synchronous capture's triggers enqueue count in the queue's totals
(V$PERSISTENT_QUEUES, V$AQ's counts beside them, the monitoring snapshot), counted by
the trigger in the writer's transaction: a rolled-back change counts nothing, a change
no subscriber receives is no message."""

from __future__ import annotations

import pytest

import sluice
from sluice.monitor import snapshot

from ..streams.synckit import CONSUMER, senv  # noqa: F401  (fixture)


def _totals(senv) -> tuple:
    cur = senv.conn.cursor()
    cur.execute("SELECT ENQUEUED_MSGS, DEQUEUED_MSGS FROM V$PERSISTENT_QUEUES WHERE QUEUE_NAME = 'STRM_Q'")
    return cur.fetchone() or (0, 0)


def test_lcrs_a_sync_capture_enqueues_are_counted_in_the_writer_s_transaction(senv):
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name=rs)
    senv.conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("OTHER"))
    senv.conn.commit()
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)", f"INSERT INTO {t} VALUES (2, 'b', 1)",
             f"UPDATE {t} SET dept = 2")                       # 4 LCRs, 2 subscribers each
    try:
        with senv.transaction() as w:
            w.execute(f"INSERT INTO {t} VALUES (3, 'c', 1)")
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    assert _totals(senv) == (4, 0)                             # a message per LCR, not per record
    qs = snapshot.take(senv.conn).queue("SLUICE.STRM_Q")
    assert (qs.enqueued, qs.ready) == (4, 4)
    assert len(senv.dequeue_all(CONSUMER)) == 4
    assert _totals(senv) == (4, 4)                             # (each recipient's dequeue counts)
    # with no subscriber left to receive it, an LCR is no message: nothing is counted
    for name in (CONSUMER, "OTHER"):
        senv.conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(name))
    senv.conn.commit()
    senv.sql(f"DELETE FROM {t} WHERE id = 1")
    assert _totals(senv) == (4, 4)


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)
def test_postgresql_counts_once_per_transaction_also_after_set_constraints_immediate(senv):
    """PostgreSQL's deferred triggers count in a transaction-local setting and write it once
    per transaction and queue (syncpg.counted_ddl), behind the transaction's LCR triggers:
    SET CONSTRAINTS ALL IMMEDIATE fires them mid-transaction, and what follows is counted too."""
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name=rs)
    senv.conn.commit()
    t = senv.table("emp")
    with senv.transaction() as w:
        w.execute(f"INSERT INTO {t} VALUES (1, 'a', 1)")
        w.execute(f"INSERT INTO {t} VALUES (2, 'a', 1)")
        w.execute("SET CONSTRAINTS ALL IMMEDIATE")
        w.execute("SET CONSTRAINTS ALL DEFERRED")
        w.execute(f"INSERT INTO {t} VALUES (3, 'a', 1)")
    assert _totals(senv) == (3, 0)
    cur = senv.conn.cursor()
    cur.execute("SELECT COUNT(*) FROM SLUICE_SYNC_COUNTED")
    assert cur.fetchone() == (0,)                              # no marker outlives its transaction
