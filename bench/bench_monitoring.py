"""Does watching slow the data path?  IDAP send throughput with nobody watching, with the
dashboard open, and with the dashboard open while /metrics is scraped every second
(issue 17 §3: each ≥ 95 % of the throughput without).

Run by hand (not part of the test suite):

    .venv/bin/python bench/bench_monitoring.py [--duration 10] [--rounds 3] [--record]

The load is bench_idap.py's: ``wrk`` sending AQXmlSend + commit (one durable 100-byte RAW
enqueue per request) from 16 keep-alive clients to ``sluice serve`` on SQLite.  Each
configuration gets a fresh store and server per round (a queue that grew in an earlier
round would make later rounds slower), and the rounds interleave the configurations
(off, dashboard, dashboard + metrics, off, …) so that drift in the machine's load falls
on all of them alike; the figure of a configuration is its median over the rounds.  Beside
requests per second it reports the server's CPU time per request (``/proc``): on a busy
machine that is the steadier sign of what watching costs the server.

- **off** — ``sluice serve --no-dashboard``: no sampler thread, nobody polling.
- **dashboard** — ``sluice serve`` (the dashboard's sampler reads the store every 2 s,
  its default) with a page open: the page loaded once, then what its script does —
  ``GET /dashboard/api/state?since=…`` every 2 s, as a user with SELECT_CATALOG_ROLE.
- **dashboard + metrics** — the same, plus ``GET /metrics`` every second (only when the
  server has a /metrics endpoint; otherwise reported as not measured).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_idap import (AUTH, BODY, LUA, PATH, cpu_seconds, free_port, queue_count, run_wrk,  # noqa: E402
                        setup, start_server, stop_server)

ROOT = Path(__file__).resolve().parents[1]
WATCHER = ("watcher", "watch-pw")
CONFIGS = ("off", "dashboard", "dashboard + metrics")


def add_watcher(dsn: str) -> None:
    import sluice
    with sluice.connect(dsn) as admin:
        cur = admin.cursor()
        cur.execute(f'CREATE USER {WATCHER[0]} IDENTIFIED BY "{WATCHER[1]}"')
        cur.execute(f"GRANT CONNECT, SELECT_CATALOG_ROLE TO {WATCHER[0]}")


class Watcher:
    """What an open dashboard (and a Prometheus scraper) do to the server, in a thread."""

    def __init__(self, base: str, metrics: bool, poll: float = 2.0, scrape: float = 1.0) -> None:
        token = base64.b64encode(f"{WATCHER[0]}:{WATCHER[1]}".encode()).decode()
        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Basic {token}"}, timeout=30)
        self.metrics, self.poll, self.scrape = metrics, poll, scrape
        self.stop = threading.Event()
        self.counts = {"state": 0, "metrics": 0, "failed": 0}
        self.thread = threading.Thread(target=self.run, daemon=True)

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
            if self.metrics and now >= next_scrape:
                self.get("/metrics", "metrics")
                next_scrape = now + self.scrape
            self.stop.wait(max(0.0, min(next_poll, next_scrape if self.metrics else next_poll) - time.monotonic()))

    def __enter__(self) -> "Watcher":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(10)
        r = self.client.get("/dashboard/api/state?since=1e12")   # what the sampler's readings cost
        self.sampler = r.json()["sampler"] if r.status_code == 200 else {}
        self.client.close()


def has_metrics(base: str) -> bool:
    token = base64.b64encode(f"{WATCHER[0]}:{WATCHER[1]}".encode()).decode()
    try:
        return httpx.get(base + "/metrics", headers={"Authorization": f"Basic {token}"}, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def one_round(config: str, args) -> dict | None:
    work = tempfile.mkdtemp(prefix="bench-monitoring-")
    dsn = f"sqlite:///{work}/idap.db?synchronous=NORMAL"
    setup(dsn)
    add_watcher(dsn)
    port = free_port()
    options = ("--no-dashboard",) if config == "off" else ()
    server = start_server(dsn, port, 2, options=options)
    base = f"http://127.0.0.1:{port}"
    script = os.path.join(work, "send.lua")
    Path(script).write_text(LUA % {"body": BODY, "auth": AUTH, "path": PATH})
    try:
        if config == "dashboard + metrics" and not has_metrics(base):
            return None
        run_wrk(base + PATH, args.connections, 2, script)                       # warm-up
        warm = queue_count(dsn)
        cpu0 = cpu_seconds(server.pid)
        if config == "off":
            result = run_wrk(base + PATH, args.connections, args.duration, script)
            result["watcher"] = {}
        else:
            with Watcher(base, metrics=config != "dashboard") as w:
                result = run_wrk(base + PATH, args.connections, args.duration, script)
            result["watcher"] = dict(w.counts)
        # the server's CPU per request: what watching costs, less blurred by the machine's
        # other load than requests per second
        server_cpu = cpu_seconds(server.pid) - cpu0
        result["cpu_us"] = server_cpu / max(result["requests"], 1) * 1e6
        if config != "off" and w.sampler:
            # the dashboard's readings' CPU (since the server started: an upper bound for the
            # run) as a share of the server's CPU during the run
            result["sampler_share"] = w.sampler["cpu_seconds"] / max(server_cpu, 1e-9)
            result["watcher"]["sampler"] = w.sampler
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="append the results to bench/RESULTS.md")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed (Debian package wrk; setup.sh installs it)")
    args.load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {c: [] for c in CONFIGS}
    for n in range(args.rounds):
        for config in CONFIGS:
            result = one_round(config, args)
            if result is not None:
                runs[config].append(result)
                print(f"round {n + 1}, {config}: {result['rps']:,.0f} requests/s, server CPU "
                      f"{result['cpu_us']:.0f} µs/request (p99 {result['p99']:.2f} ms; watcher "
                      f"{result['watcher']})", flush=True)
    args.load_after = os.getloadavg()
    base = statistics.median(r["rps"] for r in runs["off"])
    base_cpu = statistics.median(r["cpu_us"] for r in runs["off"])
    summary = []
    for config in CONFIGS:
        if not runs[config]:
            summary.append((config, None, None, None, None))
            print(f"{config}: not measured (the server has no /metrics)")
            continue
        rps = statistics.median(r["rps"] for r in runs[config])
        p99 = statistics.median(r["p99"] for r in runs[config])
        cpu = statistics.median(r["cpu_us"] for r in runs[config])
        summary.append((config, rps, p99, rps / base, cpu / base_cpu))
        share = [r["sampler_share"] for r in runs[config] if "sampler_share" in r]
        print(f"{config}: median {rps:,.0f} requests/s, p99 {p99:.2f} ms, {rps / base:.1%} of off; "
              f"server CPU {cpu:.0f} µs/request, {cpu / base_cpu:.1%} of off"
              + (f"; the dashboard's readings {statistics.median(share):.1%} of the server's CPU"
                 if share else ""))
    print(f"load average {args.load_before[0]:.2f} before, {args.load_after[0]:.2f} after")
    if args.record:
        record(args, runs, summary)


def record(args, runs: dict, summary: list) -> None:
    import sqlite3
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"SQLite {sqlite3.sqlite_version}")
    lines = [
        "", f"### {dt.date.today().isoformat()}, IDAP send throughput while watched", "",
        f"Machine: {machine}; load average {args.load_before[0]:.2f} / {args.load_before[1]:.2f} / "
        f"{args.load_before[2]:.2f} before the run, {args.load_after[0]:.2f} / {args.load_after[1]:.2f} / "
        f"{args.load_after[2]:.2f} after.  Command: `.venv/bin/python bench/bench_monitoring.py "
        f"--duration {args.duration} --rounds {args.rounds} --connections {args.connections}`; load "
        f"`wrk -t{args.connections} -c{args.connections}` AQXmlSend + commit (bench_idap.py's), a fresh "
        "store and server per round, configurations interleaved, medians over the rounds.", "",
        "| configuration | requests/s (median) | each round | p99 ms | of off | server CPU µs/request "
        "| of off | dashboard readings' share of the server's CPU |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for config, rps, p99, ratio, cpu_ratio in summary:
        if rps is None:
            lines.append(f"| {config} | not measured (no /metrics yet) | | | | | | |")
            continue
        rounds = ", ".join(f"{r['rps']:,.0f}" for r in runs[config])
        cpu = statistics.median(r["cpu_us"] for r in runs[config])
        share = [r["sampler_share"] for r in runs[config] if "sampler_share" in r]
        lines.append(f"| {config} | {rps:,.0f} | {rounds} | {p99:.2f} | {ratio:.1%} | {cpu:.0f} | "
                     f"{cpu_ratio:.1%} | {f'{statistics.median(share):.1%}' if share else '–'} |")
    path = ROOT / "bench" / "RESULTS.md"
    text = path.read_text()
    marker = "\n## Issue 17 "
    if marker not in text:
        text = text.rstrip("\n") + "\n\n## Issue 17 — monitoring: the data path while watched\n"
    start = text.index(marker)
    nxt = text.find("\n## ", start + len(marker))
    end = len(text) if nxt < 0 else nxt
    text = text[:end].rstrip("\n") + "\n" + "\n".join(lines) + "\n" + text[end:]
    path.write_text(text)


if __name__ == "__main__":
    main()
