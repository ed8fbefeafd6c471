"""Does watching cost?  Issue 17 §3 in one run: a /metrics scrape over 1,000 queues
(< 100 ms), and IDAP send throughput with a dashboard open and /metrics scraped every
second against nobody watching (≥ 95 %).

Run by hand (not part of the test suite; about 2-3 minutes):

    .venv/bin/python bench/bench_monitoring.py [--record]
        [--queues 1000] [--tables 100] [--backlog 20000]
        [--pg postgresql://postgres@127.0.0.1:5432/test | --no-pg]
        [--rounds 3] [--duration 8] [--idle 5] [--connections 16]

**Scrape.**  A store with ``--queues`` queues spread over ``--tables`` queue tables, five
READY messages each, on SQLite (a new file) and on PostgreSQL (a schema of its own in
``--pg``'s database, dropped after).  Timed: ``Metrics.exposition()`` — one reading (the
snapshot's fixed set of SQL statements) turned into the Prometheus text — median and worst
of 20, wall and CPU (this process: the client and, for SQLite, the database engine), next
to the floor of the same run: the depth statement alone (``SELECT … FROM
SLUICE_QUEUE_DEPTH``, the snapshot's one statement that grows with the queues) on the
store's own connection.  Also the scrape a server answers from its shared snapshot
(:mod:`sluice.monitor.source`: a reading at most a second old serves every scrape and the
dashboard) — what most scrapes cost.  Then ``--backlog`` more READY messages in one queue
and the reading again: the depth statement counts messages, so its cost grows with them.

**Throughput.**  ``sluice serve`` on the embedded SQLite default, ``wrk`` sending AQXmlSend +
commit as bench/bench_idap.py does (one durable 100-byte RAW enqueue per request, 16
keep-alive clients), in interleaved rounds, each on a
fresh store and server (a queue that grew in an earlier round would slow later ones), the
order flipped every round (off, watched | watched, off | …):

- **off** — ``sluice serve --no-dashboard``, nobody scraping;
- **watched** — ``sluice serve`` with its dashboard (sampler every 2 s, the default) and
  a page open (the page and its assets loaded, then ``GET /dashboard/api/state`` every
  2 s, as its script does) while ``GET /metrics`` runs every second.

Per configuration the median requests/s over its rounds and the ratio (target ≥ 0.95), and
the median of each round's own ratio (the pair ran back to back); then, with no requests
sent, the server's CPU a second off and watched (``--idle``): watching's own cost;
beside it the server's CPU per request (``/proc``), the steadier figure on a busy machine.
The load average and the time of a 10M-iteration Python loop are printed (and recorded)
with the figures: they say how busy the machine was.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_idap import (AUTH, BODY, LUA, PATH, cpu_seconds, free_port, queue_count, run_wrk,  # noqa: E402
                        setup, start_server, stop_server)

ROOT = Path(__file__).resolve().parents[1]
WATCHER = ("watcher", "watch-pw")
CONFIGS = ("off", "watched")
DEPTH_SQL = ("SELECT OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, DELIVERY_MODE, MSGS, "
             "OLDEST_ENQ_TIME, SUM_ENQ_TIME FROM SLUICE_QUEUE_DEPTH")


def loop_seconds() -> float:
    """The time of a 10M-iteration loop in a fresh interpreter: how fast the machine is now."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "s=0\nfor i in range(10_000_000): s+=i"], check=True)
    return time.perf_counter() - t0


# ---- the scrape ---------------------------------------------------------------------------
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


def add_backlog(dsn: str, messages: int) -> None:
    """``messages`` more READY messages in queue MQ0."""
    import sluice
    with sluice.connect(dsn) as c:
        q = c.queue("MQ0")
        for k in range(0, messages, 2000):
            q.enqmany([c.msgproperties(payload=b"b") for _ in range(min(2000, messages - k))])
            c.commit()


