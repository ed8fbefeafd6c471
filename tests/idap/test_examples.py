"""Issue 7, acceptance 1: every request example of seed 004 (17-1 to 17-15), posted as the
seed prints it, and the responses checked element by element against Examples 17-16
to 17-21.

Examples 17-2, 17-4, 17-6, 17-8, 17-10 and 17-13 need publish/subscribe (issue 6):
multi-consumer queues, recipient lists, registrations.  Until ``ops.PUBSUB_AVAILABLE``
is set they are answered with a Server Fault naming the missing feature and change
nothing; the expected responses (Examples 17-17, 17-18) are kept here and checked by
the same tests once it is set.
"""

from __future__ import annotations

import pytest

import sluice
from sluice.idap import ops

from .compare import assert_matches
from .conftest import (SOAP, commit_doc, count, example, fault_of, msgids, q, receive,
                       received, xml)

PUBSUB = ops.PUBSUB_AVAILABLE


def _payload(message):
    return [c for c in message.find(q("message_payload"))][0]


def _request_payload(n: int):
    return next(xml(example(n)).iter(q("message_payload")))[0]


def _assert_pubsub_fault(response, queue: str) -> None:
    f = fault_of(response)
    assert f["faultcode"] == "SOAP-ENV:Server"
    assert f["faultstring"].startswith("Server Fault: SLU-00001: not supported")
    assert f["error_message"].startswith("SLU-00001: not supported: ")
    assert "publish/subscribe, issue 6" in f["error_message"] and queue in f["error_message"]


def _subscribe(dsn: str, queue: str, *names: str) -> None:
    """Issue 6's ADD_SUBSCRIBER (used only once publish/subscribe is available)."""
    with sluice.connect(dsn) as admin:
        for name in names:
            admin.aqadm.add_subscriber(queue_name=queue, subscriber=sluice.Agent(name))


# -- enqueue: 17-1, 17-3, 17-5 -> 17-16 ----------------------------------------------
def test_17_1_adt_send_answers_as_17_16(servlet):
    r = servlet.post(example(1))
    assert_matches(xml(example(16)), xml(r), variable=("message_id",))
    assert len(msgids(r)[0]) == 32          # RAW(16), in hexadecimal


def test_17_3_jms_text_send_answers_as_17_16(servlet):
    r = servlet.post(example(3))
    assert_matches(xml(example(16)), xml(r), variable=("message_id",),
                   replace={"QS.NEW_ORDERS_QUE": "AQUSER.JMS_TEXTQ"})
    m = received(servlet.post(receive("AQUSER.JMS_TEXTQ")))[0]
    jms = _payload(m)
    assert jms.tag == q("jms_text_message")
    assert jms.findtext(q("text_data")) == "All things bright and beautiful"
    props = jms.find(q("oracle_jms_properties"))
    assert props.findtext(q("appid")) == "AQProduct" and props.findtext(q("groupid")) == "AQ"
    assert props.findtext(q("userid")) == "AQUSER"        # JMSXUserID: the database user
    users = {p.findtext(q("name")): p.findtext(q("string_value"))
             for p in jms.iter(q("property"))}
    assert users == {"Country": "USA", "State": "California"}
    assert m.find(q("message_header")).findtext(q("correlation")) == "text_msg"


def test_17_5_raw_send_answers_as_17_16(servlet):
    r = servlet.post(example(5))
    assert_matches(xml(example(16)), xml(r), variable=("message_id",),
                   replace={"QS.NEW_ORDERS_QUE": "AQUSER.RAW_MSGQ"})
    digits = "".join(_request_payload(5).text.split())
    m = received(servlet.post(receive("AQUSER.RAW_MSGQ")))[0]
    # the seed prints 139 digits: HEXTORAW reads an odd count with a leading zero
    assert _payload(m).tag == q("raw") and _payload(m).text == "0" + digits


