"""TO_CHAR(number, 'model') typed at a cursor writes Oracle's text on both stores
(:mod:`sluice.numformat`): 9 0 , . G D $ S MI PR FM, rounded half away from zero, an
overflow all '#'; the models Sluice does not write are SLU-00001, no model ORA-01481."""

from __future__ import annotations

import pytest

import sluice
from sluice import sqlfunctions
from tests.sqlhelpers import create_table, query_code, query_headed, raised_code

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
    create_table(dsn, "CREATE TABLE T (n NUMERIC)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO T (n) VALUES (:1)", [(1234.5,), (-7,), (None,)])
    conn.commit()
    assert query_headed(conn, "SELECT TO_CHAR(n, 'FM9,990.00') txt, TO_CHAR(n / 2, '9999.9') FROM T "
                              "ORDER BY n NULLS LAST") == (
        ["TXT", "TO_CHAR(N/2,'9999.9')"], [("-7.00", "   -3.5"), ("1,234.50", "  617.3"), (None, None)])
    assert query_headed(conn, "SELECT COUNT(*) FROM T WHERE TO_CHAR(n, '0000') = ' 1235'")[1] == [(1,)]
    assert query_headed(conn, "SELECT TO_CHAR(12345.678, '99,999.99') FROM DUAL") == (
        ["TO_CHAR(12345.678,'99,999.99')"], [(" 12,345.68",)])


# Oracle's "Number Format Models": a valid model with elements Sluice does not write is SLU-00001;
# one that breaks the elements' restrictions (X only after 0 or FM, RN and TM alone, EEEE last,
# one currency symbol, V with no decimal point) is no model, ORA-01481, as is one with no element
_UNWRITTEN = ["9.99EEEE", "S9.9EEEE", "L999", "999L", "C999", "U9,999", "999V99", "B999", "XX", "0XXX",
              "FMXX", "RN", "FMrn", "TM", "TM9", "TME"]
_NO_MODEL = ["9Z9", "99.9.9", "9.9,9", "RN9", "99X", "X9", "9xyz", "xyz", "TM99", "9.9V9", "99LL", "9EEEE9",
             "YYYY"]


@pytest.mark.parametrize("model, code", [(m, "SLU-00001") for m in _UNWRITTEN] + [(m, "ORA-01481") for m in _NO_MODEL])
def test_number_models_sluice_does_not_write(conn, model, code):
    assert query_code(conn, f"SELECT TO_CHAR(1, '{model}') FROM DUAL") == code


@pytest.mark.parametrize("model, code", [("RN", "SLU-00001"), ("xyz", "ORA-01481"), ("99X", "ORA-01481"),
                                         ("YYYY", "ORA-01481")])
def test_a_bound_model_of_a_number_on_sqlite(tmp_path, model, code):
    """On SQLite a bound model of a number is read by numformat (PostgreSQL's own to_char reads it);
    the rules engine's TO_CHAR reads it alike."""
    c = sluice.connect(f"sqlite:///{tmp_path}/bound.db")
    try:
        assert query_code(c, "SELECT TO_CHAR(5, :m) FROM DUAL", {"m": model}) == code
    finally:
        c.close()
    assert raised_code(lambda: sqlfunctions.to_char(5, model)) == code
