"""python-oracledb's own subscription tests (its tests/connection/test_1800_subscription.py),
the parts for the AQ namespace, retold in our words against Sluice: ``import sluice as
oracledb``, the schema of tests/aq/oracledb_suite.py, both backends.  Each test names the
python-oracledb test it retells.

Left out: 1800, 1803, 1805, 1807, 1810, 1813 register queries (continuous query
notification, the DBCHANGE namespace), which Sluice does not offer; 1804 checks the repr
of such a subscription; 1806 reads a DBCHANGE registration's id from
USER_CHANGE_NOTIFICATION_REGS (its attribute checks are retold on an AQ subscription);
1814 (a consumer named on a single-consumer queue, ORA-25256) runs on a sharded queue,
where Sluice's classic queues answer ORA-24039.
"""

import threading

import pytest

import sluice as oracledb
from tests.aq.oracledb_suite import conn, suite_dsn  # noqa: F401


@pytest.fixture
def listener(suite_dsn):  # noqa: F811
    """A session opened for events (python-oracledb's ``get_connection(events=True)``)."""
    with oracledb.connect(suite_dsn, events=True) as connection:
        yield connection


def _subscribe(connection, **kwargs):
    return connection.subscribe(namespace=oracledb.SUBSCR_NAMESPACE_AQ, name="TEST_RAW_QUEUE",
                                callback=lambda message: None, client_initiated=True, **kwargs)


@pytest.mark.parametrize("new, old, value", [
    ("ip_address", "ipAddress", "www.oracle.in"), ("grouping_class", "groupingClass", 1),
    ("grouping_value", "groupingValue", 3), ("grouping_type", "groupingType", 2),
    ("client_initiated", "clientInitiated", True),
])
def test_a_deprecated_name_with_its_new_name_is_dpy_2014(listener, new, old, value):
    """python-oracledb tests/connection/test_1800_subscription.py 1801."""
    with pytest.raises(oracledb.Error) as e:
        listener.subscribe(namespace=oracledb.SUBSCR_NAMESPACE_AQ, name="TEST_RAW_QUEUE",
                           callback=lambda message: None, **{new: value, old: value})
    assert e.value.full_code == "DPY-2014"


def test_a_deprecated_name_alone_is_taken(listener):
    """python-oracledb accepts the deprecated camelCase names (1801's other side)."""
    sub = listener.subscribe(namespace=oracledb.SUBSCR_NAMESPACE_AQ, name="TEST_RAW_QUEUE",
                             callback=lambda message: None, clientInitiated=True, groupingType=2)
    assert sub.grouping_type == 2
    listener.unsubscribe(sub)


def test_an_enqueue_is_heard(conn, listener):  # noqa: F811
    """python-oracledb tests/connection/test_1800_subscription.py 1802 (there on a sharded
    queue): a subscription in the AQ namespace hears of one committed enqueue."""
    heard, messages = threading.Event(), []

    def callback(message):
        if message.type != oracledb.EVENT_DEREG:
            messages.append(message)
            heard.set()

    sub = listener.subscribe(namespace=oracledb.SUBSCR_NAMESPACE_AQ, name="TEST_RAW_QUEUE", timeout=10,
                             callback=callback, client_initiated=True)
    conn.queue("TEST_RAW_QUEUE").enqone(conn.msgproperties(payload="Some data"))
    conn.commit()
    assert heard.wait(5)
    listener.unsubscribe(sub)
    assert len(messages) == 1


def test_subscription_attributes(listener):
    """python-oracledb tests/connection/test_1800_subscription.py 1806, on an AQ
    subscription: what subscribe() was given reads back (the name as given), the connection
    is the subscriber's, ipAddress is ip_address."""
    given = dict(ip_address=None, port=0, name="test_raw_queue", namespace=oracledb.SUBSCR_NAMESPACE_AQ,
                 timeout=10, protocol=oracledb.SUBSCR_PROTO_OCI, qos=0, operations=oracledb.OPCODE_INSERT)
    sub = listener.subscribe(callback=print, client_initiated=True, **given)
    assert {attr: getattr(sub, attr) for attr in given} == given
    assert sub.callback is print and sub.connection is listener
    assert sub.ipAddress == sub.ip_address
    listener.unsubscribe(sub)


def test_unsubscribe_checks_its_argument(listener):
    """python-oracledb tests/connection/test_1800_subscription.py 1808: unsubscribe of what
    is not a subscription is a TypeError; of one already unsubscribed DPY-1007."""
    with pytest.raises(TypeError):
        listener.unsubscribe("not a sub object")
    sub = _subscribe(listener)
    listener.unsubscribe(sub)
    with pytest.raises(oracledb.Error) as e:
        listener.unsubscribe(sub)
    assert e.value.full_code == "DPY-1007"


def test_no_query_on_an_aq_subscription(listener):
    """python-oracledb tests/connection/test_1800_subscription.py 1811: DPY-2071."""
    sub = _subscribe(listener)
    with pytest.raises(oracledb.Error) as e:
        sub.registerquery("select * from TestTempTable")
    assert e.value.full_code == "DPY-2071"
    listener.unsubscribe(sub)
