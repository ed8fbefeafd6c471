"""How a notification reaches its client: callback, HTTP POST, mail, PL/SQL procedure.

Every channel raises on failure; the dispatcher retries with back-off.  (A callback that
raises was called: that is the application's error, logged, not a failed delivery.)  HTTP and mail
carry the XML presentation of seed 004 "AQXmlNotification" (notification_options with
destination and consumer_name, then the message_set of message headers); a payload,
when the registration asked for it (RAW queues), travels in message_payload.
"""

from __future__ import annotations

import logging
import smtplib
import urllib.request
from email.message import EmailMessage
from xml.sax.saxutils import escape

from ... import constants as C
from .registration import CALLBACKS, NotificationMessage, Registration

log = logging.getLogger("sluice.notify")
HTTP_TIMEOUT = 10.0
SOAP = "http://schemas.xmlsoap.org/soap/envelope/"
IDAP = "http://ns.oracle.com/AQ/schemas/access"


class Event:
    """What one notification tells: the messages (one, or a time group) or a purge."""

    def __init__(self, reg: Registration, kind: int, msgids: list[bytes], consumer: str | None,
                 payloads: list[bytes | None], count: int, delivery_mode: int = C.MSG_PERSISTENT) -> None:
        self.reg, self.kind, self.msgids, self.consumer = reg, kind, msgids, consumer
        self.payloads, self.count = payloads, count
        self.delivery_mode = delivery_mode    # of the (last) message: persistent or buffered


def deliver(event: Event, mail: dict, procedure) -> None:
    """Send ``event`` its registration's way.  ``mail``: DBMS_AQELM settings;
    ``procedure(name, user)``: the Python function standing for the PL/SQL procedure ``name``
    a registration of ``user`` names."""
    reg = event.reg
    if reg.protocol == "CALLBACK":
        sub = CALLBACKS.get(reg.id)
        if sub is None:
            raise LookupError(f"the callback of registration {reg.id} is gone")
        last = event.msgids[-1] if event.msgids else None
        try:
            sub.callback(NotificationMessage(sub, reg, event.kind, last, event.consumer, event.msgids,
                                             event.count, event.delivery_mode))
        except Exception:   # noqa: BLE001 — the application's error, not a failed delivery
            # the callback had the notification: python-oracledb reports what it raised and
            # goes on (OCI has no way for a callback to refuse one) — offering it again
            # would call the callback with the same message once per back-off, 16 times
            log.exception("the notification callback of %s raised", reg.name)
    elif reg.protocol == "HTTP":
        body = xml_notification(event).encode("utf-8")
        headers = {"Content-Type": "text/xml; charset=utf-8"}
        if event.kind == C.EVENT_DEREG:   # the body says it too: an empty message_set
            headers["X-Oracle-AQ-Event"] = "DEREG"
        req = urllib.request.Request(reg.location, data=body, method="POST", headers=headers)
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as resp:   # noqa: S310 (a registered URL)
            if resp.status >= 300:
                raise OSError(f"HTTP {resp.status} from {reg.location}")
    elif reg.protocol == "MAIL":
        host = mail.get("MAILHOST")
        if not host:
            raise OSError("no mail host: set one with DBMS_AQELM.SET_MAILHOST")
        msg = EmailMessage()
        msg["From"] = mail.get("SENDFROM") or "sluice@localhost"
        msg["To"] = reg.location
        purged = " (registration purged)" if event.kind == C.EVENT_DEREG else ""
        msg["Subject"] = f"Oracle AQ notification: {reg.name}{purged}"
        msg.set_content(xml_notification(event), subtype="xml")
        with smtplib.SMTP(host, int(mail.get("MAILPORT") or 25), timeout=HTTP_TIMEOUT) as smtp:
            smtp.send_message(msg)
    elif reg.protocol == "PLSQL":
        fn = procedure(reg.location, reg.user)
        descr = {"msg_id": event.msgids[-1] if event.msgids else None, "queue_name": reg.queue,
                 "consumer_name": event.consumer, "msgid_array": list(event.msgids),
                 "ntfns_recvd": event.count, "event_type": event.kind,
                 "delivery_mode": event.delivery_mode}
        payload = event.payloads[-1] if event.payloads else None
        fn(reg.context, reg.spec(), descr, payload, len(payload) if payload else 0)
    else:
        raise ValueError(f"unknown notification protocol {reg.protocol}")


def xml_notification(event: Event) -> str:
    """The AQXmlNotification document (seed 004 "IDAP Notification") for ``event``, valid
    against the IDAP schema: notification_options (destination, consumer_name — empty
    for a single-consumer queue), then the message_set.  message_count is the number of
    messages the notification stands for (a LAST time group lists one message of
    several); a registration's final notification (timeout, purge) has an empty set.
    The header carries what the outbox keeps of each message: its id and READY state;
    a RAW payload, when the registration asked for it, travels as ``raw`` hex."""
    reg = event.reg
    messages = []
    for i, msgid in enumerate(event.msgids):
        payload = event.payloads[i] if i < len(event.payloads) else None
        body = (f"<message_payload><raw>{payload.hex().upper()}</raw></message_payload>"
                if payload is not None else "")
        messages.append(f"<message><message_number>{i + 1}</message_number><message_header>"
                        f"<message_id>{msgid.hex().upper()}</message_id><sender_id/>"
                        f"<message_state>{C.MSG_READY}</message_state></message_header>{body}</message>")
    count = event.count if event.kind != C.EVENT_DEREG else 0
    return (f'<?xml version="1.0"?>\n<Envelope xmlns="{SOAP}"><Body>'
            f'<AQXmlNotification xmlns="{IDAP}"><notification_options>'
            f"<destination>{escape(reg.queue)}</destination>"
            f"<consumer_name>{escape(event.consumer or '')}</consumer_name>"
            f"</notification_options><message_set><message_count>{count}</message_count>"
            f"{''.join(messages)}</message_set></AQXmlNotification></Body></Envelope>")
