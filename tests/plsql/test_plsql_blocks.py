"""Anonymous blocks: arguments, literals, variables, OUT parameters, control flow."""

from __future__ import annotations

import datetime as dt

import pytest

from sluice.errors import DatabaseError
from sluice.plsql import execute

from tests.plsql.plsql_fakes import EnqueueOptions, MessageProperties


def calls(conn):
    return [(proc, kwargs) for _, proc, kwargs in conn.calls]


def test_positional_arguments_follow_oracles_parameter_order(conn):
    execute(conn, "BEGIN DBMS_AQADM.CREATE_QUEUE_TABLE('qt', 'RAW'); END;")
    (proc, kw), = calls(conn)
    assert proc == "create_queue_table"
    assert kw["queue_table"] == "qt" and kw["queue_payload_type"] == "RAW"


def test_mixed_positional_then_named(conn):
    execute(conn, "begin dbms_aqadm.create_queue('q', 'qt', max_retries => 5); end;")
    (_, kw), = calls(conn)
    assert (kw["queue_name"], kw["queue_table"], kw["max_retries"]) == ("q", "qt", 5)


def test_named_arguments_are_case_insensitive(conn):
    execute(conn, "BEGIN SYS.DBMS_AQADM.START_QUEUE(QUEUE_NAME => 'q', Dequeue => FALSE); END;")
    assert calls(conn) == [("start_queue", {"queue_name": "q", "enqueue": True,
                                            "dequeue": False})]


def test_procedure_without_parentheses(conn):
    out = execute(conn, "BEGIN DBMS_OUTPUT.NEW_LINE; DBMS_OUTPUT.PUT_LINE('x'); END;").output
    assert out == ["", "x"]


def test_literals_true_false_null_numbers(conn):
    execute(conn, "BEGIN DBMS_AQADM.CREATE_QUEUE('q', NULL, 1, -2, 1.5, 1e3, TRUE); END;")
    (_, kw), = calls(conn)
    assert kw["queue_table"] is None
    assert (kw["queue_type"], kw["max_retries"], kw["retry_delay"]) == (1, -2, 1.5)
    assert kw["retention_time"] == 1000.0 and kw["dependency_tracking"] is True


def test_concatenation_doubled_quotes_and_q_quoting(conn):
    out = execute(conn, """BEGIN
      DBMS_OUTPUT.PUT_LINE('it''s' || ' ' || q'[a 'quoted' word]' || NULL || 42);
      DBMS_OUTPUT.PUT_LINE(q'{x}' || Q'!y!' || 'z');
    END;""").output
    assert out == ["it's a 'quoted' word42", "xyz"]


def test_empty_string_is_null(conn):
    out = execute(conn, "BEGIN IF '' IS NULL THEN DBMS_OUTPUT.PUT_LINE('null'); END IF; END;")
    assert out.output == ["null"]


def test_declarations_constants_and_assignment(conn):
    out = execute(conn, """DECLARE
      n      NUMBER := 2;
      name   VARCHAR2(30) DEFAULT 'q';
      c      CONSTANT PLS_INTEGER := 10;
      t      dba_queues.name%TYPE;
      flag   BOOLEAN NOT NULL := FALSE;
    BEGIN
      n := n * c + 1 - 4 / 2;
      name := UPPER(name) || '_' || TO_CHAR(n);
      DBMS_OUTPUT.PUT_LINE(name);
      IF t IS NULL AND NOT flag THEN DBMS_OUTPUT.PUT_LINE('ok'); END IF;
    END;""").output
    assert out == ["Q_19", "ok"]
    assert conn.declared == []              # scalars and %TYPE never reach conn.declare


def test_record_types_come_from_conn_declare_and_attributes_are_set(conn):
    execute(conn, """DECLARE
      enqueue_options     DBMS_AQ.ENQUEUE_OPTIONS_T;
      message_properties  DBMS_AQ.MESSAGE_PROPERTIES_T;
      message_handle      RAW(16);
      message             my_type;
    BEGIN
      enqueue_options.VISIBILITY := DBMS_AQ.IMMEDIATE;
      enqueue_options.Delivery_Mode := DBMS_AQ.BUFFERED;
      message_properties.priority := 5;
    END;""")
    assert conn.declared == ["DBMS_AQ.ENQUEUE_OPTIONS_T", "DBMS_AQ.MESSAGE_PROPERTIES_T",
                             "MY_TYPE"]


