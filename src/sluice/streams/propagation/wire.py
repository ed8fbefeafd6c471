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
import math
import struct
from dataclasses import dataclass, field
from typing import Any

from ...charset import convertible
from ...errors import ora
from ...model import INT32_MAX, check_int64, check_priority

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
    # whether the source queue is sharded: the destination refuses a batch between a sharded
    # and a classic queue (seed 003), which the source cannot check for a queue at a link
    # (ORA-24205 there).  None: a sender that does not say (before this field; LCR staging)
    source_sharded: bool | None = None


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
                       "sharded": batch.source_sharded, "messages": msgs}, separators=(",", ":")).encode()


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
                       "resend": batch.resend, "acked": acked, "sharded": batch.source_sharded,
                       "messages": msgs}, separators=(",", ":")).encode()
    return b"".join([WIRE_MAGIC, _HEAD.pack(len(head)), head, *raws])


# A message id as a Sluice sender writes it (store.base.new_msgid: RAW(16)), in hex.  The
# destination's de-duplication rows hold the ids of a batch end to end, all of one
# length (receiver._rows): an id of another length — an empty one above all — is refused.
MSGID_BYTES = 16

# What from_json checks raises ValueError (or the parser one of these): ORA-00600, a
# malformed batch — a sender's fault, answered and not logged.  A value of the right type
# out of its range is the error an enqueue gives (ORA-01426, ORA-25208, ORA-25209).
_MALFORMED = (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError, RecursionError,
              binascii.Error, struct.error)


def _msgid(text: Any, what: str) -> bytes:
    msgid = bytes.fromhex(text) if type(text) is str and len(text) == 2 * MSGID_BYTES else b""
    if len(msgid) != MSGID_BYTES:       # (fromhex skips blanks)
        raise ValueError(f"{what} is no message id ({MSGID_BYTES} bytes in hex)")
    return msgid


def _acked(msgid: bytes) -> bytes:
    if len(msgid) != MSGID_BYTES:
        raise ValueError(f"an acknowledged message id of {len(msgid)} bytes")
    return msgid


def _text(value: Any, what: str) -> str:
    """``value``, a string the stores can hold: UTF-8 has no lone surrogate (JSON's "\\ud800")."""
    if type(value) is not str:
        raise ValueError(f"{what} is no string")
    if not convertible(value):      # (the message does not quote it: it would hold the surrogate)
        raise ValueError(f"{what} is no UTF-8 text")
    return value


def _texts(value: Any, what: str, n: int) -> tuple[str | None, ...]:
    """A list of ``n`` strings or nulls."""
    if type(value) is not list or len(value) != n:
        raise ValueError(f"{what} is no list of {n}")
    return tuple(None if v is None else _text(v, what) for v in value)


def _sender(value: Any) -> tuple[str | None, str | None, int]:
    """SYS.AQ$_AGENT(name, address, protocol) as to_json writes it."""
    if type(value) is not list or len(value) != 3:
        raise ValueError("the sender is no list of 3")
    name, address, protocol = value
    if protocol is None:        # a NULL protocol is SYS.AQ$_AGENT's default, 0
        protocol = 0
    if type(protocol) is not int:
        raise ValueError("the sender's protocol is no integer")
    return (None if name is None else _text(name, "the sender's name"),
            None if address is None else _text(address, "the sender's address"),
            check_int64("sender protocol", protocol))


def _seconds(value: Any, what: str, negative: int) -> float | None:
    """A delay or expiration left, in seconds: at most what an enqueue takes (a BINARY_INTEGER,
    model.MessageProperties); below 0 ORA-``negative``."""
    if value is None:
        return None
    if type(value) is not float and type(value) is not int:
        raise ValueError(f"the {what} is no number")
    if value < 0:
        raise ora(negative, value)
    if not value <= INT32_MAX:      # and NaN
        raise ora(1426, f"{what} {value} is outside 0..{INT32_MAX}")
    return float(value)


def _message(row: Any, take: Any) -> Propagated:
    """One of a batch's messages (:func:`to_json`'s list); ``take``: the framed form's payload
    bytes of a length (None: the JSON form, payloads in base64)."""
    if type(row) is not list or len(row) < 14:
        raise ValueError("a message is no list of 14")
    (dq, msgid, original, ptype, data, priority, delay, expiration, corr, sender, recipients,
     group, oq, enq_time) = row[:14]
    if data is not None:
        if type(data) is not dict:
            raise ValueError("a payload is no object")
        if "s" in data:
            data = _text(data["s"], "a text payload")
        elif take is not None:
            data = take(data["n"])
        else:
            data = base64.b64decode(_text(data["b"], "a RAW payload"), validate=True)
    if type(original) is not str or not original:
        raise ValueError("the original message id is no hex")
    if type(priority) is not int:
        raise ValueError("the priority is no integer")
    if recipients is not None and type(recipients) is not list:
        raise ValueError("the recipients are no list")
    if (type(enq_time) is not float and type(enq_time) is not int) or not math.isfinite(enq_time):
        raise ValueError("the enqueue time is no number")
    return Propagated(
        _text(dq, "the destination queue"), _msgid(msgid, "the message id"), bytes.fromhex(original),
        _text(ptype, "the payload type"), data, check_priority(priority),
        _seconds(delay, "delay", 25208), _seconds(expiration, "expiration", 25209),
        None if corr is None else _text(corr, "the correlation"), None if sender is None else _sender(sender),
        None if recipients is None else [_text(r, "a recipient") for r in recipients],
        None if group is None else _text(group, "the group"),
        None if oq is None else _texts(oq, "the original queue", 2), float(enq_time),
        len(row) > 14 and bool(row[14]))


