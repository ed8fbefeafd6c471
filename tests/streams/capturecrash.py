"""kill -9 during capture, with a checker (issue 13 §5): a writer commits transactions on
the source while a capture process — a child process — is SIGKILLed at random moments and
started again; afterwards the queue must hold every committed source transaction exactly
once, whole, with its changes in order, the transactions in commit order.

The writer is not killed, so its record is the truth: it logs a transaction (its xid and
its changes) once COMMIT returned.  Used by ``tests/streams/test_capture_crash.py``; run as
a script, this file is the capture worker::

    python capturecrash.py DSN CAPTURE_NAME STOPFILE PROGRESSFILE [buffered]

The worker appends ``up`` to PROGRESSFILE once its capture has started, then a line per
batch that captured source transactions: the controller kills it only after that
(tests/killschedule.py: a slow start-up makes the run longer, never emptier).

With ``buffered`` the capture stages LCRs as buffered messages (SET_PARAMETER 'STAGING')
and the worker also runs their consumer: a thread of the same process that takes each
buffered LCR and enqueues it into the persistent queue ``OUT_Q`` in its own transaction,
committing every 1-5 LCRs (mid source transaction too); ``OUT_Q`` is what is checked.
With ``apply`` the consumer is an apply process (CREATE_APPLY, apply_captured) reading the
buffered queue, whose rule's SET_ENQUEUE_DESTINATION puts each LCR into ``OUT_Q`` (in the
apply's store transaction, with what it tells the capture it consumed) and SET_EXECUTE
FALSE keeps it from its target.  ``apply-spill`` is ``apply`` with txn_lcr_spill_threshold 2:
most transactions are read in parts, spilled, and a kill often comes mid-spill.
``capture-spill`` is the default (persistent) staging with the capture's own
txn_lcr_spill_threshold 2: the capture spills most transactions before their commit row
comes, and a kill often comes mid-spill.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass, field



def worker(dsn: str, name: str, stop: str, progress: str, staging: str = "") -> None:
    import sluice
    from sluice.streams.capture import CaptureProcess
    proc = CaptureProcess(sluice.connect(dsn), name, max_changes=200)
    proc.start()
    report = os.open(progress, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(report, b"up\n")
    drained = threading.Event()
    consumer = None
    if staging in ("buffered", "apply", "apply-spill"):
        consumer = threading.Thread(target=_or_die, args=(forward if staging == "buffered" else apply,
                                                          dsn, stop, drained), daemon=True)
        consumer.start()
    while not os.path.exists(stop):
        captured = proc.run_batch()
        if captured:
            os.write(report, b"%d\n" % captured)
        else:
            proc.wait_for_redo(0.01)
    if consumer is not None:     # the end: capture what is left, until the consumer has it all
        while True:
            _catch_up_reporting(proc, report)
            drained.clear()
            drained.wait(10)
            left = proc.staging.unconsumed()
            os.write(report, b"stopping %d\n" % left)     # still at it (the controller waits)
            if not left:
                break
    proc.stop()


def _catch_up_reporting(proc, report: int) -> None:
    """``proc.catch_up()`` that tells the controller it is advancing: what a slow machine
    left to capture may take longer than the controller's 60 s of silence, and only a
    capture whose position stands still for that long is hung."""
    from sluice.errors import OperationalError
    while True:
        before = proc.captured_scn
        try:
            proc.catch_up(timeout=10)
            return
        except OperationalError as e:
            if e.full_code != "ORA-26744":           # not done within the 10 s
                raise
            if proc.captured_scn != before:          # no progress: say nothing
                os.write(report, b"catching up %d\n" % proc.captured_scn)


def _or_die(target, *args) -> None:
    try:
        target(*args)
    except BaseException:   # noqa: BLE001 — the controller reports a worker that died
        import traceback
        traceback.print_exc()
        os._exit(3)


def forward(dsn: str, stop: str, drained: threading.Event) -> None:
    """The buffered LCRs' consumer: each into OUT_Q, committed every 1-5 LCRs."""
    import sluice
    conn = sluice.connect(dsn)
    q = conn.queue("STRM_Q")
    q.deqoptions.consumername = "APPLY1"
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = 1                 # an enqueue wakes it at once
    out = conn.queue("OUT_Q")
    rng = random.Random()
    pending = 0
    while True:
        m = q.deqone()
        if m is None:
            if pending:
                conn.commit()
                pending = 0
            if os.path.exists(stop):
                drained.set()
            continue
        out.enqone(conn.msgproperties(payload=m.payload))
        pending += 1
        if pending >= rng.randint(1, 5):
            conn.commit()
            pending = 0


