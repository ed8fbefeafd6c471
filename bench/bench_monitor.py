"""Monitoring costs (issue 17 §3): a /metrics scrape over 1,000 queues, and IDAP send
throughput with /metrics scraped every second against without.

Run by hand (not part of the test suite):

    .venv/bin/python bench/bench_monitor.py [--queues 1000] [--tables 1000] [--rounds 3]
                                            [--duration 10] [--dsn postgresql://…] [--record]

Scrape: a store with ``--queues`` queues spread over ``--tables`` queue tables (1,000 and
1,000: the worst case, one queue table per queue) holding five READY messages each; the
time of ``Metrics.exposition()`` — one snapshot (its fixed set of SQL statements) turned
into the Prometheus text — median and worst of 20 scrapes, next to the floor measured in
the same run: the depth statement alone (``SELECT … FROM SLUICE_QUEUE_DEPTH``, the
snapshot's one statement that grows with the queues) on the store's own connection.

Throughput: ``sluice serve`` on the embedded SQLite default, ``wrk`` sending AQXmlSend +
commit as bench/bench_idap.py does, in alternating rounds of ``--duration`` seconds
without and with a client scraping ``/metrics`` every second (as a user with MONITOR),
``--rounds`` of each; the ratio of the mean requests/s (target ≥ 0.95).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_idap as idap  # noqa: E402  (the IDAP load of bench_idap.py)

ROOT = Path(__file__).resolve().parents[1]


def build_store(dsn: str, queues: int, tables: int) -> None:
    import sluice
    with sluice.connect(dsn) as c:
        per_table = -(-queues // tables)
        for t in range(tables):
            c.aqadm.create_queue_table(queue_table=f"MQT{t}", queue_payload_type="RAW")
            for k in range(per_table):
                n = t * per_table + k
                if n >= queues:
                    break
                c.aqadm.create_queue(queue_name=f"MQ{n}", queue_table=f"MQT{t}")
                c.aqadm.start_queue(f"MQ{n}")
                c.queue(f"MQ{n}").enqmany([c.msgproperties(payload=b"m") for _ in range(5)])
            c.commit()


def scrape_times(dsn: str, n: int = 20) -> dict:
    import sluice
    from sluice.monitor.prometheus import Metrics
    metrics = Metrics(lambda: sluice.connect(dsn), max_age=0.0)    # every scrape reads
    conn = sluice.connect(dsn)
    try:
        body = metrics.exposition()                      # warm: connection, statements
        series = body.count(b"\nsluice_queue_ready_messages{")
        scrapes, cpu, floor = [], [], []
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            metrics.exposition()
            scrapes.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            t0 = time.perf_counter()
            conn.query("SELECT OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, DELIVERY_MODE, MSGS, "
                       "OLDEST_ENQ_TIME, SUM_ENQ_TIME FROM SLUICE_QUEUE_DEPTH", None)
            conn.commit()
            floor.append(time.perf_counter() - t0)
    finally:
        metrics.close()
        conn.close()
    return {"median_ms": statistics.median(scrapes) * 1e3, "max_ms": max(scrapes) * 1e3,
            "cpu_ms": statistics.median(cpu) * 1e3,
            "floor_ms": statistics.median(floor) * 1e3, "series": series, "bytes": len(body)}


def _scraper(url: str, stop: threading.Event, done: list) -> None:
    import base64
    auth = "Basic " + base64.b64encode(b"watcher:watcher-pw").decode()
    while not stop.is_set():
        t0 = time.monotonic()
        req = urllib.request.Request(url, headers={"Authorization": auth})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200 and b"sluice_queue_ready_messages" in r.read()
        done.append(time.monotonic() - t0)
        stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))


def throughput(rounds: int, duration: int, connections: int) -> dict:
    import sluice
    work = tempfile.mkdtemp(prefix="bench-monitor-")
    dsn = f"sqlite:///{work}/idap.db?synchronous=NORMAL"
    idap.setup(dsn)
    with sluice.connect(dsn) as admin:
        admin.cursor().execute('CREATE USER watcher IDENTIFIED BY "watcher-pw"')
        admin.cursor().execute("GRANT MONITOR TO watcher")
    port = idap.free_port()
    server = idap.start_server(dsn, port, 2)
    url = f"http://127.0.0.1:{port}{idap.PATH}"
    script = os.path.join(work, "send.lua")
    Path(script).write_text(idap.LUA % {"body": idap.BODY, "auth": idap.AUTH, "path": idap.PATH})
    off, on, scrapes, cpu_off, cpu_on = [], [], [], [], []

    def measured(cpus: list) -> float:
        c0 = idap.cpu_seconds(server.pid)
        r = idap.run_wrk(url, connections, duration, script)
        cpus.append((idap.cpu_seconds(server.pid) - c0) / max(r["requests"], 1) * 1e6)
        return r["rps"]
    try:
        idap.run_wrk(url, connections, 2, script)                       # warm-up
        for _ in range(rounds):
            off.append(measured(cpu_off))
            stop = threading.Event()
            t = threading.Thread(target=_scraper, args=(f"http://127.0.0.1:{port}/metrics", stop, scrapes))
            t.start()
            try:
                on.append(measured(cpu_on))
            finally:
                stop.set()
                t.join()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return {"off": off, "on": on, "ratio": statistics.mean(on) / statistics.mean(off),
            "cpu_off": statistics.median(cpu_off), "cpu_on": statistics.median(cpu_on),
            "scrapes": len(scrapes), "scrape_ms": statistics.median(scrapes) * 1e3 if scrapes else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queues", type=int, default=1000)
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--dsn", default=None, help="store for the scrape (default: a new SQLite file)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--skip-scrape", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--record", action="store_true", help="append the figures to bench/RESULTS.md")
    args = ap.parse_args()
    lines = []
    if not args.skip_scrape:
        work = tempfile.mkdtemp(prefix="bench-monitor-")
        dsn = args.dsn or f"sqlite:///{work}/scrape.db"
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        build_store(dsn, args.queues, args.tables)
        built = time.perf_counter() - t0
        s = scrape_times(dsn)
        load1 = os.getloadavg()
        backend = dsn.split(":", 1)[0]
        line = (f"| /metrics scrape, {args.queues} queues in {args.tables} queue tables, {backend} | "
                f"{s['median_ms']:.1f} ms wall (max {s['max_ms']:.1f}), {s['cpu_ms']:.1f} ms CPU | "
                f"floor {s['floor_ms']:.1f} ms | {s['series']} queue series | | {load0[0]:.1f} → {load1[0]:.1f} |")
        print(f"scrape: median {s['median_ms']:.1f} ms, max {s['max_ms']:.1f} ms, CPU {s['cpu_ms']:.1f} ms; floor (depth "
              f"statement alone) {s['floor_ms']:.1f} ms; {s['series']} queue series, {s['bytes']} bytes; "
              f"store built in {built:.0f} s; load {load0[0]:.1f} -> {load1[0]:.1f}")
        lines.append(line)
        shutil.rmtree(work, ignore_errors=True)
    if not args.skip_throughput:
        load0 = os.getloadavg()
        t = throughput(args.rounds, args.duration, args.connections)
        load1 = os.getloadavg()
        print(f"IDAP AQXmlSend + commit: without scrapes {', '.join(f'{x:,.0f}' for x in t['off'])} req/s; "
              f"scraped every second {', '.join(f'{x:,.0f}' for x in t['on'])} req/s; ratio "
              f"{t['ratio']:.3f}; server CPU {t['cpu_off']:.0f} vs {t['cpu_on']:.0f} µs/request; "
              f"{t['scrapes']} scrapes, median {t['scrape_ms']:.1f} ms; "
              f"load {load0[0]:.1f} -> {load1[0]:.1f}")
        lines.append(f"| IDAP send, /metrics every 1 s vs none ({args.rounds}×{args.duration} s each, "
                     f"alternating) | {statistics.mean(t['on']):,.0f} vs {statistics.mean(t['off']):,.0f} "
                     f"req/s | ratio {t['ratio']:.3f} | server CPU {t['cpu_on']:.0f} vs {t['cpu_off']:.0f} "
                     f"µs/request, scrape {t['scrape_ms']:.1f} ms | "
                     f"{t['scrapes']} scrapes | {load0[0]:.1f} → {load1[0]:.1f} |")
    if args.record:
        path = ROOT / "bench" / "RESULTS.md"
        cmd = " ".join(["bench/bench_monitor.py", *sys.argv[1:]])
        head = ("| measurement | result | reference (same run) | detail | | load (1 min) |\n"
                "|---|---|---|---|---|---|\n")
        path.write_text(path.read_text().rstrip("\n") + f"\n\n### {dt.date.today()}: `{cmd}`\n\n"
                        + head + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
