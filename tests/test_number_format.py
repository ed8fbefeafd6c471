"""TO_CHAR(number, 'model') typed at a cursor writes Oracle's text on both stores
(:mod:`sluice.numformat`): 9 0 , . G D $ S MI PR FM, rounded half away from zero, an
overflow all '#'; the models Sluice does not write are SLU-00001, no model ORA-01481."""

from __future__ import annotations

import pytest

from tests.test_binds import _create_table
from tests.sqlhelpers import query_code, query_headed

CASES = [
    (12345.678, "99,999.99", " 12,345.68"), (0, "999", "   0"), (0.5, "999.99", "    .50"),
    (-0.5, "999.99", "   -.50"), (12, "0000", " 0012"), (12.5, "FM999.00", "12.50"), (12, "FM999.99", "12."),
    (12345, "999", "####"), (-12, "S99", "-12"), (12, "S99", "+12"), (12, "99S", "12+"), (-12, "99MI", "12-"),
    (12, "99MI", "12 "), (-12, "99PR", "<12>"), (12, "99PR", " 12 "), (12, "$99", " $12"), (-12, "$99", "-$12"),
    (1234.5, "9G999D99", " 1,234.50"), (12, "9,999", "    12"), (0, "0.00", " 0.00"), (0, "9.99", "  .00"),
    (-5, "9", "-5"), (12.5, "99", " 13"), (-12.5, "99", "-13"), (1234.5, "99.9", "#####"), (0.5, "0.99", " 0.50"),
    (-12.5, "FM999.99", "-12.5"), (0, "FM999", "0"), (0.5, "FM999.99", ".5"), (-1234.567, "FM9,999.00", "-1,234.57"),
    (5, "FM0000", "0005"), (123, "FM$999", "$123"), (-1234.5, "$9,999.99", "-$1,234.50"), (-12, "FM99PR", "<12>"),
    (2.345, "9.99", " 2.35"), (None, "999", None), ("42", "999", "  42"),
    # a decimal point with no digit after it is written (PostgreSQL's to_char drops it), and a zero
    # before it is a zero, as without the point ("9": "a zero value ... returns a zero")
    (5, "9.", " 5."), (0, "9.", " 0."), (0.4, "99.", "  0."), (-5, "9.PR", "<5.>"), (5, "9.MI", "5. "),
    (5, "9.S", "5.+"), (-5, "$9.", "-$5."), (5, "FM999D", "5."), (12345, "99.", "####"),
]


@pytest.mark.parametrize("value, model, text", CASES)
def test_to_char_number_model_as_oracle(conn, value, model, text):
    assert query_headed(conn, f"SELECT TO_CHAR(:v, '{model}') FROM DUAL", {"v": value})[1] == [(text,)]


def test_to_char_number_model_of_columns_and_expressions(conn, dsn):
    _create_table(dsn, "CREATE TABLE T (n NUMERIC)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO T (n) VALUES (:1)", [(1234.5,), (-7,), (None,)])
    conn.commit()
    assert query_headed(conn, "SELECT TO_CHAR(n, 'FM9,990.00') txt, TO_CHAR(n / 2, '9999.9') FROM T "
                              "ORDER BY n NULLS LAST") == (
        ["TXT", "TO_CHAR(N/2,'9999.9')"], [("-7.00", "   -3.5"), ("1,234.50", "  617.3"), (None, None)])
    assert query_headed(conn, "SELECT COUNT(*) FROM T WHERE TO_CHAR(n, '0000') = ' 1235'")[1] == [(1,)]
    assert query_headed(conn, "SELECT TO_CHAR(12345.678, '99,999.99') FROM DUAL") == (
        ["TO_CHAR(12345.678,'99,999.99')"], [(" 12,345.68",)])


@pytest.mark.parametrize("model, code", [
    ("9.99EEEE", "SLU-00001"), ("L999", "SLU-00001"), ("XX", "SLU-00001"), ("9Z9", "ORA-01481"),
    ("99.9.9", "ORA-01481"), ("9.9,9", "ORA-01481"), ("RN9", "SLU-00001"), ("B999", "SLU-00001"),
])
def test_number_models_sluice_does_not_write(conn, model, code):
    assert query_code(conn, f"SELECT TO_CHAR(1, '{model}') FROM DUAL") == code