def apply(dsn: str, stop: str, drained: threading.Event) -> None:
    """The apply process APPLY1 in the capture's process, batch after batch."""
    import sluice
    from sluice.streams.apply import ApplyProcess
    app = ApplyProcess.from_catalog(sluice.connect(dsn), "APPLY1", batch=random.randint(1, 50), wait=1.0)
    while True:
        n = app.run_batch()
        if app.state == "ABORTED":
            raise app.error
        if not n and os.path.exists(stop):
            drained.set()


@dataclass
class Report:
    committed: int = 0                 # source transactions the writer committed
    captured: int = 0                  # transactions found in the queue
    kills: int = 0
    lost: list = field(default_factory=list)
    duplicated: list = field(default_factory=list)
    torn: list = field(default_factory=list)        # a transaction split or its changes wrong
    out_of_order: list = field(default_factory=list)
    phantom: list = field(default_factory=list)     # in the queue, never committed
    failures: list = field(default_factory=list)    # a worker that died by itself

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.torn or self.out_of_order or self.phantom
                    or self.failures)


class Writer(threading.Thread):
    """Commits random transactions of 1-6 changes (insert, update, delete) on ``table``."""

    def __init__(self, conninfo: str, table: str, rng: random.Random) -> None:
        super().__init__(daemon=True)
        import psycopg
        self.conn = psycopg.connect(conninfo, autocommit=True)
        self.table, self.rng = table, rng
        self.done = threading.Event()
        self.log: list[tuple[str, list[tuple[str, int]]]] = []   # (xid, [(command, id)])
        self.error: BaseException | None = None

    def run(self) -> None:
        rows: set[int] = set()
        next_id = 1
        try:
            while not self.done.is_set():
                ops = []
                with self.conn.transaction():
                    xid = str(self.conn.execute("SELECT txid_current() % 4294967296").fetchone()[0])
                    for _ in range(self.rng.randint(1, 6)):
                        live = rows - {i for c, i in ops if c == "DELETE"}
                        kind = self.rng.random()
                        if kind < 0.5 or not live:
                            self.conn.execute(f"INSERT INTO {self.table} VALUES (%s, %s)", (next_id, "i"))
                            ops.append(("INSERT", next_id))
                            rows.add(next_id)
                            next_id += 1
                        elif kind < 0.8:
                            target = self.rng.choice(sorted(live))
                            self.conn.execute(f"UPDATE {self.table} SET v = v || 'u' WHERE id = %s", (target,))
                            ops.append(("UPDATE", target))
                        else:
                            target = self.rng.choice(sorted(live))
                            self.conn.execute(f"DELETE FROM {self.table} WHERE id = %s", (target,))
                            ops.append(("DELETE", target))
                rows -= {i for c, i in ops if c == "DELETE"}
                self.log.append((xid, ops))
                time.sleep(self.rng.uniform(0, 0.01))
        except BaseException as e:   # noqa: BLE001  (reported by the controller)
            self.error = e
        finally:
            self.conn.close()


