"""Propagation between sites (issue 14 §2), in one run:

    .venv/bin/python bench/bench_propagation.py [--messages 20000] [--size 1024]
                                                [--batch 500] [--rate 1000] [--seconds 10]
                                                [--only local,pg,http,shovel,lag]

(a) local SQLite -> SQLite: two store files joined by a database link; ``--messages``
    messages of ``--size`` bytes enqueued at the source first (not timed), then one
    propagation runner (latency 0) moves them all: messages/s from the first batch to the
    last commit at the destination (each batch committed there with its de-duplication
    rows, then at the source with the schedule's statistics);
(b) the same, PostgreSQL -> PostgreSQL: two schemas of one database, two sites; in the
    same run its physical floor (:func:`pg_floor`): a bare psycopg loop doing the durable
    work of a batch with the same batch size — select the next N 1 KB rows of a table in
    one schema (locked), COPY them (binary) into a table of the other schema through a
    second connection and commit there, then delete them from the first and commit;
(c) HTTP: the destination is a ``sluice serve`` process on loopback, the source's runner
    POSTs the batches to its AQPropServlet (Basic auth, the servlet commits each batch);
(d) the peer, same machine, same run: RabbitMQ's shovel (the rabbitmq_shovel plugin of
    the local broker) moving the same number of persistent 1 KB messages from one durable
    queue to another with ``ack-mode: on-confirm`` (publisher confirms at the destination
    before the source acknowledges: RabbitMQ's equivalent of ensured delivery) — from the
    shovel's creation to the destination queue holding them all;
(e) lag: a producer commits ``--rate`` messages/s (10 per transaction) at an SQLite
    source for ``--seconds`` while the runner runs as a process would (``run``, latency 0);
    a consumer at the destination reads each message's enqueue time from its payload and
    records the time until it could dequeue it: p50 / p99.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)

import psycopg  # noqa: E402

import sluice  # noqa: E402
from sluice.streams.propagation.runner import PropagationRunner  # noqa: E402

PG = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")


def setup(src_dsn: str, dst_dsn: str, using: str | None = None, creds: str = "") -> sluice.Connection:
    src, dst = sluice.connect(src_dsn), sluice.connect(dst_dsn)
    src.aqadm.create_queue_table(queue_table="src_qt", queue_payload_type="RAW", multiple_consumers=True)
    src.aqadm.create_queue(queue_name="src", queue_table="src_qt")
    src.aqadm.start_queue(queue_name="src")
    dst.aqadm.create_queue_table(queue_table="dst_qt", queue_payload_type="RAW")
    dst.aqadm.create_queue(queue_name="dst", queue_table="dst_qt")
    dst.aqadm.start_queue(queue_name="dst")
    src.cursor().execute(f"CREATE DATABASE LINK dbs2{creds} USING '{using or dst_dsn}'")
    src.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    src.aqadm.alter_propagation_schedule(queue_name="src", destination="dbs2", latency=0)
    dst.close()
    return src


def fill(conn: sluice.Connection, n: int, size: int) -> None:
    q = conn.queue("SRC")
    body = os.urandom(size)
    for start in range(0, n, 1000):
        q.enqmany([conn.msgproperties(payload=body) for _ in range(min(1000, n - start))])
        conn.commit()


def count(dsn: str) -> int:
    with sluice.connect(dsn) as c:
        return c.query("SELECT COUNT(*) FROM AQ$DST_QT", None)[1][0][0]


def propagate_all(conn: sluice.Connection, n: int, batch: int) -> tuple[float, int]:
    runner = PropagationRunner(conn, batch_size=batch)
    t0 = time.perf_counter()
    moved = 0
    while moved < n:
        got = runner.run_once(force=True)
        if not got:
            err = next(iter(runner.last_results.values())).error
            raise SystemExit(f"propagation stopped after {moved}: {err}")
        moved += got
    elapsed = time.perf_counter() - t0
    runner.close()
    return elapsed, moved


def run_local(tmp: str, args) -> dict:
    src_dsn, dst_dsn = f"sqlite:///{tmp}/a.db", f"sqlite:///{tmp}/b.db"
    conn = setup(src_dsn, dst_dsn)
    fill(conn, args.messages, args.size)
    elapsed, moved = propagate_all(conn, args.messages, args.batch)
    conn.close()
    assert count(dst_dsn) == args.messages
    return {"what": "SQLite -> SQLite", "messages": moved, "seconds": round(elapsed, 3),
            "msg_per_s": round(moved / elapsed)}


def run_pg(args) -> dict:
    tag = uuid.uuid4().hex[:8]
    schemas = [f"bench_prop_a_{tag}", f"bench_prop_b_{tag}"]
    src_dsn, dst_dsn = (f"{PG}?schema={s}" for s in schemas)
    try:
        conn = setup(src_dsn, dst_dsn)
        fill(conn, args.messages, args.size)
        elapsed, moved = propagate_all(conn, args.messages, args.batch)
        conn.close()
        assert count(dst_dsn) == args.messages
        return {"what": "PostgreSQL -> PostgreSQL (two schemas)", "messages": moved,
                "seconds": round(elapsed, 3), "msg_per_s": round(moved / elapsed)}
    finally:
        with psycopg.connect(PG, autocommit=True) as admin:
            for s in schemas:
                admin.execute(f'DROP SCHEMA IF EXISTS "{s}" CASCADE')


def pg_floor(args, one_commit: bool = False) -> dict:
    """The physical floor of (b): the same rows moved by a bare psycopg loop, two sessions
    and two commits per batch as the protocol needs (``one_commit``: one session, one
    commit — what two sites cannot do).  Tables: a BIGINT key, the message id, the enqueue
    time and the payload; no index but the key."""
    tag = uuid.uuid4().hex[:8]
    schemas = [f"bench_floor_a_{tag}", f"bench_floor_b_{tag}"]
    body = os.urandom(args.size)
    ddl = "(SEQ BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, MSGID BYTEA NOT NULL, " \
          "ENQ_TIME DOUBLE PRECISION NOT NULL, USER_DATA BYTEA)"
    try:
        with psycopg.connect(PG, autocommit=True) as admin:
            for s in schemas:
                admin.execute(f'CREATE SCHEMA "{s}"')
                admin.execute(f'CREATE TABLE "{s}".MSGS {ddl}')
            with admin.cursor().copy(f'COPY "{schemas[0]}".MSGS (MSGID, ENQ_TIME, USER_DATA) FROM STDIN') as cp:
                now = time.time()
                for _ in range(args.messages):
                    cp.write_row((uuid.uuid4().bytes, now, body))
        src = psycopg.connect(PG)
        dst = src if one_commit else psycopg.connect(PG)
        select = f'SELECT SEQ, MSGID, ENQ_TIME, USER_DATA FROM "{schemas[0]}".MSGS ORDER BY SEQ ' \
                 f'LIMIT %s FOR UPDATE SKIP LOCKED'
        copy = f'COPY "{schemas[1]}".MSGS (MSGID, ENQ_TIME, USER_DATA) FROM STDIN (FORMAT BINARY)'
        delete = f'DELETE FROM "{schemas[0]}".MSGS WHERE SEQ = ANY(%s)'
        moved = 0
        t0 = time.perf_counter()
        while moved < args.messages:
            rows = src.execute(select, (args.batch,), binary=True).fetchall()
            if not rows:
                break
            with dst.cursor().copy(copy) as cp:
                cp.set_types(["bytea", "float8", "bytea"])
                for r in rows:
                    cp.write_row(r[1:])
            if not one_commit:
                dst.commit()
            src.execute(delete, ([r[0] for r in rows],))
            src.commit()
            moved += len(rows)
        elapsed = time.perf_counter() - t0
        src.close()
        dst.close()
        return {"what": "floor: bare psycopg, " + ("one session, one commit" if one_commit else
                "destination commit then source commit"), "messages": moved,
                "seconds": round(elapsed, 3), "msg_per_s": round(moved / elapsed)}
    finally:
        with psycopg.connect(PG, autocommit=True) as admin:
            for s in schemas:
                admin.execute(f'DROP SCHEMA IF EXISTS "{s}" CASCADE')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_http(tmp: str, args) -> dict:
    import httpx
    src_dsn, dst_dsn = f"sqlite:///{tmp}/ha.db", f"sqlite:///{tmp}/hb.db"
    with sluice.connect(dst_dsn) as dst:
        dst.cursor().executescript(
            "CREATE USER john IDENTIFIED BY welcome;\n"
            "BEGIN DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', enable_http => TRUE);\n"
            "DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'JOHN', db_username => 'SLUICE'); END;\n/\n")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/aqserv/servlet/AQPropServlet"
    env = dict(os.environ, PYTHONPATH=SRC)
    server = subprocess.Popen([SLUICE, "--dsn", dst_dsn, "serve", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while True:
            try:
                httpx.get(url + "?wsdl", timeout=1)
                break
            except httpx.TransportError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        conn = setup(src_dsn, dst_dsn, using=url, creds=" CONNECT TO john IDENTIFIED BY welcome")
        fill(conn, args.messages, args.size)
        # sluice serve's default 1 MB request limit: the sender posts a batch in parts of 900 KB
        elapsed, moved = propagate_all(conn, args.messages, args.batch)
        conn.close()
        assert count(dst_dsn) == args.messages
        return {"what": "HTTP: runner -> sluice serve (SQLite both ends)", "messages": moved,
                "seconds": round(elapsed, 3), "msg_per_s": round(moved / elapsed)}
    finally:
        server.terminate()
        server.wait(20)


def run_shovel(args) -> dict:
    import pika
    tag = uuid.uuid4().hex[:8]
    q1, q2, name = f"bench_src_{tag}", f"bench_dst_{tag}", f"bench_shovel_{tag}"
    conn = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1"))
    ch = conn.channel()
    ch.confirm_delivery()
    for q in (q1, q2):
        ch.queue_declare(q, durable=True)
    body = os.urandom(args.size)
    props = pika.BasicProperties(delivery_mode=2)
    for _ in range(args.messages):
        ch.basic_publish("", q1, body, props)
    params = {"src-protocol": "amqp091", "src-uri": "amqp://", "src-queue": q1,
              "dest-protocol": "amqp091", "dest-uri": "amqp://", "dest-queue": q2,
              "ack-mode": "on-confirm", "src-delete-after": "never", "src-prefetch-count": 1000}
    try:
        t0 = time.perf_counter()
        subprocess.run(["rabbitmqctl", "set_parameter", "shovel", name, json.dumps(params)],
                       check=True, capture_output=True)
        while ch.queue_declare(q2, durable=True, passive=True).method.message_count < args.messages:
            time.sleep(0.01)
        elapsed = time.perf_counter() - t0
    finally:
        subprocess.run(["rabbitmqctl", "clear_parameter", "shovel", name], capture_output=True)
        for q in (q1, q2):
            ch.queue_delete(q)
        conn.close()
    return {"what": "RabbitMQ shovel (durable queues, persistent, ack-mode on-confirm)",
            "messages": args.messages, "seconds": round(elapsed, 3),
            "msg_per_s": round(args.messages / elapsed),
            "note": "includes rabbitmqctl set_parameter starting the shovel (about 0.3-0.5 s)"}


def run_lag(tmp: str, args) -> dict:
    src_dsn, dst_dsn = f"sqlite:///{tmp}/la.db", f"sqlite:///{tmp}/lb.db"
    setup(src_dsn, dst_dsn).close()
    stop = threading.Event()
    runner = PropagationRunner(sluice.connect(src_dsn), batch_size=args.batch)
    t = threading.Thread(target=runner.run, args=(stop,), kwargs={"idle": 0.05}, daemon=True)
    t.start()
    lags: list[float] = []
    total = args.rate * args.seconds

    def consume() -> None:
        with sluice.connect(dst_dsn) as c:
            q = c.queue("DST")
            q.deqoptions.wait = 1
            while len(lags) < total and not stop.is_set():
                got = q.deqmany(1000)
                now = time.time()
                c.commit()
                lags.extend(now - struct.unpack("d", m.payload[:8])[0] for m in got)
    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    pad = os.urandom(args.size - 8)
    with sluice.connect(src_dsn) as p:
        q = p.queue("SRC")
        start = time.time()
        for i in range(0, total, 10):
            due = start + i / args.rate
            delay = due - time.time()
            if delay > 0:
                time.sleep(delay)
            q.enqmany([p.msgproperties(payload=struct.pack("d", time.time()) + pad) for _ in range(10)])
            p.commit()
        produced_in = time.time() - start
    consumer.join(60)
    stop.set()
    t.join(10)
    runner.close()
    runner.conn.close()
    lags.sort()
    return {"what": f"lag at {args.rate} msg/s (SQLite -> SQLite, latency 0)", "messages": len(lags),
            "produced_per_s": round(total / produced_in),
            "p50_ms": round(1000 * statistics.median(lags), 1) if lags else None,
            "p99_ms": round(1000 * lags[int(len(lags) * 0.99) - 1], 1) if lags else None}


def _loop() -> float:
    """Seconds of a 10M-iteration Python loop: how fast this machine is right now (~0.7 s
    on a quiet fast VM)."""
    t0 = time.perf_counter()
    s = 0
    for i in range(10_000_000):
        s += i
    return round(time.perf_counter() - t0, 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=20000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--only", default="local,pg,http,shovel,lag")
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(json.dumps({"machine": platform.node(), "cpus": os.cpu_count(), "load": os.getloadavg(),
                      "loop_10M_s": _loop(), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}))
    tmp = tempfile.mkdtemp(prefix="bench-prop-")
    try:
        for part, fn in (("local", lambda: run_local(tmp, args)), ("pg", lambda: run_pg(args)),
                         ("pg", lambda: pg_floor(args)), ("pg", lambda: pg_floor(args, one_commit=True)),
                         ("http", lambda: run_http(tmp, args)), ("shovel", lambda: run_shovel(args)),
                         ("lag", lambda: run_lag(tmp, args))):
            if part in only:
                print(json.dumps(fn()), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"load_after": os.getloadavg(), "loop_10M_s": _loop()}))


if __name__ == "__main__":
    main()
