"""Running a pipeline: the Spark session, the query, its progress, a clean stop.

::

    spark = spark_session("local[*]", dsn)
    run = PipelineRun(spark, spec, conn, store, sink="warehouse", path="wh", checkpoint_dir="ck")
    run.start(); run.wait()            # SIGTERM (or run.stop()) ends it cleanly

After each micro-batch the listener acknowledges what the sink committed (the source's
own ``commit`` comes only when Spark plans the next batch), writes the figures that
``sluice pipeline status`` shows (rows/s, lag, batch duration, last error) and prints
the live progress line.  The Streams process a pipeline runs (an apply, a propagation's
schedule) is run by one engine at a time: the run holds the process host's lease of it
from before its query starts until it ends (:mod:`.lease`).  An SQLite store is a local file: with a master that is not
``local`` the executors could not open it, so that is refused before Spark starts.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, TextIO

from ..errors import Error, NotSupportedError, ora
from . import queueio, restart, rows, sinks, source
from .lease import ProcessLease
from .paths import check_run_directories
from .queueio import QueueRef
from .stages import PipelineSpec, decide, rule_sets

__all__ = ["spark_session", "check_master", "PipelineRun", "lag_seconds"]


def check_master(master: str, dsn: str) -> None:
    """Refuse an SQLite store with a master whose executors may run elsewhere."""
    if dsn.startswith("sqlite:") and not master.startswith("local"):
        raise NotSupportedError(
            f"an SQLite store cannot be used with master {master}: executors on other machines "
            "cannot open a local database file (use a PostgreSQL store, or --master local[*])")


def spark_session(master: str, dsn: str, app: str = "sluice-pipeline", ui: bool = True,
                  conf: dict[str, str] | None = None) -> Any:
    """A SparkSession for pipelines (DESIGN.md section 5), the sluice source registered."""
    check_master(master, dsn)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "true" if ui else "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               # workers forked with Sluice imported already (pipeline/daemon.py)
               .config("spark.python.daemon.module", "sluice.pipeline.daemon"))
    jdbc = "/usr/share/java/postgresql.jar"   # Debian's libpostgresql-jdbc-java, never a download
    if os.path.exists(jdbc):
        builder = builder.config("spark.jars", jdbc)
    if os.environ.get("PYTHONPATH"):   # executors of a cluster import the same Sluice as the driver
        builder = builder.config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source.register(spark)
    return spark


def lag_seconds(raw: Any, ref: QueueRef, after: int, now: float) -> float:
    """How long the oldest message the pipeline has not read yet has waited (0: none)."""
    where = "Q_NAME = ? AND STATE = 0" + (" AND CONSUMER_NAME = ?" if ref.multi else "")
    params = [ref.name] + ([ref.consumer] if ref.multi else [])
    row = raw.execute(f"SELECT MIN(ENQ_TIME) FROM {ref.table} WHERE {where} AND {ref.order} > ?",
                      [*params, after]).fetchone()
    return max(0.0, now - row[0]) if row and row[0] is not None else 0.0


class PipelineRun:
    """One pipeline's streaming query.  ``sink``: ``"warehouse"`` (``path``: the Parquet
    directory), ``"enqueue"`` (``to_queue`` of the store at ``to_dsn``, default the
    pipeline's own, opened with ``connect`` as ``to_login`` = (user, password)) or
    ``"apply"`` (as apply process ``apply_name``, into its target).  ``process``: the
    (kind, name) of the Streams process it runs, whose lease it holds while it runs (the
    apply sink: ``("APPLY", apply_name)``); ``lease``: that lease taken already (the CLI
    takes it before the JVM starts)."""

    def __init__(self, spark: Any, spec: PipelineSpec, conn: Any, store: Any, sink: str, checkpoint_dir: str,
                 path: str | None = None, to_dsn: str | None = None, to_queue: str | None = None,
                 connect: Callable[..., Any] | None = None, out: TextIO | None = None,
                 trigger: dict | None = None, to_login: tuple[str | None, str | None] = (None, None),
                 apply_name: str | None = None, process: tuple[str, str] | None = None,
                 lease: ProcessLease | None = None) -> None:
        if sink not in ("warehouse", "enqueue", "apply"):
            raise ValueError(f"no sink {sink!r} (warehouse, enqueue or apply)")
        if sink == "apply" and not (apply_name and connect):
            raise ValueError("the apply sink needs the apply process's name")
        if sink == "warehouse" and not path:
            raise ValueError("the warehouse sink needs a path")
        if sink == "enqueue" and not (to_queue and connect):
            raise ValueError("the enqueue sink needs a destination queue")
        check_run_directories(sink, checkpoint_dir, path)
        self.spark, self.spec, self.sink = spark, spec, sink
        self.checkpoint = os.path.join(checkpoint_dir, spec.name)
        self.path, self.to_dsn, self.to_queue, self.connect = path, to_dsn or spec.dsn, to_queue, connect
        self.out, self.trigger, self.apply_name = out, trigger, apply_name
        # the destination's login: a database link's, else the pipeline's user on its own store
        self.to_login = to_login if to_dsn else (spec.user, None)
        self.ref = QueueRef.resolve(spec.dsn, spec.queue, spec.consumer, spec.user)
        self.rule_sets = rule_sets(conn, spec)
        self.store = store
        if process is None and sink == "apply":
            process = ("APPLY", apply_name)
        self.lease = lease or ProcessLease(store, spec.dsn, spec.name, process)
        self.query: Any = None
        self._listener: Any = None
        self._stopping = threading.Event()
        # one budget for the run's starts; a stop request ends a pause before a restart
        self._restarts = restart.Restarts(said=self._say, pause=self._stopping.wait)
        self._seen: set[int] = set()       # batches whose progress was handled
        self._lock = threading.Lock()

    def frame(self) -> Any:
        # the schema given: Spark then starts no Python process to ask the data source for it
        # (~1 s of a session's first query start, and one fewer of its 10-s waits: restart.py)
        df = self.spark.readStream.format("sluice").options(**self.spec.source_options()) \
            .schema(rows.spark_schema(self.spec.decode_in_jvm)).load()
        return decide(df, self.store, self.rule_sets, self.spec.custom_transformations)

    def start(self) -> Any:
        """Start the query (again, from its checkpoint, while it fails to start only
        because Spark's Python worker was late or a database was lost: ``restart.py``).
        :raises: ORA-26666 when another engine runs its process (before Spark is asked)."""
        self.lease.acquire()
        try:
            self._listen()
            self.query = self._restarts.launch(self._start)
        except BaseException:
            self.lease.release()
            raise
        return self.query

    def _start(self) -> Any:
        self.lease.acquire()      # again after its session was lost (a no-op while held)
        df = self.frame()
        queueio.record_figures(self.spec.dsn, self.spec.name, self.ref, state="RUNNING", started=time.time(),
                               ui_url=self.spark.sparkContext.uiWebUrl, checkpoint=self.checkpoint,
                               last_error=None)
        if self.sink == "warehouse":
            query = sinks.warehouse(df, self.path, self.checkpoint, self.trigger)
        elif self.sink == "apply":
            query = sinks.apply(df, self.connect, self.spec.dsn, self.apply_name, self.checkpoint,
                                self.spec.user, self.trigger, tasks=self.spec.apply_tasks)
        else:
            query = sinks.enqueue(df, self.connect, self.to_dsn, self.to_queue, self.checkpoint,
                                  f"{self.spec.name}@{self.ref.qualified}", self.to_login[0], self.trigger,
                                  self.to_login[1])
        self._say(f"pipeline {self.spec.name}: {self.ref.qualified} -> {self.sink}; "
                  f"Spark UI {self.spark.sparkContext.uiWebUrl or 'disabled'}; checkpoint {self.checkpoint}\n")
        return query

    def _listen(self) -> None:
        if self._listener is not None:
            return
        from pyspark.sql.streaming import StreamingQueryListener

        run = self

        class Progress(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                return None

            def onQueryIdle(self, event: Any) -> None:
                return None

            def onQueryProgress(self, event: Any) -> None:
                run.progress(event.progress)

            def onQueryTerminated(self, event: Any) -> None:
                run.terminated(event.exception)

        self._listener = Progress()
        self.spark.streams.addListener(self._listener)

    def progress(self, p: Any) -> None:
        """After a batch: acknowledge it, record the figures, print the progress line."""
        if self.query is not None and str(p.id) != str(self.query.id):
            return
        with self._lock:
            if p.batchId in self._seen:
                return
            self._seen.add(p.batchId)
            self._progress(p)

    def _progress(self, p: Any) -> None:
        end = p.sources[0].endOffset if p.sources else None
        end = json.loads(end) if isinstance(end, str) else end
        if not end:
            return
        self._restarts.progressed()
        now = time.time()
        seconds = (p.batchDuration or 0) / 1000.0
        with queueio.open_raw(self.spec.dsn) as raw:
            if p.numInputRows:
                queueio.acknowledge(raw, self.ref, self.spec.name, end["position"])
            lag = lag_seconds(raw, self.ref, end["position"], now)
        rate = p.processedRowsPerSecond or 0.0
        queueio.record_figures(self.spec.dsn, self.spec.name, self.ref, last_batch_messages=p.numInputRows,
                               last_batch_time=now, last_batch_seconds=seconds, lag_seconds=lag,
                               messages_per_second=rate)
        self._say(f"\rbatch {p.batchId}: {p.numInputRows} msgs, {rate:,.0f} msgs/s, "
                  f"lag {lag:.1f} s, batch {seconds:.2f} s, position {end['position']}   ")

    def terminated(self, exception: object | None) -> None:
        """Record how the query ended (``exception``: Spark's text, or the run's own sluice
        error, recorded as itself: ``restart.run_error``)."""
        queueio.record_figures(self.spec.dsn, self.spec.name, self.ref,
                               state="FAILED" if exception else "STOPPED",
                               last_error=restart.run_error(exception).message if exception else None)

    def _say(self, text: str) -> None:
        if self.out is not None:
            self.out.write(text)
            self.out.flush()

    def stop(self) -> None:
        """Stop the query, then let the process's lease go (a host may take it over)."""
        self._stopping.set()
        try:
            if self.query is not None:
                self.query.stop()
        finally:
            self.lease.release()

    def wait(self, timeout: float | None = None) -> None:
        """Until the query ends (SIGTERM / SIGINT stop it cleanly: the batch in flight
        finishes or is replayed from the checkpoint, nothing is acknowledged twice).  A
        query that died only because Spark's Python worker was late or a database was lost
        is started again (after a pause, for a lost database: ``restart.py``)."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self._stopping.set())
        end = None if timeout is None else time.monotonic() + timeout
        try:
            self._wait(end)
        finally:
            self.lease.release()

    def _start_again(self) -> None:
        try:
            self.query = self._restarts.launch(self._start)
        except Error as e:
            # a restart refused for good (ORA-26666: another engine took the process while
            # the run's lease session was lost): what the run ends with, `pipeline status` shows
            self.terminated(e)
            raise

    def _wait(self, end: float | None) -> None:
        lost = None
        while not self._stopping.is_set():
            if not self.lease.alive():
                # the lease's session is gone (PostgreSQL): a host may take the process over
                # now, so the query stops before the lease is taken again (as a host's do)
                self.query.stop()
                lost = ora(3113, f"pipeline {self.spec.name}: the session holding its leases was lost")
                if not self._restarts.again(lost):
                    break
                lost = None
                self._start_again()
                continue
            if not self.query.isActive:
                if not self._restarts.again(self.query.exception()):
                    break
                self._start_again()
                continue
            if end is not None and time.monotonic() > end:
                break
            restart.await_end(self.query, 0.5)
        self.stop()
        for p in self.query.recentProgress:   # listener events are asynchronous: none is missed
            self.progress(p)
        if self._listener is not None:
            self.spark.streams.removeListener(self._listener)
            self._listener = None
        error = self.query.exception() or lost
        self.terminated(error)
        self._say("\n")
        if error is lost and lost is not None:
            raise lost
        if error is not None:
            # as awaitTermination would, the caller learns the run failed -- from the sluice
            # error a task raised, in one line, not Spark's stack and plan (restart.run_error)
            raise restart.run_error(error) from error