# -- dequeue: 17-7, 17-9, 17-11, 17-12 -------------------------------------------------
def test_17_7_receive_returns_the_17_1_order_element_by_element(servlet):
    sent = msgids(servlet.post(example(1)))[0]
    messages = received(servlet.post(example(7)))
    assert len(messages) == 1
    header = messages[0].find(q("message_header"))
    assert header.findtext(q("message_id")) == sent
    assert header.findtext(q("correlation")) == "ORDER1"
    assert header.find(q("sender_id")).findtext(q("agent_name")) == "scott"
    assert header.findtext(q("message_state")) == "0"
    # nested objects, the VARRAY's ITEMS_ITEM elements, the date as Oracle writes it
    assert_matches(_request_payload(1), _payload(messages[0]))


def test_17_9_receive_by_correlation(servlet):
    servlet.post(example(1))
    other = example(1).replace("<correlation>ORDER1</correlation>", "<correlation>NEW</correlation>") \
        .replace("<ORDERNO>100</ORDERNO>", "<ORDERNO>101</ORDERNO>")
    servlet.post(other)
    messages = received(servlet.post(example(9)))
    assert [m.find(q("message_header")).findtext(q("correlation")) for m in messages] == ["NEW"]
    assert _payload(messages[0]).findtext(q("ORDERNO")) == "101"


def test_17_11_receive_and_commit(servlet, store):
    servlet.post(example(1))
    servlet.post(commit_doc())
    assert count(store, "QS.NEW_ORDERS_QUE") == 1
    assert len(received(servlet.post(example(11)))) == 1
    servlet.post(commit_doc("AQXmlRollback"))       # too late: the receive was committed
    assert count(store, "QS.NEW_ORDERS_QUE") == 0


def test_17_12_browse_leaves_the_message(servlet, store):
    servlet.post(example(1))
    servlet.post(commit_doc())
    assert len(received(servlet.post(example(12)))) == 1
    assert count(store, "QS.NEW_ORDERS_QUE") == 1
    # the session's position is now past the browsed message (NEXT_MESSAGE, seed 003):
    # FIRST_MESSAGE starts over and removes it
    first = "<navigation_mode>FIRST_MESSAGE</navigation_mode>"
    assert len(received(servlet.post(receive("QS.NEW_ORDERS_QUE", extra=first)))) == 1


# -- 17-18 and 17-19: the receive responses -------------------------------------------
def test_17_18_adt_receive_response_element_by_element(servlet):
    """Example 17-18's message, sent to a single-consumer EMP_TYP queue and received:
    the response is 17-18's but for the queue's name (17-18 itself is a multi-consumer
    queue's, see test_17_8)."""
    payload = example(2)[example(2).index("<EMP_TYP>"):example(2).index("</EMP_TYP>") + 10]
    send = example(1).replace("QS.NEW_ORDERS_QUE", "AQUSER.EMP_QUE") \
        .replace("<correlation>ORDER1</correlation>", "<correlation>TKAXAP10</correlation>"
                                                      "<priority>1</priority>")
    send = send[:send.index("<ORDER_TYP>")] + payload + send[send.index("</ORDER_TYP>") + 12:]
    msgids(servlet.post(send))
    r = servlet.post(receive("AQUSER.EMP_QUE"))
    assert_matches(xml(example(18)), xml(r), variable=("message_id",), extra_ok=("delay",),
                   replace={"AQUSER.EMP_TOPIC": "AQUSER.EMP_QUE"})


def test_17_19_jms_receive_response_element_by_element(servlet):
    """The JMS text message of Example 17-19, sent and received.  17-19 prints
    message_state before sender_id and dates like 01-12-2000, which its schema does
    not allow (xsd:date); the response keeps the schema's order and dates."""
    send = example(3).replace("<correlation>text_msg</correlation>",
                              "<correlation>TKAXAP01</correlation><priority>1</priority>") \
        .replace("<agent_name>john</agent_name>", "<agent_name>scott</agent_name>") \
        .replace("<appid>AQProduct</appid>", "<reply_to><agent_name>oracle</agent_name><address>"
                 "redwoodshores</address><protocol>100</protocol></reply_to><appid>AQProduct</appid>")
    msgids(servlet.post(send))
    r = servlet.post(receive("AQUSER.JMS_TEXTQ"))
    assert_matches(xml(example(19)), xml(r), variable=("message_id", "timestamp", "recv_timestamp"),
                   extra_ok=("delivery_count",), unordered=("message_header",))