def scrape_times(dsn: str, n: int = 20) -> dict:
    import sluice
    from sluice.monitor.prometheus import Metrics
    reading = Metrics(lambda: sluice.connect(dsn), max_age=0.0)     # every scrape reads
    shared = Metrics(lambda: sluice.connect(dsn), max_age=3600.0)   # every scrape shares one reading
    conn = sluice.connect(dsn)
    try:
        body = reading.exposition()                      # warm: connections, statements
        shared.exposition()
        series = body.count(b"\nsluice_queue_ready_messages{")
        wall, cpu, floor, shared_wall = [], [], [], []
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            reading.exposition()
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            t0 = time.perf_counter()
            conn.query(DEPTH_SQL, None)
            conn.commit()
            floor.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            shared.exposition()
            shared_wall.append(time.perf_counter() - t0)
    finally:
        reading.close()
        shared.close()
        conn.close()
    ms = lambda xs: statistics.median(xs) * 1e3     # noqa: E731
    return {"wall": ms(wall), "max": max(wall) * 1e3, "cpu": ms(cpu), "floor": ms(floor),
            "shared": ms(shared_wall), "series": series, "bytes": len(body)}


def scrape(backend: str, args) -> dict | None:
    work = tempfile.mkdtemp(prefix="bench-monitoring-")
    schema = None
    if backend == "sqlite":
        dsn = f"sqlite:///{work}/scrape.db"
    else:
        schema = "bench_mon_" + uuid.uuid4().hex[:10]
        dsn = f"{args.pg}{'&' if '?' in args.pg else '?'}schema={schema}"
    try:
        t0 = time.perf_counter()
        build_store(dsn, args.queues, args.tables)
        built = time.perf_counter() - t0
        s = scrape_times(dsn)
        if args.backlog:
            add_backlog(dsn, args.backlog)
            b = scrape_times(dsn, 5)
            s["backlog_wall"], s["backlog_floor"] = b["wall"], b["floor"]
    except Exception as e:       # PostgreSQL away: say so, measure the rest
        if backend == "sqlite":
            raise
        print(f"scrape on {backend}: not measured ({type(e).__name__}: {e})")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if schema:
            _drop_schema(args.pg, schema)
    s["backend"], s["built"] = backend, built
    print(f"scrape, {args.queues} queues in {args.tables} queue tables, {backend}: reading "
          f"{s['wall']:.1f} ms wall (max {s['max']:.1f}), {s['cpu']:.1f} ms CPU; floor (depth "
          f"statement alone) {s['floor']:.1f} ms; from the shared snapshot {s['shared']:.1f} ms; "
          f"{s['series']} queue series, {s['bytes']:,} bytes; store built in {built:.0f} s", flush=True)
    if "backlog_wall" in s:
        print(f"  with {args.backlog:,} more READY in one queue: reading {s['backlog_wall']:.1f} ms wall, "
              f"floor {s['backlog_floor']:.1f} ms (the depth count grows with the backlog)", flush=True)
    return s


def _drop_schema(pg: str, schema: str) -> None:
    import psycopg
    base = pg.split("?", 1)[0]
    try:
        with psycopg.connect(base, autocommit=True) as c:
            c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    except psycopg.Error as e:
        print(f"could not drop schema {schema}: {e}")


# ---- the throughput -----------------------------------------------------------------------
def add_watcher(dsn: str) -> None:
    import sluice
    with sluice.connect(dsn) as admin:
        cur = admin.cursor()
        cur.execute(f'CREATE USER {WATCHER[0]} IDENTIFIED BY "{WATCHER[1]}"')
        cur.execute(f"GRANT CONNECT, SELECT_CATALOG_ROLE TO {WATCHER[0]}")


