"""IDAP enqueue throughput: AQXmlSend requests per second over HTTP keep-alive.

Run by hand (not part of the test suite):

    .venv/bin/python bench/bench_idap.py [--duration 15] [--connections 16] [--record]

What it measures: ``sluice serve`` (one uvicorn process, the embedded SQLite default,
``synchronous=NORMAL``) receiving AQXmlSend documents — one 100-byte RAW message
each, with a piggy-backed ``<AQXmlCommit/>``, so every request is a durable enqueue —
from ``--connections`` concurrent clients, each on its own keep-alive connection and
its own HTTP session (it sends back the JSESSIONID cookie it was given), as agent
BENCH with HTTP Basic credentials.  The load generator is ``wrk`` (Debian's package;
setup.sh installs it), one thread per connection so each keeps its own cookie;
latencies are wrk's (p50, p99).  Without wrk it falls back to an asyncio client on
httpx (slower: then the client, not the server, is the bottleneck on 2 cores).

In the same run, as a reference for the HTTP stack alone, it measures ``GET ?wsdl`` on
the same server (no XML parsing, no database).  After the run it checks that the queue
holds exactly as many messages as the load generator counted successful requests.
``--record`` appends the figures to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLUICE = Path(sys.executable).with_name("sluice")
PATH = "/aqserv/servlet/AQBenchServlet"
AUTH = "Basic " + base64.b64encode(b"bench:bench-pw").decode()
SOAP, AQ = "http://schemas.xmlsoap.org/soap/envelope/", "http://ns.oracle.com/AQ/schemas/access"
BODY = (f'<Envelope xmlns="{SOAP}"><Body><AQXmlSend xmlns="{AQ}"><producer_options>'
        "<destination>BENCHQ.RAW_Q</destination></producer_options><message_set>"
        "<message_count>1</message_count><message><message_number>1</message_number>"
        "<message_header><correlation>bench</correlation><sender_id><agent_name>bench</agent_name>"
        f"</sender_id></message_header><message_payload><raw>{'AB' * 100}</raw></message_payload>"
        "</message></message_set><AQXmlCommit/></AQXmlSend></Body></Envelope>")
LUA = """
local cookie = nil
local body = [==[%(body)s]==]
function request()
  local h = {["Content-Type"] = "text/xml", ["Authorization"] = "%(auth)s"}
  if cookie then h["Cookie"] = cookie end
  return wrk.format("POST", "%(path)s", h, body)
end
function response(status, headers, b)
  if cookie == nil then
    local c = headers["set-cookie"] or headers["Set-Cookie"]
    if c then cookie = string.match(c, "JSESSIONID=[^;]+") end
  end
