"""kill -9 of the apply host, with a checker (issue 15 §3): the queue holds many captured
source transactions; the apply process (CREATE_APPLY, START_APPLY) runs in a ``sluice run``
host — a child process — that applies them into a replica and is SIGKILLed at random
moments once it is applying (inside a target transaction, between the target commit and the
store commit, anywhere) and started again; at the end the replica must equal the source row
by row (0 lost) and a trigger's audit of the replica must hold each source change exactly
once (0 applied twice).  With ``combined`` the host runs the capture too, and the capture
hands the changes straight to the apply (combined capture and apply at one database,
:mod:`sluice.streams.capture.combinedlocal`): the kills then land inside the capture's
batches.  With ``combined="remote"`` the apply is at a second site (DBS2, through a
propagation) and the capture runs it there (:mod:`sluice.streams.capture.combinedremote`):
the kills land between the target's, DBS2's and the capture's commits.  Used by
``tests/streams/test_apply_crash.py``."""

from __future__ import annotations

import os
import pathlib
import random
import signal
import time
from dataclasses import dataclass, field



@dataclass
class Report:
    changes: int = 0          # row changes the source committed
    audited: int = 0          # row changes the replica's trigger saw applied
    kills: int = 0
    at_kills: list = field(default_factory=list)      # changes applied when each kill came
    differences: list = field(default_factory=list)
    errors: list = field(default_factory=list)       # DBA_APPLY_ERROR rows
    failures: list = field(default_factory=list)     # a worker that died by itself

    @property
    def ok(self) -> bool:
        return not (self.differences or self.errors or self.failures) and self.audited == self.changes


def source_workload(env, table: str, rng: random.Random, transactions: int) -> int:
    """Commit random transactions of 1-8 changes; the number of row changes."""
    rows: set[int] = set()
    next_id, changes = 1, 0
    for _ in range(transactions):
        stmts = []
        for _ in range(rng.randint(1, 8)):
            kind = rng.random()
            if kind < 0.5 or not rows:
                stmts.append(f"INSERT INTO {table} VALUES ({next_id}, 'i')")
                rows.add(next_id)
                next_id += 1
            elif kind < 0.8:
                stmts.append(f"UPDATE {table} SET v = v || 'u' WHERE id = {rng.choice(sorted(rows))}")
            else:
                victim = rng.choice(sorted(rows))
                rows.discard(victim)
                stmts.append(f"DELETE FROM {table} WHERE id = {victim}")
        env.sql(*stmts)
        changes += len(stmts)
    return changes


