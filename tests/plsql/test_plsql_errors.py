"""Every way a statement can fail, with Oracle's codes and the right line/column."""

from __future__ import annotations

import pytest

from sluice.errors import DatabaseError
from sluice.plsql import execute, split_script


def error_of(conn, text: str, binds=None) -> DatabaseError:
    with pytest.raises(DatabaseError) as info:
        execute(conn, text, binds)
    return info.value


def test_syntax_error_points_at_the_offending_token(conn):
    err = error_of(conn, "BEGIN\n  DBMS_AQADM.START_QUEUE('q')\n  DBMS_AQADM.STOP_QUEUE('q');\nEND;")
    assert err.code == 6550
    assert str(err).startswith('ORA-06550: line 3, column 3:\nPLS-00103: Encountered the symbol '
                               '"DBMS_AQADM" when expecting one of the following:\n\n   ;')
    assert conn.calls == []


def test_missing_end_reports_end_of_file(conn):
    err = error_of(conn, "BEGIN\n  NULL;\n")
    assert 'line 3, column 1:\nPLS-00103: Encountered the symbol "end-of-file"' in str(err)


def test_empty_block_body(conn):
    assert 'Encountered the symbol "END"' in str(error_of(conn, "BEGIN END;"))


def test_unbalanced_parenthesis(conn):
    err = error_of(conn, "BEGIN\n  DBMS_AQADM.START_QUEUE(('q');\nEND;")
    assert str(err).startswith('ORA-06550: line 2, column 31:\nPLS-00103: Encountered the '
                               'symbol ";"')


def test_unterminated_string_is_reported_not_hung(conn):
    err = error_of(conn, "BEGIN\n  DBMS_OUTPUT.PUT_LINE('oops);\nEND;\n")
    assert str(err) == ("ORA-06550: line 2, column 24:\n"
                        "ORA-01756: quoted string not properly terminated")
    assert split_script("BEGIN\n  x := 'oops;\n/\nSELECT 1 FROM dual;\n") == \
        ["BEGIN\n  x := 'oops;\n/\nSELECT 1 FROM dual;"]


def test_unterminated_comment_and_quoted_identifier(conn):
    assert "PLS-00111" in str(error_of(conn, "BEGIN /* never closed\n NULL; END;"))
    assert "PLS-00112" in str(error_of(conn, 'BEGIN "abc\n := 1; END;'))


def test_invalid_character(conn):
    err = error_of(conn, "BEGIN\n  x := 1 ? 2;\nEND;")
    assert str(err).startswith('ORA-06550: line 2, column 10:\nPLS-00103: Encountered the '
                               'symbol "?"')


def test_unknown_package_is_pls_00201_and_nothing_runs(conn):
    err = error_of(conn, "BEGIN\n  DBMS_AQADM.START_QUEUE('q');\n  DBMS_NOPE.DO_IT(1);\nEND;")
    assert str(err) == ("ORA-06550: line 3, column 3:\n"
                        "PLS-00201: identifier 'DBMS_NOPE.DO_IT' must be declared\n"
                        "ORA-06550: line 3, column 3:\nPL/SQL: Statement ignored")
    assert conn.calls == []          # the block is checked before anything runs


def test_unknown_procedure_in_a_known_package(conn):
    err = error_of(conn, "BEGIN DBMS_AQADM.START_QUEUES('q'); END;")
    assert "line 1, column 18:\nPLS-00302: component 'START_QUEUES' must be declared" in str(err)


@pytest.mark.parametrize("call", [
    "DBMS_AQADM.START_QUEUE('q', TRUE, TRUE, 'extra')",
    "DBMS_AQADM.START_QUEUE(queue_nam => 'q')",
    "DBMS_AQADM.START_QUEUE(enqueue => TRUE)",
    "DBMS_AQADM.START_QUEUE('q', queue_name => 'q')",
])
def test_wrong_arguments_are_pls_00306(conn, call):
    err = error_of(conn, f"BEGIN {call}; END;")
    assert ("line 1, column 7:\nPLS-00306: wrong number or types of arguments in call to "
            "'START_QUEUE'") in str(err)


