"""The kill -9 harness: producer and consumer processes on one queue, a controller that
SIGKILLs a random one every 0.5-2 s and starts it again, and a checker that proves from
the workers' logs that every committed message was consumed exactly once.

The kill schedule is counted in the fleet's progress (tests/killschedule.py): the first
interval starts once every worker has opened the queue (a ``.ready`` marker beside its
log) and producers and consumers have committed; each kill waits, after its 0.5-2 s,
until every worker is up again and both roles have committed since the previous kill.
A fleet that makes no progress by the run's deadline ends the run as a failure that says
so (``worker_failures``), never as a run with fewer kills.

Used by ``tests/aq/test_crash.py`` (a short run on every backend) and ``bench/soak.py``
(a long one).  Run as a script, this file is one worker process::

    python crashharness.py produce|consume DSN NAME INCARNATION LOGDIR SEED

What the workers log.  Each worker incarnation appends to a log file of its own
(``LOGDIR/<name>.<incarnation>.log``) with one ``write()`` per record on an ``O_APPEND``
descriptor: what a process wrote survives its SIGKILL (the data is in the kernel; this
harness kills processes, not the machine).  A record is written *before* the call it
announces and a second one after the call returned, so a kill between the two leaves the
announcing record as the log's last line and the checker knows exactly which messages
were in flight:

* producer, per transaction: ``E p1 p2 …`` (about to enqueue and commit these), then
  ``C`` once ``commit()`` returned.  Payloads are ``<name>.<incarnation>.<txn>.<i>``:
  unique, and they tell the checker who enqueued them in which transaction;
* consumer, per transaction: ``D p1/a1 p2/a2 …`` (dequeued these, ``a`` = attempts),
  then ``c`` + ``C`` around ``commit()`` or ``r`` + ``R`` around ``rollback()``;
* ``END`` when the worker stopped by itself (the stop file).

What the checker proves (:func:`check`):

* no message consumed twice (a duplicate is always a failure);
* every message a producer logged as committed was consumed — except the messages of a
  consumer transaction that was being committed when its consumer was killed (``D … c``
  as the log's end): their commit may have happened without its ``C``;
* every consumed message was enqueued by a transaction logged as committed — except the
  one transaction a killed producer was committing (``E …`` as the log's end);
* each of those in-doubt transactions is all or nothing (a torn transaction is a failure),
  so at most one transaction per kill of that role is excused, and the counts are reported;
* messages held by a consumer killed before it committed (``D`` or ``D … r`` at the end)
  come back and are consumed by another;
* a message's ``attempts`` when finally consumed equals the rollbacks logged for it; a
  rollback cut short by the kill may count or not; a kill of a consumer holding it never
  counts (seed 003, "Retries with Delays").
"""

from __future__ import annotations

import collections
import dataclasses
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from typing import Callable

QUEUE = "Q"
MAX_RETRIES = 1_000_000          # rollbacks never move a message to the exception queue
BACKLOG = 2_000                  # producers pause while the queue holds more than this


# -- the workers ------------------------------------------------------------------