end
"""


def setup(dsn: str) -> None:
    import sluice
    with sluice.connect(dsn) as admin:
        cur = admin.cursor()
        cur.execute("CREATE USER bench IDENTIFIED BY \"bench-pw\"")
        cur.execute("CREATE USER benchq IDENTIFIED BY benchq")
        cur.execute("GRANT CONNECT, AQ_USER_ROLE TO benchq")
        admin.aqadm.create_queue_table(queue_table="BENCHQ.RAW_QT", queue_payload_type="RAW")
        admin.aqadm.create_queue(queue_name="BENCHQ.RAW_Q", queue_table="BENCHQ.RAW_QT")
        admin.aqadm.start_queue(queue_name="BENCHQ.RAW_Q")
        admin.aqadm.create_aq_agent(agent_name="BENCH", enable_http=True)
        admin.aqadm.enable_db_access(agent_name="BENCH", db_username="BENCHQ")


def queue_count(dsn: str) -> int:
    import sluice
    with sluice.connect(dsn) as c:
        return c.context.store.count_messages(c.context.catalog.queue("BENCHQ.RAW_Q"), [0])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(dsn: str, port: int, workers: int, inline_max_bytes: int | None = None,
                 options: tuple[str, ...] = ()) -> subprocess.Popen:
    extra = [*options] if inline_max_bytes is None else [*options, "--inline-max-bytes", str(inline_max_bytes)]
    proc = subprocess.Popen([str(SLUICE), "--dsn", dsn, "serve", "--port", str(port), "--workers",
                             str(workers), "--log-level", "warning", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:   # our server answers with the WSDL (another process may hold the port)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{PATH}?wsdl", timeout=1) as r:
                if b"AQXmlSend" in r.read() and proc.poll() is None:
                    return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"sluice serve exited: {proc.stderr.read().decode()}") from None
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("sluice serve did not start")


def stop_server(server: subprocess.Popen) -> None:
    """SIGTERM (a graceful stop), SIGKILL when it takes more than 30 s."""
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url: str, connections: int, duration: int, script: str | None) -> dict:
    cmd = ["wrk", "-t", str(connections), "-c", str(connections), "-d", f"{duration}s", "--latency"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout
    if os.environ.get("BENCH_DEBUG"):
        print(out)
    lat = dict(re.findall(r"^\s+(50|99)(?:\.0+)?%\s+(\S+)\s*$", out, re.M))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)$", out, re.M)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50": _ms(lat["50"]), "p99": _ms(lat["99"]), "requests": total,
            "non2xx": int(bad.group(1)) if bad else 0, "socket_errors": errors.group(1) if errors else "",
            "command": " ".join(cmd + [url]).replace(script or "\0", "send.lua")
                                      .replace(url.split("/aqserv")[0], "http://127.0.0.1:PORT")}


async def _httpx_client(url: str, deadline: float, latencies: list[float], failures: list[int]) -> None:
    import httpx
    async with httpx.AsyncClient(headers={"Authorization": AUTH, "Content-Type": "text/xml"}) as c:
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            r = await c.post(url, content=BODY)
            latencies.append((time.perf_counter() - t0) * 1000)
            if r.status_code != 200:
                failures.append(r.status_code)


def run_httpx(url: str, connections: int, duration: int) -> dict:
    latencies: list[float] = []
    failures: list[int] = []
    deadline = time.monotonic() + duration
    t0 = time.monotonic()

    async def main() -> None:
        await asyncio.gather(*(_httpx_client(url, deadline, latencies, failures) for _ in range(connections)))

    asyncio.run(main())
    elapsed = time.monotonic() - t0
    latencies.sort()
    return {"rps": len(latencies) / elapsed, "p50": latencies[len(latencies) // 2],
            "p99": latencies[int(len(latencies) * 0.99)], "requests": len(latencies),
            "non2xx": len(failures), "socket_errors": "",
            "command": f"asyncio + httpx, {connections} clients, {duration} s"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=15)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--client", choices=("wrk", "httpx"), default="wrk" if shutil.which("wrk") else "httpx")
    ap.add_argument("--workers", type=int, default=2, help="sluice serve --workers")
    ap.add_argument("--inline-max-bytes", type=int, default=None,
                    help="sluice serve --inline-max-bytes (default: the server's)")
    ap.add_argument("--record", action="store_true", help="append the results to bench/RESULTS.md")
    args = ap.parse_args()
    args.load = os.getloadavg()[0]
    work = tempfile.mkdtemp(prefix="bench-idap-")
    dsn = f"sqlite:///{work}/idap.db?synchronous=NORMAL"
    setup(dsn)
    port = free_port()
    server = start_server(dsn, port, args.workers, args.inline_max_bytes)
    url = f"http://127.0.0.1:{port}{PATH}"
    try:
        script = os.path.join(work, "send.lua")
        Path(script).write_text(LUA % {"body": BODY, "auth": AUTH, "path": PATH})
        if args.client == "wrk":
            run_wrk(url, args.connections, 2, script)                   # warm-up
            warm = queue_count(dsn)
            cpu0 = cpu_seconds(server.pid)
            send = run_wrk(url, args.connections, args.duration, script)
            send["cpu_us"] = (cpu_seconds(server.pid) - cpu0) / max(send["requests"], 1) * 1e6
            cpu0 = cpu_seconds(server.pid)
            ceiling = run_wrk(url + "?wsdl", args.connections, min(args.duration, 5), None)
            ceiling["cpu_us"] = (cpu_seconds(server.pid) - cpu0) / max(ceiling["requests"], 1) * 1e6
        else:
            run_httpx(url, args.connections, 2)
            warm = queue_count(dsn)
            cpu0 = cpu_seconds(server.pid)
            send = run_httpx(url, args.connections, args.duration)
            send["cpu_us"] = (cpu_seconds(server.pid) - cpu0) / max(send["requests"], 1) * 1e6
            ceiling = None
    finally:
        stop_server(server)
    stored = queue_count(dsn) - warm
    shutil.rmtree(work, ignore_errors=True)
    ok = send["requests"] - send["non2xx"]
    print(f"AQXmlSend + commit: {send['rps']:,.0f} requests/s, p50 {send['p50']:.2f} ms, "
          f"p99 {send['p99']:.2f} ms ({send['requests']} requests, {send['non2xx']} not 200"
          f"{', socket errors ' + send['socket_errors'] if send['socket_errors'] else ''}; "
          f"{stored} messages stored; server CPU {send['cpu_us']:.0f} µs per request)")
    if ceiling:
        print(f"reference, GET ?wsdl on the same server: {ceiling['rps']:,.0f} requests/s, "
              f"p50 {ceiling['p50']:.2f} ms, p99 {ceiling['p99']:.2f} ms, "
              f"server CPU {ceiling['cpu_us']:.0f} µs per request")
    if not send["requests"]:
        raise SystemExit("no request got through")
    # wrk stops mid-request at its deadline: a request it gave up on may still commit
    if not 0 <= stored - ok <= args.connections:
        raise SystemExit(f"the queue holds {stored} messages for {ok} successful requests")
    if args.record:
        record(args, send, ceiling)


def record(args, send: dict, ceiling: dict | None) -> None:
    """Add the figures to bench/RESULTS.md, at the end of the issue-7 section (earlier
    figures stay as they are); at the end of the file when there is no such section."""
    import sqlite3
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"SQLite {sqlite3.sqlite_version}")
    flags = f" --inline-max-bytes {args.inline_max_bytes}" if args.inline_max_bytes is not None else ""
    lines = [
        f"### {dt.date.today().isoformat()}, AQXmlSend requests/s", "",
        f"Machine: {machine}; load average before the run {args.load:.1f} (other work on the",
        "machine).  Server: `sluice serve` (one uvicorn process, httptools, uvloop) on",
        "the embedded SQLite default (`synchronous=NORMAL`); each request one 100-byte RAW message",
        "with a piggy-backed `<AQXmlCommit/>` (a durable enqueue), HTTP Basic auth, one HTTP session",
        f"(cookie) per client.  Command: `.venv/bin/python bench/bench_idap.py --duration {args.duration}"
        f" --connections {args.connections} --workers {args.workers}{flags}`; load generator: "
        f"`{send['command']}`.", "",
        "| measurement | requests/s | p50 ms | p99 ms | server CPU µs/request |", "|---|---:|---:|---:|---:|",
        f"| AQXmlSend + commit, {args.connections} keep-alive clients | {send['rps']:,.0f} | "
        f"{send['p50']:.2f} | {send['p99']:.2f} | {send['cpu_us']:.0f} |",
    ]
    if ceiling:
        lines.append(f"| reference: GET ?wsdl, same server (HTTP stack only) | {ceiling['rps']:,.0f} | "
                     f"{ceiling['p50']:.2f} | {ceiling['p99']:.2f} | {ceiling['cpu_us']:.0f} |")
    path = ROOT / "bench" / "RESULTS.md"
    text = path.read_text()
    start = text.find("\n## Issue 7 ")
    if start < 0:
        path.write_text(text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")
        return
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end + 1
    head = text[:end].rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    path.write_text(head + ("\n" + text[end:] if end < len(text) else ""))


if __name__ == "__main__":
    main()