class Watcher:
    """An open dashboard page and a Prometheus scraper (every second), in a thread."""

    def __init__(self, base: str, poll: float = 2.0, scrape: float = 1.0) -> None:
        token = base64.b64encode(f"{WATCHER[0]}:{WATCHER[1]}".encode()).decode()
        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Basic {token}"}, timeout=30)
        self.poll, self.scrape = poll, scrape
        self.stop = threading.Event()
        self.counts = {"state": 0, "metrics": 0, "failed": 0}
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.sampler: dict = {}

    def get(self, path: str, kind: str) -> httpx.Response | None:
        try:
            r = self.client.get(path)
        except httpx.HTTPError:
            self.counts["failed"] += 1
            return None
        self.counts[kind if r.status_code == 200 else "failed"] += 1
        return r

    def run(self) -> None:
        page = self.get("/dashboard", "state")
        assert page is not None and page.status_code == 200, "the dashboard did not load"
        for asset in ("dashboard.js", "dashboard.css"):
            self.get(f"/dashboard/static/{asset}", "state")
        since, next_poll, next_scrape = 0.0, 0.0, 0.0
        while not self.stop.is_set():
            now = time.monotonic()
            if now >= next_poll:
                r = self.get(f"/dashboard/api/state?since={since}", "state")
                if r is not None and r.status_code == 200:
                    since = max([since] + [p["t"] for p in r.json()["points"]])
                next_poll = now + self.poll
            if now >= next_scrape:
                r = self.get("/metrics", "metrics")
                assert r is None or r.status_code != 200 or b"sluice_queue_ready_messages" in r.content
                next_scrape = now + self.scrape
            self.stop.wait(max(0.0, min(next_poll, next_scrape) - time.monotonic()))

    def __enter__(self) -> "Watcher":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(10)
        r = self.client.get("/dashboard/api/state?since=1e12")   # what the sampler's readings cost
        self.sampler = r.json()["sampler"] if r.status_code == 200 else {}
        self.client.close()


def serve_fresh(config: str, name: str, options: str = "") -> tuple[str, str, str, subprocess.Popen]:
    """A fresh store (with the watcher user) and a ``sluice serve`` over it in ``config``:
    (work dir, dsn, base URL, server)."""
    work = tempfile.mkdtemp(prefix="bench-monitoring-")
    dsn = f"sqlite:///{work}/{name}.db{options}"
    setup(dsn)
    add_watcher(dsn)
    port = free_port()
    server = start_server(dsn, port, 2, options=("--no-dashboard",) if config == "off" else ())
    return work, dsn, f"http://127.0.0.1:{port}", server


def one_round(config: str, args) -> dict:
    work, dsn, base, server = serve_fresh(config, "idap", "?synchronous=NORMAL")
    script = os.path.join(work, "send.lua")
    Path(script).write_text(LUA % {"body": BODY, "auth": AUTH, "path": PATH})
    try:
        run_wrk(base + PATH, args.connections, 2, script)                       # warm-up
        warm = queue_count(dsn)
        cpu0 = cpu_seconds(server.pid)
        if config == "off":
            result = run_wrk(base + PATH, args.connections, args.duration, script)
            result["watcher"] = {}
        else:
            with Watcher(base) as w:
                result = run_wrk(base + PATH, args.connections, args.duration, script)
            result["watcher"] = dict(w.counts, sampler_readings=w.sampler.get("readings"))
        server_cpu = cpu_seconds(server.pid) - cpu0
        result["cpu_us"] = server_cpu / max(result["requests"], 1) * 1e6
    finally:
        stop_server(server)
    result["stored"] = queue_count(dsn) - warm
    shutil.rmtree(work, ignore_errors=True)
    ok = result["requests"] - result["non2xx"]
    # wrk stops mid-request at its deadline (warm-up and run): a request it gave up on may
    # still commit, up to one per connection each time
    if not 0 <= result["stored"] - ok <= 2 * args.connections:
        raise SystemExit(f"{config}: the queue holds {result['stored']} messages for {ok} successful requests")
    return result


