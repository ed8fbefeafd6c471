"""Message locks for the SQLite backend: "skip locked" across threads and processes.

SQLite has one writer at a time and no row locks, so a dequeued-but-uncommitted
message cannot be locked inside the database without holding the whole file
for the length of the application's transaction.  Sluice instead locks a
message outside the data:

* inside a process, a table ``(queue table id, seq) -> session``;
* across processes, a POSIX record lock on one byte of a side file
  (``<db>.lck``) at offset ``queue table id << 40 | seq``.

POSIX record locks disappear when the owning process dies — exactly Oracle's
behaviour for a killed session: the message becomes available again and the
failed attempt is not counted as a retry (seed 003, "Retries with Delays").
Because POSIX locks belong to the process, not the file descriptor, the side
file is opened once per process and never closed while locks may exist.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import mmap
import os
import struct
import threading

_OFFSET_BITS = 40
# SEQ numbers from here up to 2**40 are given by SQL triggers (a synchronous capture's,
# sluice.streams.capture.syncsqlite), which cannot reach the counter below: the counter
# stays under this base and never hands out theirs
TRIGGER_SEQ_BASE = 1 << 39
# message groups (TRANSACTIONAL queue tables) are locked like messages, in queue-table
# ids of their own: the table's id with this bit, and a 40-bit hash of the group
GROUP_LOCK_SPACE = 1 << 20


def group_key(transaction_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(transaction_id.encode(), digest_size=5).digest(), "big")
# one byte past every message lock: each process holds a shared lock on it while
# the database is open, so a process can tell whether it is alone
_PRESENCE = (1 << 62)
_COUNTER_LOCK = _PRESENCE + 1
_PAGE = 4096
_CATALOG_SLOT, _CHANGE_SLOT, _CONSUME_SLOT, _SEQ_SLOT, _COMMITTING_SLOT, _ANNOUNCED_SLOT = 0, 8, 16, 24, 32, 40


class MessageLocks:
    """Locks for one database file, shared by every session of this process."""

    def __init__(self, path: str | None) -> None:
        self._owners: dict[tuple[int, int], object] = {}
        self._consuming = _Consuming(self)
        self._mutex = threading.Lock()
        self._fd: int | None = None
        if path is not None:
            self._fd = fd = os.open(path + ".lck", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                self._open_page(fd)
            except BaseException:
                os.close(fd)
                raise
        else:
            self._page = mmap.mmap(-1, _PAGE)  # a private page: only this process

    def _open_page(self, fd: int) -> None:
        """Hold the presence lock and map the side file's first page of counters."""
        try:   # alone (nobody else holds the presence lock): no commit is under way
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _PRESENCE)
            alone = True
        except OSError:
            fcntl.lockf(fd, fcntl.LOCK_SH, 1, _PRESENCE)
            alone = False
        if os.fstat(fd).st_size < _PAGE:
            os.ftruncate(fd, _PAGE)
        _allocate(fd)
        self._page = mmap.mmap(fd, _PAGE)
        if alone:   # forget the commits of processes killed inside one (see begin_consume)
            struct.pack_into("<Q", self._page, _COMMITTING_SLOT, 0)
            fcntl.lockf(fd, fcntl.LOCK_SH, 1, _PRESENCE)   # back to shared

    # -- counters shared by every process through the side file's first page --
    # The catalog version tells every process's caches that queues or queue tables
    # changed; the change counter grows with every commit that may make messages
    # available, so a waiting dequeuer can watch it instead of querying the database.
    def catalog_version(self) -> int:
        return struct.unpack_from("<Q", self._page, _CATALOG_SLOT)[0]

    def bump_catalog_version(self, announced: int) -> None:
        """Tell every process's caches the catalog changed: it is at ``announced`` now (the
        database's own catalog version, committed before this call)."""
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, _COUNTER_LOCK)
        try:
            struct.pack_into("<Q", self._page, _CATALOG_SLOT, self.catalog_version() + 1)
            struct.pack_into("<Q", self._page, _ANNOUNCED_SLOT, announced)
        finally:
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _COUNTER_LOCK)

    def catalog_announced(self) -> int:
        """The database's catalog version the last bump announced (0 in a new side file)."""
        return struct.unpack_from("<Q", self._page, _ANNOUNCED_SLOT)[0]

    def change_count(self) -> int:
        return struct.unpack_from("<Q", self._page, _CHANGE_SLOT)[0]

    def consume_count(self) -> int:
        """Grows whenever a commit consumes, moves or re-schedules existing messages
        (bumped before their locks are released): a dequeuer that saw no change between
        its read and its lock knows the rows it locked are still there."""
        return struct.unpack_from("<Q", self._page, _CONSUME_SLOT)[0]

    def begin_consume(self) -> None:
        """A write transaction that consumes, moves or re-schedules messages (held by this
        process, or not locked at all) is about to COMMIT; call :meth:`end_consume` after
        its end, whatever the outcome, and before releasing the messages' locks.

        Between the two, dequeuers re-check what they lock (:meth:`consumed_since`).  A
        process killed between its COMMIT and :meth:`end_consume` loses its locks without
        a bump of the consume count: a dequeuer that read a consumed message as a candidate
        before that COMMIT could then lock it and deliver it again.  Its unfinished
        ``begin_consume`` stays counted instead, so every dequeuer keeps re-checking —
        correct, a little slower — until a process opens the database alone."""
        self._add(_COMMITTING_SLOT, 1)

    def end_consume(self) -> None:
        """The transaction :meth:`begin_consume` announced has ended: bump the consume count
        (atomic across processes: a lost update here would let a dequeuer that read the
        count before this commit skip its re-check and deliver a consumed message again)."""
        self._add(_CONSUME_SLOT, 1, _COMMITTING_SLOT)

    def consuming(self, active: bool = True) -> "_Consuming | contextlib.nullcontext":
        """:meth:`begin_consume` … :meth:`end_consume` around a ``with`` block (a no-op
        unless ``active``)."""
        return self._consuming if active else _NO_CONSUME

    def consumed_since(self, epoch: int) -> bool:
        """True if the messages a dequeuer locked must be re-checked: the consume count is
        no longer ``epoch`` (read before its candidates), or a consuming commit is under way
        or was cut short by a kill."""
        return (self.consume_count() != epoch
                or struct.unpack_from("<Q", self._page, _COMMITTING_SLOT)[0] != 0)

    def _add(self, slot: int, delta: int, ended: int | None = None) -> None:
        """``slot`` += ``delta`` (and the ``ended`` slot -= 1, not below 0) as one update."""
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, _COUNTER_LOCK)
        try:
            page = self._page
            struct.pack_into("<Q", page, slot,
                             (struct.unpack_from("<Q", page, slot)[0] + delta) & (2**64 - 1))
            if ended is not None:
                struct.pack_into("<Q", page, ended, max(0, struct.unpack_from("<Q", page, ended)[0] - 1))
        finally:
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _COUNTER_LOCK)

    def bump_change_count(self) -> None:
        # not atomic across processes on purpose: a lost update still changes the value,
        # and waiters also re-check on a bounded timer
        struct.pack_into("<Q", self._page, _CHANGE_SLOT, (self.change_count() + 1) & (2**64 - 1))

    def allocate_seqs(self, count: int) -> int:
        """The first of ``count`` new message sequence numbers, never handed out before.

        Locks are keyed by SEQ, so a SEQ must never come back: SQLite's own rowid gives a
        deleted last row's number to the next insert, and a session still holding the
        deleted message's lock (between its commit and its unlock) would make another
        dequeuer skip the new message, which then arrives out of order.  One counter for
        every queue table of the database, raised past existing rows when the database
        opens (:meth:`raise_seq_floor`)."""
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, _COUNTER_LOCK)
        try:
            first = struct.unpack_from("<Q", self._page, _SEQ_SLOT)[0] + 1
            struct.pack_into("<Q", self._page, _SEQ_SLOT, first + count - 1)
        finally:
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _COUNTER_LOCK)
        return first

    def raise_seq_floor(self, highest: int) -> None:
        """Make sure numbers handed out from now on are above ``highest`` (a SEQ in use)."""
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, _COUNTER_LOCK)
        try:
            if struct.unpack_from("<Q", self._page, _SEQ_SLOT)[0] < highest:
                struct.pack_into("<Q", self._page, _SEQ_SLOT, highest)
        finally:
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _COUNTER_LOCK)

    def others_present(self) -> bool:
        """True if another process has the database open (holds its presence lock)."""
        if self._fd is None:
            return False
        with self._mutex:
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _PRESENCE)
            except OSError:
                return True
            fcntl.lockf(self._fd, fcntl.LOCK_SH, 1, _PRESENCE)  # back to shared
            return False

    def try_lock(self, qt_id: int, seq: int, owner: object) -> bool:
        """Lock the message for ``owner``; False if another session holds it.
        Re-locking a message the owner already holds succeeds."""
        key = (qt_id, seq)
        with self._mutex:
            held = self._owners.get(key)
            if held is not None:
                return held is owner
            if self._fd is not None:
                try:
                    fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, (qt_id << _OFFSET_BITS) | seq)
                except OSError:
                    return False  # another process holds it
            self._owners[key] = owner
            return True

    def is_locked_by_other(self, qt_id: int, seq: int, owner: object) -> bool:
        """True if a session other than ``owner`` (in any process) holds the message."""
        key = (qt_id, seq)
        with self._mutex:
            held = self._owners.get(key)
            if held is not None:
                return held is not owner
            if self._fd is None:
                return False
            offset = (qt_id << _OFFSET_BITS) | seq
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
            except OSError:
                return True
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, offset)
            return False

    def table_in_use(self, qt_id: int) -> bool:
        """True if a session (of any process) holds a lock on a message or a message
        group of queue table ``qt_id``: what PostgreSQL's table lock tells DROP TABLE."""
        spaces = (qt_id, qt_id | GROUP_LOCK_SPACE)
        with self._mutex:   # (try_lock takes it too: no lock of this process comes meanwhile)
            if any(key[0] in spaces for key in self._owners):
                return True
            if self._fd is None:
                return False
            # this process holds nothing in these ranges: a lock over each tells whether
            # another process does, and unlocking it releases nothing of ours
            for space in spaces:
                try:
                    fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1 << _OFFSET_BITS, space << _OFFSET_BITS)
                except OSError:
                    return True
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1 << _OFFSET_BITS, space << _OFFSET_BITS)
            return False

    def unlock(self, qt_id: int, seq: int, owner: object) -> None:
        key = (qt_id, seq)
        with self._mutex:
            if self._owners.get(key) is not owner:
                return
            del self._owners[key]
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, (qt_id << _OFFSET_BITS) | seq)

    def unlock_many(self, keys: list[tuple[int, int]], owner: object) -> None:
        with self._mutex:
            for key in keys:
                if self._owners.get(key) is not owner:
                    continue
                del self._owners[key]
                if self._fd is not None:
                    fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, (key[0] << _OFFSET_BITS) | key[1])

    def close(self) -> None:
        with self._mutex:
            if self._fd is not None and not self._owners:
                self._page.close()
                os.close(self._fd)
                self._fd = None


def _allocate(fd: int) -> None:
    """Give the shared page its disk space now: a page of a sparse file gets it when first
    written through the map, and on a full disk that write is a SIGBUS, not an error."""
    try:
        os.posix_fallocate(fd, 0, _PAGE)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise


class _Consuming:
    """The context manager of :meth:`MessageLocks.consuming`."""

    __slots__ = ("locks",)

    def __init__(self, locks: MessageLocks) -> None:
        self.locks = locks

    def __enter__(self) -> None:
        self.locks.begin_consume()

    def __exit__(self, *exc: object) -> None:
        self.locks.end_consume()


_NO_CONSUME = contextlib.nullcontext()
