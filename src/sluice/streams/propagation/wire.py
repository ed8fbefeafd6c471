"""A propagated batch: what a source site sends a destination, in memory and as JSON.

One :class:`Propagated` per message and destination queue: the stored payload as it is
(its queue table's stored form — bytes for RAW, text for the others — so nothing is
decoded and re-encoded when source and destination hold the same type), the time left
of its delay and expiration (seed 003 "Priority and Ordering of Messages in
Propagation": the time already spent is deducted), its first message id
(ORIGINAL_MSGID, kept across every hop), its source transaction (grouping), and the
names of its recipients at the destination (None: the destination queue's subscribers;
seed 003 "Message Recipients").  A :class:`Batch` adds who sends it: the source site's
global name and queue, which with each source message id is what the destination
de-duplicates on.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from dataclasses import dataclass, field
from typing import Any

from ...errors import ora

MEDIA_TYPE = "application/vnd.sluice.propagation+json"


@dataclass(slots=True)
class Propagated:
    dest_queue: str                        # OWNER.Q at the destination
    source_msgid: bytes
    original_msgid: bytes
    payload_type: str
    user_data: Any                         # bytes (RAW) or str, as stored
    priority: int = 1
    delay: float | None = None             # seconds left before it is READY
    expiration: float | None = None        # seconds it lives once READY
    correlation: str | None = None
    sender: tuple[str | None, str | None, int | None] | None = None
    recipients: list[str] | None = None
    group: str | None = None               # the source transaction
    original_queue: tuple[str, str] | None = None     # (owner, name) where it was first enqueued
    enq_time: float = 0.0
    buffered: bool = False                 # into the destination's buffered queue (best effort)

    @property
    def size(self) -> int:
        return len(self.user_data) if self.user_data is not None else 0


@dataclass(slots=True)
class Batch:
    """``resend``: the batch may hold messages the destination committed before (the
    sender's first batch since it started, or the first since a failure): the destination
    looks its de-duplication rows up first.  Otherwise it only writes them, and their
    primary key refuses a duplicate the sender could not know of — the sender then sends
    the batch again as a resend (:meth:`.sites.Destination.deliver`)."""

    source_site: str
    source_queue: str
    messages: list[Propagated] = field(default_factory=list)
    resend: bool = True
    # (destination queue, id) of messages of earlier batches the source has let go since
    # (committed their dequeue): they can never come again, so the destination drops their
    # rows — only those, not another schedule's rows of the same message at another queue
    acked: list[tuple[str, bytes]] = field(default_factory=list)


def to_json(batch: Batch) -> bytes:
    msgs = []
    for m in batch.messages:
        data = m.user_data
        msgs.append([m.dest_queue, m.source_msgid.hex(), m.original_msgid.hex(), m.payload_type,
                     {"b": base64.b64encode(data).decode()} if isinstance(data, (bytes, bytearray, memoryview))
                     else None if data is None else {"s": data},
                     m.priority, m.delay, m.expiration, m.correlation,
                     list(m.sender) if m.sender else None, m.recipients, m.group,
                     list(m.original_queue) if m.original_queue else None, m.enq_time, int(m.buffered)])
    return json.dumps({"source_site": batch.source_site, "source_queue": batch.source_queue,
                       "resend": batch.resend, "acked": [[q, base64.b64encode(a).decode()] for q, a in batch.acked],
                       "messages": msgs}, separators=(",", ":")).encode()


# The framed form a sender posts (:func:`to_wire`): the magic, the length of a JSON head
# (4 bytes, big-endian), the head — the batch as :func:`to_json` writes it, except that
# each RAW payload and each acknowledged message id is its length there ({"n": length},
# [queue, length]) —, then those bytes one after the other in the order the head names
# them (acknowledgements first).  No base64 and no JSON string of a payload: the receiver
# slices them out.  :func:`from_json` reads either form.
WIRE_MAGIC = b"SLP2"
_HEAD = struct.Struct(">I")


def to_wire(batch: Batch) -> bytes:
    raws: list[bytes] = []
    msgs = []
    acked = []
    for q, a in batch.acked:
        acked.append([q, len(a)])
        raws.append(a)
    for m in batch.messages:
        data = m.user_data
        if isinstance(data, (bytes, bytearray, memoryview)):
            raws.append(data)
            data = {"n": len(data)}
        elif data is not None:
            data = {"s": data}
        msgs.append([m.dest_queue, m.source_msgid.hex(), m.original_msgid.hex(), m.payload_type, data,
                     m.priority, m.delay, m.expiration, m.correlation,
                     list(m.sender) if m.sender else None, m.recipients, m.group,
                     list(m.original_queue) if m.original_queue else None, m.enq_time, int(m.buffered)])
    head = json.dumps({"source_site": batch.source_site, "source_queue": batch.source_queue,
                       "resend": batch.resend, "acked": acked, "messages": msgs}, separators=(",", ":")).encode()
    return b"".join([WIRE_MAGIC, _HEAD.pack(len(head)), head, *raws])


# A message id as a Sluice sender writes it (store.base.new_msgid: RAW(16)), in hex.  The
# destination's de-duplication rows hold the ids of a batch end to end, all of one
# length (receiver._rows): an id of another length — an empty one above all — is refused.
MSGID_BYTES = 16


def _msgid(text: Any, what: str) -> bytes:
    if type(text) is not str or len(text) != 2 * MSGID_BYTES:
        raise ValueError(f"{what} is no message id ({MSGID_BYTES} bytes in hex)")
    msgid = bytes.fromhex(text)
    if len(msgid) != MSGID_BYTES:       # fromhex skips blanks
        raise ValueError(f"{what} is no message id ({MSGID_BYTES} bytes in hex)")
    return msgid


def _acked(msgid: bytes) -> bytes:
    if len(msgid) != MSGID_BYTES:
        raise ValueError(f"an acknowledged message id of {len(msgid)} bytes")
    return msgid


def from_json(body: bytes) -> Batch:
    """The batch in ``body`` (:func:`to_wire`'s or :func:`to_json`'s form).
    :raises: ORA-00600 (a malformed batch: nothing of it may be committed)."""
    try:
        framed = body[:4] == WIRE_MAGIC
        if framed:
            n = _HEAD.unpack_from(body, 4)[0]
            doc = json.loads(body[8:8 + n])
            raw = memoryview(body)
            at = 8 + n

            def take(length: Any) -> bytes:
                nonlocal at
                if type(length) is not int or length < 0 or at + length > len(body):
                    raise ValueError("a length beyond the batch")
                at += length
                return bytes(raw[at - length:at])
            acked = [(str(q), _acked(take(k))) for q, k in doc.get("acked", ())]
        else:
            doc = json.loads(body)
            acked = [(str(q), _acked(base64.b64decode(a, validate=True))) for q, a in doc.get("acked", ())]
        batch = Batch(str(doc["source_site"]), str(doc["source_queue"]), resend=bool(doc.get("resend", True)),
                      acked=acked)
        for row in doc["messages"]:
            (dq, msgid, original, ptype, data, priority, delay, expiration, corr, sender, recipients,
             group, oq, enq_time) = row[:14]
            buffered = len(row) > 14 and bool(row[14])
            if data is not None:
                if "s" in data:
                    data = str(data["s"])
                elif framed:
                    data = take(data["n"])
                else:
                    data = base64.b64decode(data["b"], validate=True)
            batch.messages.append(Propagated(
                str(dq), _msgid(msgid, "the message id"), bytes.fromhex(original), str(ptype), data, int(priority),
                None if delay is None else float(delay), None if expiration is None else float(expiration),
                corr, tuple(sender) if sender else None,
                [str(r) for r in recipients] if recipients is not None else None, group,
                tuple(oq) if oq else None, float(enq_time), buffered))
        if not batch.source_site or not batch.source_queue:
            raise ValueError("no source")
        if framed and at != len(body):
            raise ValueError("bytes after the last payload")
        return batch
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error, struct.error) as e:
        raise ora(600, f"malformed propagation batch: {e}") from None


def split(batch: Batch, max_bytes: int) -> list[Batch]:
    """``batch`` as batches of at most about ``max_bytes`` each once encoded (a servlet's
    request limit), cut between source transactions where one allows it; a message
    larger than that goes alone."""
    out: list[Batch] = []
    current = Batch(batch.source_site, batch.source_queue, resend=batch.resend, acked=batch.acked)
    size = 0
    for i, m in enumerate(batch.messages):
        cost = 4 * m.size // 3 + 300 + len(m.recipients or ()) * 40
        same_group = i > 0 and m.group is not None and m.group == batch.messages[i - 1].group
        if current.messages and size + cost > max_bytes and not (same_group and size + cost <= 2 * max_bytes):
            out.append(current)
            current = Batch(batch.source_site, batch.source_queue, resend=batch.resend)
            size = 0
        current.messages.append(m)
        size += cost
    if current.messages or not out:
        out.append(current)
    return out

