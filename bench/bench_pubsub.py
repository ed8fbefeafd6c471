"""Issue 6 benchmarks: buffered round trip in one process (one message at a time, and
arrays of 100 where the semantics allow them); persistent publish to ten rule-based
subscribers, each dequeuing, next to RabbitMQ (topic exchange, ten bound queues,
persistent messages, publisher confirms, manual acks) in the same run.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/bench_pubsub.py [--buffered-n 100000] [--n 20000] [--dsn sqlite:///...]

"Messages/s" for the publish benchmark counts published messages fully consumed by
all ten subscribers (each delivery is one of ten).

The array round trip (``enqmany`` of 100 buffered messages, ``deqmany(100)``) is
attempted and reported as refused: seed 003 allows array enqueue and dequeue of buffered
messages only on sharded queues ("the array size must be set to one"), and Sluice's
queues are not sharded.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time

import sluice

PAYLOAD = b"x" * 100
SUBSCRIBERS = 10


def _buffered_queue(dsn: str, name: str) -> tuple[sluice.Connection, sluice.Queue]:
    conn = sluice.connect(dsn)
    conn.aqadm.create_queue_table(queue_table=f"{name}_qt", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name=name, queue_table=f"{name}_qt")
    conn.aqadm.start_queue(queue_name=name)
    q = conn.queue(name)
    q.enqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    return conn, q


def buffered_round_trip(dsn: str, n: int, repeat: int = 3) -> float:
    """enqone then deqone of one buffered message, ``n`` times; the best of ``repeat``."""
    conn, q = _buffered_queue(dsn, "buf_q")
    props = conn.msgproperties
    best = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            q.enqone(props(payload=PAYLOAD))
            q.deqone()
        best = max(best, n / (time.perf_counter() - t0))
    conn.close()
    return best


def python_speed() -> float:
    """Seconds for an empty 10,000,000-iteration Python loop: this machine's speed varies
    by 2-4x with its neighbours, so per-message Python figures carry it along."""
    t0 = time.perf_counter()
    for _ in range(10_000_000):
        pass
    return time.perf_counter() - t0


def buffered_array_round_trip(dsn: str, n: int, batch: int = 100) -> float | str:
    """enqmany of ``batch`` buffered messages, deqmany(batch): the rate, or why it is refused."""
    conn, q = _buffered_queue(dsn, "buf_array_q")
    props = conn.msgproperties
    try:
        t0 = time.perf_counter()
        for _ in range(n // batch):
            q.enqmany([props(payload=PAYLOAD) for _ in range(batch)])
            got = q.deqmany(batch)
            assert len(got) == batch, len(got)
        return (n // batch * batch) / (time.perf_counter() - t0)
    except sluice.NotSupportedError as e:
        return str(e)
    finally:
        conn.close()


def persistent_publish(dsn: str, n: int, batch: int = 100) -> float:
    conn = sluice.connect(dsn)
    conn.aqadm.create_queue_table(queue_table="topic_qt", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="topic_q", queue_table="topic_qt")
    conn.aqadm.start_queue(queue_name="topic_q")
    for i in range(SUBSCRIBERS):   # rule-based: every subscriber's rule holds for these messages
        conn.aqadm.add_subscriber(queue_name="topic_q", subscriber=sluice.Agent(f"SUB{i}"),
                                  rule="corrid LIKE 'orders.%'")
    pub = conn.queue("topic_q")
    subs = []
    for i in range(SUBSCRIBERS):
        q = conn.queue("topic_q")
        q.deqoptions.consumername = f"SUB{i}"
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        subs.append(q)
    props = conn.msgproperties
    t0 = time.perf_counter()
    for _ in range(n // batch):
        pub.enqmany([props(payload=PAYLOAD, correlation="orders.new") for _ in range(batch)])
        conn.commit()
        for q in subs:
            got = q.deqmany(batch)
            assert len(got) == batch, len(got)
        conn.commit()
    rate = (n // batch * batch) / (time.perf_counter() - t0)
    conn.close()
    return rate


def rabbitmq_topic(n: int, batch: int = 100) -> float:
    import pika
    params = pika.ConnectionParameters("127.0.0.1", 5672, credentials=pika.PlainCredentials("guest", "guest"))
    conn = pika.BlockingConnection(params)
    ch = conn.channel()
    ch.confirm_delivery()
    ch.basic_qos(prefetch_count=batch)
    ex = "sluice_bench_topic"
    ch.exchange_declare(ex, "topic", durable=True)
    queues = []
    for i in range(SUBSCRIBERS):
        qn = f"sluice_bench_sub{i}"
        ch.queue_declare(qn, durable=True)
        ch.queue_purge(qn)
        ch.queue_bind(qn, ex, routing_key="orders.#")
        queues.append(qn)
    persistent = pika.BasicProperties(delivery_mode=2)
    t0 = time.perf_counter()
    for _ in range(n // batch):
        for _ in range(batch):
            ch.basic_publish(ex, "orders.new", PAYLOAD, properties=persistent)
        for qn in queues:   # each subscriber takes the batch (pushed, prefetch) and acks it
            last, got = None, 0
            for method, _, body in ch.consume(qn, inactivity_timeout=5):
                if method is None:
                    raise RuntimeError("RabbitMQ consumer starved")
                last, got = method.delivery_tag, got + 1
                if got == batch:
                    break
            ch.basic_ack(last, multiple=True)
            ch.cancel()
    rate = (n // batch * batch) / (time.perf_counter() - t0)
    for qn in queues:
        ch.queue_delete(qn)
    ch.exchange_delete(ex)
    conn.close()
    return rate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--buffered-n", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--dsn", default=None, help="default: a fresh SQLite file")
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="sluice-bench-")
    try:
        dsn = args.dsn or f"sqlite:///{os.path.join(d, 'p.db')}"
        load = os.getloadavg()[0]
        rows = [("buffered round trip, one at a time", "sluice", buffered_round_trip(dsn, args.buffered_n)),
                ("buffered round trip, arrays of 100", "sluice", buffered_array_round_trip(dsn, args.buffered_n)),
                ("publish to 10 rule subscribers, batches of 100", "sluice", persistent_publish(dsn, args.n)),
                ("publish to 10 bound queues, batches of 100", "RabbitMQ (pika, topic exchange)",
                 rabbitmq_topic(args.n))]
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()} {os.cpu_count()} cores  "
          f"Python {platform.python_version()}  load {load:.1f}  10M-iteration loop {python_speed():.2f} s  "
          f"dsn {'sqlite' if not args.dsn else args.dsn}")
    print(f"{'measurement':<48} {'system':<34} {'messages/s':>12}")
    for what, who, rate in rows:
        print(f"{what:<48} {who:<34} {rate:>12,.0f}" if not isinstance(rate, str) else
              f"{what:<48} {who:<34} {'refused':>12}  ({rate})")


if __name__ == "__main__":
    main()
