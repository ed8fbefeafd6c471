"""The error queue on the dashboard: DBA_APPLY_ERROR read for display, and the two
actions on an entry — DBMS_APPLY_ADM.EXECUTE_ERROR (apply it again) and DELETE_ERROR —
run on a session of the HTTP user (see :mod:`.access`: DBMS_APPLY_ADM's own privilege
check decides)."""

from __future__ import annotations

import json
from typing import Any

from ..connection import proxy_connect

EXCERPT_CHARS = 240
LIMIT = 200               # entries shown (the oldest first, as DBA_APPLY_ERROR lists them)
ACTIONS = {"execute": "execute_error", "delete": "delete_error"}

_QUERY = """SELECT e.LOCAL_TRANSACTION_ID, e.APPLY_NAME, e.QUEUE_OWNER, e.QUEUE_NAME, e.SOURCE_DATABASE,
       e.SOURCE_TRANSACTION_ID, e.SOURCE_COMMIT_SCN, e.MESSAGE_NUMBER, e.ERROR_NUMBER, e.ERROR_MESSAGE,
       e.MESSAGE_COUNT, e.ERROR_CREATION_TIME, s.MESSAGES
  FROM DBA_APPLY_ERROR e JOIN SLUICE_APPLY_ERROR s ON s.LOCAL_TRANSACTION_ID = e.LOCAL_TRANSACTION_ID
 ORDER BY s.ERROR_CREATION_TIME"""


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def excerpt(messages: str | None, number: int | None) -> str:
    """The failing message (``number``, from 1) as the apply queue stored it, cut short
    (a JSON document — an LCR, a JSON payload — without its empty fields, so that the
    values come within the excerpt)."""
    try:
        stored = json.loads(messages or "[]")
        text = stored[max(0, (number or 1) - 1)][0]
    except (ValueError, IndexError, TypeError, KeyError):
        return ""
    if isinstance(text, str):
        try:
            text = json.loads(text)
        except ValueError:
            pass
    if not isinstance(text, str):
        text = json.dumps(_without_nulls(text), default=str, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS - 1] + "…"


def _shown(created: Any) -> str | None:
    """ERROR_CREATION_TIME (a datetime in the session's zone: the host's) as the page shows it: to
    the millisecond."""
    return None if created is None else created.isoformat(" ", "milliseconds")


def read_errors(conn: Any) -> tuple[int, list[dict]]:
    """(how many entries there are, the first :data:`LIMIT` of them) — plain values only:
    the browser escapes nothing itself, it only ever sets text."""
    _, rows = conn.query(_QUERY, None)
    entries = []
    for r in rows[:LIMIT]:
        entries.append({"id": r[0], "apply": r[1], "queue": f"{r[2]}.{r[3]}", "source_database": r[4],
                        "source_transaction_id": r[5], "source_commit_scn": r[6],
                        "message_number": r[7], "error_number": r[8], "error_message": r[9],
                        "message_count": r[10], "created": _shown(r[11]),
                        "excerpt": excerpt(r[12], r[7])})
    return len(rows), entries


def act(dsn: str, proxy_user: str, user: str, action: str, local_transaction_id: str) -> None:
    """Run ``action`` (a key of :data:`ACTIONS`) on one entry as ``user``.

    :raises DatabaseError: what DBMS_APPLY_ADM raises — ORA-01031 without the privilege,
        ORA-26673 for an entry that is gone, the apply error again when it still fails.
    """
    conn = proxy_connect(dsn, user, proxy_user)
    try:
        getattr(conn.apply_adm, ACTIONS[action])(local_transaction_id=local_transaction_id)
        conn.commit()
    finally:
        conn.close()
