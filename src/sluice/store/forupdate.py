"""``SELECT … FOR UPDATE [OF col, …] [NOWAIT | WAIT n | SKIP LOCKED]`` typed at a cursor
(or run by a block: a cursor declared FOR UPDATE, ``OPEN cv FOR … FOR UPDATE``).

What Sluice promises, per store (``StoreSession.row_locks``):

* PostgreSQL locks the rows as Oracle does, until the transaction ends: the statement opens
  the session's transaction first (alone it would lock for itself only).  NOWAIT is
  ORA-00054 when another transaction holds one of them; WAIT n sets ``lock_timeout`` for the
  statement, ORA-30006 when it runs out; SKIP LOCKED is PostgreSQL's own.  OF's columns name
  the tables whose rows are locked: ``OF t.col`` → ``OF t``; an unqualified column (one
  table's, in Oracle) locks the rows of every table the query reads.
* SQLite has no row locks.  The nearest is the store's one writer: the session takes the
  write transaction (BEGIN IMMEDIATE, as its DML does) and holds it until commit or
  rollback, so every row is locked against the other sessions' writes and FOR UPDATEs,
  while their queries go on (Oracle's readers do not wait for row locks either).  NOWAIT is
  ORA-00054 at once when another session holds it; WAIT n waits n seconds, then ORA-30006;
  neither waits the store's busy timeout, then ORA-00054; SKIP LOCKED skips every row
  (all of them are locked) when another session holds it.  OF's columns are not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ora
from .sqloracle import tokens

# a row's identity in a user's table, by store (a block's WHERE CURRENT OF: plsql/cursors.py):
# within the transaction holding the row's lock it names that row
ROW_IDENTITY = {"sqlite": "ROWID", "postgresql": "CTID"}
# the cheap test first: a statement without the words is not read
_MARK = re.compile(r"for\s+update", re.I)


@dataclass(frozen=True)
class RowLocking:
    """A query's FOR UPDATE clause, read."""
    plain: str                  # the statement without it
    of: tuple[str, ...]         # OF's columns as written (``t.col``, ``col``)
    wait: float | None          # seconds; 0 for NOWAIT, None: as long as the store waits
    skip_locked: bool

    def postgresql(self) -> str:
        """The statement as PostgreSQL runs it (WAIT n is the session's ``lock_timeout``)."""
        tables = [col.rsplit(".", 1)[0] for col in self.of]
        clause = " FOR UPDATE"
        if tables and all("." in col for col in self.of):
            clause += " OF " + ", ".join(dict.fromkeys(tables))
        clause += " NOWAIT" if self.wait == 0 and not self.skip_locked else ""
        clause += " SKIP LOCKED" if self.skip_locked else ""
        return self.plain.rstrip() + clause


def for_update(sql: str) -> RowLocking | None:
    """The FOR UPDATE clause ending the query ``sql``, or None without one; ORA-00933 for
    words after it, ORA-30005 for a WAIT without its seconds."""
    if not _MARK.search(sql):
        return None
    toks = tokens(sql)
    depth, at = 0, None
    for i, tok in enumerate(toks):
        depth += 1 if tok.text == "(" else -1 if tok.text == ")" else 0
        if depth == 0 and tok.word == "FOR" and i + 1 < len(toks) and toks[i + 1].word == "UPDATE":
            at = i
            break
    if at is None:
        return None
    i, of = at + 2, []
    if i < len(toks) and toks[i].word == "OF":
        while True:
            i += 1
            if i >= len(toks) or toks[i].kind not in ("id", "qid"):
                raise ora(904, toks[i].text if i < len(toks) else "")
            of.append(re.sub(r"\s+", "", toks[i].text))
            i += 1
            if i >= len(toks) or toks[i].text != ",":
                break
    wait, skip = None, False
    word = toks[i].word if i < len(toks) else ""
    if word == "NOWAIT":
        wait, i = 0.0, i + 1
    elif word == "WAIT":
        if i + 1 >= len(toks) or toks[i + 1].kind != "num":
            raise ora(30005)
        wait, i = float(toks[i + 1].text), i + 2
    elif word == "SKIP" and i + 1 < len(toks) and toks[i + 1].word == "LOCKED":
        skip, i = True, i + 2
    if i < len(toks) and toks[i].text != ";":
        raise ora(933)
    return RowLocking(sql[:toks[at].start].rstrip(), tuple(of), wait, skip)