def audit_ddl(replica, table: str) -> list[str]:
    """A trigger recording every row change applied to ``table`` at the replica."""
    if replica.kind == "postgresql":
        return ["CREATE TABLE public.ledger_audit (op text, id int)",
                """CREATE FUNCTION public.ledger_audit() RETURNS trigger LANGUAGE plpgsql AS $$
                   BEGIN INSERT INTO public.ledger_audit VALUES (TG_OP, COALESCE(NEW.id, OLD.id));
                   RETURN NULL; END $$""",
                f"""CREATE TRIGGER ledger_audit AFTER INSERT OR UPDATE OR DELETE ON {table}
                    FOR EACH ROW EXECUTE FUNCTION public.ledger_audit()"""]
    return ["CREATE TABLE ledger_audit (op text, id int)",
            *(f"""CREATE TRIGGER ledger_{op.lower()} AFTER {op} ON {table}
                  BEGIN INSERT INTO ledger_audit VALUES ('{op}', {ref}.id); END"""
              for op, ref in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")))]


def audited(replica) -> int:
    return replica.scalar("SELECT COUNT(*) FROM " + (
        "public.ledger_audit" if replica.kind == "postgresql" else "ledger_audit"))


def run(env, replica, logdir: str, seconds: float, seed: int, transactions: int = 1200,
        kill_every: tuple[float, float] = (0.0, 0.15), min_kills: int = 2,
        combined: bool | str = False) -> Report:
    from tests.streams.propkit import Sites
    sites = Sites(env.dsn, pathlib.Path(logdir)) if combined == "remote" else None
    try:
        return _run(env, replica, logdir, seconds, seed, transactions, kill_every, min_kills, combined, sites)
    finally:
        if sites is not None:
            sites.close()


def _run(env, replica, logdir: str, seconds: float, seed: int, transactions: int,
         kill_every: tuple[float, float], min_kills: int, combined: bool | str, sites) -> Report:
    from sluice.streams.apply import ApplyProcess
    from sluice.streams.apply.compare import compare
    from sluice.streams.apply.procedures import ApplyProcedures
    from sluice.streams.apply.targetdsn import open_target
    from tests import killschedule
    from tests.conftest import PG_BASE
    from tests.streams.capturekit import CONSUMER
    import sluice

    rng = random.Random(seed)
    env.sql(f"CREATE TABLE {env.src}.ledger (id int PRIMARY KEY, v text)")
    if replica.kind == "postgresql":
        replica.sql(f"CREATE SCHEMA {env.src}")
    target_table = replica.table(env.owner, "LEDGER")
    replica.sql(f"CREATE TABLE {target_table} (id int PRIMARY KEY, v text)", *audit_ddl(replica, target_table))
    env.create_capture(rule_set_name=env.table_rule_set("RS", "ledger"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    site, site_dsn, queue = env.conn, env.dsn, "STRM_Q"     # where the apply is
    if sites is not None:     # DBS2: the apply's queue, fed by DBS1's only propagation
        site, site_dsn, queue = sites.open("dbs2"), sites.dsn_of("dbs2"), "STREAMS_QUEUE"
        site.streams_adm.set_up_queue(queue_table="STREAMS_QUEUE_TABLE", queue_name=queue)
        env.conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
        env.conn.cursor().execute(f"CREATE DATABASE LINK dbs2.net USING '{site_dsn}'")
        env.conn.propagation_adm.create_propagation(propagation_name="TO_DBS2", source_queue="STRM_Q",
                                                    destination_queue=queue, destination_dblink="dbs2.net")
    ApplyProcedures(site).set_schema_instantiation_scn(env.owner, env.pg.info.dbname, 0,
                                                       apply_database_link=replica.link)
    adm = site.apply_adm

    def create_apply() -> None:
        adm.create_apply(queue_name=queue, apply_name=CONSUMER, apply_database_link=replica.link,
                         apply_captured=True)
        adm.start_apply(CONSUMER)
    if combined:      # the host's capture hands every change to the apply (nothing staged)
        create_apply()
        rep = Report(changes=source_workload(env, f"{env.src}.ledger", rng, transactions))
    else:
        rep = Report(changes=source_workload(env, f"{env.src}.ledger", rng, transactions))
        cap = env.process()
        cap.catch_up(timeout=120)                     # the queue now holds every transaction
        cap.stop()
        env.conn.capture_adm.stop_capture(capture_name="CAP")     # the host runs the apply alone
        create_apply()
    from tests import forkserver
    server = forkserver.shared(*forkserver.FLEETS)

    def spawn() -> forkserver.Child:
        """``sluice --dsn DSN run``, forked from the preloaded parent (tests/forkserver.py)."""
        return server.spawn("tests.forkserver:cli", ["--dsn", env.dsn, "run"],
                            os.path.join(logdir, f"host.{rep.kills}.log"))

    end = time.monotonic() + seconds
    give_up = end + 120 + 9 * seconds
    # no host once everything is applied: one would only wait (30 s) for a change to apply.
    # A slow start-up makes the run longer, never emptier (tests/killschedule.py): a kill
    # waits until the new host applies, and the run goes on past its seconds until it has
    # had `min_kills`
    while (time.monotonic() < end or rep.kills < min_kills) and audited(replica) < rep.changes:
        child = spawn()
        before = audited(replica)
        try:                                       # it is applying now: kill it soon after
            killschedule.await_progress(
                lambda: child.poll() is not None or audited(replica) > before, give_up,
                f"before kill {rep.kills + 1} (the host applied nothing since its start)",
                lambda: f"{audited(replica)} of {rep.changes} changes applied (host.{rep.kills}.log)",
                step=0.02)
        except killschedule.Stalled as e:
            rep.failures.append(str(e))
            child.send_signal(signal.SIGKILL)
            child.wait()
            break
        time.sleep(rng.uniform(*kill_every))
        if child.poll() is not None:
            with open(os.path.join(logdir, f"host.{rep.kills}.log"), errors="replace") as f:
                rep.failures.append(f"the host exited with {child.returncode}: {f.read()[-3000:]}")
            break
        child.send_signal(signal.SIGKILL)
        child.wait()
        rep.kills += 1
        rep.at_kills.append(audited(replica))
    status = site.query("SELECT STATUS, ERROR_MESSAGE FROM DBA_APPLY", None)[1]
    if status[0][0] != "ENABLED":
        rep.failures.append(f"the apply process is {status[0]}")
    if combined:      # what the killed ones left, combined as before
        from sluice.streams.capture.combinedlocal import LocalCombined
        from sluice.streams.capture.combinedremote import RemoteCombined
        cap = env.process()
        cap.start()
        if not isinstance(cap.combined, RemoteCombined if combined == "remote" else LocalCombined):
            rep.failures.append("the capture is not combined with the apply")
        cap.catch_up(timeout=300)
        cap.stop()
        staged = env.conn.query("SELECT COUNT(*) FROM AQ$STRM_QT", None)[1][0][0]
        staged += site.query("SELECT COUNT(*) FROM AQ$STREAMS_QUEUE_TABLE", None)[1][0][0] if site is not env.conn else 0
        if staged:
            rep.failures.append(f"{staged} messages were staged")
    adm.stop_apply(CONSUMER)
    last = ApplyProcess.from_catalog(sluice.connect(site_dsn), CONSUMER)
    env.procs.append(last)
    last.drain(timeout=300)                        # what the killed ones left
    src, dst = open_target(PG_BASE, "", None, None), open_target(replica.link, "", None, None)
    try:
        rep.differences = compare(src, env.owner, "LEDGER", dst, env.owner, "LEDGER").differences
    finally:
        src.close()
        dst.close()
    rep.audited = audited(replica)
    rep.errors = site.query("SELECT ERROR_MESSAGE FROM DBA_APPLY_ERROR", None)[1]
    return rep