class _Log:
    """One worker incarnation's log: a record per line, one write() each."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, record: str) -> None:
        os.write(self.fd, (record + "\n").encode())


def _ready(logdir: str, name: str, incarnation: str) -> None:
    """Tell the controller this incarnation is up (imported, connected, the queue open):
    a marker beside the log, which the checker does not read."""
    open(os.path.join(logdir, f"{name}.{incarnation}.ready"), "w").close()


def produce(dsn: str, name: str, incarnation: str, logdir: str, seed: str) -> None:
    import sluice
    rng = random.Random(seed)
    log = _Log(os.path.join(logdir, f"{name}.{incarnation}.log"))
    stop = os.path.join(logdir, "STOP")
    conn = sluice.connect(dsn)
    q = conn.queue(QUEUE)
    _ready(logdir, name, incarnation)
    txn = 0
    while not os.path.exists(stop):
        if txn % 20 == 0:                      # keep pace with the consumers
            while conn.query(f"SELECT COUNT(*) FROM AQ${QUEUE}_QT", None)[1][0][0] > BACKLOG \
                    and not os.path.exists(stop):
                time.sleep(0.05)
        payloads = [f"{name}.{incarnation}.{txn}.{i}" for i in range(rng.randint(1, 5))]
        log.write("E " + " ".join(payloads))
        q.enqmany([conn.msgproperties(payload=p.encode()) for p in payloads])
        conn.commit()
        log.write("C")
        txn += 1
    conn.close()
    log.write("END")


def consume(dsn: str, name: str, incarnation: str, logdir: str, seed: str,
            p_rollback: float = 0.05, p_hold: float = 0.1) -> None:
    import sluice
    rng = random.Random(seed)
    log = _Log(os.path.join(logdir, f"{name}.{incarnation}.log"))
    stop = os.path.join(logdir, "STOP")
    conn = sluice.connect(dsn)
    q = conn.queue(QUEUE)
    q.deqoptions.wait = 1
    _ready(logdir, name, incarnation)
    while True:
        msgs = q.deqmany(rng.randint(1, 10))
        if not msgs:
            if os.path.exists(stop):
                break
            continue
        log.write("D " + " ".join(f"{m.payload.decode()}/{m.attempts}" for m in msgs))
        if rng.random() < p_hold:
            time.sleep(rng.random() * 0.01)    # an application at work: kills land here too
        if rng.random() < p_rollback:
            log.write("r")
            conn.rollback()
            log.write("R")
        else:
            log.write("c")
            conn.commit()
            log.write("C")
    conn.close()
    log.write("END")


# -- the checker ------------------------------------------------------------------

@dataclasses.dataclass
class Report:
    """What a run did and what the checker found; :attr:`ok` when nothing is wrong."""

    produced: int = 0                  # messages whose producer logged the commit
    consumed: int = 0                  # messages whose consumer logged the commit
    drained: int = 0                   # left in the queue at the end, taken by the checker
    seconds: float = 0.0               # from the first worker's start to the end of the drain
    kills: dict = dataclasses.field(default_factory=lambda: {"producer": 0, "consumer": 0})
    # transactions (messages) a kill left in doubt, per role, and how they ended
    in_doubt: dict = dataclasses.field(default_factory=lambda: {"producer": 0, "consumer": 0})
    hidden: dict = dataclasses.field(default_factory=lambda: {"producer": 0, "consumer": 0})
    came_back: int = 0                 # held by a killed consumer, consumed by another
    rollbacks: int = 0                 # rollbacks logged by consumers
    # failures
    duplicated: list = dataclasses.field(default_factory=list)
    lost: list = dataclasses.field(default_factory=list)
    phantom: list = dataclasses.field(default_factory=list)   # consumed, never committed
    torn: list = dataclasses.field(default_factory=list)      # an in-doubt transaction half done
    wrong_attempts: list = dataclasses.field(default_factory=list)
    malformed: list = dataclasses.field(default_factory=list)
    worker_failures: list = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.duplicated or self.lost or self.phantom or self.torn
                    or self.wrong_attempts or self.malformed or self.worker_failures)

    @property
    def rate(self) -> float:
        """Messages consumed per second over the whole run."""
        return (self.consumed + self.drained) / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        return (f"lost={len(self.lost)} duplicated={len(self.duplicated)} "
                f"kills={self.kills['producer'] + self.kills['consumer']} "
                f"(producers {self.kills['producer']}, consumers {self.kills['consumer']}) "
                f"msg/s={self.rate:,.0f} produced={self.produced} consumed={self.consumed} "
                f"drained={self.drained} in-doubt txns producer={self.in_doubt['producer']} "
                f"consumer={self.in_doubt['consumer']}, of which committed (messages hidden "
                f"from the logs) producer={self.hidden['producer']} consumer={self.hidden['consumer']} "
                f"came-back={self.came_back} rollbacks={self.rollbacks} "
                f"phantom={len(self.phantom)} torn={len(self.torn)} "
                f"wrong-attempts={len(self.wrong_attempts)} malformed={len(self.malformed)} "
                f"worker-failures={len(self.worker_failures)}")


@dataclasses.dataclass
class _Txn:
    payloads: list           # consumer: (payload, attempts)
    end: str                 # "C"/"R" completed; "E"/"D"/"c"/"r" the record a kill cut after


def _read_log(path: str) -> tuple[list[_Txn], bool, list[str]]:
    """A log's transactions, whether it ends with END, and what is malformed in it."""
    txns: list[_Txn] = []
    ended, bad = False, []
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        bad.append(f"{path}: last line cut: {lines[-1]!r}")   # a write() is never cut
    for n, line in enumerate(lines, 1):
        kind, _, rest = line.partition(" ")
        last = txns[-1] if txns else None
        open_ = last is not None and last.end not in ("C", "R")
        if kind in ("E", "D"):
            if open_ or ended:
                bad.append(f"{path}:{n}: {kind} while a transaction is open")
            items = rest.split()
            if kind == "D":
                items = [(p, int(a)) for p, a in (i.rsplit("/", 1) for i in items)]
            txns.append(_Txn(items, kind))
        elif kind in ("c", "r") and open_ and last.end == "D":
            last.end = kind
        elif kind == "C" and open_ and last.end in ("E", "c"):
            last.end = "C"
        elif kind == "R" and open_ and last.end == "r":
            last.end = "R"
        elif kind == "END" and not open_ and not ended:
            ended = True
        else:
            bad.append(f"{path}:{n}: unexpected {line!r}")
    return txns, ended, bad


