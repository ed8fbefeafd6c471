"""TXN_LCR_SPILL_THRESHOLD of a capture process: a large source transaction's LCRs spill
from the capture's memory to a table of its store until the transaction is staged.

Oracle's capture (LogMiner) spills the changes of a large transaction to disk instead of
holding them in the Streams pool; its apply process has ``txn_lcr_spill_threshold``
(seed 000, DBMS_APPLY_ADM.SET_PARAMETER) for the same thing on its side.  Sluice's capture
takes the apply's name for the count of one transaction's LCRs it holds in memory
(DBMS_CAPTURE_ADM.SET_PARAMETER; default 10,000, ``INFINITE``: never spill).

wal2json sends a transaction's rows one by one after its commit (:mod:`.slotstream`); past
the threshold the capture takes the first part of the transaction (:attr:`.pgsource.Source.
partial`), turns it into LCRs, keeps those its rules accept and writes them here — with this
transaction's own row (SEQ 0: its id, the LSN of its last spilled change, the Streams tag
in force there and the counters) in one store commit — and the stream forgets them.  The
slot does not move.  When the commit row comes, the spilled LCRs are read back in chunks,
given the commit SCN and time, and enqueued in order before the rest, in the one store
transaction that writes the capture's position and deletes the spill; then the slot moves.
Each chunk's queue records are written to the queue table before the next is read, with
the commit SCN that transaction draws at the first (StoreSession.
write_commit_time_enqueues): staging holds a chunk, whatever the transaction's size.

Exactly once: a crash leaves the spill and the slot where they were; the stream opened
again sends the transaction again from its first row, and the capture goes on with the
spill, leaving out each change at or below the spilled LSN (a part always ends between two
LSNs, so an LSN is spilled whole or not at all).  A transaction the capture committed but
whose slot had not moved yet comes again too: it is spilled again and, at its commit
(at or below CAPTURED_SCN), the spill is discarded.  A transaction's rows come only after
its commit (never those of one rolled back), so a spill of another transaction than the
one arriving can only be left over (a capture moved past it by ALTER_CAPTURE): it goes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from ...aq.payload import ANYDATA_CODECS
from .. import lcrcodec  # noqa: F401  (registers the LCRs' codecs in ANYDATA_CODECS)
from .context import CaptureContext
from .pgsource import parse_json

__all__ = ["CaptureSpill", "load", "threshold", "DEFAULT_THRESHOLD"]

DEFAULT_THRESHOLD = "10000"
_CHUNK = 1000       # LCRs read back per query
_INSERT = "INSERT INTO SLUICE_CAPTURE_SPILL (OWNER, NAME, SEQ, KIND, MESSAGE) VALUES (?, ?, ?, ?, ?)"
_HEAD = """INSERT INTO SLUICE_CAPTURE_SPILL (OWNER, NAME, SEQ, KIND, MESSAGE) VALUES (?, ?, 0, 'TRANSACTION', ?)
  ON CONFLICT (OWNER, NAME, SEQ) DO UPDATE SET MESSAGE = excluded.MESSAGE"""


def threshold(value: str | None) -> int | None:
    """The SET_PARAMETER value as a count (None: INFINITE)."""
    text = DEFAULT_THRESHOLD if value is None else value
    return None if text == "INFINITE" else int(text)


@dataclass
class CaptureSpill:
    """The spilled part of the source transaction the capture is reading."""

    owner: str
    name: str
    xid: int
    last_lsn: int = 0           # the LSN of the last change spilled (all of that LSN are)
    tag: bytes | None = None    # the Streams tag in force after it
    stored: int = 0             # LCRs in the table
    captured: int = 0           # changes decoded (the rules' rejects too): the counters
    last_scn: int | None = None     # SCN of the last change decoded
    written: bool = False       # has rows in the table

    def add(self, ctx: CaptureContext, lcrs: list[Any], last_lsn: int, tag: bytes | None,
            captured: int, last_scn: int | None) -> None:
        """Spill ``lcrs`` (the next part's LCRs the rules accepted) with the store
        transaction now open (the caller commits).  A part without any is only noted in
        memory — a large transaction the rules want none of costs no store commit per part;
        after a crash such parts are read and left out again."""
        self.last_lsn, self.tag = last_lsn, tag
        self.captured += captured
        self.last_scn = last_scn if last_scn is not None else self.last_scn
        if not lcrs:
            return
        self.written = True
        rows = []
        for lcr in lcrs:
            self.stored += 1
            kind = lcr.oracle_type
            doc = ANYDATA_CODECS[kind][0](lcr)
            rows.append((self.owner, self.name, self.stored, kind,
                         doc if isinstance(doc, str) else json.dumps(doc)))
        head = json.dumps({"xid": self.xid, "lsn": self.last_lsn, "stored": self.stored,
                           "tag": self.tag.hex() if self.tag is not None else None,
                           "captured": self.captured, "scn": self.last_scn})
        key = (self.owner, self.name)

        def write(c: Any) -> None:
            c.executemany(_INSERT, rows)
            c.execute(_HEAD, (*key, head))
        ctx.add_commit_work(write)

    def lcrs(self, ctx: CaptureContext, commit_scn: int, commit_time: Any) -> Iterator[list[Any]]:
        """The spilled LCRs in order, a chunk at a time, with the transaction's commit SCN
        and time (unknown when they were spilled)."""
        for low in range(0, self.stored, _CHUNK):
            rows = ctx.query("SELECT KIND, MESSAGE FROM SLUICE_CAPTURE_SPILL WHERE OWNER = :o "
                             "AND NAME = :n AND SEQ > :lo AND SEQ <= :hi ORDER BY SEQ",
                             {"o": self.owner, "n": self.name, "lo": low, "hi": low + _CHUNK})
            chunk = []
            for kind, message in rows:
                lcr = ANYDATA_CODECS[kind][1](parse_json(message))
                lcr._commit_scn, lcr._source_time = commit_scn, commit_time
                chunk.append(lcr)
            yield chunk

    def discard(self, ctx: CaptureContext) -> None:
        """The rows go with the store transaction now open."""
        if self.written:
            discard(ctx, self.owner, self.name)
            self.written = False


def discard(ctx: CaptureContext, owner: str, name: str) -> None:
    ctx.add_commit_work(lambda c: c.execute("DELETE FROM SLUICE_CAPTURE_SPILL WHERE OWNER = ? AND NAME = ?",
                                            (owner, name)))


def load(ctx: CaptureContext, owner: str, name: str) -> CaptureSpill | None:
    """The spill a previous run of the capture left (None: none)."""
    rows = ctx.query("SELECT MESSAGE FROM SLUICE_CAPTURE_SPILL WHERE OWNER = :o AND NAME = :n "
                     "AND SEQ = 0", {"o": owner, "n": name})
    if not rows:
        return None
    head = json.loads(rows[0][0])
    return CaptureSpill(owner, name, head["xid"], head["lsn"],
                        bytes.fromhex(head["tag"]) if head["tag"] is not None else None,
                        head["stored"], head["captured"], head["scn"], written=True)