def check(log: list, lcrs: list) -> Report:
    """The queue's LCRs against the writer's log."""
    rep = Report(committed=len(log))
    groups: list[tuple[str, list, list]] = []       # (transaction id, [(command, id)], commit SCNs)
    for lcr in lcrs:
        cmd = lcr.get_command_type()
        value = lcr.get_value("OLD" if cmd == "DELETE" else "NEW", "id").access_number()
        if groups and groups[-1][0] == lcr.get_transaction_id():
            groups[-1][1].append((cmd, value))
            groups[-1][2].append(lcr.get_commit_scn())
        else:
            groups.append((lcr.get_transaction_id(), [(cmd, value)], [lcr.get_commit_scn()]))
    rep.captured = len(groups)
    expected = {xid: ops for xid, ops in log}
    order = {xid: i for i, (xid, _) in enumerate(log)}
    seen: set[str] = set()
    last = -1
    last_scn = -1
    for xid, ops, scns in groups:
        if xid not in expected:
            rep.phantom.append(xid)
            continue
        if xid in seen:
            rep.duplicated.append(xid)
            continue
        seen.add(xid)
        if ops != expected[xid] or len(set(scns)) != 1:
            rep.torn.append((xid, ops, expected[xid]))
        if order[xid] < last or scns[0] <= last_scn:
            rep.out_of_order.append(xid)
        last, last_scn = max(last, order[xid]), max(last_scn, scns[0])
    rep.lost = [xid for xid, _ in log if xid not in seen]
    return rep


def not_caught_up(rep: Report, log: list, why: str) -> None:
    """The last worker was stopped before it had forwarded everything (``why``): what the
    queue lacks then is the run's tail, not a fault — if it is only that: the transactions
    seen are exactly the first ones committed, whole and in order, but for the last, which
    may lack its last changes (the buffered consumer commits mid-transaction; the next
    incarnation would go on from there).  Then the report says so instead of calling the
    tail lost and the cut transaction torn; anything else stays reported as found."""
    position = {xid: i for i, (xid, _) in enumerate(log)}
    expected = dict(log)
    seen = len(log) - len(rep.lost)
    tail = {xid for xid, _ in log[seen:]}
    cut = [t for t in rep.torn if position[t[0]] == seen - 1 and len(t[1]) < len(expected[t[0]])
           and t[1] == expected[t[0]][:len(t[1])]]
    if (set(rep.lost) == tail and len(cut) == len(rep.torn)
            and not (rep.duplicated or rep.out_of_order or rep.phantom)):
        rep.lost, rep.torn = [], []
        rep.failures.append(
            f"{why}: the capture did not catch up — the queue holds the first {seen} of {len(log)} "
            f"committed transactions whole and in order{' (the last one in part)' if cut else ''}; "
            f"the rest was not yet captured (a machine too slow for the run's deadline; no loss, "
            f"duplicate or tear found)")
    else:
        rep.failures.append(f"{why}, and the queue is more than a cut-off prefix of the commits")


def run(env, logdir: str, seconds: float, seed: int,
        kill_every: tuple[float, float] = (0.2, 1.2), staging: str = "") -> Report:
    """Capture ``env``'s source table ``ledger`` under kills for ``seconds``; the report."""
    import sluice
    from tests import forkserver
    return _run(env, logdir, seconds, seed, kill_every, staging, forkserver.shared(*forkserver.FLEETS))