def test_enqueue_with_out_parameter_assigns_the_msgid(conn):
    out = execute(conn, """DECLARE
      enqueue_options     DBMS_AQ.ENQUEUE_OPTIONS_T;
      message_properties  DBMS_AQ.MESSAGE_PROPERTIES_T;
      message_handle      RAW(16);
    BEGIN
      enqueue_options.visibility := DBMS_AQ.IMMEDIATE;
      message_properties.priority := 3;
      DBMS_AQ.ENQUEUE(queue_name => 'q', enqueue_options => enqueue_options,
                      message_properties => message_properties,
                      payload => UTL_RAW.CAST_TO_RAW('hi'), msgid => message_handle);
      DBMS_OUTPUT.PUT_LINE(RAWTOHEX(message_handle));
    END;""").output
    (proc, kw), = calls(conn)
    assert proc == "enqueue" and "msgid" not in kw
    assert isinstance(kw["enqueue_options"], EnqueueOptions)
    assert kw["enqueue_options"].visibility == 1
    assert kw["message_properties"].priority == 3
    assert kw["payload"] == b"hi"
    assert out == ["01" * 16]


def test_several_out_parameters_positionally(conn):
    out = execute(conn, """DECLARE
      opts  DBMS_AQ.ENQUEUE_OPTIONS_T;
      props DBMS_AQ.MESSAGE_PROPERTIES_T;
      text  VARCHAR2(100);
      id    RAW(16);
    BEGIN
      DBMS_AQ.DEQUEUE('q', opts, props, text, id);
      DBMS_OUTPUT.PUT_LINE(text || ' ' || props.priority || ' ' || LENGTH(id));
    END;""").output
    assert out == ["hello 1 16"]


def test_in_out_parameter_is_passed_and_assigned(conn):
    out = execute(conn, """DECLARE c NUMBER := 5; BEGIN
      DBMS_AQ.BUMP(c, 2); DBMS_AQ.BUMP(counter => c);
      DBMS_OUTPUT.PUT_LINE(c); END;""").output
    assert out == ["8"]
    assert calls(conn) == [("bump", {"counter": 5, "step": 2}),
                           ("bump", {"counter": 7, "step": 1})]


def test_package_constants_and_zero_argument_functions(conn):
    out = execute(conn, """BEGIN
      DBMS_OUTPUT.PUT_LINE(DBMS_AQADM.INFINITE || ' ' || DBMS_AQ.FOREVER || ' ' ||
                           DBMS_AQ.NO_WAIT || ' ' || DBMS_AQ.NEXT_ID || ' ' ||
                           DBMS_AQ.NEXT_ID() || ' ' || SYS.DBMS_STREAMS.COMPATIBLE_9_2());
    END;""").output
    assert out == ["-1 -1 0 42 42 90200"]


def test_type_constructors(conn):
    execute(conn, """DECLARE
      subscriber SYS.AQ$_AGENT;
      msg        strmadmin.region_pri_msg;
    BEGIN
      subscriber := SYS.AQ$_AGENT('sub1', NULL, 0);
      msg := my_type('a', 1);
      DBMS_AQADM.CREATE_QUEUE(queue_name => 'q', queue_table => 'qt',
                              comment => subscriber.type_name);
      msg := strmadmin.region_pri_msg('EUROPE', 1, 'hi');
    END;""")
    assert conn.constructed == [("SYS.AQ$_AGENT", ["sub1", None, 0]), ("MY_TYPE", ["a", 1]),
                                ("STRMADMIN.REGION_PRI_MSG", ["EUROPE", 1, "hi"])]
    (_, kw), = calls(conn)
    assert kw["comment"] == "SYS.AQ$_AGENT"


