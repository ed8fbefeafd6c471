"""Helpers of the propagation tests."""

from __future__ import annotations

import pytest

import sluice

from ..conftest import make_queue


def rows(conn, sql, binds=None):
    return conn.query(sql, binds)[1]


def raises_ora(code, fn, *args, **kw):
    """``fn(*args, **kw)`` raises ORA-``code``; the error."""
    with pytest.raises(sluice.DatabaseError) as e:
        fn(*args, **kw)
    assert str(e.value).startswith(f"ORA-{code:05d}"), str(e.value)
    return e.value


def multi_queue(conn, name, payload="RAW", **kw):
    """A started multi-consumer queue ``name`` in its own queue table."""
    return make_queue(conn, name, payload=payload, multiple_consumers=True, **kw)
