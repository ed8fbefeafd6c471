"""The ``sluice`` command: thin click commands over a lazily opened connection.

    sluice init                          create the store (embedded default: ./sluice.db)
    sluice sql "SELECT * FROM user_queues"    or   sluice sql -f setup.sql
    sluice enqueue orders_q 'hello' --priority 1 --correlation c1
    sluice dequeue orders_q --count 10 --wait 5
    sluice browse orders_q
    sluice queues
    sluice serve --host 127.0.0.1 --port 8080   the IDAP servlet (AQ over SOAP/HTTP)
    sluice idap --agent john --agent-password welcome send AQUSER.RAW_MSGQ 'hi'   its client
    sluice run [DSN]                     the process host: the store's enabled Streams processes
    sluice demo
    sluice compare hr.employees --source postgresql://… --target sqlite:///replica.db
                                         a table against its replica, row by row

The DSN comes from ``--dsn`` or the ``SLUICE_DSN`` environment variable.

No command shows a traceback: a refusal is one line on stderr, ``error: ORA-NNNNN: …``
(or ``SLU-``/``DPY-``), and exit status 1; anything unforeseen is ``ORA-00600`` with the
exception's one-line summary (``SLUICE_DEBUG=1`` shows the traceback instead).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any

import click

from . import constants as C
from .aq.payload import to_text
from .errors import Error, ora

DEFAULT_DSN = "sqlite:///sluice.db"


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version("sluice")
    except (ImportError, PackageNotFoundError):   # running from a source tree
        from . import __version__
        return __version__


class _Front(click.Group):
    """The command group whose commands never end in a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Error as e:
            _fail(e)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as e:   # a bug: one line with Oracle's internal-error code
            if os.environ.get("SLUICE_DEBUG"):
                raise
            _fail(ora(600, f"{type(e).__name__}: {e}"))


class _Context:
    """Opens the connection only when a command needs it."""

    def __init__(self, dsn: str, user: str | None, password: str | None) -> None:
        self.dsn, self.user, self.password = dsn, user, password
        self._conn = None

    @property
    def conn(self):
        if self._conn is None:
            import sluice
            self._conn = sluice.connect(self.dsn, user=self.user, password=self.password)
        return self._conn

    @property
    def existing_conn(self):
        """The connection, for a command that reads a store or uses its queues: where no
        store is, an error rather than a new empty store (``sluice init`` makes one)."""
        if self._conn is None:
            from .store import check_store_exists
            check_store_exists(self.dsn)
        return self.conn

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Error as e:   # after the command: still one line, not a traceback
                _fail(e)


def _fail(e: Error) -> None:
    click.echo("error: " + " ".join(str(e).split()), err=True)   # one line, whatever the message
    sys.exit(1)


@click.group(cls=_Front)
@click.version_option(_version(), "--version", prog_name="sluice", message="%(prog)s %(version)s")
@click.option("--dsn", envvar="SLUICE_DSN", default=DEFAULT_DSN, show_default=True,
              help="Store to use: sqlite:///file.db (embedded) or postgresql://…")
@click.option("--user", envvar="SLUICE_USER", default=None, help="Database user (default SLUICE).")
@click.option("--password", envvar="SLUICE_PASSWORD", default=None, help="The user's password.")
@click.pass_context
def main(ctx: click.Context, dsn: str, user: str | None, password: str | None) -> None:
    """Sluice: Oracle Streams Advanced Queuing, in Python."""
    ctx.obj = _Context(dsn, user, password)
    ctx.call_on_close(ctx.obj.close)


@main.command()
@click.option("--admin-password", envvar="SLUICE_ADMIN_PASSWORD", default=None,
              help="Give the bootstrap administrator SLUICE a password (else it has none).")
@click.pass_obj
def init(obj: _Context, admin_password: str | None) -> None:
    """Create (or upgrade) the store's catalog and its bootstrap administrator SLUICE."""
    from .security.users import init_administrator
    try:
        created = init_administrator(obj.conn, admin_password)
    except Error as e:
        _fail(e)
    click.echo(f"initialised {obj.dsn}" + ("; administrator SLUICE created" if created else ""))