# -- transactions: 17-14, 17-15 -> 17-20 -----------------------------------------------
def test_17_14_commit_answers_as_17_20(servlet, store):
    servlet.post(example(1))
    assert count(store, "QS.NEW_ORDERS_QUE") == 0       # not yet committed
    r = servlet.post(example(14))
    assert_matches(xml(example(20)), xml(r))
    assert count(store, "QS.NEW_ORDERS_QUE") == 1


def test_17_15_rollback_answers_like_17_20(servlet, store):
    servlet.post(example(1))
    r = servlet.post(example(15))
    assert_matches(xml(example(20).replace("AQXmlCommitResponse", "AQXmlRollbackResponse")), xml(r))
    servlet.post(example(14))
    assert count(store, "QS.NEW_ORDERS_QUE") == 0


def test_17_21_fault_layout(servlet, store):
    """Example 17-21's parts: faultcode, faultstring (client or server), detail with the
    status_response of Table 17-6 — SOAP 1.1's unqualified fault children and a QName
    faultcode where the seed prints them in the envelope namespace and 100."""
    r = servlet.post(example(1).replace("QS.NEW_ORDERS_QUE", "QS.NO_SUCH_QUE"))
    f = fault_of(r)
    assert f["faultcode"] == "SOAP-ENV:Client"
    assert f["faultstring"] == "Client Fault: ORA-24010: QUEUE QS.NO_SUCH_QUE does not exist"
    assert (f["status_code"], f["error_code"]) == ("-1", "24010")
    assert f["error_message"] == "ORA-24010: QUEUE QS.NO_SUCH_QUE does not exist"
    expected = xml(example(21)).find(f"{{{SOAP}}}Body/{{{SOAP}}}Fault")
    actual = xml(r).find(f"{{{SOAP}}}Body/{{{SOAP}}}Fault")
    assert [etree_local(c) for c in actual] == [etree_local(c) for c in expected]
    status = expected.find(f"{{{SOAP}}}detail/{{{SOAP}}}status_response")
    assert [etree_local(c) for c in actual.find("detail")[0]] == [etree_local(c) for c in status]
    assert count(store, "QS.NEW_ORDERS_QUE") == 0


def etree_local(el) -> str:
    return el.tag.rsplit("}", 1)[-1]


# -- publish/subscribe examples (issue 6) ------------------------------------------------
@pytest.mark.parametrize("n, queue", [(2, "AQUSER.EMP_TOPIC"), (4, "AQUSER.JMS_MAP_TOPIC"),
                                      (6, "AQUSER.EMP_TOPIC")])
def test_publish_examples_answer_as_17_17(servlet, store, n, queue):
    if PUBSUB:
        _subscribe(store, queue, "APP1")
    r = servlet.post(example(n))
    if not PUBSUB:
        _assert_pubsub_fault(r, queue)
        servlet.post(commit_doc())
        assert count(store, queue) == 0
        return
    assert_matches(xml(example(17)), xml(r), variable=("message_id",),
                   replace={"AQUSER.EMP_TOPIC": queue})


@pytest.mark.parametrize("n", [8, 10])
def test_multi_consumer_receive_examples_answer_as_17_18(servlet, store, n):
    if PUBSUB:
        _subscribe(store, "AQUSER.EMP_TOPIC", "APP1")
        send = example(2).replace("<correlation>NEWEMP</correlation>",
                                  "<correlation>TKAXAP10</correlation><priority>1</priority>")
        msgids(servlet.post(send.replace("</AQXmlPublish>", "<AQXmlCommit/></AQXmlPublish>")))
    r = servlet.post(example(n))
    if not PUBSUB:
        _assert_pubsub_fault(r, "AQUSER.EMP_TOPIC")
        return
    assert_matches(xml(example(18)), xml(r), variable=("message_id",), extra_ok=("delay",))


def test_17_13_register_for_mail_notification(servlet, store):
    r = servlet.post(example(13))
    if not PUBSUB:
        _assert_pubsub_fault(r, "AQUSER.EMP_TOPIC")
        return
    assert_matches(xml(example(20).replace("AQXmlCommitResponse", "AQXmlRegisterResponse")), xml(r))
