"""A capture's replication slot read as a stream (the walsender's logical replication
protocol) instead of one SQL call per batch.

Why: every ``pg_logical_slot_peek_changes`` and every ``pg_replication_slot_advance``
starts a new decoding session at the slot's *restart* LSN and decodes, then throws away,
all the WAL up to the confirmed position.  PostgreSQL moves the restart LSN only at a
running-transactions record that the slot has confirmed past (the background writer logs
one every 15 s), so each call re-decoded 15-30 s of the whole cluster's WAL — 200+ MB
behind a busy apply — and a capture that had just drained a backlog re-read the backlog
on every batch (issue 15: lag p50 ~20 s after 200,000 rows, 0.55 s after 50,000).
Oracle's capture mines the redo continuously; so does this: one decoding session
(``START_REPLICATION … LOGICAL``) reads each WAL record once.

The capture's protocol is unchanged (:class:`~.pgsource.Source` delegates): :meth:`peek`
gives whole transactions after the confirmed position from a local buffer, as often as
asked, until :meth:`advance` confirms them (a standby status update, acknowledged before
it returns, so ``pg_replication_slots`` shows the position at once).  Exactly once is the
capture's as before: a stream opened again starts at the slot's confirmed position.

**A large transaction** comes in parts when the caller says how many of its rows it may
hold (``hold``: the capture's TXN_LCR_SPILL_THRESHOLD): wal2json sends a transaction's
rows one by one after its commit, so the buffer stops taking rows once that many of one
transaction are there, :meth:`peek` gives them (``partial``), and :meth:`spilled`
forgets them — the capture has put them in its spill table — keeping the transaction's
begin row, so the rest comes as a transaction of its own rows.  A part ends between two
rows of different LSNs: the rows of one log record (a multi-row insert) and a message
tied with the change after it (decode._in_log_order) are never cut apart, so the
capture can tell what it already spilled by LSN alone (a stream opened again sends the
whole transaction again).

A stream holds the slot while it is open.  Other users of the slot (a second copy of the
capture, DROP_CAPTURE) get it between reads as with the SQL calls: the stream lets the
slot go after :data:`RELEASE_AFTER` seconds without a new change and when a caller says
so (:meth:`release`).  A stream let go for being idle opens a new session (a walsender,
a decoding start) only once the source has flushed WAL past what the last one had
decoded and confirmed: an idle capture on a quiet server costs one cheap query per poll,
not a new replication connection every second.
"""

from __future__ import annotations

import json
import re
import select
import time
from typing import Callable

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.errors import error_from_result

__all__ = ["SlotStream", "RELEASE_AFTER", "lsn_to_int", "int_to_lsn"]

_LSN = re.compile(r'"lsn":"([0-9A-F]+/[0-9A-F]+)"')
RELEASE_AFTER = 1.0           # seconds without a new change before the slot is let go
_CATCH_UP_PATIENCE = 60.0     # seconds a peek up to an LSN waits for the decoder to get there
_STATUS_EVERY = 10.0          # a status update at least this often (wal_sender_timeout: 60 s)
_EPOCH_2000 = 946_684_800     # the protocol's clock: microseconds since 2000-01-01


