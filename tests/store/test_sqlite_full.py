"""A full disk under an SQLite store (issue 11, item 5): enqueue fails with a clear ORA
error (ORA-01114, not a bare sqlite3 or OS error), committed messages stay intact and
dequeueable, and once space is freed enqueue works again.

Two ways to fill a disk, each run in a child process (so that a crash there, a SIGBUS from
a mapped file on a full file system say, fails the test instead of killing the run):

* ``tmpfs`` — a 4 MB tmpfs mounted for the test (root only; without the right to mount it
  falls back to ``rlimit``): writes fail with ENOSPC, SQLite reports SQLITE_FULL;
* ``rlimit`` — RLIMIT_FSIZE in the child: writes past 1 MB fail with EFBIG (SIGXFSZ
  ignored), SQLite reports an I/O error.  Raising the limit again frees the "space".

Run as a script, this file is that child: ``python test_sqlite_full.py MODE DIR``.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

PAYLOAD_SIZE = 20_000
FILE_SIZE_LIMIT = 1 << 20
# what the tmpfs holds besides the store, freed at the end: most of it, because consuming
# needs space too (the WAL grows until a checkpoint; Debian's SQLite overwrites deleted
# content, SQLITE_SECURE_DELETE)
BALLAST = 3 << 20


def payload(tag: str) -> bytes:
    return tag.encode().ljust(PAYLOAD_SIZE, b".")


def fill_then_free(directory: str, free_space, new_store_fails: bool) -> None:
    """The scenario, in the child process."""
    import sluice
    dsn = f"sqlite:///{directory}/q.db"
    conn = sluice.connect(dsn)
    conn.aqadm.create_queue_table(queue_table="Q_QT", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="Q", queue_table="Q_QT")
    conn.aqadm.start_queue(queue_name="Q")
    q = conn.queue("Q")
    committed: list[bytes] = []
    error = None
    for i in range(1000):                       # enqueue until the disk is full
        q.enqone(conn.msgproperties(payload=payload(f"m{i}")))
        try:
            conn.commit()
        except sluice.Error as e:
            error = e
            break
        committed.append(payload(f"m{i}"))
    assert error is not None, "the disk never filled"
    assert isinstance(error, sluice.OperationalError), repr(error)
    assert error.full_code == "ORA-01114", error
    assert str(error).startswith(f"ORA-01114: IO error writing block to file {directory}/q.db ("), error
    assert len(committed) > 10
    pending = payload(f"m{len(committed)}")    # the failed commit's transaction is still open:
    try:                                        # refused again, kept for a later commit
        conn.commit()
        raise AssertionError("a commit on the full disk succeeded")
    except sluice.OperationalError as e:
        assert e.full_code == "ORA-01114", e
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE    # an enqueue of its own: refused at once
    try:
        q.enqone(conn.msgproperties(payload=payload("immediate")))
        raise AssertionError("an IMMEDIATE enqueue on the full disk succeeded")
    except sluice.OperationalError as e:
        assert e.full_code == "ORA-01114", e
    q.enqoptions.visibility = sluice.ENQ_ON_COMMIT
    if new_store_fails:                         # a new store on the full disk: refused clearly
        try:
            sluice.connect(f"sqlite:///{directory}/new.db")
            raise AssertionError("a new store opened on the full disk")
        except sluice.OperationalError as e:
            assert e.full_code == "ORA-01114", e

    # committed messages are intact: another session sees exactly them, this one its own too
    other = sluice.connect(dsn)
    for c, expected in ((other, committed), (conn, committed + [pending])):
        b = c.queue("Q")
        b.deqoptions.mode = sluice.DEQ_BROWSE
        b.deqoptions.wait = sluice.DEQ_NO_WAIT
        assert [m.payload for m in b.deqmany(len(committed) + 10)] == expected
    # a dequeue on the full disk: committed, or refused clearly and rolled back (kept)
    oq = other.queue("Q")
    oq.deqoptions.wait = sluice.DEQ_NO_WAIT
    oq.deqoptions.navigation = sluice.DEQ_FIRST_MSG   # the browse moved the position
    assert oq.deqone().payload == committed[0]
    try:
        other.commit()
        committed.pop(0)
    except sluice.OperationalError as e:
        assert e.full_code == "ORA-01114", e
        other.rollback()

    free_space()
    conn.commit()                               # the transaction refused earlier, now through
    q.enqone(conn.msgproperties(payload=payload("after")))
    conn.commit()
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    got = [m.payload for m in q.deqmany(len(committed) + 10)]
    conn.commit()
    assert got == committed + [pending, payload("after")]
    assert conn.query("SELECT COUNT(*) FROM AQ$Q_QT", None)[1] == [(0,)]
    print("OK", len(committed), flush=True)


def _child(mode: str, directory: str) -> None:
    if mode == "tmpfs":
        ballast = os.path.join(directory, "ballast")
        with open(ballast, "wb") as f:           # freed later: the space a user would clear
            f.write(b"\0" * BALLAST)
        fill_then_free(directory, lambda: os.unlink(ballast), new_store_fails=True)
        return
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG instead of a signal
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, hard))
    fill_then_free(directory, lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard)),
                   new_store_fails=False)


def _mount_tmpfs(directory: str) -> bool:
    if os.geteuid() != 0:
        return False
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", directory],
                       capture_output=True, timeout=10)
    return r.returncode == 0


def _run_child(mode: str, directory: str) -> subprocess.CompletedProcess:
    from tests.aq.test_processes import _child_env
    return subprocess.run([sys.executable, os.path.abspath(__file__), mode, directory],
                          capture_output=True, text=True, timeout=120, env=_child_env())


def _check(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0 and r.stdout.startswith("OK"), \
        f"child exited {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}"


def test_full_disk_tmpfs(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = _mount_tmpfs(str(disk))
    try:
        _check(_run_child("tmpfs" if mounted else "rlimit", str(disk)))
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(disk)], timeout=10)


def test_full_disk_file_size_limit(tmp_path):
    _check(_run_child("rlimit", str(tmp_path)))


if __name__ == "__main__":
    _child(*sys.argv[1:])