def _resolve_consumers_in_doubt(rep: Report, in_doubt: list[list[str]], consumed: collections.Counter) -> None:
    """Each consumer transaction a kill cut short while committing either committed (its
    messages gone: consumed by it, "hidden") or not (every one of them came back and was
    consumed later); anything else is a torn transaction.  Decided by what must be, until
    nothing changes -- not in log order: a message that came back from one of them may sit
    in another in-doubt transaction (a consumer killed committing, its messages taken by a
    second consumer also killed committing, whose commit went through), consumed only once
    that one is decided:

    * one of its messages consumed by a committed transaction: it did not commit;
    * one of its messages in no committed transaction and in no other in-doubt transaction
      that may have committed: it committed (else that message would be lost).
    A transaction that did not commit and has a message nobody consumed is torn."""
    committed: dict[int, bool | None] = {i: None for i in range(len(in_doubt))}
    rep.in_doubt["consumer"] += len(in_doubt)
    changed = True
    while changed:
        changed = False
        for i, payloads in enumerate(in_doubt):
            if committed[i] is not None:
                continue
            if any(p in consumed for p in payloads):
                committed[i], changed = False, True
            elif any(not any(p in in_doubt[j] for j, c in committed.items() if j != i and c is not False)
                     for p in payloads):
                committed[i], changed = True, True
                rep.hidden["consumer"] += len(payloads)
                consumed.update(payloads)           # consumed by the killed consumer
    for i, payloads in enumerate(in_doubt):
        if committed[i] is None:                    # every message also in another undecided one
            rep.hidden["consumer"] += len(payloads)
            consumed.update(p for p in payloads if p not in consumed)
        elif committed[i] is False and not all(p in consumed for p in payloads):
            rep.torn.append(("consumer", payloads))


def check(logdir: str, killed: set[str], drained: list[str]) -> Report:
    """Read every log in ``logdir`` and prove exactly-once.  ``killed``: the log names
    (``<name>.<incarnation>``) of the incarnations the controller killed; ``drained``:
    payloads the checker itself took from the queue after the workers stopped."""
    rep = Report()
    produced: set[str] = set()
    produced_in_doubt: list[list[str]] = []
    consumed = collections.Counter()
    final_attempts: dict[str, int] = {}
    rolled_back = collections.Counter()          # completed rollbacks per payload
    maybe_rolled_back = collections.Counter()    # rollbacks a kill cut short
    consumer_in_doubt: list[list[str]] = []      # commits a kill cut short
    held: set[str] = set()                       # held by a consumer killed before committing
    for fname in sorted(os.listdir(logdir)):
        if not fname.endswith(".log"):
            continue
        tag = fname[:-4]
        role = "producer" if tag.startswith("P") else "consumer"
        txns, ended, bad = _read_log(os.path.join(logdir, fname))
        rep.malformed += bad
        was_killed = tag in killed
        if not was_killed and not ended:
            rep.malformed.append(f"{fname}: neither killed nor ended")
        for i, t in enumerate(txns):
            cut = t.end not in ("C", "R")
            if cut and (i != len(txns) - 1 or not was_killed):
                rep.malformed.append(f"{fname}: transaction {i} not finished")
                continue
            if role == "producer":
                if cut:
                    produced_in_doubt.append(t.payloads)
                else:
                    produced.update(t.payloads)
                continue
            payloads = [p for p, _ in t.payloads]
            if t.end == "C":
                consumed.update(payloads)
                final_attempts.update(t.payloads)
            elif t.end == "R":
                rolled_back.update(payloads)
                rep.rollbacks += 1
            elif t.end == "c":
                consumer_in_doubt.append(payloads)
            else:                               # "D" killed holding, "r" killed rolling back
                held.update(payloads)
                if t.end == "r":
                    maybe_rolled_back.update(payloads)
    consumed.update(drained)
    rep.produced, rep.consumed, rep.drained = len(produced), sum(consumed.values()) - len(drained), len(drained)
    rep.duplicated = sorted(p for p, n in consumed.items() if n > 1)
    _resolve_consumers_in_doubt(rep, consumer_in_doubt, consumed)
    for payloads in produced_in_doubt:          # committed (consumed) or not (never seen)
        rep.in_doubt["producer"] += 1
        seen = [p for p in payloads if p in consumed]
        if seen and len(seen) != len(payloads):
            rep.torn.append(("producer", payloads))    # committed: the others are lost
        elif seen:
            rep.hidden["producer"] += len(payloads)
        if seen:
            produced.update(payloads)
    rep.lost = sorted(produced - set(consumed))
    rep.phantom = sorted(set(consumed) - produced)
    rep.came_back = len(held & set(consumed))
    for p, a in final_attempts.items():
        if not rolled_back[p] <= a <= rolled_back[p] + maybe_rolled_back[p]:
            rep.wrong_attempts.append((p, a, rolled_back[p], maybe_rolled_back[p]))
    return rep


