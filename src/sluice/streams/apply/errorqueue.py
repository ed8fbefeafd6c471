"""The error queue: transactions an apply process could not apply, whole (DBA_APPLY_ERROR).

When an error no handler resolves stops a transaction, the target is rolled back and the
transaction's messages go, all of them, into ``SLUICE_APPLY_ERROR`` in the same store
transaction that takes them off the apply queue (so each is either in the queue or in
the error queue, never both, never neither).  A row keeps Oracle's DBA_APPLY_ERROR
columns — LOCAL_TRANSACTION_ID, SOURCE_TRANSACTION_ID, SOURCE_DATABASE,
SOURCE_COMMIT_SCN, MESSAGE_NUMBER (the message that failed, from 1), ERROR_NUMBER,
ERROR_MESSAGE, MESSAGE_COUNT … — plus the messages as the apply queue stored them, and
what is needed to apply them again: the apply process's target and tag.

EXECUTE_ERROR applies the transaction again in one target transaction that also records
its LOCAL_TRANSACTION_ID (``SLUICE_APPLY_DONE``), then deletes it from the error queue; a
crash in between leaves a row whose next EXECUTE_ERROR only deletes it (exactly once).
That target transaction records the transaction as delivered too (its commit SCN, or its
user messages' ident), so a later delivery of it is skipped: the Spark apply sink's
disable_on_error leaves it in the micro-batch a restart replays.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from typing import Any

from ...errors import ora
from ...routines import registered_function
from ..capture.context import CaptureContext
from ..clientrights import handler_rights
from .definition import engine_for, find_definition
from .engine import ApplyError, Item, SourceTxn

__all__ = ["record", "error_ids", "delete", "FORGET_DELETED", "execute_error", "errored_transactions"]

_INSERT = """INSERT INTO SLUICE_APPLY_ERROR (LOCAL_TRANSACTION_ID, APPLY_NAME, QUEUE_OWNER, QUEUE_NAME,
    SOURCE_DATABASE, SOURCE_TRANSACTION_ID, SOURCE_COMMIT_SCN, MESSAGE_NUMBER, ERROR_NUMBER,
    ERROR_MESSAGE, MESSAGE_COUNT, ERROR_CREATION_TIME, KIND, IDENT, TARGET, APPLY_TAG, MESSAGES)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


def new_local_id() -> str:
    """An id shaped like Oracle's local transaction ids (``n.n.n``)."""
    u = uuid.uuid4().int
    return f"{u % 1000}.{(u >> 10) % 100}.{(u >> 20) % 1000000}"


def record(ctx: CaptureContext, apply_name: str, queue: tuple[str, str], txn: SourceTxn,
           failure: ApplyError, encode: Any, target: str | None, tag: bytes | None) -> str:
    """Put ``txn`` into the error queue in the session's transaction (committed with it)."""
    local = new_local_id()
    messages = json.dumps([[encode(item.message), item.execute] for item in txn.items])
    error = failure.error
    params = (local, apply_name, queue[0], queue[1], txn.source_database, txn.transaction_id,
              txn.commit_scn, failure.index + 1, error.code, str(error), len(txn.items), time.time(),
              txn.kind, txn.ident, target, tag.hex() if tag else None, messages)
    ctx.add_commit_work(lambda c: c.execute(_INSERT, params))
    return local


def _row(ctx: CaptureContext, local_id: str) -> dict:
    cols = ("LOCAL_TRANSACTION_ID", "APPLY_NAME", "QUEUE_OWNER", "QUEUE_NAME", "SOURCE_DATABASE",
            "SOURCE_TRANSACTION_ID", "SOURCE_COMMIT_SCN", "KIND", "IDENT", "TARGET", "APPLY_TAG",
            "MESSAGES")
    rows = ctx.query(f"SELECT {', '.join(cols)} FROM SLUICE_APPLY_ERROR WHERE LOCAL_TRANSACTION_ID = :i",
                     {"i": str(local_id)})
    if not rows:
        raise ora(26673, f"no error transaction {local_id}")
    return dict(zip(cols, rows[0]))