def test_attribute_reads_on_objects_and_collections(conn):
    out = execute(conn, """DECLARE
      a SYS.AQ$_AGENT := SYS.AQ$_AGENT('sub1', NULL, 0);
      l SYS.AQ$_RECIPIENT_LIST_T;
    BEGIN
      l := SYS.AQ$_RECIPIENT_LIST_T(a, SYS.AQ$_AGENT('sub2', 'addr', 0));
      DBMS_OUTPUT.PUT_LINE(a.type_name || ' ' || l.args.COUNT || ' ' || l.args(2).args(1));
    END;""").output
    assert out == ["SYS.AQ$_AGENT 2 sub2"]


def test_if_elsif_else(conn):
    block = """DECLARE n NUMBER := :n; BEGIN
      IF n < 0 THEN DBMS_OUTPUT.PUT_LINE('neg');
      ELSIF n = 0 OR n IS NULL THEN DBMS_OUTPUT.PUT_LINE('zero');
      ELSIF n BETWEEN 1 AND 9 AND n NOT IN (3, 4) THEN DBMS_OUTPUT.PUT_LINE('small');
      ELSE DBMS_OUTPUT.PUT_LINE('other');
      END IF; END;"""
    assert [execute(conn, block, {"n": n}).output[0] for n in (-1, 0, None, 2, 3, 10)] == \
        ["neg", "zero", "zero", "small", "other", "other"]


def test_for_loops_and_exit(conn):
    out = execute(conn, """BEGIN
      FOR i IN 1..3 LOOP DBMS_OUTPUT.PUT(i); END LOOP;
      FOR i IN REVERSE 1..3 LOOP DBMS_OUTPUT.PUT(i); END LOOP;
      FOR i IN 5..1 LOOP DBMS_OUTPUT.PUT('never'); END LOOP;
      DBMS_OUTPUT.NEW_LINE;
      <<outer>> FOR i IN 1..3 LOOP
        FOR j IN 1..3 LOOP
          CONTINUE WHEN j = 2;
          EXIT outer WHEN i = 2;
          DBMS_OUTPUT.PUT_LINE(i || j);
        END LOOP;
      END LOOP outer;
    END;""").output
    assert out == ["123321", "11", "13"]


def test_while_and_basic_loop(conn):
    out = execute(conn, """DECLARE n NUMBER := 0; BEGIN
      WHILE n < 3 LOOP n := n + 1; END LOOP;
      LOOP n := n + 10; EXIT WHEN n > 30; END LOOP;
      DBMS_OUTPUT.PUT_LINE(n); END;""").output
    assert out == ["33"]


def test_nested_blocks_scope_variables(conn):
    out = execute(conn, """DECLARE x NUMBER := 1; BEGIN
      DECLARE x NUMBER := 2; BEGIN DBMS_OUTPUT.PUT_LINE(x); END;
      BEGIN x := x + 10; END;
      DBMS_OUTPUT.PUT_LINE(x); END;""").output
    assert out == ["2", "11"]


def test_commit_rollback_and_null(conn):
    execute(conn, "BEGIN NULL; COMMIT; ROLLBACK WORK; COMMIT WORK; END;")
    assert conn.tx == ["commit", "rollback", "commit"]


def test_builtin_functions(conn):
    out = execute(conn, """BEGIN
      DBMS_OUTPUT.PUT_LINE(LOWER('AbC') || SUBSTR('abcdef', 2, 3) || SUBSTR('abcdef', -2)
                           || LENGTH('four') || TRIM('  t  ') || NVL(NULL, 'n'));
      DBMS_OUTPUT.PUT_LINE(RAWTOHEX(HEXTORAW('0aff')) || ' ' ||
                           UTL_RAW.CAST_TO_VARCHAR2(UTL_RAW.CAST_TO_RAW('é')));
      DBMS_OUTPUT.PUT_LINE(TO_NUMBER('12.5') + 1 || ' ' || TO_CHAR(0.5) || ' ' || 7 / 2);
      DBMS_OUTPUT.PUT_LINE(TO_CHAR(TO_DATE('2024-03-05 14:07:09', 'YYYY-MM-DD HH24:MI:SS'),
                                   'DD-MON-YYYY HH24.MI.SS'));
      DBMS_OUTPUT.PUT_LINE(TO_CHAR(TO_DATE('05-MAR-24'), 'Mon DD, YYYY'));
      DBMS_OUTPUT.PUT_LINE(TO_CHAR(42, '0000') || TO_CHAR(3.14159, 'FM9.99'));
    END;""").output
    assert out == ["abcbcdef4tn", "0AFF é", "13.5 .5 3.5", "05-MAR-2024 14.07.09",
                   "Mar 05, 2024", " 00423.14"]