def lsn_to_int(text: str) -> int:
    """``'0/16B3748'`` -> 23803720 (an SCN)."""
    hi, _, lo = text.partition("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def int_to_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


class SlotStream:
    """One decoding session on one logical slot; see the module's documentation.

    ``setup`` is SQL run on the replication connection first (the output functions'
    settings); ``options`` the output plugin's options, as for the SQL functions."""

    def __init__(self, conninfo: str, slot: str, options: list[str], setup: str,
                 raise_error: Callable[[psycopg.Error], Exception], flushed: Callable[[], int],
                 slot_state: Callable[[], tuple[int | None, int]]) -> None:
        params = conninfo_to_dict(conninfo)
        params["replication"] = "database"
        self._conninfo = make_conninfo(**params)
        self.slot = slot
        self._options = options
        self._setup = setup
        self._raise = raise_error
        self._wal_flushed = flushed         # the source's WAL flush position now
        self._slot_state = slot_state       # (the slot's active PID, its confirmed position)
        self._pg: pq.PGconn | None = None
        # the WAL position up to which a session let go for being idle had decoded and
        # confirmed everything (None: no such session, or a later close): see peek
        self._quiet_at: int | None = None
        self._hold: int | None = None       # the last peek's: what the buffer may take
        self._reset()

    def _reset(self) -> None:
        self._rows: list[str] = []          # received rows from the confirmed position on
        self._txns: list[tuple[int, int, int]] = []   # complete ones: (end row, commit LSN, end LSN)
        self._notices: list[tuple[int, str]] = []     # (rows received before it, message)
        self._wal_end = 0                   # the decoder's position at the last keepalive
        self._flushed = 0                   # the highest position confirmed to the server
        self._last_change = time.monotonic()
        self._last_status = 0.0
        self.partial = False                # the last peek gave the first part of a transaction

    @property
    def open(self) -> bool:
        return self._pg is not None

    # -- the session ------------------------------------------------------------------
    def _open(self) -> pq.PGconn:
        if self._pg is not None:
            return self._pg
        self._reset()
        pg = pq.PGconn.connect(self._conninfo.encode())
        if pg.status != pq.ConnStatus.OK:
            message = pg.get_error_message()
            pg.finish()
            raise self._raise(psycopg.OperationalError(message))
        pg.notice_handler = self._notice
        try:
            self._exec(pg, self._setup, pq.ExecStatus.COMMAND_OK)
            opts = ", ".join('"{}" \'{}\''.format(self._options[i].replace('"', '""'),
                                                self._options[i + 1].replace("'", "''"))
                             for i in range(0, len(self._options), 2))
            slot = self.slot.replace('"', '""')
            self._exec(pg, f'START_REPLICATION SLOT "{slot}" LOGICAL 0/0 ({opts})',
                       pq.ExecStatus.COPY_BOTH)
        except BaseException:
            pg.finish()
            raise
        self._pg = pg
        return pg

    def _exec(self, pg: pq.PGconn, sql: str, want: pq.ExecStatus) -> None:
        for statement in filter(None, (s.strip() for s in sql.split(";"))):
            res = pg.exec_(statement.encode())
            if res.status != want and not (want == pq.ExecStatus.COMMAND_OK
                                           and res.status == pq.ExecStatus.TUPLES_OK):
                raise self._raise(error_from_result(res, encoding="utf-8"))

    def close(self) -> None:
        """Let the slot go; the buffer goes with it.  Returns once the server's session has
        released the slot (it ends after the connection: a DROP_CAPTURE or another copy
        right after would find the slot still in use)."""
        self._quiet_at = None
        if self._pg is not None:
            pg, self._pg = self._pg, None
            pid = pg.backend_pid
            try:
                pg.finish()
            except psycopg.Error:
                pass
            deadline = time.monotonic() + _CATCH_UP_PATIENCE
            try:
                while self._slot_state()[0] == pid and time.monotonic() < deadline:
                    time.sleep(0.002)
            except Exception:       # noqa: BLE001 — the source itself gone: nothing holds the slot
                pass
        self._reset()

    release = close

    def _notice(self, res: pq.PGresult) -> None:
        severity = res.error_field(pq.DiagnosticField.SEVERITY_NONLOCALIZED) or b""
        if severity == b"WARNING":
            text = (res.error_field(pq.DiagnosticField.MESSAGE_PRIMARY) or b"").decode("utf-8", "replace")
            self._notices.append((len(self._rows), text))

    # -- reading ----------------------------------------------------------------------
    def _pump(self, pg: pq.PGconn, max_rows: int) -> bool:
        """Take the messages already here (until ``max_rows`` rows of whole transactions
        are buffered, or the last peek's ``hold`` rows of the transaction not yet whole:
        :meth:`_held`); True when any came."""
        try:
            pg.consume_input()
        except psycopg.Error as e:
            self.close()
            raise self._raise(e) from None
        got = False
        rows, txns, hold = self._rows, self._txns, self._hold
        before = len(rows)
        while (txns[-1][0] if txns else 0) < max_rows:     # _complete_rows(), inlined: once per row
            if hold is not None and self._held(hold):
                break
            n, data = pg.get_copy_data(1)
            if n == 0:
                break
            if n < 0:     # the server ended the session: its error, or a plain end
                res = pg.get_result()
                self.close()
                if res is not None and res.status == pq.ExecStatus.FATAL_ERROR:
                    raise self._raise(error_from_result(res, encoding="utf-8"))
                raise self._raise(psycopg.OperationalError("the replication stream ended"))
            got = True
            kind = data[0]
            if kind == 0x77:        # 'w' XLogData: header of 3 LSN-sized fields, then a row
                text = str(data[25:], "utf-8")
                rows.append(text)
                if text.startswith('{"action":"C"'):
                    self._commit(text)
            elif kind == 0x6B:      # 'k' keepalive: the decoder's position, reply wanted?
                self._wal_end = max(self._wal_end, int.from_bytes(data[1:9], "big"))
                if data[17]:
                    self._status(pg, False)
        if len(rows) > before:
            self._last_change = time.monotonic()
        return got

    def _commit(self, text: str) -> None:
        """A commit row (the last one appended): a whole transaction ends there."""
        row = json.loads(text)
        self._txns.append((len(self._rows), lsn_to_int(row["lsn"]), lsn_to_int(row["nextlsn"])))

    def _complete_rows(self) -> int:
        return self._txns[-1][0] if self._txns else 0

    def _cut_at_end(self) -> bool:
        """Do the last two rows have different LSNs (a part may end before the last)?"""
        rows = self._rows
        if len(rows) < 3:
            return False
        a, b = _LSN.search(rows[-2]), _LSN.search(rows[-1])
        return a is not None and b is not None and a.group(1) != b.group(1)

    def _held(self, hold: int | None) -> bool:
        """Are more than ``hold`` rows of the transaction not yet whole here, the last two
        of different LSNs (the buffer takes no more)?"""
        return hold is not None and len(self._rows) - self._complete_rows() > hold and self._cut_at_end()

    def _part(self, hold: int | None) -> int:
        """Rows of the transaction not yet whole that may be given as its first part (its
        begin row first): all but the last, once held (:meth:`_held`); 0 otherwise, and
        while whole transactions are buffered."""
        return len(self._rows) - 1 if not self._txns and self._held(hold) else 0

    def spilled(self, count: int) -> None:
        """Forget the first ``count`` rows, a part :meth:`peek` gave, but the begin row."""
        if count <= 1:
            return
        self._rows = self._rows[:1] + self._rows[count:]
        self._txns = [(end - count + 1, c, e) for end, c, e in self._txns]
        self._notices = [(at - count + 1, text) for at, text in self._notices if at >= count]

    def _status(self, pg: pq.PGconn, reply: bool) -> None:
        now = int((time.time() - _EPOCH_2000) * 1e6)
        pos = self._flushed.to_bytes(8, "big")
        try:
            pg.put_copy_data(b"r" + pos + pos + pos + now.to_bytes(8, "big") + (b"\x01" if reply else b"\x00"))
            pg.flush()
        except psycopg.Error as e:
            self.close()
            raise self._raise(e) from None
        self._last_status = time.monotonic()

    def _wait(self, pg: pq.PGconn, timeout: float) -> None:
        select.select([pg.socket], [], [], timeout)

    def peek(self, max_changes: int, upto_lsn: int | None,
             hold: int | None = None) -> tuple[list[str], list[str]]:
        """Rows of the whole transactions after the confirmed position committed before
        ``upto_lsn`` and the WAL flushed now (it waits until the decoder got there),
        stopping after the one that brings the count past ``max_changes``; and the
        decoder's warnings among them.  With ``hold``: the first part of a transaction
        of more rows than that instead, when it comes first (``partial`` says so)."""
        self.partial = False
        self._hold = hold
        if self._pg is None and self._quiet_at is not None and self._wal_flushed() <= self._quiet_at:
            return [], []       # let go while idle, and no WAL written since: nothing to decode
        fresh = self._pg is None
        try:
            return self._peek(max_changes, upto_lsn, hold)
        except Exception:
            self.close()
            if fresh:
                raise
        # the server ended a session opened before (wal_sender_timeout while the capture did
        # not read, an administrator): a new one starts at the confirmed position
        return self._peek(max_changes, upto_lsn, hold)

    def _peek(self, max_changes: int, upto_lsn: int | None,
              hold: int | None) -> tuple[list[str], list[str]]:
        pg = self._open()
        got = self._pump(pg, max_changes)
        part = self._part(hold)
        if part:
            return self._give_part(pg, part)
        if self._complete_rows() < max_changes:
            # as the SQL function: what was committed when the call began, not only what
            # the decoder has sent so far; never past the WAL flushed (all a decoder can
            # read: a record at the tail of an idle server's WAL may stay unflushed)
            flushed = self._wal_flushed()
            target = flushed if upto_lsn is None else min(upto_lsn, flushed)
            deadline = time.monotonic() + _CATCH_UP_PATIENCE
            while not self._reached(target) and self._complete_rows() < max_changes \
                    and not self._held(hold) and time.monotonic() < deadline:
                self._status(pg, True)          # the answer says how far the decoder is
                self._wait(pg, 0.05)
                got = self._pump(pg, max_changes) or got
                part = self._part(hold)
                if part:
                    return self._give_part(pg, part)
        end = 0
        for row_end, commit_lsn, _ in self._txns:
            if upto_lsn is not None and commit_lsn >= upto_lsn:
                break
            end = row_end
            if end >= max_changes:
                break
        now = time.monotonic()
        if not self._rows and self._wal_end > self._flushed:
            # all that came was confirmed: past the records no capture wants too, so
            # PostgreSQL can move the restart position (what a new session re-reads)
            self._flushed = self._wal_end
            self._status(pg, False)
        elif now - self._last_status > _STATUS_EVERY:
            self._status(pg, False)
        rows, notices = self._rows[:end], [text for at, text in self._notices if at < end]
        if not end and not got and now - self._last_change > RELEASE_AFTER:
            # idle: others may use the slot meanwhile; with nothing received left unconfirmed
            # (no transaction begun and not ended), a new session is needed only for new WAL
            quiet = self._wal_end if not self._rows and self._flushed >= self._wal_end else None
            self.close()
            self._quiet_at = quiet
        return rows, notices

    def _give_part(self, pg: pq.PGconn, part: int) -> tuple[list[str], list[str]]:
        self.partial = True
        now = self._last_change = time.monotonic()
        if now - self._last_status > _STATUS_EVERY:     # a long transaction: still here
            self._status(pg, False)
        return self._rows[:part], [text for at, text in self._notices if at < part]

    def _reached(self, lsn: int) -> bool:
        return self._wal_end >= lsn or bool(self._txns and self._txns[-1][1] >= lsn)

    def advance(self, lsn: int) -> None:
        """Confirm everything before ``lsn`` (the end of a transaction the capture
        committed) and forget it; returns once the slot shows the position."""
        keep = 0
        while keep < len(self._txns) and self._txns[keep][2] <= lsn:
            keep += 1
        if keep:
            cut = self._txns[keep - 1][0]
            self._rows = self._rows[cut:]
            self._txns = [(end - cut, c, e) for end, c, e in self._txns[keep:]]
            self._notices = [(at - cut, text) for at, text in self._notices if at >= cut]
        if lsn <= self._flushed or self._pg is None:
            return
        self._flushed = lsn     # (a failure below closes the session: the caller advances otherwise)
        pg = self._pg
        self._status(pg, False)
        # the protocol does not say which keepalive answers a status update: ask the slot
        deadline = time.monotonic() + _CATCH_UP_PATIENCE
        while self._slot_state()[1] < lsn and time.monotonic() < deadline:
            self._wait(pg, 0.001)
            self._pump(pg, 1 << 62)
