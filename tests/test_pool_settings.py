"""A pool's settings are checked as python-oracledb checks them, all before any is kept:
create_pool(), PoolParams, reconfigure() and the settable attributes refuse what would
break the pool (a TypeError at every later call) or hang it (max=0, a NaN wait), and a
refused value changes nothing."""

import pytest

import sluice
from tests.sqlhelpers import raised_code

BAD_SETTINGS = [
    ({"timeout": "x"}, "DPY-2027"),
    ({"wait_timeout": "x"}, "DPY-2027"),
    ({"max_lifetime_session": "x"}, "DPY-2027"),
    ({"increment": "x"}, "DPY-2027"),
    ({"min": "x"}, "DPY-2027"),
    ({"max": [3]}, "DPY-2027"),
    ({"min": -1}, "DPY-2027"),
    ({"timeout": -5}, "DPY-2027"),
    ({"min": 2 ** 70, "max": 2 ** 70}, "DPY-2027"),
    ({"getmode": sluice.POOL_GETMODE_TIMEDWAIT, "wait_timeout": float("nan")}, "DPY-2027"),
    ({"getmode": 99}, "DPY-4022"),
    ({"getmode": "x"}, "DPY-4022"),
    ({"min": 0, "max": 0}, "ORA-24413"),
    ({"min": 3, "max": 2}, "DPY-2064"),
]


@pytest.mark.parametrize("kwargs, code", BAD_SETTINGS)
def test_create_pool_refuses(dsn, kwargs, code):
    assert raised_code(lambda: sluice.create_pool(dsn, **kwargs)) == code
    assert raised_code(lambda: sluice.PoolParams(**kwargs)) == code


def test_create_pool_refuses_what_fails_later(dsn):
    assert raised_code(lambda: sluice.create_pool(dsn, min=0, session_callback=5)) == "DPY-2027"
    assert raised_code(lambda: sluice.create_pool(dsn, min=0, connectiontype=int)) == "DPY-2023"
    assert raised_code(lambda: sluice.create_pool(dsn, pool_alias=[1])) == "DPY-2027"
    assert sluice.get_pool([1]) is None
    assert raised_code(lambda: sluice.connect(pool_alias=[1])) == "DPY-2054"
    with pytest.raises(TypeError):   # what python-oracledb raises for a wrong type, too
        sluice.create_pool(dsn, timeout=object())


def test_settings_are_converted_as_python_oracledb_converts_them(dsn):
    with sluice.create_pool(dsn, min="1", max="3", getmode="nowait", homogeneous="no",
                            wait_timeout=20.0) as pool:
        assert (pool.min, pool.max, pool.getmode, pool.homogeneous, pool.wait_timeout) == \
               (1, 3, sluice.POOL_GETMODE_NOWAIT, False, 20)
    params = sluice.PoolParams(min=0, max="2")
    with sluice.create_pool(dsn, params=params) as pool:
        assert (pool.min, pool.max, pool.opened) == (0, 2, 0)


@pytest.mark.parametrize("kwargs, code", BAD_SETTINGS)
def test_reconfigure_refuses_and_changes_nothing(dsn, kwargs, code):
    pool = sluice.create_pool(dsn, min=1, max=3)
    before = (pool.min, pool.max, pool.increment, pool.getmode, pool.timeout, pool.wait_timeout,
              pool.max_lifetime_session)
    assert raised_code(lambda: pool.reconfigure(**kwargs)) == code
    after = (pool.min, pool.max, pool.increment, pool.getmode, pool.timeout, pool.wait_timeout,
             pool.max_lifetime_session)
    assert after == before
    with pool.acquire() as c:   # still usable
        c.cursor().execute("SELECT 1 FROM DUAL")
    pool.close(force=True)


def test_settable_attributes_are_checked(dsn):
    with sluice.create_pool(dsn, min=1, max=2) as pool:
        for name, value, code in (("getmode", 99, "DPY-4022"), ("timeout", "x", "DPY-2027"),
                                  ("wait_timeout", float("nan"), "DPY-2027"),
                                  ("max_lifetime_session", -1, "DPY-2027")):
            assert raised_code(lambda: setattr(pool, name, value)) == code
        assert (pool.getmode, pool.timeout, pool.wait_timeout, pool.max_lifetime_session) == (0, 0, 0, 0)
        pool.wait_timeout = 50
        assert pool.wait_timeout == 50
        with pytest.raises(AttributeError):   # read-only in python-oracledb
            pool.min = 2
        assert raised_code(lambda: pool.reconfigure(mn=2)) == "DPY-2025"


def test_reconfigure_within_limits(dsn):
    with sluice.create_pool(dsn, min=1, max=3) as pool:
        pool.reconfigure(min=0, max=1, getmode=sluice.POOL_GETMODE_NOWAIT)
        a = pool.acquire()
        assert raised_code(pool.acquire) == "DPY-4005"
        pool.release(a)