def idle_cost(args) -> dict[str, float]:
    """Server CPU (ms a second) with no requests sent, off and watched (once the page is
    loaded): what watching costs on its own — a CPU time, so steadier on a busy machine than
    a difference of throughputs."""
    out = {}
    for config in CONFIGS:
        work, _, base, server = serve_fresh(config, "idle")
        try:
            time.sleep(1.0)                      # start-up done, the first reading taken
            watcher = Watcher(base) if config == "watched" else None
            if watcher is not None:
                watcher.__enter__()
                time.sleep(2.5)   # page and assets loaded, the password checked once (scrypt)
            cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
            time.sleep(args.idle)
            out[config] = (cpu_seconds(server.pid) - cpu0) / (time.monotonic() - t0) * 1e3
            if watcher is not None:
                watcher.__exit__(None, None, None)
        finally:
            stop_server(server)
            shutil.rmtree(work, ignore_errors=True)
    print(f"idle server CPU: off {out['off']:.1f} ms/s, watched {out['watched']:.1f} ms/s "
          f"(watching costs {out['watched'] - out['off']:.1f} ms of CPU a second)", flush=True)
    return out


def throughput(args) -> dict:
    runs: dict[str, list[dict]] = {c: [] for c in CONFIGS}
    for n in range(args.rounds):
        # off, watched | watched, off | …: a machine getting busier or quieter during a pair
        # falls on both configurations alike over the rounds
        for config in CONFIGS if n % 2 == 0 else CONFIGS[::-1]:
            r = one_round(config, args)
            runs[config].append(r)
            print(f"round {n + 1}, {config}: {r['rps']:,.0f} requests/s, server CPU {r['cpu_us']:.0f} "
                  f"µs/request, p99 {r['p99']:.2f} ms; watcher {r['watcher']}", flush=True)
    idle = idle_cost(args) if args.idle else None
    med = {c: {k: statistics.median(r[k] for r in runs[c]) for k in ("rps", "cpu_us", "p99")} for c in CONFIGS}
    # each round's watched / off: the pair ran back to back, so this is less blurred by the
    # machine's load drifting over the whole run than the ratio of the medians
    paired = statistics.median(w["rps"] / o["rps"] for o, w in zip(runs["off"], runs["watched"]))
    return {"runs": runs, "median": med, "idle": idle, "ratio": med["watched"]["rps"] / med["off"]["rps"],
            "paired": paired, "cpu_ratio": med["watched"]["cpu_us"] / med["off"]["cpu_us"]}


