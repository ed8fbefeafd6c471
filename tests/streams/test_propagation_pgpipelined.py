"""Issue 14 §2: propagation to a PostgreSQL store with two batches in flight
(sites.StoreSite.post/answer, PgSession.send_commit/await_commit, job._pipelined).

The destination's last message of a batch — its rows, the COMMIT — is sent without
waiting, and the source dequeues the next batch meanwhile.  The tests watch the order of
those steps, and make a commit's outcome be lost after the destination committed (the
connection closed before the answer was read), first or later in the pipeline: nothing
is lost or duplicated."""

from __future__ import annotations

import time

import pytest

from sluice.store.pgsession import PgSession
from sluice.streams.propagation import job
from sluice.streams.propagation.runner import PropagationRunner

from ..conftest import make_queue
from .propkit import Sites, drain, enqueue, multi_queue, raises_ora, rows

BOUND = 60.0      # how long a test waits for the destination's server (a hang bound, not a timing)

# only a PostgreSQL destination's commit is sent without waiting (SQLite's is not)
pytestmark = pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def _setup(sites, n=25):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p1", "src", "dst", "dbs2", queue_to_queue=True)
    sent = [b"m%03d" % i for i in range(n)]
    if sent:
        enqueue(a, "SRC", sent)
    return a, b, sent


def _destination_schema(sites) -> str:
    return sites.dsn_of("dbs2").rpartition("schema=")[2]


def test_the_source_takes_the_next_batch_before_the_destination_commit_is_read(sites, monkeypatch):
    a, b, sent = _setup(sites)
    dest = _destination_schema(sites)
    steps: list[str] = []
    send, wait, take = PgSession.send_commit, PgSession.await_commit, job._take

    def send_commit(self):
        if self.store.target.schema == dest:
            steps.append("sent")
        return send(self)

    def await_commit(self):
        if self.store.target.schema == dest and self._sent is not None:
            steps.append("read")
        return wait(self)

    def spy_take(*args, **kw):
        taken = take(*args, **kw)
        steps.append("take" if taken is not None else "none")
        return taken

    monkeypatch.setattr(PgSession, "send_commit", send_commit)
    monkeypatch.setattr(PgSession, "await_commit", await_commit)
    monkeypatch.setattr(job, "_take", spy_take)
    assert PropagationRunner(a, batch_size=10).run_once(force=True) == 25
    # each batch's commit is sent, the next batch taken at the source, and only then is
    # the commit's outcome read
    assert steps == ["take", "sent", "take", "read", "sent", "take", "read", "sent", "none", "read"]
    assert sorted(m.payload for m in drain(b, "DST")) == sent
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]


def _lose_answer(monkeypatch, sites, b, which: int) -> list[int]:
    """The ``which``-th commit sent to the destination (batches of 10) commits there, and its answer is
    lost: the connection closes before it is read (ORA-03113, the outcome unknown)."""
    dest = _destination_schema(sites)
    wait = PgSession.await_commit
    seen = [0]

    def await_commit(self):
        if self.store.target.schema == dest and self._sent is not None:
            seen[0] += 1
            if seen[0] == which:
                deadline = time.monotonic() + BOUND
                while len(drain_count(b)) < 10 * which and time.monotonic() < deadline:
                    time.sleep(0.01)      # the server commits without being read
                self._raw.close()
        return wait(self)

    monkeypatch.setattr(PgSession, "await_commit", await_commit)
    return seen


def drain_count(b):
    return rows(b, "SELECT MSG_ID FROM AQ$DST_QT")


def test_a_later_commit_whose_answer_is_lost_is_sent_again_and_skipped(sites, monkeypatch):
    """Batches 1 and 2 answered; the destination committed batch 3 but its outcome is
    lost while batch 4 is taken: 3 is sent again as a resend (its messages skipped there),
    4 goes back to the source and comes again in the same run — each message once."""
    a, b, sent = _setup(sites, n=35)
    seen = _lose_answer(monkeypatch, sites, b, 3)
    runner = PropagationRunner(a, batch_size=10)
    try:
        assert runner.run_once(force=True) == 35
    finally:
        runner.close()
    assert seen[0] >= 3
    assert sorted(m.payload for m in drain(b, "DST")) == sent      # 0 lost, 0 duplicated
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(35, 0)]
    assert rows(b, "SELECT TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [(35,)]


def test_a_first_commit_whose_answer_is_lost_fails_the_run_and_the_retry_duplicates_nothing(
        sites, monkeypatch):
    """The destination committed the first batch, its outcome is lost while the second is
    taken: the run fails with nothing let go at the source (the second batch is not sent
    behind a failed one); after the back-off everything is sent again and the destination
    skips what it had."""
    a, b, sent = _setup(sites, n=35)
    _lose_answer(monkeypatch, sites, b, 1)
    now = [time.time()]
    runner = PropagationRunner(a, batch_size=10, clock=lambda: now[0])
    try:
        assert runner.run_once(force=True) == 0
        [(failures, error)] = rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
        assert failures == 1 and error.startswith("ORA-03113")
        assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(35,)]      # nothing let go
        assert len(drain_count(b)) == 10                                 # the first batch alone
        now[0] += 31                                                     # the back-off ends
        assert runner.run_once(force=True) == 35
    finally:
        runner.close()
    assert sorted(m.payload for m in drain(b, "DST")) == sent
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert rows(a, "SELECT FAILURES FROM DBA_QUEUE_SCHEDULES") == [(0,)]
    assert rows(b, "SELECT TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [(35,)]


def test_a_batch_posted_behind_a_refused_one_is_not_sent(sites):
    """A batch the destination refuses (its queue does not exist) is answered with the
    error; the one posted behind it is never sent, and the link goes on with the next
    batch, marked a resend."""
    from sluice.streams.propagation.links import resolve_link
    from sluice.streams.propagation.sites import StoreSite
    from sluice.streams.propagation.wire import Batch, Propagated
    a, b, _ = _setup(sites, n=0)
    link = resolve_link(a.context.store, "SLUICE", "DBS2")
    site = StoreSite(link, lambda dsn, user, password: type(a)(dsn, user=user, password=password))
    try:
        refused = site.post(Batch("DBS9", "X.SRC", [Propagated("SLUICE.NOPE", b"\x01" * 16, b"\x01" * 16,
                                                               "RAW", b"a")]))
        behind = site.post(Batch("DBS9", "X.SRC", [Propagated("SLUICE.DST", b"\x02" * 16, b"\x02" * 16,
                                                              "RAW", b"b")]))
        raises_ora(24010, site.answer, refused)
        assert site.in_flight_acked() == [] and not site.clean
        assert behind.error is not None and drain_count(b) == []
        again = site.post(Batch("DBS9", "X.SRC", [Propagated("SLUICE.DST", b"\x03" * 16, b"\x03" * 16,
                                                             "RAW", b"c")]))
        assert again.batch.resend
        site.answer(again)
    finally:
        site.close()
    assert [m.payload for m in drain(b, "DST")] == [b"c"]