# -- the controller ---------------------------------------------------------------

def create_queue(dsn: str) -> None:
    import sluice
    with sluice.connect(dsn) as conn:
        conn.aqadm.create_queue_table(queue_table=f"{QUEUE}_QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name=QUEUE, queue_table=f"{QUEUE}_QT", max_retries=MAX_RETRIES)
        conn.aqadm.start_queue(queue_name=QUEUE)


def _drain(dsn: str) -> tuple[list[str], int]:
    """Take what the workers left in the queue; also count what stays in the queue table
    (the exception queue included) afterwards, which should be nothing."""
    import sluice
    with sluice.connect(dsn) as conn:
        q = conn.queue(QUEUE)
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        got: list[str] = []
        while True:
            msgs = q.deqmany(100)
            if not msgs:
                break
            got += [m.payload.decode() for m in msgs]
            conn.commit()
        left = conn.query(f"SELECT COUNT(*) FROM AQ${QUEUE}_QT", None)[1][0][0]
    return got, left


class _Worker:
    def __init__(self, role: str, name: str, dsn: str, logdir: str, rng: random.Random, server) -> None:
        self.role, self.name, self.dsn, self.logdir, self.rng = role, name, dsn, logdir, rng
        self.server = server                   # tests/forkserver.py: forks the incarnations
        self.incarnation = -1
        self.proc = None                       # a forkserver.Child (a Popen's poll/wait/kill)

    @property
    def tag(self) -> str:
        return f"{self.name}.{self.incarnation}"

    def start(self) -> None:
        self.incarnation += 1
        self._offset, self._rest, self._commits = 0, b"", 0     # this incarnation's log
        self.proc = self.server.spawn(
            "tests.crashharness:main", [self.role, self.dsn, self.name, str(self.incarnation), self.logdir,
                                        str(self.rng.randrange(2**32))], os.path.join(self.logdir, f"{self.tag}.err"))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    @property
    def ready(self) -> bool:
        """This incarnation has opened the queue (its marker is there)."""
        return os.path.exists(os.path.join(self.logdir, f"{self.tag}.ready"))

    def commits(self) -> int:
        """The commits this incarnation logged so far (``C`` records), read from where the
        last call stopped: the controller counts progress without re-reading whole logs."""
        try:
            with open(os.path.join(self.logdir, f"{self.tag}.log"), "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return 0
        self._offset += len(data)
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()               # a record still being written
        self._commits += lines.count(b"C")
        return self._commits

    def failure(self) -> str | None:
        """Why this incarnation exited by itself with an error (its stderr), or None."""
        rc = self.proc.poll()
        if rc in (None, 0):
            return None
        with open(os.path.join(self.logdir, f"{self.tag}.err"), errors="replace") as f:
            return f"{self.tag} exited with {rc}: {f.read()[-2000:]}"


def run(dsn: str, logdir: str, seconds: float, producers: int = 2, consumers: int = 2,
        seed: int | None = None, kill_every: tuple[float, float] = (0.5, 2.0),
        stop_timeout: float = 60.0, progress: Callable[[str], None] | None = None,
        deadline: float | None = None) -> Report:
    """Create queue ``Q`` on ``dsn``, run the workers for ``seconds`` while killing a random
    one every ``kill_every`` seconds (and starting it again), then stop them: producers at
    once, consumers when the queue is empty.  The intervals count only once the fleet runs,
    and a kill waits for progress since the previous one (the module's docstring); if the
    fleet has not made it by ``deadline`` seconds after the start (default ``120 + 10 *
    seconds``) the run stops there, a failure.  A worker that has not stopped
    ``stop_timeout`` seconds later counts as hung (a failure).  Returns the checker's report."""
    from tests import forkserver
    return _run(dsn, logdir, seconds, producers, consumers, seed, kill_every, stop_timeout, progress,
                deadline, forkserver.shared(*forkserver.FLEETS))


def _run(dsn, logdir, seconds, producers, consumers, seed, kill_every, stop_timeout, progress, deadline,
         server) -> Report:
    from tests import killschedule
    rng = random.Random(seed)
    os.makedirs(logdir, exist_ok=True)
    create_queue(dsn)
    workers = [_Worker("produce", f"P{i}", dsn, logdir, rng, server) for i in range(producers)] + \
              [_Worker("consume", f"C{i}", dsn, logdir, rng, server) for i in range(consumers)]
    killed: set[str] = set()
    rep_kills = {"producer": 0, "consumer": 0}
    failures: list[str] = []
    started = time.monotonic()
    give_up = started + (120 + 10 * seconds if deadline is None else deadline)
    pauses, tail = killschedule.intervals(rng, seconds, kill_every)
    committed = {"producer": 0, "consumer": 0}     # by the incarnations killed so far

    def commits() -> dict[str, int]:
        now = dict(committed)
        for w in workers:
            now[w.role + "r"] += w.commits()
        return now

    def reap() -> None:
        for w in workers:                      # a worker must never die by itself
            why = w.failure()
            if why is not None:
                failures.append(why)
                committed[w.role + "r"] += w.commits()
                w.start()

    def running(since: dict[str, int], what: str) -> None:
        """Wait until every worker is up and both roles committed after ``since``."""
        def state() -> str:
            now = commits()
            return (f"{give_up - started:.0f} s after the start, commits since: producers "
                    f"{now['producer'] - since['producer']}, consumers {now['consumer'] - since['consumer']}; "
                    f"not up: {[w.tag for w in workers if not w.ready] or 'none'} (their .err files)")
        killschedule.await_progress(
            lambda: all(w.ready for w in workers) and all(n > since[r] for r, n in commits().items()),
            give_up, what, state, tick=reap)

    try:
        for w in workers:
            w.start()
        try:
            last = commits()
            running(last, "before the first kill (its first commits)")
            if progress:
                progress(f"{time.monotonic() - started:6.1f}s the fleet runs")
            for n, pause in enumerate(pauses, 1):
                time.sleep(pause)
                running(last, f"between kill {n - 1} and kill {n}")
                victim = rng.choice(workers)
                if victim.proc.poll() is not None:     # died by itself just now: a failure
                    reap()
                    continue
                victim.kill()
                killed.add(victim.tag)
                committed[victim.role + "r"] += victim.commits()
                rep_kills["producer" if victim.role == "produce" else "consumer"] += 1
                victim.start()
                last = commits()                       # the new incarnation has none yet
                if progress:
                    progress(f"{time.monotonic() - started:6.1f}s killed {victim.role}r {victim.name}")
            time.sleep(tail)
            running(last, f"after the last kill ({len(pauses)})")
        except killschedule.Stalled as e:
            failures.append(str(e))
        open(os.path.join(logdir, "STOP"), "w").close()
        for group in (workers[:producers], workers[producers:]):
            stop_by = time.monotonic() + stop_timeout
            for w in group:
                try:
                    w.proc.wait(max(0.1, stop_by - time.monotonic()))
                except subprocess.TimeoutExpired:
                    failures.append(f"{w.tag} did not stop within {stop_timeout:.0f} s (hung)")
                    w.kill()
                    killed.add(w.tag)
                why = w.failure()
                if why is not None:
                    failures.append(why)
    finally:
        for w in workers:
            if w.proc is not None and w.proc.poll() is None:
                w.kill()
    drained, left = _drain(dsn)
    rep = check(logdir, killed, drained)
    rep.seconds = time.monotonic() - started
    rep.kills = rep_kills
    rep.worker_failures += failures
    if left:
        rep.worker_failures.append(f"{left} messages stayed in the queue table after the drain")
    return rep


def fresh_dsn(dsn: str) -> tuple[str, Callable[[], None]]:
    """For PostgreSQL without ``schema=``: a new schema of its own, and a function dropping it."""
    if not dsn.startswith(("postgresql:", "postgres:")) or "schema=" in dsn:
        return dsn, lambda: None
    schema = "soak_" + uuid.uuid4().hex[:10]

    def drop() -> None:
        import psycopg
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}", drop


def main(role: str, *args: str) -> None:
    """One worker (forked by tests/forkserver.py, or this file run as a script)."""
    # a slow machine's start-up, for the harness's own tests (tests/aq/test_crash.py)
    time.sleep(float(os.environ.get("SLUICE_CRASH_WORKER_DELAY", "0")))
    {"produce": produce, "consume": consume}[role](*args)


if __name__ == "__main__":
    main(*sys.argv[1:])
