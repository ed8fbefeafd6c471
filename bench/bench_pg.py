"""The PostgreSQL backend, side by side with PgQ and RabbitMQ, in one run (issue 4).

Run by hand (not part of the test suite):

    bash setup.sh            # PgQ (postgresql-15-pgq3), pika, a running PostgreSQL
    .venv/bin/python bench/bench_pg.py [--messages 100000] [--batch 100] [--rounds 3]
                                       [--latency-tries 200]

Throughput: 4 producer and 4 consumer processes move ``--messages`` messages of 100
bytes; messages/s end to end is the count divided by the time from the common start
(every worker connected) until the last message is consumed.  Each system gets the
same batching where it has a say — ``--batch`` messages per producer transaction and
per consumer transaction — and the same durability (the PostgreSQL server's default
``synchronous_commit=on``; RabbitMQ durable queues, persistent messages, publisher
confirms, manual acks).  Two layouts:

* 4 queues, producer i and consumer i on queue i — the only layout PgQ allows: a PgQ
  batch goes to one consumer, and its cooperative consumer (pgq_coop) is not packaged
  by Debian;
* 1 queue shared by all eight processes (Sluice and RabbitMQ: competing consumers).

* Sluice: ``enqmany`` + commit; blocking ``deqmany`` + commit (REMOVE, ON_COMMIT);
* PgQ: ``pgq.insert_event`` ×batch + commit; ``next_batch`` / ``get_batch_events`` /
  ``finish_batch`` + commit.  A ticker process calls ``pgq.ticker()`` every 10 ms (the
  pgqd daemon's default is every second); queues tick at ``--batch`` events or 50 ms of
  lag, and a batch holds what arrived since the last tick (its size is reported);
  idle consumers poll every 10 ms, as PgQ consumers do;
* RabbitMQ: publish a batch, wait for its confirms; consumers with prefetch = batch
  acknowledge each batch with ``multiple=True``.

Wake-up latency (acceptance 4): one process blocks in ``deqone(wait=…)``, another
enqueues and commits; the time from the commit call to the dequeuer's return, over
``--latency-tries`` tries.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time

PG_SERVER = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
BENCH_DB = "sluice_bench"
RABBIT = os.environ.get("BENCH_RABBITMQ", "amqp://guest:guest@127.0.0.1:5672/%2F")
PAYLOAD = b"x" * 100
WORKERS = 4


def queues() -> int:
    """How many queues the run uses (the harness sets BENCH_QUEUES before it starts the
    workers): 1 — every producer and consumer on one queue; 4 — producer i and consumer i
    on queue i, the only layout PgQ allows (one consumer per batch)."""
    return int(os.environ.get("BENCH_QUEUES", "1"))

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))


def _ready(start) -> None:
    """Connected and set up: report it, then wait for the common start."""
    ready, go = start
    ready.release()
    go.wait()


def _pg(db: str = BENCH_DB, autocommit: bool = True):
    import psycopg
    return psycopg.connect(f"{PG_SERVER}/{db}", autocommit=autocommit)


def ensure_database() -> None:
    with _pg("postgres") as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (BENCH_DB,)).fetchone():
            c.execute(f"CREATE DATABASE {BENCH_DB}")


# -- Sluice ---------------------------------------------------------------------------

SLUICE_DSN = f"{PG_SERVER}/{BENCH_DB}?schema=bench"


def _sluice_queue(i: int) -> str:
    return f"bench_q{i % queues()}"


def sluice_setup(_: int, batch: int = 0) -> None:
    with _pg() as c:
        c.execute("DROP SCHEMA IF EXISTS bench CASCADE")
    import sluice
    with sluice.connect(SLUICE_DSN) as conn:
        for i in range(queues()):
            conn.aqadm.create_queue_table(queue_table=f"bench_qt{i}", queue_payload_type="RAW")
            conn.aqadm.create_queue(queue_name=f"bench_q{i}", queue_table=f"bench_qt{i}")
            conn.aqadm.start_queue(queue_name=f"bench_q{i}")


def sluice_produce(i: int, count: int, batch: int, start) -> None:
    import sluice
    conn = sluice.connect(SLUICE_DSN)
    q = conn.queue(_sluice_queue(i))
    props = conn.msgproperties
    _ready(start)
    for done in range(0, count, batch):
        q.enqmany([props(payload=PAYLOAD) for _ in range(min(batch, count - done))])
        conn.commit()
    conn.close()


def sluice_consume(i: int, total: int, batch: int, start, consumed, batches) -> None:
    import sluice
    conn = sluice.connect(SLUICE_DSN)
    q = conn.queue(_sluice_queue(i))
    q.deqoptions.wait = 1
    _ready(start)
    while consumed.value < total:
        got = q.deqmany(batch)
        conn.commit()
        if got:
            with consumed.get_lock():
                consumed.value += len(got)
                batches.value += 1
    conn.close()


# -- PgQ ------------------------------------------------------------------------------

def pgq_setup(_: int, batch: int) -> None:
    if queues() != WORKERS:
        raise ValueError("PgQ gives each batch to one consumer: it needs one queue per consumer")
    with _pg() as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS pgq")
        for i in range(WORKERS):
            name = f"bench_{i}"
            if c.execute("SELECT 1 FROM pgq.queue WHERE queue_name = %s", (name,)).fetchone():
                c.execute("SELECT pgq.unregister_consumer(%s, 'c')", (name,))
                c.execute("SELECT pgq.drop_queue(%s)", (name,))
            c.execute("SELECT pgq.create_queue(%s)", (name,))
            c.execute("SELECT pgq.set_queue_config(%s, 'ticker_max_lag', '50 milliseconds')", (name,))
            c.execute("SELECT pgq.set_queue_config(%s, 'ticker_max_count', %s)", (name, str(batch)))
            c.execute("SELECT pgq.register_consumer(%s, 'c')", (name,))


def pgq_ticker(stop) -> None:
    with _pg() as c:
        while not stop.is_set():
            c.execute("SELECT pgq.ticker()")
            time.sleep(0.01)


def pgq_produce(i: int, count: int, batch: int, start) -> None:
    text = PAYLOAD.decode()
    with _pg(autocommit=False) as c:
        cur = c.cursor()
        _ready(start)
        for done in range(0, count, batch):
            n = min(batch, count - done)
            cur.executemany("SELECT pgq.insert_event(%s, 'msg', %s)", [(f"bench_{i}", text)] * n)
            c.commit()


def pgq_consume(i: int, total: int, batch: int, start, consumed, batches) -> None:
    queue = f"bench_{i}"
    with _pg(autocommit=False) as c:
        _ready(start)
        while consumed.value < total:
            batch_id = c.execute("SELECT pgq.next_batch(%s, 'c')", (queue,)).fetchone()[0]
            if batch_id is None:
                c.commit()
                time.sleep(0.01)
                continue
            n = len(c.execute("SELECT ev_id, ev_data FROM pgq.get_batch_events(%s)", (batch_id,)).fetchall())
            c.execute("SELECT pgq.finish_batch(%s)", (batch_id,))
            c.commit()
            if n:
                with consumed.get_lock():
                    consumed.value += n
                    batches.value += 1


# -- RabbitMQ ---------------------------------------------------------------------------

def _rabbit_queue(i: int) -> str:
    return f"sluice_bench_{i % queues()}"


def rabbit_setup(_: int, batch: int = 0) -> None:
    import pika
    conn = pika.BlockingConnection(pika.URLParameters(RABBIT))
    ch = conn.channel()
    for i in range(queues()):
        ch.queue_declare(_rabbit_queue(i), durable=True)
        ch.queue_purge(_rabbit_queue(i))
    conn.close()


def rabbit_produce(i: int, count: int, batch: int, start) -> None:
    """Publish a batch, wait until the broker confirmed all of it, repeat (asynchronous
    connection: BlockingChannel would wait for each confirm in turn)."""
    import pika
    props = pika.BasicProperties(delivery_mode=pika.DeliveryMode.Persistent)
    state = {"sent": 0, "pending": 0, "channel": None}

    def publish_batch():
        ch = state["channel"]
        n = min(batch, count - state["sent"])
        if n == 0:
            ch.connection.close()
            return
        for _ in range(n):
            ch.basic_publish("", _rabbit_queue(i), PAYLOAD, props)
        state["sent"] += n
        state["pending"] = n
        state["last_tag"] = state.get("last_tag", 0) + n

    def on_confirm(frame):
        tag = frame.method.delivery_tag        # acks may be "multiple": up to this tag
        if isinstance(frame.method, pika.spec.Basic.Nack):
            raise RuntimeError("message nacked by the broker")
        if tag >= state["last_tag"]:
            publish_batch()

    def on_channel(ch):
        state["channel"] = ch
        ch.confirm_delivery(on_confirm, callback=lambda _: (_ready(start), publish_batch()))

    def on_error(c, exc):
        c.ioloop.stop()
        raise RuntimeError(f"RabbitMQ: {exc}")

    conn = pika.SelectConnection(pika.URLParameters(RABBIT),
                                 on_open_callback=lambda c: c.channel(on_open_callback=on_channel),
                                 on_open_error_callback=on_error,
                                 on_close_callback=lambda c, exc: c.ioloop.stop())
    conn.ioloop.start()


def rabbit_consume(i: int, total: int, batch: int, start, consumed, batches) -> None:
    import pika
    conn = pika.BlockingConnection(pika.URLParameters(RABBIT))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=batch)
    _ready(start)
    pending, last_tag = 0, None
    for method, _, body in ch.consume(_rabbit_queue(i), inactivity_timeout=0.2):
        if method is not None:
            pending += 1
            last_tag = method.delivery_tag
        if pending and (pending >= batch or method is None):
            ch.basic_ack(last_tag, multiple=True)
            with consumed.get_lock():
                consumed.value += pending
                batches.value += 1
            pending = 0
        if consumed.value >= total:
            break
    ch.cancel()
    conn.close()


# -- the harness --------------------------------------------------------------------------

SYSTEMS = {
    "sluice": (sluice_setup, sluice_produce, sluice_consume),
    "pgq": (pgq_setup, pgq_produce, pgq_consume),
    "rabbitmq": (rabbit_setup, rabbit_produce, rabbit_consume),
}


def throughput(system: str, total: int, batch: int, layout: int) -> tuple[float, float]:
    """Messages/s end to end, and the average number of messages per consumer transaction,
    with ``layout`` queues (1 or WORKERS)."""
    os.environ["BENCH_QUEUES"] = str(layout)     # read by the workers (spawned after this)
    setup, produce, consume = SYSTEMS[system]
    setup(WORKERS, batch)
    ctx = mp.get_context("spawn")
    ready, go, stop = ctx.Semaphore(0), ctx.Event(), ctx.Event()
    start = (ready, go)
    consumed, batches = ctx.Value("q", 0), ctx.Value("q", 0)
    per = total // WORKERS
    procs = [ctx.Process(target=produce, args=(i, per, batch, start)) for i in range(WORKERS)]
    procs += [ctx.Process(target=consume, args=(i, per * WORKERS, batch, start, consumed, batches))
              for i in range(WORKERS)]
    if system == "pgq":
        procs.append(ctx.Process(target=pgq_ticker, args=(stop,)))
    for p in procs:
        p.start()
    for _ in range(2 * WORKERS):     # every worker connected and waiting at the start line
        if not ready.acquire(timeout=120):
            raise RuntimeError(f"{system}: a worker did not get ready")
    t0 = time.perf_counter()
    go.set()
    while consumed.value < per * WORKERS:
        time.sleep(0.005)
        if not any(p.is_alive() for p in procs[WORKERS:2 * WORKERS]):
            raise RuntimeError(f"{system}: consumers ended after {consumed.value} messages")
    elapsed = time.perf_counter() - t0
    stop.set()
    for p in procs:
        p.join(30)
        if p.exitcode not in (0, None):
            raise RuntimeError(f"{system}: a worker failed ({p.exitcode})")
    return per * WORKERS / elapsed, consumed.value / max(1, batches.value)


def _waiter(ready, results, tries: int) -> None:
    import sluice
    conn = sluice.connect(SLUICE_DSN)
    q = conn.queue("bench_q0")
    q.deqoptions.wait = 10
    for _ in range(tries):
        ready.put(True)
        m = q.deqone()
        results.put(time.time() if m is not None else None)
        conn.commit()
    conn.close()


def latency(tries: int) -> list[float]:
    """Seconds from an enqueuer's commit call to the return of a dequeue blocked in
    another process, ``tries`` times."""
    import sluice
    sluice_setup(0)
    ctx = mp.get_context("spawn")
    ready, results = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_waiter, args=(ready, results, tries))
    child.start()
    conn = sluice.connect(SLUICE_DSN)
    q = conn.queue("bench_q0")
    out = []
    for i in range(tries):
        ready.get(timeout=30)
        time.sleep(0.02)         # let it block
        q.enqone(conn.msgproperties(payload=b"wake"))
        t = time.time()
        conn.commit()
        got = results.get(timeout=30)
        out.append(got - t)
    child.join(30)
    conn.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--only", default="sluice,pgq,rabbitmq")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the comparison; report each")
    ap.add_argument("--latency-tries", type=int, default=200)
    args = ap.parse_args()
    ensure_database()
    with _pg() as c:
        pg_version = c.execute("SHOW server_version").fetchone()[0]
    print(f"# {time.strftime('%Y-%m-%d')} — {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, PostgreSQL {pg_version}")
    print(f"# {WORKERS} producer + {WORKERS} consumer processes, {args.messages:,} messages of "
          f"{len(PAYLOAD)} bytes, batches of {args.batch}")
    systems = [s for s in args.only.split(",") if s]
    for round_ in range(1, args.rounds + 1):
        for layout, label in ((WORKERS, f"{WORKERS} queues, producer i -> consumer i"),
                              (1, "1 queue shared by all")):
            for system in systems:
                if system == "pgq" and layout == 1:
                    continue      # a PgQ batch goes to one consumer
                rate, per_txn = throughput(system, args.messages, args.batch, layout)
                print(f"round {round_}  {label:36s} {system:9s} {rate:10,.0f} messages/s end to end"
                      f"   ({per_txn:.0f} messages per consumer transaction)", flush=True)
    if args.latency_tries:
        lat = sorted(latency(args.latency_tries))
        pick = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1000  # noqa: E731
        print(f"wake-up latency over {len(lat)} tries: median {statistics.median(lat) * 1000:.1f} ms, "
              f"p90 {pick(0.9):.1f} ms, p99 {pick(0.99):.1f} ms, max {lat[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