def test_positional_after_named(conn):
    err = error_of(conn, "BEGIN DBMS_AQADM.START_QUEUE(queue_name => 'q', TRUE); END;")
    assert "column 49:\nPLS-00312: a positional parameter association" in str(err)


def test_undeclared_variable(conn):
    assert "PLS-00201: identifier 'X' must be declared" in str(error_of(conn, "BEGIN x := 1; END;"))
    assert "PLS-00201: identifier 'Y' must be declared" in str(
        error_of(conn, "BEGIN DBMS_OUTPUT.PUT_LINE(y); END;"))


def test_assignment_to_constant_or_expression(conn):
    err = error_of(conn, "DECLARE c CONSTANT NUMBER := 1; BEGIN c := 2; END;")
    assert "PLS-00363: expression 'C' cannot be used as an assignment target" in str(err)
    err = error_of(conn, "DECLARE o DBMS_AQ.ENQUEUE_OPTIONS_T; p DBMS_AQ.MESSAGE_PROPERTIES_T;"
                         " BEGIN DBMS_AQ.ENQUEUE('q', o, p, NULL, 'literal'); END;")
    assert "PLS-00363: expression ''literal'' cannot be used" in str(err)
    err = error_of(conn, "BEGIN FOR i IN 1..2 LOOP i := 3; END LOOP; END;")
    assert "PLS-00363" in str(err)


def test_constant_needs_a_value(conn):
    assert "PLS-00322" in str(error_of(conn, "DECLARE c CONSTANT NUMBER; BEGIN NULL; END;"))


def test_package_errors_propagate_unchanged(conn):
    err = error_of(conn, "BEGIN DBMS_AQADM.STOP_QUEUE('nq'); END;")
    assert str(err) == "ORA-24010: QUEUE nq does not exist" and err.code == 24010


def test_unknown_type_constructor(conn):
    err = error_of(conn, "DECLARE v NUMBER; BEGIN\n v := no_such_t(1); END;")
    assert "line 2, column 7:\nPLS-00201: identifier 'NO_SUCH_T' must be declared" in str(err)


def test_constructor_that_refuses_its_arguments(conn):
    err = error_of(conn, "DECLARE a SYS.AQ$_AGENT; BEGIN a := SYS.AQ$_AGENT('x'); END;")
    assert "PLS-00306: wrong number or types of arguments in call to 'AQ$_AGENT'" in str(err)


def test_unknown_declared_type(conn):
    err = error_of(conn, "DECLARE\n  v no_such_type;\nBEGIN NULL; END;")
    assert "line 2, column 3:\nPLS-00201: identifier 'NO_SUCH_TYPE' must be declared" in str(err)


def test_unknown_attribute(conn):
    err = error_of(conn, "DECLARE o DBMS_AQ.ENQUEUE_OPTIONS_T; BEGIN\n  o.visiblity := 1; END;")
    assert "line 2, column 5:\nPLS-00302: component 'VISIBLITY' must be declared" in str(err)


def test_attribute_of_null_object(conn):
    err = error_of(conn, "DECLARE a SYS.AQ$_AGENT; BEGIN a.name := 'x'; END;")
    assert str(err).startswith("ORA-06530")


def test_unbound_variable(conn):
    assert str(error_of(conn, "BEGIN DBMS_OUTPUT.PUT_LINE(:missing); END;")).startswith(
        "ORA-01008: not all variables bound")


def test_procedure_used_as_function_and_value_as_statement(conn):
    err = error_of(conn, "BEGIN DBMS_AQ.FOREVER; END;")
    assert "PLS-00221: 'FOREVER' is not a procedure or is undefined" in str(err)
    err = error_of(conn, "DECLARE x NUMBER; BEGIN x; END;")
    assert "PLS-00221: 'X'" in str(err)


def test_exit_outside_a_loop(conn):
    assert "PLS-00376" in str(error_of(conn, "BEGIN EXIT; END;"))


