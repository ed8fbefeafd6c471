"""``sluice idap send|receive``: the AQ servlet from the command line, through
:class:`~sluice.idap.client.Client` (an AQ agent's HTTP session, not a database
connection).

    sluice idap --url http://127.0.0.1:8080 --agent john --agent-password welcome \\
        send AQUSER.RAW_MSGQ 'hello' --correlation greeting
    sluice idap --url http://127.0.0.1:8080 --agent john --agent-password welcome \\
        receive AQUSER.RAW_MSGQ --wait 5

Each command is one HTTP session, so it commits its work (the piggy-backed
``<AQXmlCommit/>``) unless ``--no-commit`` asks to see a request undone.
"""

from __future__ import annotations

import sys

import click
from lxml import etree

from ..errors import Error
from .client import DEFAULT_SERVLET, Client, ReceivedMessage

STATES = {0: "READY", 1: "WAITING", 2: "PROCESSED", 3: "EXPIRED"}


@click.group()
@click.option("--url", envvar="SLUICE_IDAP_URL", default="http://127.0.0.1:8080", show_default=True,
              help="The servlet's server (sluice serve).")
@click.option("--servlet", default=DEFAULT_SERVLET, show_default=True, help="The servlet's path.")
@click.option("--agent", envvar="SLUICE_IDAP_AGENT", required=True, help="AQ agent (HTTP user).")
@click.option("--agent-password", envvar="SLUICE_IDAP_PASSWORD", required=True, help="Its password.")
@click.pass_context
def idap(ctx: click.Context, url: str, servlet: str, agent: str, agent_password: str) -> None:
    """AQ over SOAP/HTTP (seed 004): send and receive through an AQ servlet."""
    ctx.obj = Client(url, agent, agent_password, servlet=servlet)
    ctx.call_on_close(ctx.obj.close)


def _fail(e: Error) -> None:
    click.echo(f"error: {e}", err=True)
    sys.exit(1)


@idap.command()
@click.argument("destination")
@click.argument("payloads", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "hex", "xml"]), default="text", show_default=True,
              help="text: a RAW payload of the UTF-8 bytes; hex: a RAW payload in hexadecimal; "
                   "xml: the payload element (<EMP_TYP>…</EMP_TYP>, <jms_text_message>…).")
@click.option("--correlation", default=None)
@click.option("--priority", type=int, default=None)
@click.option("--delay", type=int, default=None)
@click.option("--expiration", type=int, default=None)
@click.option("--sender", default=None, help="sender_id agent name.")
@click.option("--recipient", "recipients", multiple=True, help="A recipient (repeat for a list).")
@click.option("--publish", is_flag=True, help="AQXmlPublish (a multi-consumer queue) instead of AQXmlSend.")
@click.option("--commit/--no-commit", default=True, show_default=True)
@click.pass_obj
def send(client: Client, destination: str, payloads: tuple[str, ...], fmt: str, correlation: str | None,
         priority: int | None, delay: int | None, expiration: int | None, sender: str | None,
         recipients: tuple[str, ...], publish: bool, commit: bool) -> None:
    """Enqueue PAYLOADS (one message each) to DESTINATION; prints the message ids."""
    try:
        values = [p.encode() if fmt == "text" else bytes.fromhex(p) if fmt == "hex" else p for p in payloads]
    except ValueError as e:
        raise click.BadParameter(f"not hexadecimal: {e}", param_hint="PAYLOADS") from e
    try:
        ids = client.send(destination, values, correlation=correlation, priority=priority, delay=delay,
                          expiration=expiration, sender_id=sender, recipients=recipients, commit=commit,
                          method="AQXmlPublish" if publish else "AQXmlSend")
    except Error as e:
        _fail(e)
    for msgid in ids:
        click.echo(msgid)


@idap.command()
@click.argument("destination")
@click.option("--consumer", default=None, help="consumer_name (multi-consumer queues).")
@click.option("--wait", type=int, default=0, show_default=True, help="Seconds to wait for a message.")
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True, help="batch_size.")
@click.option("--correlation", default=None, help="Selector: correlation identifier (LIKE pattern).")
@click.option("--msgid", default=None, help="Selector: message id (hexadecimal).")
@click.option("--condition", default=None, help="Selector: condition, e.g. \"tab.user_data.deptno = 60\".")
@click.option("--browse", is_flag=True, help="dequeue_mode BROWSE: leave the messages.")
@click.option("--commit/--no-commit", default=True, show_default=True)
@click.pass_obj
def receive(client: Client, destination: str, consumer: str | None, wait: int, count: int,
            correlation: str | None, msgid: str | None, condition: str | None, browse: bool,
            commit: bool) -> None:
    """Dequeue up to --count messages from DESTINATION and print them."""
    try:
        messages = client.receive(destination, consumer_name=consumer, wait_time=wait, batch_size=count,
                                  correlation=correlation, message_id=msgid, condition=condition,
                                  dequeue_mode="BROWSE" if browse else None, commit=commit)
    except Error as e:
        _fail(e)
    for m in messages:
        _show(m)
    if not messages:
        click.echo("no message")


def _show(m: ReceivedMessage) -> None:
    state = STATES.get(m.message_state, str(m.message_state))
    click.echo(f"{m.message_id}  priority={m.priority}  correlation={m.correlation or ''}  state={state}  "
               f"delivery_count={m.delivery_count}")
    raw = m.raw
    if raw is not None:
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            text = raw.hex().upper()
    elif m.payload is not None:
        text = etree.tostring(m.payload, encoding="unicode")
    else:
        text = "(no payload)"
    click.echo(f"    {text}")