def test_to_char_number_models_are_sqls(conn):
    """A block's TO_CHAR(n, 'model') writes what SQL's does (sluice.numformat): rounded half away
    from zero as a NUMBER (was a float's rounding: .5 to 0, 2.675 to 2.67), FM dropping the
    fraction's trailing zeros at 9 positions, G / D / $ / MI written (were ignored: TO_CHAR(n))."""
    out = execute(conn, """BEGIN
      DBMS_OUTPUT.PUT_LINE('[' || TO_CHAR(0.5, '9') || '][' || TO_CHAR(2.675, 'FM9.99') || '][' ||
                           TO_CHAR(42, 'FM99.99') || '][' || TO_CHAR(1234.5, '9G999D99') || '][' ||
                           TO_CHAR(-5, '$999MI') || ']');
    END;""").output
    assert out == ["[ 1][2.68][42.][ 1,234.50][  $5-]"]
    with pytest.raises(DatabaseError) as e:
        execute(conn, "BEGIN DBMS_OUTPUT.PUT_LINE(TO_CHAR(5, '9Z')); END;")
    assert e.value.full_code == "ORA-01481"      # was TO_CHAR(5): '5'


def test_sysdate_and_systimestamp(conn):
    binds = {"out": None}
    execute(conn, """DECLARE d DATE; t TIMESTAMP; BEGIN
      d := SYSDATE; t := SYSTIMESTAMP;
      IF d + 1 > d AND t IS NOT NULL THEN :out := d; END IF; END;""", binds)
    assert isinstance(binds["out"], dt.datetime)


def test_bind_variables_are_read_and_written(conn):
    binds = {"Name": "q", "result": None}
    execute(conn, "BEGIN :result := :name || '!'; DBMS_AQADM.START_QUEUE(:NAME); END;", binds)
    assert binds["result"] == "q!"
    assert calls(conn)[0][1]["queue_name"] == "q"


def test_when_others_handler_catches_package_errors(conn):
    out = execute(conn, """BEGIN
      DBMS_AQADM.STOP_QUEUE('missing');
      DBMS_OUTPUT.PUT_LINE('not reached');
    EXCEPTION
      WHEN OTHERS THEN
        DBMS_OUTPUT.PUT_LINE(SQLCODE || ': ' || SQLERRM);
    END;""").output
    assert out == ["-24010: ORA-24010: QUEUE missing does not exist"]


def test_named_exceptions_and_pragma_exception_init(conn):
    out = execute(conn, """DECLARE
      no_such_queue EXCEPTION;
      PRAGMA EXCEPTION_INIT(no_such_queue, -24010);
      mine EXCEPTION;
    BEGIN
      BEGIN
        DBMS_AQADM.STOP_QUEUE('missing');
      EXCEPTION WHEN no_such_queue THEN DBMS_OUTPUT.PUT_LINE('caught');
      END;
      BEGIN RAISE mine; EXCEPTION WHEN mine OR zero_divide THEN
        DBMS_OUTPUT.PUT_LINE(SQLCODE || ' ' || SQLERRM); END;
      BEGIN DBMS_OUTPUT.PUT_LINE(1/0);
      EXCEPTION WHEN ZERO_DIVIDE THEN DBMS_OUTPUT.PUT_LINE(SQLERRM); END;
      RAISE no_such_queue;
    EXCEPTION WHEN OTHERS THEN
      DBMS_OUTPUT.PUT_LINE('outer ' || SQLCODE || ' ' || SQLERRM);
    END;""").output
    assert out == ["caught", "1 User-Defined Exception", "ORA-01476: divisor is equal to zero",
                   "outer -24010 ORA-24010: QUEUE %s does not exist"]