def test_non_boolean_condition(conn):
    err = error_of(conn, "BEGIN IF 1 THEN NULL; END IF; END;")
    assert "line 1, column 10:\nPLS-00382" in str(err)


def test_division_by_zero_and_invalid_number(conn):
    assert str(error_of(conn, "BEGIN DBMS_OUTPUT.PUT_LINE(1/0); END;")).startswith("ORA-01476")
    assert str(error_of(conn, "BEGIN DBMS_OUTPUT.PUT_LINE(TO_NUMBER('x')); END;")).startswith(
        "ORA-01722")


def test_unknown_exception_name(conn):
    err = error_of(conn, "BEGIN NULL; EXCEPTION WHEN no_such_exc THEN NULL; END;")
    assert "PLS-00201: identifier 'NO_SUCH_EXC'" in str(err)
    err = error_of(conn, "DECLARE PRAGMA EXCEPTION_INIT(e, -1); BEGIN NULL; END;")
    assert "PLS-00109" in str(err)


@pytest.mark.parametrize("text, what", [
    ("DECLARE SUBTYPE s IS NUMBER; BEGIN NULL; END;", "SUBTYPE"),
    ("BEGIN EXECUTE IMMEDIATE 'x' USING 1; END;", "USING"),
    ("CREATE TYPE t AS OBJECT (a NUMBER, MEMBER FUNCTION f RETURN NUMBER)", "method"),
])
def test_unsupported_plsql_is_an_implementation_restriction(conn, text, what):
    err = str(error_of(conn, text))
    assert "PLS-00999: implementation restriction" in err and what in err


def test_seed_004_type_with_missing_comma(conn):
    """Seed 004 (Example 17-2) prints EMP_TYP without the comma after "comm NUMBER(7,2)"."""
    text = ("CREATE OR REPLACE TYPE emp_typ AS object (\n     empno NUMBER(4),\n"
            "     ename VARCHAR2(10),\n     job VARCHAR2(9),\n     mgr NUMBER(4),\n"
            "     hiredate DATE,\n     sal   NUMBER(7,2),\n     comm  NUMBER(7,2)\n"
            "     deptno NUMBER(2));")
    err = error_of(conn, text)
    assert str(err).startswith('ORA-06550: line 9, column 6:\nPLS-00103: Encountered the symbol '
                               '"DEPTNO" when expecting one of the following:\n\n   ) ,')
    assert conn.types == []


def test_create_type_syntax_errors(conn):
    assert 'Encountered the symbol "RECORD"' in str(
        error_of(conn, "CREATE TYPE t AS RECORD (a NUMBER)"))
    assert 'Encountered the symbol "SELECT"' in str(
        error_of(conn, "CREATE TYPE t AS TABLE OF NUMBER; SELECT 1 FROM dual"))


def test_a_block_nested_past_the_stack_is_an_oracle_error(conn):
    """Hundreds of nested blocks, IFs or calls overflowed Python's stack in the parser, a
    chain of 1,000 '+' in the interpreter: RecursionError out of cursor.execute."""
    for text in ("BEGIN " * 1000 + "NULL;" + " END;" * 1000,
                 "BEGIN " + "IF TRUE THEN " * 1000 + "NULL;" + " END IF;" * 1000 + " END;",
                 "BEGIN DBMS_OUTPUT.PUT_LINE(" + "UPPER(" * 1000 + "'a'" + ")" * 1000 + "); END;"):
        err = error_of(conn, text)
        assert err.full_code == "ORA-06550" and "PLS-00123: program too large" in str(err)
    err = error_of(conn, "BEGIN DBMS_OUTPUT.PUT_LINE(" + "+".join(["1"] * 1000) + "); END;")
    assert str(err) == "ORA-06500: PL/SQL: storage error"
    # what Oracle's own blocks nest is far from it, and the session goes on
    assert execute(conn, "BEGIN " * 20 + "DBMS_OUTPUT.PUT_LINE(" + "(" * 20 + "1 + 1" + ")" * 20 + ");"
                   + " END;" * 20).output == ["2"]
