"""``sluice demo``: what Sluice does, in one short run on the embedded default."""

from __future__ import annotations

import os
import time
from typing import Callable

SETUP = """
CREATE TYPE order_t AS OBJECT (
  id      NUMBER(10),
  item    VARCHAR2(40),
  price   NUMBER(10,2),
  region  VARCHAR2(10));
/
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(
    queue_table        => 'orders_qt',
    queue_payload_type => 'order_t',
    sort_list          => 'PRIORITY,ENQ_TIME',
    comment            => 'orders for the demo');
  DBMS_AQADM.CREATE_QUEUE(
    queue_name     => 'orders_q',
    queue_table    => 'orders_qt',
    max_retries    => 2,
    retention_time => 3600);
  DBMS_AQADM.START_QUEUE(queue_name => 'orders_q');
  DBMS_AQADM.START_QUEUE(queue_name => 'AQ$_ORDERS_QT_E', enqueue => FALSE);
END;
/
"""


def _fresh(dsn: str) -> None:
    """Remove the demo's embedded store of an earlier run (a file that is not an SQLite
    database is refused, not removed)."""
    if dsn.startswith("sqlite:///"):
        path = dsn[len("sqlite:///"):].split("?")[0]
        from .store.sqlite import check_sqlite_file
        check_sqlite_file(os.path.abspath(path))
        for suffix in ("", "-wal", "-shm", ".lck"):
            try:
                os.unlink(path + suffix)
            except FileNotFoundError:
                pass


def run_demo(dsn: str, say: Callable[[str], None] = print) -> None:
    import sluice
    from . import plsql

    _fresh(dsn)
    say(f"Sluice {sluice.__version__} demo on {dsn}\n")
    app = sluice.connect(dsn)
    other = sluice.connect(dsn)
    try:
        say("1. Set up with the statements of the Oracle documentation (sluice sql):")
        for stmt in plsql.split_script(SETUP):
            plsql.execute(app, stmt)
            say("   " + stmt.strip().splitlines()[0] + " …")

        order_t = app.gettype("ORDER_T")
        q = app.queue("orders_q", order_t)

        def order(i: int, item: str, price: float, region: str):
            o = order_t.newobject()
            o.ID, o.ITEM, o.PRICE, o.REGION = i, item, price, region
            return o

        say("\n2. A producer enqueues four orders in one transaction (python-oracledb API):")
        q.enqmany([
            app.msgproperties(payload=order(1, "pens", 12.5, "EU"), priority=5, correlation="EU-1"),
            app.msgproperties(payload=order(2, "desk", 480.0, "US"), priority=1, correlation="US-2"),
            app.msgproperties(payload=order(3, "lamp", 75.0, "EU"), priority=5, correlation="EU-3"),
            app.msgproperties(payload=order(4, "chair", 150.0, "US"), priority=3, correlation="US-4",
                              delay=2),
        ])
        oq = other.queue("orders_q", order_t)
        oq.deqoptions.wait = sluice.DEQ_NO_WAIT
        say(f"   before COMMIT another session sees: {oq.deqone()}")
        app.commit()
        say("   after COMMIT it can dequeue them; priority order, the delayed one WAITING:")
        oq.deqoptions.mode = sluice.DEQ_BROWSE
        for m in oq.deqmany(10):
            say(f"     priority {m.priority}  {m.correlation}  {m.payload.ITEM}")

        say("\n3. A consumer takes only US orders above 100 (dequeue condition):")
        oq.deqoptions.mode = sluice.DEQ_REMOVE
        oq.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        oq.deqoptions.condition = "tab.user_data.region = 'US' AND tab.user_data.price > 100"
        m = oq.deqone()
        say(f"     got order {m.payload.ID} ({m.payload.ITEM}, {m.payload.PRICE})")
        other.commit()

        say("\n4. A buggy consumer fails on order 1 and rolls back three times (max_retries = 2):")
        oq.deqoptions.condition = "tab.user_data.id = 1"
        for _ in range(3):
            m = oq.deqone()
            say(f"     dequeued order 1, attempt {m.attempts + 1} … ROLLBACK")
            other.rollback()
        eq = other.queue("AQ$_ORDERS_QT_E", order_t)
        eq.deqoptions.wait = sluice.DEQ_NO_WAIT
        eq.deqoptions.mode = sluice.DEQ_BROWSE
        m = eq.deqone()
        say(f"     order {m.payload.ID} is now in the exception queue AQ$_ORDERS_QT_E, "
            f"state {sluice.constants.STATE_NAMES[m.state]}")

        say("\n5. A blocking dequeue waits for the delayed order (no polling):")
        oq.deqoptions.condition = None
        oq.deqoptions.wait = 5
        oq.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        t0 = time.monotonic()
        got = oq.deqmany(10)
        other.commit()
        for m in got:
            say(f"     got order {m.payload.ID} ({m.payload.ITEM}) after {time.monotonic() - t0:.1f} s")
        if not any(m.payload.ID == 4 for m in got):
            m = oq.deqone()
            other.commit()
            say(f"     got order {m.payload.ID} ({m.payload.ITEM}) after {time.monotonic() - t0:.1f} s")

        say("\n6. The message warehouse, in SQL (retention keeps processed messages):")
        cols, rows = app.query("SELECT queue, corr_id, msg_state, retry_count, enq_user_id, "
                               "deq_user_id FROM aq$orders_qt ORDER BY corr_id", None)
        say("     " + "  ".join(f"{c:<16}" for c in cols))
        for r in rows:
            say("     " + "  ".join(f"{str(v if v is not None else ''):<16}" for v in r))
        say("\nDone.  Try: sluice --dsn " + dsn + " queues")
    finally:
        other.close()
        app.close()