def from_json(body: bytes) -> Batch:
    """The batch in ``body`` (:func:`to_wire`'s or :func:`to_json`'s form).
    :raises: ORA-00600 (a malformed batch: nothing of it may be committed); ORA-01426,
        ORA-25208, ORA-25209 (a number out of its range)."""
    try:
        framed = body[:4] == WIRE_MAGIC
        take = None
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
        else:
            doc = json.loads(body)
        if type(doc) is not dict or type(doc.get("acked", [])) is not list or type(doc["messages"]) is not list:
            raise ValueError("no batch")
        acked = [(_text(q, "an acknowledged queue"),
                  _acked(take(k) if framed else base64.b64decode(_text(k, "an acknowledged id"), validate=True)))
                 for q, k in doc.get("acked", ())]
        sharded = doc.get("sharded")
        if sharded is not None and type(sharded) is not bool:
            raise ValueError("sharded is not a boolean")
        batch = Batch(_text(doc["source_site"], "the source site"), _text(doc["source_queue"], "the source queue"),
                      resend=bool(doc.get("resend", True)), acked=acked, source_sharded=sharded)
        batch.messages = [_message(row, take) for row in doc["messages"]]
        if not batch.source_site or not batch.source_queue:
            raise ValueError("no source")
        if framed and at != len(body):
            raise ValueError("bytes after the last payload")
        return batch
    except _MALFORMED as e:
        raise ora(600, f"malformed propagation batch: {e}") from None


# What one request to a propagation servlet may carry unless its ``sluice serve
# --max-batch-bytes`` says otherwise: the sender starts from this and learns the servlet's
# own from the header every AQPropServlet answer carries (a 413 included).
MAX_BATCH_BYTES = 32 << 20
LIMIT_HEADER = "Sluice-Max-Batch-Bytes"
# a message's bytes in to_wire's head besides its strings' characters (ids, numbers,
# brackets, nulls, the quotes of up to 8 strings)
_FIXED = 250


def wire_size(m: Propagated) -> int:
    """At most the bytes ``m`` adds to a batch in :func:`to_wire`'s form.  A string costs
    up to 12 bytes a character in JSON ("\\ud83d\\ude00" for one astral character);
    a long text payload is measured (``json.dumps``, linear).  Per message, once per batch
    sent: kept to arithmetic (no lists)."""
    data = m.user_data
    if data is None:
        n = 4
    elif isinstance(data, (bytes, bytearray, memoryview)):
        n = len(data) + 16
    elif len(data) <= 4096:
        n = 12 * len(data) + 8
    else:
        n = len(json.dumps(data)) + 8
    chars = len(m.dest_queue) + len(m.payload_type)
    if m.correlation:
        chars += len(m.correlation)
    if m.group:
        chars += len(m.group)
    sender = m.sender
    if sender:
        chars += len(sender[0] or "") + len(sender[1] or "")
    recipients = m.recipients
    if recipients:
        n += 3 * len(recipients)
        for r in recipients:
            chars += len(r)
    if m.original_queue:
        chars += len(m.original_queue[0] or "") + len(m.original_queue[1] or "")
    return n + _FIXED + 12 * chars + 2 * (len(m.source_msgid) + len(m.original_msgid))


def head_size(batch: Batch, acked: bool = True) -> int:
    """At most the bytes of ``batch``'s frame and head without its messages (its
    acknowledgements included unless ``acked`` is False)."""
    n = 160 + 12 * (len(batch.source_site) + len(batch.source_queue))
    if acked:
        n += sum(len(a) + 12 * len(q) + 16 for q, a in batch.acked)
    return n


def alone_size(batch: Batch, m: Propagated) -> int:
    """The bytes of ``m`` posted alone from ``batch``'s source (no acknowledgements)."""
    return len(to_wire(Batch(batch.source_site, batch.source_queue, [m], resend=True,
                             source_sharded=batch.source_sharded)))


def split(batch: Batch, max_bytes: int) -> list[Batch]:
    """``batch`` as batches of at most ``max_bytes`` each once encoded (a servlet's
    request limit), in order; its acknowledgements ride the first (or the first few).  A message larger
    than that goes alone (the sender checks it first: :func:`alone_size`).  A source
    transaction larger than the limit is cut (each part keeps its group there)."""
    out: list[Batch] = []
    base = head_size(batch, acked=False)
    acked, size = [], base
    for q, a in batch.acked:         # more than a request holds: the first parts carry them alone
        cost = len(a) + 12 * len(q) + 16
        if acked and size + cost > max_bytes:
            out.append(Batch(batch.source_site, batch.source_queue, resend=batch.resend, acked=acked,
                             source_sharded=batch.source_sharded))
            acked, size = [], base
        acked.append((q, a))
        size += cost
    current = Batch(batch.source_site, batch.source_queue, resend=batch.resend, acked=acked,
                    source_sharded=batch.source_sharded)
    for m in batch.messages:
        cost = wire_size(m)
        if (current.messages or current.acked) and size + cost > max_bytes:
            out.append(current)
            current = Batch(batch.source_site, batch.source_queue, resend=batch.resend,
                            source_sharded=batch.source_sharded)
            size = base
        current.messages.append(m)
        size += cost
    if current.messages or current.acked or not out:
        out.append(current)
    return out