def test_reraise_and_unhandled_user_exception(conn):
    with pytest.raises(DatabaseError, match="^ORA-06510: PL/SQL: unhandled user-defined"):
        execute(conn, "DECLARE e EXCEPTION; BEGIN RAISE e; END;")
    block = """DECLARE
      no_such_queue EXCEPTION;
      PRAGMA EXCEPTION_INIT(no_such_queue, -24010);
      mine EXCEPTION;
    BEGIN
      BEGIN
        DBMS_AQADM.STOP_QUEUE('missing');
      EXCEPTION WHEN no_such_queue THEN DBMS_OUTPUT.PUT_LINE('caught');
      END;
      BEGIN RAISE mine; EXCEPTION WHEN mine OR zero_divide THEN
        DBMS_OUTPUT.PUT_LINE(SQLCODE || ' ' || SQLERRM); END;
      BEGIN DBMS_OUTPUT.PUT_LINE(1/0);
      EXCEPTION WHEN ZERO_DIVIDE THEN DBMS_OUTPUT.PUT_LINE(SQLERRM); END;
      RAISE no_such_queue;
    EXCEPTION WHEN OTHERS THEN
      DBMS_OUTPUT.PUT_LINE('outer ' || SQLCODE);
      RAISE;
    END;"""
    with pytest.raises(DatabaseError) as info:
        execute(conn, block)
    assert info.value.code == 24010


def test_raise_application_error(conn):
    with pytest.raises(DatabaseError) as info:
        execute(conn, "BEGIN RAISE_APPLICATION_ERROR(-20001, 'bad ' || 'thing'); END;")
    assert str(info.value) == "ORA-20001: bad thing"
    assert info.value.code == 20001 and info.value.full_code == "ORA-20001"


def test_raise_application_error_out_of_range(conn):
    with pytest.raises(DatabaseError, match="ORA-21000"):
        execute(conn, "BEGIN RAISE_APPLICATION_ERROR(-1, 'x'); END;")


def test_return_ends_the_block(conn):
    out = execute(conn, "BEGIN DBMS_OUTPUT.PUT_LINE('a'); RETURN; DBMS_OUTPUT.PUT_LINE('b'); END;")
    assert out.output == ["a"]


def test_execute_immediate_runs_a_nested_statement(conn):
    execute(conn, "BEGIN EXECUTE IMMEDIATE 'CREATE TYPE t AS VARRAY(' || 3 || ') OF NUMBER'; END;")
    assert conn.types == [("T", "VARRAY", None, "NUMBER", 3, False)]


def test_labels_comments_and_end_names(conn):
    out = execute(conn, """<<main>>
    DECLARE  /* a comment */ x NUMBER := 1; -- trailing
    BEGIN
      /* multi
         line */ DBMS_OUTPUT.PUT_LINE(x);
    END main;""").output
    assert out == ["1"]


def test_dbms_output_put_accumulates_until_new_line(conn):
    out = execute(conn, "BEGIN DBMS_OUTPUT.PUT('a'); DBMS_OUTPUT.PUT('b'); "
                        "DBMS_OUTPUT.PUT_LINE('c'); END;").output
    assert out == ["abc"]


def test_message_properties_object_is_shared_by_reference(conn):
    execute(conn, """DECLARE p DBMS_AQ.MESSAGE_PROPERTIES_T; BEGIN
      p.correlation := 'c1'; p.delay := 5;
      DBMS_AQ.ENQUEUE('q', NULL, p, HEXTORAW('00')); END;""")
    props = calls(conn)[0][1]["message_properties"]
    assert isinstance(props, MessageProperties)
    assert (props.correlation, props.delay) == ("c1", 5)


