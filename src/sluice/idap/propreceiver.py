"""Propagated batches posted to ``/aqserv/servlet/AQPropServlet`` (seed 004 "Using HTTP
and HTTPS for Oracle Streams AQ Propagation").

A Sluice site propagating over an HTTP database link POSTs a batch
(:mod:`sluice.streams.propagation.wire`, media type ``application/vnd.sluice.propagation+json``)
with the link's credentials, which name an AQ agent enabled for HTTP here (seed 004
steps 6.1-6.2: CREATE_AQ_AGENT with enable_http, ENABLE_DB_ACCESS).  The servlet picks
the mapped database user that may enqueue into the batch's destination queues — as for
an AQXmlSend —, enqueues the whole batch with its de-duplication rows in one
transaction of a pooled session as that user, commits, and only then answers 200: the
sender takes that answer as the destination's acknowledgement.  Anything wrong — a
malformed batch, an unknown queue, a refused privilege — is a SOAP Fault with the ORA
error, and nothing of the batch is committed.  IDAP documents sent to AQPropServlet
are served as on AQServlet.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..model import Agent
from ..streams.propagation.receiver import receive
from ..streams.propagation.wire import LIMIT_HEADER, MAX_BATCH_BYTES, MEDIA_TYPE, from_json

if TYPE_CHECKING:
    from .app import Servlet

__all__ = ["LIMIT_HEADER", "MAX_BATCH_BYTES", "MEDIA_TYPE", "receive_batch"]


def receive_batch(servlet: "Servlet", agent_name: str, body: bytes) -> bytes:
    """Commit one propagated batch (in a worker thread); the answer's body.
    :raises: the batch's error (the caller answers with its SOAP Fault)."""
    batch = from_json(body)
    agent = servlet.policy.agent(agent_name)
    user = None
    for dest in sorted({m.dest_queue for m in batch.messages}):
        senders = {Agent(*m.sender) if m.sender else None for m in batch.messages if m.dest_queue == dest}
        user, _ = servlet.policy.choose(agent, dest, "ENQUEUE", sorted(senders, key=repr), current=user,
                                        in_transaction=user is not None)
    if user is None:                 # an empty batch: nothing to commit
        return b'{"received":0}'
    pool = servlet.sessions.pool
    conn = pool.acquire(user)
    try:
        received = receive(conn.context, batch, foreign=True)
        conn.commit()
    except BaseException:
        pool.discard(conn)           # closed: what it did is rolled back
        raise
    pool.release(conn, renew=False)     # it only enqueued, and committed
    return json.dumps({"received": received}).encode()
