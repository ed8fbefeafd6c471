"""``DBMS_STREAMS``: the session's Streams tag, and the package's compatibility functions.

Seed 000 uses the tag in every system-created rule (``:dml.is_null_tag() = 'Y'``):
changes made while a session's tag is set carry it in their LCRs, so an apply process
that sets a tag (and rules that skip tagged LCRs) keeps changes from cycling between
databases.  ``conn.streams.set_tag(b"\\x02")`` / ``DBMS_STREAMS.SET_TAG(tag =>
HEXTORAW('02'))`` sets it, ``GET_TAG`` reads it (NULL: no tag).

A synchronous capture's triggers read the tag of the writer's session: on PostgreSQL
the setting ``sluice.tag`` (hexadecimal), on SQLite the transaction's
``SLUICE_SYNC_SESSION`` row (:mod:`.syncsqlite`).

On a PostgreSQL source the tag must reach the log: a session setting is invisible to
logical decoding, so it travels as a transactional message (``sluice.tag``) that the
writing session puts into each transaction it makes — :func:`tag_transaction` (with the
session's tag) or :func:`sluice.streams.capture.pgsource.emit_tag`.  The capture gives
every change after the message in that transaction its tag.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ...errors import ora
from ..lcr import (COMPATIBLE_9_2, COMPATIBLE_10_1, COMPATIBLE_10_2, COMPATIBLE_11_1,
                   COMPATIBLE_11_2, COMPATIBLE_12_1, COMPATIBLE_12_2)
from .context import CaptureContext
from .pgsource import emit_tag
from .syncsqlite import open_session

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["DbmsStreams", "tag_transaction"]

MAX_TAG = 2000   # RAW(2000)


def _raw(tag: Any) -> bytes | None:
    if tag is None:
        return None
    if isinstance(tag, (bytes, bytearray, memoryview)):
        value = bytes(tag)
    elif isinstance(tag, str):          # hexadecimal text, as a RAW literal reads
        try:
            value = bytes.fromhex(tag)
        except ValueError:
            raise ora(1465) from None
    else:
        raise ora(6502, f"a tag is RAW, not {type(tag).__name__}")
    if len(value) > MAX_TAG:
        raise ora(6502, f"a tag is RAW({MAX_TAG}), this one has {len(value)} bytes")
    return value or None


class DbmsStreams:
    """The DBMS_STREAMS package for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn

    def set_tag(self, tag: Any = None) -> None:
        """Set the session's tag (NULL clears it); it stays until set again."""
        CaptureContext(self._conn).set_session_tag(_raw(tag))

    def get_tag(self) -> bytes | None:
        return CaptureContext(self._conn).session_tag()

    # DBMS_STREAMS.COMPATIBLE_x_y: the same numbers rule conditions and LCR.GET_COMPATIBLE use
    compatible_9_2 = staticmethod(lambda: COMPATIBLE_9_2)
    compatible_10_1 = staticmethod(lambda: COMPATIBLE_10_1)
    compatible_10_2 = staticmethod(lambda: COMPATIBLE_10_2)
    compatible_11_1 = staticmethod(lambda: COMPATIBLE_11_1)
    compatible_11_2 = staticmethod(lambda: COMPATIBLE_11_2)
    compatible_12_1 = staticmethod(lambda: COMPATIBLE_12_1)
    compatible_12_2 = max_compatible = staticmethod(lambda: COMPATIBLE_12_2)


def tag_transaction(conn: "Connection", source_connection: Any) -> None:
    """Put the tag of ``conn``'s session (DBMS_STREAMS.SET_TAG) into the current transaction
    of ``source_connection``: the changes it makes next in that transaction carry the tag
    — what an apply process does with its apply tag.

    * psycopg, on a PostgreSQL source: a ``sluice.tag`` message for capture processes and
      the transaction-local setting ``sluice.tag`` for synchronous captures' triggers;
    * ``sqlite3``, on an SQLite store: the transaction's ``SLUICE_SYNC_SESSION`` row, which
      the writer must delete before it commits
      (:func:`sluice.streams.capture.syncsqlite.close_session`)."""
    tag = CaptureContext(conn).session_tag()
    if isinstance(source_connection, sqlite3.Connection):
        open_session(source_connection, tag)
        return
    emit_tag(source_connection, tag)
    source_connection.execute("SELECT set_config('sluice.tag', %s, true)", (tag.hex() if tag else "",))