def error_ids(ctx: CaptureContext, apply_name: str | None) -> list[str]:
    """The error transactions (of one apply process), oldest first."""
    if apply_name is None:
        rows = ctx.query("SELECT LOCAL_TRANSACTION_ID FROM SLUICE_APPLY_ERROR ORDER BY ERROR_CREATION_TIME")
    else:
        rows = ctx.query("SELECT LOCAL_TRANSACTION_ID FROM SLUICE_APPLY_ERROR WHERE APPLY_NAME = :a "
                         "ORDER BY ERROR_CREATION_TIME", {"a": apply_name})
    return [r[0] for r in rows]


def errored_transactions(ctx: CaptureContext, apply_name: str) -> set[tuple]:
    """``(source database, commit SCN)`` of the captured transactions in the error queue and
    the idents of the user-message transactions there -- and of those DELETE_ERROR took out
    of it (:func:`delete`): a restarted apply process, or a replayed Spark micro-batch,
    skips them."""
    rows = ctx.query("SELECT SOURCE_DATABASE, SOURCE_COMMIT_SCN, IDENT FROM SLUICE_APPLY_ERROR "
                     "WHERE APPLY_NAME = :a UNION ALL "
                     "SELECT SOURCE_DATABASE, SOURCE_COMMIT_SCN, IDENT FROM SLUICE_APPLY_ERROR_DELETED "
                     "WHERE APPLY_NAME = :a", {"a": apply_name})
    return {(r[0], r[1]) for r in rows} | {("IDENT", r[2]) for r in rows if r[2]}


def delete(conn: Any, ctx: CaptureContext, ids: list[str]) -> int:
    """Remove error transactions (their messages are not applied); how many there were.

    Each leaves a note (``SLUICE_APPLY_ERROR_DELETED``, in the same store transaction) that
    :func:`errored_transactions` reads like its error row: the Spark apply sink records a
    failed transaction as delivered in the target only after its error row has committed,
    so a crash between the two, then DELETE_ERROR, would otherwise let the replayed
    micro-batch apply what the user deleted (the Python apply process took it off its
    queue with the error row).  The sink forgets the notes once no replay can need them
    (:data:`FORGET_DELETED`)."""
    if not ids:
        return 0
    ctx.ddl_commit()
    found = [i for i in ids if ctx.query("SELECT 1 FROM SLUICE_APPLY_ERROR WHERE LOCAL_TRANSACTION_ID = :i",
                                         {"i": str(i)})]
    now = time.time()
    for i in found:
        ctx.add_commit_work(lambda c, i=i: c.execute(
            "INSERT INTO SLUICE_APPLY_ERROR_DELETED (APPLY_NAME, SOURCE_DATABASE, SOURCE_COMMIT_SCN, IDENT, "
            "DELETED_TIME) SELECT APPLY_NAME, SOURCE_DATABASE, SOURCE_COMMIT_SCN, IDENT, ? "
            "FROM SLUICE_APPLY_ERROR WHERE LOCAL_TRANSACTION_ID = ?", (now, str(i))))
        ctx.add_commit_work(lambda c, i=i: c.execute(
            "DELETE FROM SLUICE_APPLY_ERROR WHERE LOCAL_TRANSACTION_ID = ?", (str(i),)))
    conn.commit()
    return len(found)


# The notes :func:`delete` left for an apply (``?``) before a time (``?``, epoch seconds): what
# the Spark apply sink no longer needs (:func:`sluice.pipeline.sinks.forget_in_store` says when)
FORGET_DELETED = "DELETE FROM SLUICE_APPLY_ERROR_DELETED WHERE APPLY_NAME = ? AND DELETED_TIME < ?"


