"""ALTER SESSION SET NLS_DATE_FORMAT and friends, on both stores (store/sessionnls.py).

Scripts and python-oracledb programs begin ``ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD
HH24:MI:SS'``: the settings are checked as Oracle checks them, kept per session, shown by
NLS_SESSION_PARAMETERS / V$NLS_PARAMETERS / SYS_CONTEXT('USERENV', …), and honoured where Oracle
applies them: TO_CHAR of a date and TO_DATE / TO_TIMESTAMP of text without a model, PL/SQL's
conversions, a number model's D and G and TO_NUMBER of text (NLS_NUMERIC_CHARACTERS).  A fetched
DATE stays a datetime (no format involved).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import sluice
from sluice.plsql import run_script
from tests.sqlhelpers import query_code, query_rows, raised_code

ISO = "ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD HH24:MI:SS'"
HIRED = dt.datetime(2026, 1, 2, 10, 11, 12)


@pytest.fixture
def staff(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE staff (id NUMBER, hired DATE, stamp TIMESTAMP, note VARCHAR2(40))")
    cur.execute("INSERT INTO staff VALUES (1, :h, TIMESTAMP '2026-01-02 10:11:12.25', '02/01/2026')", h=HIRED)
    conn.commit()
    return conn


def _parameter(conn, name: str) -> str:
    (value,), = query_rows(conn, f"SELECT value FROM nls_session_parameters WHERE parameter = '{name}'")
    return value


def test_the_settings_are_shown_per_session(conn, conn2):
    cur = conn.cursor()
    cur.execute(ISO)
    cur.execute("alter session set nls_timestamp_format = 'YYYY-MM-DD HH24:MI:SSXFF' "
                "nls_numeric_characters = ',.' nls_language = french nls_territory = 'GERMANY'")
    assert _parameter(conn, "NLS_DATE_FORMAT") == "YYYY-MM-DD HH24:MI:SS"
    assert _parameter(conn, "NLS_TIMESTAMP_FORMAT") == "YYYY-MM-DD HH24:MI:SSXFF"
    assert _parameter(conn, "NLS_NUMERIC_CHARACTERS") == ",."
    # NLS_LANGUAGE is NLS_DATE_LANGUAGE's default too
    assert (_parameter(conn, "NLS_LANGUAGE"), _parameter(conn, "NLS_DATE_LANGUAGE")) == ("FRENCH", "FRENCH")
    assert _parameter(conn, "NLS_TERRITORY") == "GERMANY"
    assert dict(query_rows(conn, "SELECT parameter, value FROM v$nls_parameters"))["NLS_DATE_FORMAT"] \
        == "YYYY-MM-DD HH24:MI:SS"
    assert query_rows(conn, "SELECT sys_context('USERENV', 'NLS_DATE_FORMAT'), sys_context('userenv', "
                            "'nls_territory'), sys_context('USERENV', 'LANGUAGE') FROM dual") \
        == [("YYYY-MM-DD HH24:MI:SS", "GERMANY", "FRENCH_GERMANY.AL32UTF8")]
    # the other session, and the instance's, keep Oracle's defaults
    assert _parameter(conn2, "NLS_DATE_FORMAT") == "DD-MON-RR"
    assert dict(query_rows(conn, "SELECT parameter, value FROM nls_instance_parameters"))["NLS_DATE_FORMAT"] \
        == "DD-MON-RR"
    cur.execute("ALTER SESSION SET NLS_SORT = XGERMAN_CI NLS_COMP = LINGUISTIC TIME_ZONE = '+05:00'")
    assert (_parameter(conn, "NLS_SORT"), _parameter(conn, "NLS_COMP")) == ("XGERMAN_CI", "LINGUISTIC")
    assert query_rows(conn, "SELECT sessiontimezone FROM dual") == [("+05:00",)]


@pytest.mark.parametrize("statement, code", [
    ("ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD BOGUS'", "ORA-01821"),
    ("ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD HH24:MI:SS.FF'", "ORA-01821"),   # a DATE has no fraction
    ("ALTER SESSION SET NLS_TIMESTAMP_FORMAT = 'YYYY-MM-DD TZH:TZM'", "ORA-01821"),   # nor a TIMESTAMP a zone
    ("ALTER SESSION SET NLS_DATE_FORMAT = ''", "ORA-01821"),
    ("ALTER SESSION SET NLS_BOGUS = 'x'", "ORA-02248"),
    ("ALTER SESSION SET NO_SUCH_PARAMETER = 1", "ORA-02248"),
    ("ALTER SESSION SET NLS_NUMERIC_CHARACTERS = '..'", "ORA-12705"),
    ("ALTER SESSION SET NLS_NUMERIC_CHARACTERS = '1,'", "ORA-12705"),
    ("ALTER SESSION SET NLS_LANGUAGE = KLINGON", "ORA-12705"),
    ("ALTER SESSION SET NLS_TERRITORY = 'ATLANTIS'", "ORA-12705"),
    ("ALTER SESSION SET NLS_COMP = 'SOMETIMES'", "ORA-00096"),
    ("ALTER SESSION SET NLS_DATE_FORMAT", "ORA-00922"),
    ("ALTER SESSION SET CURRENT_SCHEMA = scott", "SLU-00001"),
    # read whole before anything is set: the good settings before the bad one change nothing
    ("ALTER SESSION SET TIME_ZONE = '+03:00' NLS_DATE_FORMAT = 'YYYY' NLS_DATE_FORMAT = 'QQQQ-ZZ'", "ORA-01821"),
])
def test_a_bad_setting_is_refused_and_changes_nothing(conn, statement, code):
    conn.cursor().execute("ALTER SESSION SET NLS_DATE_FORMAT = 'DD.MM.YYYY'")
    assert raised_code(lambda: conn.cursor().execute(statement)) == code
    assert _parameter(conn, "NLS_DATE_FORMAT") == "DD.MM.YYYY"
    assert query_rows(conn, "SELECT sessiontimezone FROM dual") != [("+03:00",)]


def test_to_char_and_to_date_without_a_model_use_the_session_format(staff):
    conn = staff
    assert query_rows(conn, "SELECT TO_CHAR(hired) FROM staff") == [("02-JAN-26",)]     # Oracle's default
    conn.cursor().execute(ISO)
    assert query_rows(conn, "SELECT TO_CHAR(hired), TO_CHAR(:d) FROM staff", {"d": HIRED}) \
        == [("2026-01-02 10:11:12", "2026-01-02 10:11:12")]
    (now,), = query_rows(conn, "SELECT TO_CHAR(SYSDATE) FROM dual")
    assert dt.datetime.strptime(now, "%Y-%m-%d %H:%M:%S")      # text, in the session's format
    assert query_rows(conn, "SELECT TO_DATE('2026-03-04 05:06:07') FROM dual") == [(dt.datetime(2026, 3, 4, 5, 6, 7),)]
    assert query_rows(conn, "SELECT id FROM staff WHERE hired = TO_DATE('2026-01-02 10:11:12')") == [(1,)]
    # text that ends before the model does: the rest of the model is left out, as Oracle's
    assert query_rows(conn, "SELECT id FROM staff WHERE '2026-01-02' < hired AND hired < '2026-01-03'") == [(1,)]
    assert query_rows(conn, "SELECT TO_DATE('2026-01-02') FROM dual") == [(dt.datetime(2026, 1, 2),)]
    # a model of its own still wins; a fetched DATE is a datetime, no format involved
    assert query_rows(conn, "SELECT TO_CHAR(hired, 'DD.MM.YYYY'), hired FROM staff") == [("02.01.2026", HIRED)]
    conn.cursor().execute("ALTER SESSION SET NLS_DATE_FORMAT = 'DD/MM/YYYY'")
    assert query_rows(conn, "SELECT TO_DATE(note) FROM staff") == [(dt.datetime(2026, 1, 2),)]
    assert query_code(conn, "SELECT TO_DATE('2026-01-02') FROM dual") in ("ORA-01861", "ORA-01843", "ORA-01847",
                                                                         "ORA-01830")


def test_timestamps_use_the_session_timestamp_format(staff):
    conn = staff
    conn.cursor().execute("ALTER SESSION SET NLS_TIMESTAMP_FORMAT = 'YYYY-MM-DD HH24:MI:SSXFF'")
    assert query_rows(conn, "SELECT TO_CHAR(stamp) FROM staff") == [("2026-01-02 10:11:12.250000",)]
    assert query_rows(conn, "SELECT TO_TIMESTAMP('2026-01-02 10:11:12.5') FROM dual") \
        == [(dt.datetime(2026, 1, 2, 10, 11, 12, 500000),)]


def test_numeric_characters_for_d_and_g_and_to_number(conn):
    cur = conn.cursor()
    assert query_rows(conn, "SELECT TO_CHAR(1234.5, '9G999D99') FROM dual") == [(" 1,234.50",)]
    cur.execute("ALTER SESSION SET NLS_NUMERIC_CHARACTERS = ',.'")
    assert query_rows(conn, "SELECT TO_CHAR(1234.5, '9G999D99'), TO_CHAR(1234.5, '9,999.99') FROM dual") \
        == [(" 1.234,50", " 1,234.50")]       # ',' and '.' in a model are always themselves
    (n,), = query_rows(conn, "SELECT TO_NUMBER('1,5') FROM dual")
    assert n == 1.5 or n == Decimal("1.5")
    assert query_rows(conn, "SELECT TO_NUMBER(:t) FROM dual", {"t": "2,25"}) in ([(2.25,)], [(Decimal("2.25"),)])
    assert query_code(conn, "SELECT TO_NUMBER('1.5') FROM dual") == "ORA-01722"


def test_plsql_converts_in_the_session_format(staff):
    conn = staff
    cur = conn.cursor()
    text = cur.var(str)
    block = "DECLARE d DATE := TO_DATE('2026-01-02 10:11:12', 'YYYY-MM-DD HH24:MI:SS'); BEGIN :t := 'on ' || d; END;"
    cur.execute(block, t=text)
    assert text.getvalue() == "on 02-JAN-26"
    cur.execute(ISO)
    cur.execute(block, t=text)
    assert text.getvalue() == "on 2026-01-02 10:11:12"
    # EXECUTE IMMEDIATE sets it for the block's next statements and the session's
    cur.execute("""DECLARE d DATE; v VARCHAR2(40);
                   BEGIN
                     EXECUTE IMMEDIATE 'ALTER SESSION SET NLS_DATE_FORMAT = ''DD.MM.YYYY''';
                     d := TO_DATE('03.04.2026');
                     v := TO_CHAR(d);
                     INSERT INTO staff (id, note) VALUES (2, v);
                     INSERT INTO staff (id, note) VALUES (3, 'on ' || d);
                   END;""")
    assert query_rows(conn, "SELECT note FROM staff WHERE id > 1 ORDER BY id") == [("03.04.2026",),
                                                                                 ("on 03.04.2026",)]
    assert _parameter(conn, "NLS_DATE_FORMAT") == "DD.MM.YYYY"
    cur.execute("ALTER SESSION SET NLS_NUMERIC_CHARACTERS = ',.'")
    cur.execute("BEGIN :t := TO_CHAR(1234.5, '9G999D99'); END;", t=text)
    assert text.getvalue() == " 1.234,50"
    number = cur.var(float)
    cur.execute("BEGIN :n := TO_NUMBER('1,5') * 2; END;", n=number)
    assert number.getvalue() == 3


def test_a_script_sets_them_at_its_first_line(staff):
    results = run_script(staff, "ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD';\n"
                                "SELECT TO_CHAR(hired) FROM staff;\n")
    assert results[-1].rows == [("2026-01-02",)]


def test_a_new_connection_starts_with_the_defaults(dsn, conn):
    conn.cursor().execute(ISO)
    other = sluice.connect(dsn)
    try:
        assert _parameter(other, "NLS_DATE_FORMAT") == "DD-MON-RR"
        assert query_rows(other, "SELECT TO_CHAR(DATE '2024-01-05') FROM dual") == [("05-JAN-24",)]
    finally:
        other.close()


def test_implicit_conversions_use_the_session_format(staff):
    conn = staff
    conn.cursor().execute("ALTER SESSION SET NLS_DATE_FORMAT = 'DD/MM/YYYY'")
    assert query_rows(conn, "SELECT 'hired ' || hired FROM staff") == [("hired 02/01/2026",)]
    (text,), = query_rows(conn, "SELECT 'on ' || SYSDATE FROM dual")
    assert text == "on " + dt.date.today().strftime("%d/%m/%Y")
    # text compared with a DATE is read by the session's format: 1 February, not 2 January
    assert query_rows(conn, "SELECT id FROM staff WHERE hired < '01/02/2026'") == [(1,)]
    assert query_rows(conn, "SELECT id FROM staff WHERE '01/02/2026' <= hired") == []
    assert query_code(conn, "SELECT id FROM staff WHERE hired < '2026-02-01'") in ("ORA-01861", "ORA-01843",
                                                                                  "ORA-01847", "ORA-01830")


def test_sluice_sql_runs_a_script_that_begins_with_it(dsn, tmp_path):
    from click.testing import CliRunner
    from sluice.cli import main
    script = tmp_path / "report.sql"
    script.write_text("ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY/MM/DD';\n"
                      "SELECT TO_CHAR(DATE '2026-01-02') FROM dual;\n")
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", "-f", str(script)], catch_exceptions=False)
    assert r.exit_code == 0 and "2026/01/02" in r.output, r.output


def test_the_settings_stay_when_the_transaction_rolls_back(staff):
    conn = staff
    conn.cursor().execute("INSERT INTO staff (id) VALUES (9)")      # an open transaction
    conn.cursor().execute(ISO)
    conn.rollback()
    assert _parameter(conn, "NLS_DATE_FORMAT") == "YYYY-MM-DD HH24:MI:SS"
    assert query_rows(conn, "SELECT TO_CHAR(hired) FROM staff") == [("2026-01-02 10:11:12",)]