def _print_table(columns: list[str], rows: list[tuple]) -> None:
    def cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, bytes):
            return v.hex().upper()
        return str(v)
    cells = [[cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
    click.echo("  ".join("-" * w for w in widths))
    for r in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    click.echo(f"\n{len(rows)} row{'s' if len(rows) != 1 else ''} selected.\n")


@main.command()
@click.argument("statements", nargs=-1)
@click.option("-f", "--file", "script", type=click.File("rb"), help="Run a SQL*Plus script file (UTF-8).")
@click.pass_obj
def sql(obj: _Context, statements: tuple[str, ...], script) -> None:
    """Run statements (anonymous blocks, CREATE TYPE, SELECT on the views, …)."""
    from . import plsql
    text = _script_text(script, script.name, "--file") if script else "\n".join(statements)
    if not text.strip():
        text = _script_text(sys.stdin.buffer, "<stdin>")
    try:
        for stmt in plsql.split_script(text):
            result = plsql.execute(obj.conn, stmt)
            for line in result.output:
                click.echo(line)
            if result.columns is not None:
                _print_table(result.columns, result.rows)
            elif result.kind == "block":
                click.echo("PL/SQL procedure successfully completed.")
            elif result.kind in ("ddl", "tcl", "dml", "sqlplus") and result.columns is None:
                message = _feedback(stmt)
                if message:
                    click.echo(message)
        obj.conn.commit()
    except Error as e:
        _fail(e)


def _script_text(stream, name: str, option: str | None = None) -> str:
    """A script's text, read whole and decoded before any of it runs: a byte that is not
    UTF-8 is a usage error naming the file and the offset (a half-run script, or ORA-00600
    after its first statements, is what reading as it goes gave).  A leading byte order
    mark (what Windows editors write) is not text of the script: SQL*Plus skips it too."""
    data = stream.read()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        problem = f"{name}: not UTF-8 text: byte 0x{data[e.start]:02X} at offset {e.start} ({e.reason})"
        raise click.BadParameter(problem, param_hint=option) if option else click.UsageError(problem) from None


_FEEDBACK = {("CREATE", "USER"): "User created.", ("ALTER", "USER"): "User altered.",
             ("DROP", "USER"): "User dropped.", ("CREATE", "ROLE"): "Role created.",
             ("DROP", "ROLE"): "Role dropped.", ("CREATE", "TYPE"): "Type created.",
             ("DROP", "TYPE"): "Type dropped.", ("GRANT",): "Grant succeeded.",
             ("REVOKE",): "Revoke succeeded.", ("COMMIT",): "Commit complete.",
             ("ROLLBACK",): "Rollback complete."}


def _feedback(stmt: str) -> str | None:
    """SQL*Plus's one-line feedback for a statement."""
    words = [w.upper() for w in stmt.split()[:4]]
    if words[:1] and "." in words[0] and "(" in stmt:
        return "PL/SQL procedure successfully completed."
    if words[1:3] == ["OR", "REPLACE"]:
        words = words[:1] + words[3:]
    return _FEEDBACK.get(tuple(words[:2])) or _FEEDBACK.get(tuple(words[:1]))


def _payload_for(conn, queue: str, text: str):
    qinfo = conn.context.catalog.queue(queue)
    pt = qinfo.table.payload_type
    if pt == "JSON" or pt == "SYS.ANYDATA":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text if pt == "SYS.ANYDATA" else text
        except RecursionError:
            raise ora(25215, "the JSON text is nested too deeply") from None
    if pt in ("XMLTYPE", "RAW"):
        return text      # the queue's codec encodes (UTF-8) and checks it
    from . import objtypes as ot
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ora(25215, f"a {pt} payload is given as a JSON object ({e})") from None
    except RecursionError:
        raise ora(25215, f"a {pt} payload is given as a JSON object (nested too deeply)") from None
    return ot.from_dict(conn.gettype(pt), value)


@main.command()
@click.argument("queue")
@click.argument("payload")
@click.option("--priority", type=int, default=0)
@click.option("--correlation", default=None)
@click.option("--delay", type=int, default=0)
@click.option("--expiration", type=int, default=-1)
@click.pass_obj
def enqueue(obj: _Context, queue: str, payload: str, priority: int, correlation: str | None,
            delay: int, expiration: int) -> None:
    """Enqueue one message (text; JSON for JSON and object-type queues) and commit."""
    try:
        conn = obj.existing_conn
        props = conn.msgproperties(payload=_payload_for(conn, queue, payload), priority=priority,
                                   correlation=correlation, delay=delay, expiration=expiration)
        q = conn.queue(queue)
        q.driver_checks = False      # text for any payload type, JSON scalars too
        q.enqone(props)
        conn.commit()
        click.echo(props.msgid.hex().upper())
    except Error as e:
        _fail(e)


def _show(m) -> None:
    state = C.STATE_NAMES.get(m.state, str(m.state))
    click.echo(f"{m.msgid.hex().upper()}  priority={m.priority}  correlation={m.correlation or ''}  "
               f"state={state}  attempts={m.attempts}  enqtime={m.enqtime:%Y-%m-%d %H:%M:%S}")
    click.echo(f"    {to_text(m.payload) if m.payload is not None else '(no payload)'}")


def _take(obj: _Context, queue: str, count: int, wait: int, mode: int, correlation: str | None,
          condition: str | None) -> None:
    try:
        q = obj.existing_conn.queue(queue)
        q.deqoptions.mode = mode
        q.deqoptions.wait = wait
        q.deqoptions.navigation = C.DEQ_FIRST_MSG
        q.deqoptions.correlation = correlation
        q.deqoptions.condition = condition
        msgs = q.deqmany(count)
        for m in msgs:
            _show(m)
        obj.conn.commit()
        if not msgs:
            click.echo("no message")
    except Error as e:
        _fail(e)


@main.command()
@click.argument("queue")
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--wait", type=click.IntRange(min=0), default=0, show_default=True, help="Seconds to wait for a message.")
@click.option("--correlation", default=None, help="Correlation identifier (LIKE pattern).")
@click.option("--condition", default=None, help="Dequeue condition, e.g. \"priority = 1\".")
@click.pass_obj
def dequeue(obj: _Context, queue: str, count: int, wait: int, correlation: str | None,
            condition: str | None) -> None:
    """Dequeue (remove) messages and commit."""
    _take(obj, queue, count, wait, C.DEQ_REMOVE, correlation, condition)


@main.command()
@click.argument("queue")
@click.option("--count", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--correlation", default=None)
@click.option("--condition", default=None)
@click.pass_obj
def browse(obj: _Context, queue: str, count: int, correlation: str | None, condition: str | None) -> None:
    """Show messages without removing them."""
    _take(obj, queue, count, 0, C.DEQ_BROWSE, correlation, condition)


@main.command()
@click.pass_obj
def queues(obj: _Context) -> None:
    """List queues with their state and message counts."""
    try:
        conn = obj.existing_conn
        rows = []
        for q in sorted(conn.context.catalog.all_queues(), key=lambda q: (q.owner, q.name)):
            counts = [conn.context.store.count_messages(q, [s]) for s in (0, 1, 2, 3)]
            rows.append((q.qualified, q.table.name, q.queue_type.replace("_QUEUE", ""),
                         "YES" if q.enqueue_enabled else "NO", "YES" if q.dequeue_enabled else "NO",
                         *counts))
        _print_table(["QUEUE", "QUEUE_TABLE", "TYPE", "ENQ", "DEQ", "READY", "WAITING", "PROCESSED",
                      "EXPIRED"], rows)
    except Error as e:
        _fail(e)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option("--dsn", "serve_dsn", default=None, help="Store to serve (default: the global --dsn).")
@click.option("--pool-max", type=click.IntRange(min=1), default=50, show_default=True,
              help="Most database connections open at once (setCacheSize).")
@click.option("--pool-min", type=click.IntRange(min=0), default=1, show_default=True,
              help="Idle connections kept open.")
@click.option("--session-timeout", type=click.FloatRange(min=0, min_open=True), default=120.0, show_default=True,
              help="Seconds before an idle HTTP session's transaction is rolled back.")
@click.option("--max-request-bytes", type=click.IntRange(min=1), default=1 << 20, show_default=True,
              help="Largest IDAP document taken (413 past it).")
@click.option("--max-batch-bytes", type=click.IntRange(min=1), default=32 << 20, show_default=True,
              help="Largest propagated batch AQPropServlet takes (413 past it); senders split their "
                   "batches by it, and mark a message larger than it UNDELIVERABLE (ORA-12899).")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Threads for requests that do not run on the event loop (larger documents, a "
                   "session's first request); receives that wait get threads of their own.")
@click.option("--inline-max-bytes", type=click.IntRange(min=0), default=64 * 1024, show_default=True,
              help="Requests up to this size that cannot wait run on the event loop (0: every "
                   "request in a thread).")
@click.option("--dashboard/--no-dashboard", default=True, show_default=True,
              help="Serve the live dashboard at /dashboard (users with MONITOR or SELECT_CATALOG_ROLE).")
@click.option("--dashboard-interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="Seconds between the dashboard's readings of the store (one reader, however "
                   "many browsers watch).")
@click.option("--metrics-max-age", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Seconds one snapshot of the store serves /metrics scrapes and the dashboard "
                   "(at most one reading in flight; 0: a reading per scrape).")
@click.option("--log-level", default="info", show_default=True)
@click.option("--ssl-certfile", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Serve HTTPS with this certificate (PEM, the chain after it).")
@click.option("--ssl-keyfile", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The certificate's private key (PEM); required with --ssl-certfile.")
@click.pass_obj
def serve(obj: _Context, host: str, port: int, serve_dsn: str | None, pool_max: int, pool_min: int,
          session_timeout: float, max_request_bytes: int, max_batch_bytes: int, workers: int, inline_max_bytes: int,
          dashboard: bool, dashboard_interval: float, metrics_max_age: float, log_level: str, ssl_certfile: str | None,
          ssl_keyfile: str | None) -> None:
    """Run the AQ servlet (IDAP: AQ over SOAP/HTTP, seed 004) until interrupted.

    Agents POST IDAP documents to http://HOST:PORT/aqserv/servlet/<ServletName> with
    HTTP Basic credentials; GET …?wsdl describes the operations.  The servlet acts as
    --user (its super-user, default SLUICE) opening sessions for the database users
    its agents are mapped to.  http://HOST:PORT/dashboard shows the flow live.  With
    --ssl-certfile and --ssl-keyfile it serves HTTPS.
    """
    from .dashboard import Dashboard
    from .idap import IdapConfig, serve as run_servlet
    if pool_min > pool_max:
        raise click.BadParameter(f"{pool_min} is larger than --pool-max ({pool_max})", param_hint="--pool-min")
    config = IdapConfig(serve_dsn or obj.dsn, user=obj.user, password=obj.password, pool_max=pool_max,
                        pool_min=pool_min, session_timeout=session_timeout,
                        max_request_bytes=max_request_bytes, max_batch_bytes=max_batch_bytes, workers=workers,
                        inline_max_bytes=inline_max_bytes, monitor_max_age=metrics_max_age)
    try:   # fail here, with the ORA error, rather than inside the server's start-up
        import sluice
        sluice.connect(config.dsn, user=config.user, password=config.password).close()
        _check_listen(host, port)
        scheme = _check_tls(ssl_certfile, ssl_keyfile)
    except Error as e:
        _fail(e)
    click.echo(f"AQ servlet on {scheme}://{host}:{port}/aqserv/servlet/<ServletName> over {config.dsn}")
    extensions = [Dashboard(interval=dashboard_interval)] if dashboard else []
    if dashboard:
        click.echo(f"dashboard on {scheme}://{host}:{port}/dashboard")
    run_servlet(config, host, port, log_level, extensions, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile)


@main.command()
@click.argument("run_dsn", metavar="[DSN]", required=False)
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False))
@click.option("--stop-timeout", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds each process may take to finish its batch when stopping.")
@click.option("--metrics-port", type=click.IntRange(0, 65535), default=None,
              help="Serve Prometheus metrics at http://HOST:PORT/metrics (users with MONITOR).")
@click.option("--metrics-host", default="127.0.0.1", show_default=True,
              help="Address the metrics endpoint listens on.")
@click.option("--metrics-max-age", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Seconds one snapshot of the store serves scrapes (at most one reading in flight).")
@click.pass_obj
def run(obj: _Context, run_dsn: str | None, log_level: str, stop_timeout: float,
        metrics_port: int | None, metrics_host: str, metrics_max_age: float) -> None:
    """Run the store's enabled Streams processes (capture, …) until SIGTERM or SIGINT.

    DSN defaults to the global --dsn.  Every copy of sluice run on a store (several
    processes, several machines) runs each process exactly once: another takes it over
    within seconds when its host dies.  START_/STOP_ procedures are obeyed within a
    second; V$STREAMS_HOSTED shows which host runs what.  Exit status 0 after a clean
    stop, 1 when a process did not finish its batch within --stop-timeout.
    """
    import logging
    import signal
    import threading

    from .streams.host import Host
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    dsn = run_dsn or obj.dsn
    import sluice
    host = Host(lambda: sluice.connect(dsn, user=obj.user, password=obj.password),
                stop_timeout=stop_timeout, freeze_heap=True)
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        logging.getLogger("sluice.host").info("%s: stopping", signal.Signals(signum).name)
        stop.set()
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    metrics = None
    try:
        try:
            if metrics_port is not None:     # a busy port or unknown host, said before anything starts
                _check_listen(metrics_host, metrics_port)
            host.start()
            if metrics_port is not None:
                metrics = _metrics_server(lambda: sluice.connect(dsn, user=obj.user, password=obj.password),
                                          metrics_host, metrics_port, metrics_max_age)
        except (Error, OSError) as e:
            host.stop()
            _fail(e if isinstance(e, Error) else ora(12541, f"metrics endpoint {metrics_host}:{metrics_port}: {e}"))
        while not stop.wait(0.5):
            if not host.alive:                   # its supervisor failed (logged)
                break
        clean = host.stop()
    finally:                                     # a caller in-process gets its handlers back
        if metrics is not None:
            metrics.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    sys.exit(0 if clean and stop.is_set() else 1)


@main.command()
@click.option("--interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="Seconds between screens.")
@click.option("--once", is_flag=True, help="Print one screen and exit (scripts, tests).")
@click.option("--all", "all_queues", is_flag=True, help="Show every queue, also empty and exception queues.")
@click.pass_obj
def top(obj: _Context, interval: float, once: bool, all_queues: bool) -> None:
    """A live terminal view of the store: queue depths, Streams processes (state, totals,
    rates, backlog, lag, errors) and the topology.  Needs the MONITOR privilege."""
    from rich.console import Console

    from .monitor import snapshot
    from .monitor.top import top as show
    try:
        conn = obj.existing_conn
        conn.context.authz.check_monitor()

        def take():
            shot = snapshot.take(conn)
            conn.commit()
            return shot
        show(take, Console(), interval=interval, once=once, all_queues=all_queues)
    except KeyboardInterrupt:
        pass
    except Error as e:
        _fail(e)


def _check_tls(certfile: str | None, keyfile: str | None) -> str:
    """``https`` when the certificate and key load together, ``http`` without them.
    :raises: ORA-29024 (certificate validation failure) when they do not: a wrong file
    must stop the server here, not leave it listening without TLS."""
    if certfile is None and keyfile is None:
        return "http"
    if certfile is None or keyfile is None:
        raise ora(29024, "--ssl-certfile and --ssl-keyfile go together")
    import ssl
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (ssl.SSLError, OSError) as e:
        raise ora(29024, f"{certfile}, {keyfile}: {e}") from None
    return "https"


def _metrics_server(connect, host: str, port: int, max_age: float = 1.0):
    """``/metrics`` of ``sluice run`` (sluice.monitor.endpoint), on a connection of its own."""
    import logging

    from .monitor.access import MonitorAccess
    from .monitor.endpoint import MetricsServer
    from .monitor.prometheus import Metrics
    metrics = Metrics(connect, max_age=max_age)
    server = MetricsServer(metrics, MonitorAccess(metrics.source.connection()), host, port,
                           log=logging.getLogger("sluice.metrics").debug)
    logging.getLogger("sluice.metrics").info("metrics on http://%s:%d/metrics", host, server.port)
    return server


def _check_listen(host: str, port: int) -> None:
    """Refuse an address the server could not listen on (uvicorn would only log it)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise ora(12545, f"{host}:{port} ({e})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise ora(12542, f"{host}:{port} ({e.strerror or e})") from None


@main.command()
@click.option("--dsn", "demo_dsn", default="sqlite:///sluice-demo.db", show_default=True,
              help="Where the demo runs (recreated).")
def demo(demo_dsn: str) -> None:
    """A short end-to-end scenario on the embedded default."""
    from .demo import run_demo
    try:
        run_demo(demo_dsn, click.echo)
    except Error as e:
        _fail(e)


# -- sluice pipeline: Streams definitions run on Spark (sluice.pipeline) -------------------

@main.group()
def pipeline() -> None:
    """Run a capture's, propagation's or queue's traffic through Spark; status; reports."""


def _pipeline_source(conn, capture: str | None, propagation: str | None, apply_name: str | None,
                     queue: str | None) -> dict:
    """What the named Streams definition reads and where it sends it."""
    from .errors import NotSupportedError
    if sum(x is not None for x in (capture, propagation, apply_name, queue)) != 1:
        raise click.UsageError("name exactly one of --capture, --propagation, --apply, --queue")
    if apply_name is not None:
        from .streams.apply.definition import load
        from .streams.capture.context import CaptureContext
        d = load(CaptureContext(conn), apply_name.upper())          # ORA-26701
        return {"queue": f"{d.queue_owner}.{d.queue_name}", "name": d.name, "apply": d.name,
                "positive": d.rule_set, "negative": d.negative_rule_set, "process": ("APPLY", d.name)}
    if capture is not None:
        rows = conn.query("SELECT QUEUE_OWNER, QUEUE_NAME FROM DBA_CAPTURE WHERE CAPTURE_NAME = :1",
                          [capture.upper()])[1]
        if not rows:
            raise ora(26701, capture.upper())
        return {"queue": f"{rows[0][0]}.{rows[0][1]}", "name": capture.upper()}
    if propagation is not None:
        try:
            rows = conn.query("SELECT SOURCE_QUEUE_OWNER, SOURCE_QUEUE_NAME, DESTINATION_QUEUE_OWNER, "
                              "DESTINATION_QUEUE_NAME, DESTINATION_DBLINK, RULE_SET_OWNER, RULE_SET_NAME, "
                              "NEGATIVE_RULE_SET_OWNER, NEGATIVE_RULE_SET_NAME FROM DBA_PROPAGATION "
                              "WHERE PROPAGATION_NAME = :1", [propagation.upper()])[1]
        except Error:
            rows = []   # no propagation catalog on this store
        if not rows:
            raise ora(26701, propagation.upper())
        so, sq, do, dq, link, ro, rs, no, ns = rows[0]
        from .pipeline.lease import propagation_process
        from .streams.propagation import spec as propagation_specs
        out = {"queue": f"{so}.{sq}", "name": propagation.upper(), "to_queue": f"{do}.{dq}",
               "positive": f"{ro}.{rs}" if rs else None, "negative": f"{no}.{ns}" if ns else None,
               "process": propagation_process(propagation_specs.load(conn.context.store, propagation.upper()))}
        if link:
            from .streams.propagation.links import resolve_link
            target = resolve_link(conn.context.store, conn.username, link)
            if target.is_http:
                raise NotSupportedError(f"{propagation.upper()}: propagation over HTTP ({link}) is not "
                                        "built on Spark; run it in the process host (sluice run)")
            out.update(to_dsn=target.endpoint, to_login=(target.username, target.password))
        return out
    return {"queue": queue}


def _custom_transforms(specs: tuple[str, ...]) -> dict:
    """``RULE=module:function`` -> {rule as written: function} (:func:`_resolved_rules`
    resolves the names once the store is open)."""
    import importlib
    out = {}
    for item in specs:
        rule, _, target = item.partition("=")
        module, _, function = target.partition(":")
        if not (rule and module and function):
            raise click.UsageError(f"--transform {item!r}: RULE=module:function")
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name is None or not (module + ".").startswith(e.name + "."):
                raise click.UsageError(f"--transform {item!r}: importing {module} failed: {e}") from None
            raise click.UsageError(f"--transform {item!r}: no module named {e.name!r}") from None
        except Exception as e:   # the module itself fails as it loads: say where and why
            raise click.UsageError(f"--transform {item!r}: importing {module} failed: "
                                   f"{type(e).__name__}: {e}") from None
        out[rule] = getattr(found, function, None)
        if not callable(out[rule]):
            raise click.UsageError(f"--transform {item!r}: module {module} has no function {function!r}")
    return out


def _resolved_rules(conn, custom: dict, rule_sets: tuple[str | None, ...]) -> dict:
    """``custom`` keyed by qualified rule names, resolved in the connected user's schema as
    the rule sets are; ORA-24147 for a rule that does not exist (its transformation would
    silently never run), ORA-24141 for a rule set -- before the JVM starts, not after."""
    from .rules.engine.ruleset import rules_catalog
    catalog = rules_catalog(conn.context.store)
    for rule_set in filter(None, rule_sets):
        catalog.rule_set(catalog.key(rule_set, conn.username, "rule set name"))
    return {catalog.rule(catalog.key(rule, conn.username, "rule name")).qualified: fn
            for rule, fn in custom.items()}


@pipeline.command("run")
@click.option("--capture", default=None, help="Read the queue of this capture process.")
@click.option("--propagation", default=None, help="Run this propagation (its rule sets, into its destination queue).")
@click.option("--apply", "apply_name", default=None, help="Run this apply process (its queue, rule sets, target).")
@click.option("--queue", default=None, help="Read this queue (OWNER.NAME).")
@click.option("--consumer", default=None, help="The subscriber the pipeline reads as (default: its name).")
@click.option("--name", default=None, help="The pipeline's name (its low-watermark and checkpoint).")
@click.option("--positive-rule-set", default=None)
@click.option("--negative-rule-set", default=None)
@click.option("--transform", "transforms", multiple=True, help="A custom transformation: RULE=module:function.")
@click.option("--warehouse", default=None, help="Write the Parquet message warehouse here.")
@click.option("--to-queue", default=None, help="Enqueue into this queue (of the same store).")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--checkpoint-dir", default="sluice-checkpoints", show_default=True)
@click.option("--max-messages-per-batch", type=click.IntRange(min=1), default=None)
@click.option("--once", is_flag=True, help="Process what is there now, then stop.")
@click.option("--conf", "confs", multiple=True, help="A Spark setting: KEY=VALUE (e.g. spark.executor.memory=1g).")
@click.pass_obj
def pipeline_run(obj: _Context, capture, propagation, apply_name, queue, consumer, name, positive_rule_set,
                 negative_rule_set, transforms, warehouse, to_queue, master, checkpoint_dir,
                 max_messages_per_batch, once, confs) -> None:
    """Run a Streams definition on Spark until SIGTERM / Ctrl-C (or, with --once, until caught up).

    A database lost meanwhile (a restart, ended sessions) is waited for: the run starts
    again from its checkpoint after a pause (1 s doubling to 60 s; it ends after 16 in a row).
    The apply or propagation schedule it runs is run by no host meanwhile (it holds their
    lease; ORA-26666 when a host or another run has it: V$STREAMS_HOSTED)."""
    import sluice
    from .pipeline.lease import ProcessLease
    from .pipeline.paths import check_run_directories
    from .pipeline.queueio import QueueRef
    from .pipeline.runner import PipelineRun, check_master, spark_session
    from .pipeline.stages import PipelineSpec
    custom = _custom_transforms(transforms)   # a usage error, before the store or Spark is touched
    try:
        check_master(master, obj.dsn)
        conn = obj.conn
        what = _pipeline_source(conn, capture, propagation, apply_name, queue)
        positive_rule_set = positive_rule_set or what.get("positive")
        negative_rule_set = negative_rule_set or what.get("negative")
        custom = _resolved_rules(conn, custom, (positive_rule_set, negative_rule_set))
        to_queue = to_queue or what.get("to_queue")
        if not warehouse and not to_queue and not what.get("apply"):
            raise click.UsageError("say where the messages go: --warehouse DIR or --to-queue QUEUE")
        sink = "apply" if what.get("apply") else "enqueue" if to_queue else "warehouse"
        pname = name or what.get("name") or what["queue"].replace(".", "_")
        spec = PipelineSpec(pname, obj.dsn, what["queue"], consumer or pname, positive_rule_set, negative_rule_set,
                            user=obj.user, max_messages_per_batch=max_messages_per_batch,
                            custom_transformations=custom)
        QueueRef.resolve(obj.dsn, spec.queue, spec.consumer, spec.user)   # before the JVM starts
        bad = [c for c in confs if "=" not in c]
        if bad:
            raise click.UsageError(f"--conf takes KEY=VALUE, not {bad[0]!r}")
        settings = dict(c.split("=", 1) for c in confs)   # a key given again: the later wins, as spark-submit's
        check_run_directories(sink, checkpoint_dir, warehouse)   # before the JVM starts (PipelineRun: the API's)
        # the process's lease: ORA-26666 before the JVM starts when another engine runs it
        lease = ProcessLease(conn.context.store, obj.dsn, pname, what.get("process")).acquire()
        try:
            spark = spark_session(master, obj.dsn, conf=settings)
            try:
                run = PipelineRun(spark, spec, conn, conn.context.store, sink, checkpoint_dir,
                                  apply_name=what.get("apply"), path=warehouse, to_dsn=what.get("to_dsn"),
                                  to_queue=to_queue, connect=sluice.connect, out=sys.stdout,
                                  to_login=what.get("to_login", (None, None)),
                                  trigger={"availableNow": True} if once else None, lease=lease)
                run.start()
                run.wait()
            finally:
                spark.stop()
        finally:
            lease.release()
    except Error as e:
        _fail(e)


@pipeline.command("status")
@click.argument("name", required=False)
@click.pass_obj
def pipeline_status(obj: _Context, name: str | None) -> None:
    """Each pipeline's position, messages, rate, lag and last error."""
    from .pipeline.queueio import progress_rows
    try:
        obj.existing_conn   # opens (and completes) the store's catalog
        cols, rows = progress_rows(obj.dsn, name)
    except Error as e:
        _fail(e)
    keep = ["NAME", "QUEUE", "CONSUMER_NAME", "STATE", "POSITION", "BATCHES", "TOTAL_MESSAGES",
            "MESSAGES_PER_SECOND", "LAG_SECONDS", "LAST_BATCH_SECONDS", "LAST_ERROR", "UI_URL"]
    idx = [cols.index(c) for c in keep]
    _print_table(keep, [tuple(round(r[i], 2) if isinstance(r[i], float) else r[i] for i in idx) for r in rows])


@pipeline.command("report")
@click.argument("warehouse")
@click.argument("report_name", type=click.Choice(["volume", "lag", "tables"]))
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True)
def pipeline_report(warehouse: str, report_name: str, top: int) -> None:
    """Spark SQL reports over a message warehouse: volume per hour, lag percentiles, top tables."""
    from .pipeline.paths import check_directory
    from .pipeline.report import report
    from .pipeline.runner import spark_session
    try:
        check_directory(warehouse, "warehouse", write=False)
    except Error as e:
        _fail(e)
    spark = spark_session("local[*]", "", ui=False)
    try:
        cols, rows = report(spark, warehouse, report_name, top)
    finally:
        spark.stop()
    _print_table(cols, rows)


@main.command()
@click.argument("source_table")
@click.argument("target_table", required=False)
@click.option("--source", "source_dsn", required=True,
              help="The source database: postgresql://…[?schema=…] or sqlite:///file.db")
@click.option("--target", "target_dsn", required=True, help="The replica's database, the same way.")
@click.option("--where", default=None, help="Compare only the source rows this SQL predicate selects "
                                            "(the subset a subset rule replicates).")
@click.option("--key", default=None, help="Key columns, comma-separated (default: the primary key).")
@click.option("--max-rows", type=click.IntRange(min=0), default=50, show_default=True, help="Differing rows to list.")
def compare(source_table: str, target_table: str | None, source_dsn: str, target_dsn: str,
            where: str | None, key: str | None, max_rows: int) -> None:
    """Compare OWNER.TABLE with its replica row by row (like DBMS_COMPARISON); exit status 2
    when rows differ."""
    from .names import split_qualified
    from .streams.apply.compare import compare as run_compare
    from .streams.apply.targetdsn import open_target
    s_owner, s_name = split_qualified(source_table, "SLUICE", "table name")
    t_owner, t_name = split_qualified(target_table or source_table, "SLUICE", "table name")
    source = open_target(source_dsn, "", None, None, create=False)   # compare reads: it makes no database
    try:
        target = open_target(target_dsn, "", None, None, create=False)
        try:
            result = run_compare(source, s_owner, s_name, target, t_owner, t_name, where=where,
                                 key_columns=[k.strip().upper() for k in key.split(",")] if key else None)
        finally:
            target.close()
    finally:
        source.close()
    click.echo(f"{s_owner}.{s_name}: {result.source_rows} rows; replica {t_owner}.{t_name}: "
               f"{result.target_rows} rows; {len(result.differences)} differing")
    if result.consistent:
        return
    _print_table(["DIFFERENCE", *result.key, "COLUMNS"],
                 [(d.kind, *d.key, ", ".join(d.columns())) for d in result.differences[:max_rows]])
    sys.exit(2)


def _add_idap() -> None:
    from .idap.commands import idap
    main.add_command(idap)


_add_idap()

if __name__ == "__main__":  # pragma: no cover
    main()