def _run(env, logdir, seconds, seed, kill_every, staging, server) -> Report:
    import sluice
    from tests import forkserver
    rng = random.Random(seed)
    table = f"{env.src}.ledger"
    env.sql(f"CREATE TABLE {table} (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "ledger"))
    if staging == "buffered":
        adm = env.conn.aqadm
        adm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY1"))
        adm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY1"),
                           delivery_mode=adm.PERSISTENT_OR_BUFFERED)
        adm.create_queue_table(queue_table="OUT_QT", queue_payload_type="SYS.ANYDATA")
        adm.create_queue(queue_name="OUT_Q", queue_table="OUT_QT")
        adm.start_queue(queue_name="OUT_Q")
        env.conn.capture_adm.set_parameter(capture_name="CAP", parameter="STAGING", value="BUFFERED")
    if staging in ("apply", "apply-spill"):
        adm = env.conn.aqadm
        adm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY1"))
        adm.create_queue_table(queue_table="OUT_QT", queue_payload_type="SYS.ANYDATA")
        adm.create_queue(queue_name="OUT_Q", queue_table="OUT_QT")
        adm.start_queue(queue_name="OUT_Q")
        env.conn.capture_adm.set_parameter(capture_name="CAP", parameter="STAGING", value="BUFFERED")
        rules = env.table_rule_set("ARS", "ledger")
        env.conn.apply_adm.set_enqueue_destination("ARS_D0", "OUT_Q")
        env.conn.apply_adm.set_execute("ARS_D0", False)
        env.conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="APPLY1", rule_set_name=rules,
                                        apply_captured=True,
                                        apply_database_link=f"sqlite:///{os.path.join(logdir, 'target.db')}")
        if staging == "apply-spill":
            env.conn.apply_adm.set_parameter("APPLY1", "txn_lcr_spill_threshold", "2")
        env.conn.apply_adm.start_apply(apply_name="APPLY1")
    if staging == "capture-spill":
        env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", "2")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    from tests.conftest import PG_BASE
    stop = os.path.join(logdir, "STOP")
    rep = Report()
    incarnation = -1
    hung = ""                 # why the last worker was stopped before it caught up

    def spawn() -> forkserver.Child:
        nonlocal incarnation
        incarnation += 1
        return server.spawn(f"{__name__}:worker", [env.dsn, "CAP", stop, os.path.join(
            logdir, f"worker.{incarnation}.progress"), staging], os.path.join(logdir, f"worker.{incarnation}.err"))

    def reap() -> None:
        nonlocal child
        if child.poll() is not None:            # it must never die by itself
            with open(os.path.join(logdir, f"worker.{incarnation}.err"), errors="replace") as f:
                rep.failures.append(f"capture worker exited with {child.returncode}: {f.read()[-3000:]}")
            child = spawn()

    def batches() -> list[str]:
        """What the running incarnation reported: ``up``, then its batches."""
        try:
            with open(os.path.join(logdir, f"worker.{incarnation}.progress")) as f:
                return f.read().split()
        except FileNotFoundError:
            return []

    def captured(what: str) -> None:
        """Wait until the running incarnation has captured (the run's deadline)."""
        killschedule.await_progress(
            lambda: len(batches()) > 1, give_up, what,
            lambda: f"worker.{incarnation} reported {batches() or 'nothing'} (its .err file)", tick=reap)

    from tests import killschedule
    pauses, tail = killschedule.intervals(rng, seconds, kill_every)
    give_up = time.monotonic() + 120 + 10 * seconds
    writer = Writer(PG_BASE, table, rng)
    child = spawn()
    writer.start()
    try:
        try:
            captured("before the first kill")
            for n, pause in enumerate(pauses, 1):
                time.sleep(pause)
                captured(f"between kill {n - 1} and kill {n}")
                child.send_signal(signal.SIGKILL)
                child.wait()
                rep.kills += 1
                child = spawn()
            time.sleep(tail)
        except killschedule.Stalled as e:
            rep.failures.append(str(e))
    finally:
        writer.done.set()
        writer.join(30)
        open(stop, "w").close()
        # buffered: the last worker consumes what the writer wrote meanwhile (more, the longer a
        # slow machine made the run) before it stops: hung only once it reports nothing new
        # for 60 s, or past the run's deadline
        reported, quiet_until = -1, time.monotonic() + 60
        while child.poll() is None:
            now = time.monotonic()
            if len(batches()) != reported:
                reported, quiet_until = len(batches()), now + 60
            if now > min(quiet_until, give_up + 60):
                child.kill()
                child.wait()
                hung = f"the capture worker did not stop (it reported {batches()[-3:]})"
                break
            time.sleep(0.05)
    if writer.error is not None:
        rep.failures.append(f"writer: {writer.error!r}")
    if child.returncode not in (0, None) and not hung:
        rep.failures.append(f"last capture worker exited with {child.returncode}")
    if staging in ("buffered", "apply", "apply-spill"):      # the last worker consumed everything
        from tests.streams.capturekit import dequeue_all
        final = check(writer.log, dequeue_all(env.conn, None, "OUT_Q"))
        if hung:
            not_caught_up(final, writer.log, hung)
    else:
        env.process().catch_up(timeout=120)      # whatever the last one left
        final = check(writer.log, env.dequeue_all())
    final.kills, final.failures = rep.kills, rep.failures + final.failures
    return final


if __name__ == "__main__":
    worker(*sys.argv[1:])