# ---- main ---------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queues", type=int, default=1000)
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--pg", default=os.environ.get("SLUICE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test"),
                    help="PostgreSQL database for the scrape (a schema of its own, dropped after)")
    ap.add_argument("--no-pg", action="store_true", help="measure the scrape on SQLite only")
    ap.add_argument("--backlog", type=int, default=20_000,
                    help="then this many more READY messages in one queue, and the reading again (0: skip)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--idle", type=float, default=5.0,
                    help="seconds of server CPU measured with no requests, off and watched (0: skip)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--skip-scrape", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--record", action="store_true", help="append the figures to bench/RESULTS.md")
    args = ap.parse_args()
    if not args.skip_throughput and not shutil.which("wrk"):
        raise SystemExit("wrk is needed (Debian package wrk; setup.sh installs it)")
    started = time.monotonic()
    args.load_before, args.loop = os.getloadavg(), loop_seconds()
    print(f"load {args.load_before[0]:.2f} / {args.load_before[1]:.2f} / {args.load_before[2]:.2f}; "
          f"10M-iteration loop {args.loop:.2f} s", flush=True)
    scrapes = []
    if not args.skip_scrape:
        for backend in ("sqlite",) if args.no_pg else ("sqlite", "postgresql"):
            s = scrape(backend, args)
            if s is not None:
                scrapes.append(s)
    t = None
    if not args.skip_throughput:
        t = throughput(args)
        m = t["median"]
        print(f"IDAP AQXmlSend + commit, medians of {args.rounds} rounds: off {m['off']['rps']:,.0f} "
              f"requests/s, watched {m['watched']['rps']:,.0f}: ratio {t['ratio']:.3f}, median of the rounds' "
              f"ratios {t['paired']:.3f} (target ≥ 0.95); "
              f"server CPU {m['off']['cpu_us']:.0f} vs {m['watched']['cpu_us']:.0f} µs/request "
              f"(watched {t['cpu_ratio']:.1%} of off)")
    args.load_after, args.loop_after = os.getloadavg(), loop_seconds()
    print(f"load after {args.load_after[0]:.2f}; 10M-iteration loop {args.loop_after:.2f} s; "
          f"run took {time.monotonic() - started:.0f} s")
    if args.record:
        record(args, scrapes, t)


def record(args, scrapes: list[dict], t: dict | None) -> None:
    import sqlite3
    cmd = "bench/bench_monitoring.py " + " ".join(a for a in sys.argv[1:])
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"SQLite {sqlite3.sqlite_version}")
    lines = ["", f"### {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC: issue 17 §3, `{cmd}`", "",
             f"Re-run: `.venv/bin/python bench/bench_monitoring.py --record` (≈ 3 min).  {machine}; load "
             f"{args.load_before[0]:.2f} / {args.load_before[1]:.2f} / {args.load_before[2]:.2f} before, "
             f"{args.load_after[0]:.2f} after; 10M-iteration loop {args.loop:.2f} s before, "
             f"{args.loop_after:.2f} s after (~0.7 s on a quiet fast VM).", ""]
    if scrapes:
        lines += [f"/metrics scrape, {args.queues} queues in {args.tables} queue tables (5 READY each), "
                  "median of 20 (target < 100 ms):", "",
                  "| backend | scrape that reads, wall | worst | CPU | floor: depth statement alone "
                  f"| scrape from the shared snapshot | queue series | + {args.backlog:,} READY in one "
                  "queue: reading (floor) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [f"| {s['backend']} | {s['wall']:.1f} ms | {s['max']:.1f} ms | {s['cpu']:.1f} ms | "
                  f"{s['floor']:.1f} ms | {s['shared']:.1f} ms | {s['series']} | "
                  + (f"{s['backlog_wall']:.1f} ms ({s['backlog_floor']:.1f} ms) |" if "backlog_wall" in s else "– |")
                  for s in scrapes]
        lines.append("")
    if t is not None:
        m = t["median"]
        lines += [f"IDAP AQXmlSend + commit (`wrk -t{args.connections} -c{args.connections}`, "
                  f"{args.duration} s rounds, fresh store and server each, interleaved, order flipped each "
                  "round; target ≥ 0.95):", "",
                  "| configuration | requests/s (median) | each round | p99 ms | server CPU µs/request |",
                  "|---|---:|---|---:|---:|"]
        for c in CONFIGS:
            rounds = ", ".join(f"{r['rps']:,.0f}" for r in t["runs"][c])
            lines.append(f"| {c} | {m[c]['rps']:,.0f} | {rounds} | {m[c]['p99']:.2f} | {m[c]['cpu_us']:.0f} |")
        lines += ["", f"Ratio watched / off: **{t['ratio']:.3f}** requests/s (medians; median of each "
                  f"round's ratio {t['paired']:.3f}), {t['cpu_ratio']:.3f} server CPU per request "
                  "(watched: dashboard open, /metrics every 1 s)."]
        if t["idle"]:
            i = t["idle"]
            lines += ["", f"Idle server, no requests ({args.idle:g} s each): CPU {i['off']:.1f} ms/s off, "
                      f"{i['watched']:.1f} ms/s watched — watching costs {i['watched'] - i['off']:.1f} ms "
                      f"of CPU a second, {(i['watched'] - i['off']) / 10:.1f} % of one core."]
    path = ROOT / "bench" / "RESULTS.md"
    path.write_text(path.read_text().rstrip("\n") + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