def execute_error(conn: Any, ctx: CaptureContext, local_id: str, user_procedure: str | None,
                  as_user: bool = False) -> None:
    """EXECUTE_ERROR: apply the error transaction again (``user_procedure``: a procedure
    registered by name, called with each message first; it returns the message to apply),
    its handlers and ``user_procedure`` run with the apply user's rights or, ``as_user``,
    the caller's ("the security context of the current user"; else "of the original
    receiver of the transaction"): one that user may not execute is to it not there
    (ORA-06550, PLS-00201), and the transaction stays in the error queue as it was."""
    row = _row(ctx, local_id)
    definition = find_definition(ctx, row["APPLY_NAME"])   # its handlers, when it still exists
    if as_user and definition is not None:
        definition = dataclasses.replace(definition, apply_user=ctx.username)
    procedure = None
    if user_procedure:
        procedure = registered_function(user_procedure, ctx.username)
        user = ctx.username if as_user else definition.apply_user if definition is not None else None
        handler_rights(ctx, user, ctx.username)(user_procedure)
    decode = codec_decoder(ctx, row["QUEUE_OWNER"], row["QUEUE_NAME"])
    items = []
    for stored, execute in json.loads(row["MESSAGES"]):
        message = decode(stored)
        if procedure is not None:
            message = procedure(message)
        items.append(Item(message, execute))
    txn = SourceTxn(items, kind="ERROR", source_database=row["SOURCE_DATABASE"],
                    commit_scn=row["SOURCE_COMMIT_SCN"], transaction_id=row["SOURCE_TRANSACTION_ID"],
                    ident=str(local_id))
    engine = engine_for(conn, row["APPLY_NAME"], row["TARGET"],
                        bytes.fromhex(row["APPLY_TAG"]) if row["APPLY_TAG"] else None, definition)
    # the transaction as the apply delivered it: its own SLUICE_APPLY_DONE record goes in
    # with the changes, so a delivery of it after this (the Spark sink replays an aborted
    # micro-batch, the failed transaction still in it) is recognised and skipped
    delivered = SourceTxn([], row["KIND"], row["SOURCE_DATABASE"], row["SOURCE_COMMIT_SCN"], ident=row["IDENT"])

    def also_delivered() -> None:
        ident = engine.ident(delivered)
        if ident is not None:
            engine.target.execute(*engine.target.done_statement(row["APPLY_NAME"], delivered.kind, ident))

    try:
        if not engine.already_applied(txn):
            try:
                engine.apply(txn, before_commit=also_delivered)
            except ApplyError as failure:
                e, number = failure.error, failure.index + 1   # (not `failure` in the lambda: unbound after the except)
                ctx.ddl_commit()
                ctx.add_commit_work(lambda c: c.execute(
                    "UPDATE SLUICE_APPLY_ERROR SET ERROR_NUMBER = ?, ERROR_MESSAGE = ?, MESSAGE_NUMBER = ?, "
                    "ERROR_CREATION_TIME = ? WHERE LOCAL_TRANSACTION_ID = ?",
                    (e.code, str(e), number, time.time(), str(local_id))))
                conn.commit()
                raise e from None
    finally:
        engine.target.close()
    ctx.ddl_commit()
    ctx.add_commit_work(lambda c: c.execute("DELETE FROM SLUICE_APPLY_ERROR WHERE LOCAL_TRANSACTION_ID = ?",
                                            (str(local_id),)))
    conn.commit()


def codec_decoder(ctx: CaptureContext, owner: str, name: str) -> Any:
    """Decode a message as the apply queue stored it."""
    catalog = ctx.context.catalog
    return catalog.codec(catalog.queue_by_key((owner, name)).table).decode


def codec_encoder(ctx: CaptureContext, owner: str, name: str) -> Any:
    catalog = ctx.context.catalog
    return catalog.codec(catalog.queue_by_key((owner, name)).table).encode
