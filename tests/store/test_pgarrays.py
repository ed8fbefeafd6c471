"""The binary arrays bulk inserts send to PostgreSQL (store/pgarrays.py): what the server
reads back is what was encoded, NULLs, empty values and the types psycopg would have
converted included."""

from __future__ import annotations

import psycopg
import pytest

from sluice.store.pgarrays import ENCODERS
from tests.conftest import PG_BASE

CASES = {
    "BIGINT": ([1, -5, None, 2**62, -(2**63), True, 3.0], [1, -5, None, 2**62, -(2**63), 1, 3]),
    "DOUBLE PRECISION": ([1.5, None, -2, 1e300, 0.0], [1.5, None, -2.0, 1e300, 0.0]),
    "BYTEA": ([b"", b"\x00\xff", None, bytearray(b"ab"), memoryview(b"cd")],
              [b"", b"\x00\xff", None, b"ab", b"cd"]),
    "TEXT": (["", "héllo ☃", None, "x" * 5000], ["", "héllo ☃", None, "x" * 5000]),
}


@pytest.fixture(scope="module")
def pg():
    with psycopg.connect(PG_BASE, autocommit=True) as c:
        yield c


@pytest.mark.parametrize("sql_type", sorted(CASES))
def test_the_server_reads_back_what_was_encoded(pg, sql_type):
    values, expected = CASES[sql_type]
    got = pg.execute(f"SELECT %s::{sql_type}[]", [ENCODERS[sql_type](values)], binary=True).fetchone()[0]
    assert got == expected


@pytest.mark.parametrize("sql_type", sorted(CASES))
def test_unnest_gives_one_row_per_element_in_order(pg, sql_type):
    values, expected = CASES[sql_type]
    rows = pg.execute(f"SELECT x FROM unnest(%s::{sql_type}[]) WITH ORDINALITY AS t(x, n) ORDER BY n",
                      [ENCODERS[sql_type](values)], binary=True).fetchall()
    assert [r[0] for r in rows] == expected


def test_a_value_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError):
        ENCODERS["BIGINT"](["twelve", 1])
    with pytest.raises(TypeError):
        ENCODERS["BYTEA"]([b"ok", 12])
