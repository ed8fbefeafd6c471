"""A closed connection (or a pooled one given back) does nothing more: every package
attribute is DPY-1001, as python-oracledb's every call on a closed connection is, and the
catalog stays as it was."""

import pytest

import sluice
from sluice.connection import Connection, _package


PACKAGES = sorted(name for name, value in vars(Connection).items() if isinstance(value, _package))


def test_every_package_is_listed():
    assert {"aqadm", "aq", "transform", "propagation_adm", "streams_messaging", "aqelm",
            "rule_adm", "capture_adm", "apply_adm"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_a_closed_connection_has_no_packages(dsn, name):
    keep = sluice.connect(dsn)
    conn = sluice.connect(dsn)
    conn.close()
    with pytest.raises(sluice.InterfaceError) as e:
        getattr(conn, name)
    assert e.value.full_code == "DPY-1001"
    keep.close()


def test_a_closed_connection_changes_no_catalog(dsn):
    keep = sluice.connect(dsn)
    conn = sluice.connect(dsn)
    conn.close()
    calls = [lambda: conn.aqadm.create_queue_table(queue_table="QTCLOSED", queue_payload_type="RAW"),
             lambda: conn.transform.create_transformation(
                 schema="SLUICE", name="T1", from_schema="SYS", from_type="RAW",
                 to_schema="SYS", to_type="RAW", transformation="source.user_data"),
             lambda: conn.package("DBMS_AQADM").create_queue_table(queue_table="QTCLOSED",
                                                                   queue_payload_type="RAW")]
    for call in calls:
        with pytest.raises(sluice.InterfaceError) as e:
            call()
        assert e.value.full_code == "DPY-1001"
    cur = keep.cursor()
    cur.execute("SELECT COUNT(*) FROM USER_QUEUE_TABLES")
    assert cur.fetchall() == [(0,)]
    keep.close()


def test_the_only_connection_closed_is_dpy_1001_too(dsn):
    conn = sluice.connect(dsn)
    conn.close()
    for name in PACKAGES:
        with pytest.raises(sluice.InterfaceError):
            getattr(conn, name)


def test_a_released_pooled_connection_has_no_packages(dsn):
    with sluice.create_pool(dsn, min=1, max=1) as pool:
        c = pool.acquire()
        pool.release(c)
        for name in PACKAGES:
            with pytest.raises(sluice.InterfaceError):
                getattr(c, name)