def test_recipient_list_filled_element_by_element(conn):
    """The AQ guide's multi-consumer enqueue: recipients(i) := SYS.AQ$_AGENT(...)."""
    execute(conn, """DECLARE
      enqueue_options     DBMS_AQ.ENQUEUE_OPTIONS_T;
      message_properties  DBMS_AQ.MESSAGE_PROPERTIES_T;
      recipients          DBMS_AQ.AQ$_RECIPIENT_LIST_T;
      message_handle      RAW(16);
    BEGIN
      recipients(1) := SYS.AQ$_AGENT('RED', NULL, NULL);
      recipients(2) := SYS.AQ$_AGENT('GREEN', NULL, NULL);
      recipients(1) := SYS.AQ$_AGENT('BLUE', NULL, NULL);
      message_properties.recipient_list := recipients;
      DBMS_AQ.ENQUEUE('q', enqueue_options, message_properties, HEXTORAW('01'),
                      message_handle);
    END;""")
    props = calls(conn)[0][1]["message_properties"]
    assert [a.args[0] for a in props.recipient_list] == ["BLUE", "GREEN"]


def test_collection_methods_and_element_errors(conn):
    out = execute(conn, """DECLARE
      l SYS.AQ$_RECIPIENT_LIST_T := SYS.AQ$_RECIPIENT_LIST_T();
      v SYS.AQ$_RECIPIENT_LIST_T;
    BEGIN
      v(1) := 'a'; v.EXTEND(2); v(3) := 'c';
      DBMS_OUTPUT.PUT_LINE(v.COUNT || v.FIRST || v.LAST || v(1) || NVL(v(2), '-') || v(3));
      v.TRIM; DBMS_OUTPUT.PUT_LINE(v.COUNT);
      IF v.EXISTS(2) AND NOT v.EXISTS(3) THEN DBMS_OUTPUT.PUT_LINE('exists'); END IF;
      v.DELETE; DBMS_OUTPUT.PUT_LINE(v.COUNT || ' ' || NVL(TO_CHAR(v.FIRST), 'null'));
    END;""").output
    assert out == ["313a-c", "2", "exists", "0 null"]
    with pytest.raises(DatabaseError, match="ORA-06533"):
        execute(conn, "DECLARE v SYS.AQ$_RECIPIENT_LIST_T; BEGIN v(2) := 'x'; END;")
    with pytest.raises(DatabaseError, match="PLS-00302: component 'APPEND'"):
        execute(conn, "DECLARE v SYS.AQ$_RECIPIENT_LIST_T; BEGIN v(1) := 1; v.append(2); END;")


def test_dequeue_loop_until_timeout_like_the_aq_guide(conn):
    """DEQUEUE in a LOOP until the mapped ORA-25228 ends it (AQ guide pattern)."""
    seen = []

    def dequeue(queue_name, dequeue_options):
        if len(seen) == 2:
            from sluice.errors import ora
            raise ora(25228, queue_name)
        seen.append(dequeue_options.wait)
        return MessageProperties(), f"m{len(seen)}", b"\x00"
    dequeue.__plsql_out__ = ("message_properties", "payload", "msgid")

    class Pkg:
        NO_WAIT = 0

        def __init__(self):
            self.dequeue = dequeue

    conn.package = lambda name: Pkg() if name == "DBMS_AQ" else type(conn).package(conn, name)
    out = execute(conn, """DECLARE
      dequeue_options     DBMS_AQ.DEQUEUE_OPTIONS_T;
      message_properties  DBMS_AQ.MESSAGE_PROPERTIES_T;
      message_handle      RAW(16);
      message             VARCHAR2(100);
      no_messages         EXCEPTION;
      PRAGMA EXCEPTION_INIT (no_messages, -25228);
    BEGIN
      dequeue_options.wait := DBMS_AQ.NO_WAIT;
      LOOP
        DBMS_AQ.DEQUEUE(queue_name => 'q', dequeue_options => dequeue_options,
                        message_properties => message_properties,
                        payload => message, msgid => message_handle);
        DBMS_OUTPUT.PUT_LINE('Message: ' || message);
        COMMIT;
      END LOOP;
    EXCEPTION
      WHEN no_messages THEN
        DBMS_OUTPUT.PUT_LINE('No more messages');
    END;""").output
    assert out == ["Message: m1", "Message: m2", "No more messages"]
    assert seen == [0, 0] and conn.tx == ["commit", "commit"]
