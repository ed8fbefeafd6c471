"""Oracle's MERGE and multitable INSERT (INSERT ALL / INSERT FIRST) at a python-oracledb cursor
and in blocks, on both stores (:mod:`sluice.store.sqlmerge`, :mod:`sluice.store.multiinsert`):
Oracle's semantics (SQL Language Reference, MERGE and INSERT), its counts and errors, each
statement atomic; a synchronous capture sees MERGE's changes as the UPDATE / INSERT / DELETE
they are."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.sqlhelpers import create_table, query_code, query_rows, raised_code
from tests.streams.synckit import senv  # noqa: F401  (fixture)

MERGE_ONE = ("merge into mt t using (select 1 id, 'a' v from dual) s on (t.id = s.id) "
             "when matched then update set t.v = s.v when not matched then insert (id, v) values (s.id, s.v)")


@pytest.fixture
def mt(conn, dsn):
    """MT (id key, v, n) holding (1, 'a', 10), (2, 'b', 20), (3, 'c', 30); SRC (id, v, n)."""
    create_table(dsn, "CREATE TABLE mt (id INTEGER PRIMARY KEY, v VARCHAR(20), n INTEGER)")
    create_table(dsn, "CREATE TABLE src (id INTEGER, v VARCHAR(20), n INTEGER)")
    conn.cursor().executemany("INSERT INTO mt (id, v, n) VALUES (:1, :2, :3)", [(1, "a", 10), (2, "b", 20), (3, "c", 30)])
    conn.commit()
    return conn


def _rows(conn, table="mt"):
    return query_rows(conn, f"SELECT * FROM {table} ORDER BY id")


def _source(conn, *rows):
    conn.cursor().executemany("INSERT INTO src (id, v, n) VALUES (:1, :2, :3)", list(rows))


# -- MERGE -----------------------------------------------------------------------------
def test_the_common_upsert_inserts_then_updates(conn, dsn):
    create_table(dsn, "CREATE TABLE mt (id INTEGER PRIMARY KEY, v VARCHAR(20))")
    cur = conn.cursor()
    cur.execute(MERGE_ONE)
    assert cur.rowcount == 1 and _rows(conn) == [(1, "a")]
    cur.execute(MERGE_ONE.replace("'a' v", "'z' v"))
    assert cur.rowcount == 1 and _rows(conn) == [(1, "z")]


def test_matched_rows_update_and_the_others_insert(mt):
    cur = mt.cursor()
    cur.execute("MERGE INTO mt t USING (SELECT 1 id, 'x' v FROM dual UNION ALL SELECT 4, 'd' FROM dual "
                "UNION ALL SELECT 5, 'e' FROM dual) s ON (t.id = s.id) "
                "WHEN MATCHED THEN UPDATE SET t.v = s.v, n = t.n + 1 "
                "WHEN NOT MATCHED THEN INSERT (t.id, t.v, t.n) VALUES (s.id, s.v, s.id * 100)")
    assert cur.rowcount == 3
    assert _rows(mt) == [(1, "x", 11), (2, "b", 20), (3, "c", 30), (4, "d", 400), (5, "e", 500)]


def test_a_table_source_either_clause_alone_and_in_either_order(mt):
    _source(mt, (2, "B", 0), (7, "g", 70))
    cur = mt.cursor()
    cur.execute("MERGE INTO mt USING src ON (mt.id = src.id) WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.v, src.n)")
    assert cur.rowcount == 1 and _rows(mt)[-1] == (7, "g", 70)
    cur.execute("MERGE INTO mt USING src ON (mt.id = src.id) WHEN MATCHED THEN UPDATE SET v = src.v")
    assert cur.rowcount == 2 and _rows(mt) == [(1, "a", 10), (2, "B", 20), (3, "c", 30), (7, "g", 70)]
    cur.execute("MERGE INTO mt d USING (SELECT id + 10 id, v FROM src) s ON (d.id = s.id) "
                "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v) "
                "WHEN MATCHED THEN UPDATE SET d.n = -1")
    assert cur.rowcount == 2 and _rows(mt)[-2:] == [(12, "B", None), (17, "g", None)]


def test_the_actions_where_clauses(mt):
    _source(mt, (1, "x", 1), (2, "y", 2), (8, "h", 8), (9, "i", 9))
    cur = mt.cursor()
    cur.execute("MERGE INTO mt t USING src s ON (t.id = s.id) "
                "WHEN MATCHED THEN UPDATE SET t.v = s.v WHERE t.n > 10 "
                "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v) WHERE s.n > 8")
    assert cur.rowcount == 2
    assert _rows(mt) == [(1, "a", 10), (2, "y", 20), (3, "c", 30), (9, "i", None)]


def test_values_the_actions_do_not_take_are_not_computed(mt):
    """A SET (VALUES) expression is evaluated only for the rows the UPDATE (INSERT) changes:
    one that would divide by zero elsewhere raises nothing."""
    _source(mt, (1, "x", 0), (2, "y", 4), (8, "h", 0), (9, "i", 3))
    cur = mt.cursor()
    cur.execute("MERGE INTO mt t USING src s ON (t.id = s.id) "
                "WHEN MATCHED THEN UPDATE SET t.n = t.n / s.n WHERE s.n <> 0 DELETE WHERE t.n = 0 "
                "WHEN NOT MATCHED THEN INSERT (id, n) VALUES (s.id, 90 / s.n) WHERE s.n <> 0")
    assert cur.rowcount == 2
    assert _rows(mt) == [(1, "a", 10), (2, "b", 5), (3, "c", 30), (9, None, 30)]


def test_delete_where_sees_the_updated_values_and_only_updated_rows(mt):
    """Rows updated and then deleted count as merged once ("1 row merged"); a row the
    DELETE condition would hold for but the statement did not update stays."""
    cur = mt.cursor()
    cur.execute("UPDATE mt SET n = 0 WHERE id = 3")
    _source(mt, (1, "x", 0), (2, "y", 5), (4, "d", 0))
    cur.execute("MERGE INTO mt t USING src s ON (t.id = s.id) "
                "WHEN MATCHED THEN UPDATE SET t.n = s.n DELETE WHERE t.n = 0 "
                "WHEN NOT MATCHED THEN INSERT (id, v, n) VALUES (s.id, s.v, s.n)")
    assert cur.rowcount == 3
    assert _rows(mt) == [(2, "b", 5), (3, "c", 0), (4, "d", 0)]


def test_delete_where_applies_only_where_the_update_where_held(mt):
    _source(mt, (1, "a", 10), (2, "b", 99))
    cur = mt.cursor()
    cur.execute("MERGE INTO mt t USING src s ON (t.id = s.id) "
                "WHEN MATCHED THEN UPDATE SET n = s.n WHERE t.n <> s.n DELETE WHERE t.n = 10 OR s.v = 'b'")
    assert cur.rowcount == 1         # row 1: equal, not updated, so not deleted; row 2 updated, deleted
    assert _rows(mt) == [(1, "a", 10), (3, "c", 30)]


def test_binds_by_name_and_by_position(mt):
    cur = mt.cursor()
    sql = ("MERGE INTO mt t USING (SELECT :id id, :v v FROM dual) s ON (t.id = s.id) "
           "WHEN MATCHED THEN UPDATE SET t.v = s.v, t.n = :n WHEN NOT MATCHED THEN INSERT (id, v, n) VALUES (s.id, s.v, :n2)")
    cur.execute(sql, id=1, v="one", n=1, n2=2)
    assert cur.rowcount == 1
    cur.execute(sql, [6, "six", 0, 60])
    assert cur.rowcount == 1
    assert _rows(mt) == [(1, "one", 1), (2, "b", 20), (3, "c", 30), (6, "six", 60)]


def test_executemany_merges_each_row(mt):
    cur = mt.cursor()
    cur.executemany("MERGE INTO mt t USING (SELECT :1 id, :2 v FROM dual) s ON (t.id = s.id) "
                    "WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
                    [(2, "B"), (8, "h"), (8, "H")], arraydmlrowcounts=True)
    assert cur.rowcount == 3 and cur.getarraydmlrowcounts() == [1, 1, 1]
    assert [r[:2] for r in _rows(mt)] == [(1, "a"), (2, "B"), (3, "c"), (8, "H")]


def test_a_target_row_two_source_rows_update_is_ora_30926(mt):
    cur = mt.cursor()
    cur.execute("INSERT INTO mt (id, v) VALUES (9, 'mine')")        # the transaction's earlier work stays
    _source(mt, (1, "x", 0), (1, "y", 0), (5, "e", 0))
    merge = ("MERGE INTO mt t USING src s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET t.v = s.v "
             "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)")
    assert raised_code(cur.execute, merge) == "ORA-30926"
    assert _rows(mt) == [(1, "a", 10), (2, "b", 20), (3, "c", 30), (9, "mine", None)]
    # two source rows of which the UPDATE's WHERE takes one: a stable set
    cur.execute(merge.replace("t.v = s.v", "t.v = s.v WHERE s.v = 'y'"))
    assert cur.rowcount == 2 and _rows(mt)[0] == (1, "y", 10) and _rows(mt)[-2] == (5, "e", None)


def test_an_on_column_cannot_be_updated(mt):
    for set_clause, column in (("t.id = s.id", '"T"."ID"'), ("id = s.id + 1, v = s.v", '"T"."ID"')):
        with pytest.raises(sluice.DatabaseError) as e:
            mt.cursor().execute(f"MERGE INTO mt t USING (SELECT 1 id, 'x' v FROM dual) s ON (t.id = s.id) "
                                f"WHEN MATCHED THEN UPDATE SET {set_clause}")
        assert e.value.full_code == "ORA-38104" and str(e.value).endswith(column)
    assert _rows(mt)[0] == (1, "a", 10)


@pytest.mark.parametrize("insert, code", [
    ("INSERT (id, v) VALUES (s.id, t.v)", "ORA-38101"),
    ("INSERT (id, v) VALUES (s.id, s.v) WHERE t.n IS NULL", "ORA-38102"),
])
def test_the_insert_cannot_name_the_targets_columns(mt, insert, code):
    with pytest.raises(sluice.DatabaseError) as e:
        mt.cursor().execute(f"MERGE INTO mt t USING (SELECT 7 id, 'x' v FROM dual) s ON (t.id = s.id) "
                            f"WHEN NOT MATCHED THEN {insert}")
    assert e.value.full_code == code and str(e.value).endswith('"T"."V"' if code == "ORA-38101" else '"T"."N"')
    assert len(_rows(mt)) == 3


def test_an_insert_that_fails_undoes_the_whole_merge(mt):
    cur = mt.cursor()
    _source(mt, (1, "x", 0), (6, "f", 0), (6, "again", 0))
    assert raised_code(cur.execute, "MERGE INTO mt t USING src s ON (t.id = s.id) "
                       "WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, v) "
                       "VALUES (s.id, s.v)") == "ORA-00001"
    assert _rows(mt) == [(1, "a", 10), (2, "b", 20), (3, "c", 30)]


@pytest.mark.parametrize("sql, code", [
    ("MERGE mt t USING src s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v", "ORA-00925"),
    ("MERGE INTO mt t USING src s (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v", "ORA-00969"),
    ("MERGE INTO mt t USING src s ON (t.id = s.id)", "ORA-00905"),
    ("MERGE INTO mt t USING src s ON (t.id = s.id) WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id)",
     "ORA-00947"),
    ("MERGE INTO mt t USING src s ON (t.id = s.id) WHEN MATCHED THEN UPDATE SET v = s.v "
     "WHEN MATCHED THEN UPDATE SET v = 'x'", "ORA-00905"),
])
def test_malformed_merges_change_nothing(mt, sql, code):
    assert query_code(mt, sql) == code
    assert _rows(mt) == [(1, "a", 10), (2, "b", 20), (3, "c", 30)]


def test_merge_in_a_block_with_sql_rowcount(mt):
    cur = mt.cursor()
    count = cur.var(int)
    cur.execute("""
        DECLARE
          v_id NUMBER := 2;
          v_name VARCHAR2(20) := 'two';
        BEGIN
          MERGE INTO mt t USING (SELECT v_id id, v_name v FROM dual UNION ALL SELECT 12, 'twelve' FROM dual) s
            ON (t.id = s.id)
          WHEN MATCHED THEN UPDATE SET t.v = s.v
          WHEN NOT MATCHED THEN INSERT (id, v, n) VALUES (s.id, s.v, v_id);
          :n := SQL%ROWCOUNT;
        END;""", n=count)
    assert count.getvalue() == 2
    assert _rows(mt) == [(1, "a", 10), (2, "two", 20), (3, "c", 30), (12, "twelve", 2)]


def test_a_table_made_at_the_cursor_with_oracle_types_and_date_binds(conn):
    cur = conn.cursor()
    cur.execute("create table acct (id number(10) primary key, bal number(12, 2), opened date, note varchar2(20))")
    cur.execute("insert into acct values (1, 10.5, date '2026-01-01', 'old')")
    day = dt.datetime(2026, 12, 1, 8, 30)
    cur.executemany("merge into acct a using (select :id id, :amount amount, :opened opened from dual) s on (a.id = s.id) "
                    "when matched then update set a.bal = a.bal + s.amount, a.opened = s.opened "
                    "when not matched then insert (id, bal, opened, note) values (s.id, s.amount, s.opened, 'new')",
                    [{"id": 1, "amount": 0.25, "opened": day}, {"id": 2, "amount": 7, "opened": day}])
    assert cur.rowcount == 2
    assert query_rows(conn, "select id, bal, opened, note from acct order by id") == \
        [(1, 10.75, day, "old"), (2, 7, day, "new")]


def test_date_arithmetic_on_a_source_tables_column(conn):
    """USING's table is among the statement's tables whose declared types the translation
    reads: its DATE column plus days is a DATE."""
    cur = conn.cursor()
    cur.execute("create table tgt (id number(10) primary key, due date)")
    cur.execute("create table starts (id number(10), start_day date)")
    cur.execute("insert into starts values (1, date '2026-01-01')")
    cur.execute("merge into tgt t using starts s on (t.id = s.id) "
                "when not matched then insert (id, due) values (s.id, s.start_day + 30)")
    assert query_rows(conn, "select id, due from tgt") == [(1, dt.datetime(2026, 1, 31))]


def test_a_target_without_alias_named_in_the_conditions_and_a_sequence_in_values(conn):
    """A table made at the cursor is the store's quoted name in the statement run; its own
    name still qualifies its columns in ON, SET and DELETE WHERE."""
    cur = conn.cursor()
    cur.execute("create table acct (id number(10) primary key, code varchar2(10) unique, bal number(12))")
    cur.execute("create sequence acct_seq start with 100")
    cur.execute("insert into acct values (1, 'A', 10)")
    cur.execute("insert into acct values (2, 'C', 99)")
    cur.execute("merge into acct using (select 'A' code, 5 amt from dual union all select 'B', 7 from dual "
                "union all select 'C', 2 from dual) s on (acct.code = s.code) "
                "when matched then update set acct.bal = acct.bal + s.amt delete where acct.bal > 100 "
                "when not matched then insert (id, code, bal) values (acct_seq.nextval, s.code, s.amt)")
    assert cur.rowcount == 3
    assert query_rows(conn, "select id, code, bal from acct order by id") == [(1, "A", 15), (100, "B", 7)]
    with pytest.raises(sluice.DatabaseError, match='ORA-38104: .*: "ACCT"."CODE"$'):
        cur.execute("merge into acct using (select 'A' code from dual) s on (acct.code = s.code) "
                    "when matched then update set acct.code = 'Z'")


# -- INSERT ALL / INSERT FIRST ------------------------------------------------------------
@pytest.fixture
def two(mt, dsn):
    create_table(dsn, "CREATE TABLE t1 (id INTEGER PRIMARY KEY, v VARCHAR(20))")
    create_table(dsn, "CREATE TABLE t2 (id INTEGER PRIMARY KEY, v VARCHAR(20))")
    return mt


def test_unconditional_insert_all(two):
    cur = two.cursor()
    cur.execute("INSERT ALL INTO t1 (id, v) VALUES (:1, :2) INTO t2 VALUES (:3, 'two') "
                "INTO t1 (id, v) VALUES (100, 'x') SELECT * FROM dual", [1, "one", 2])
    assert cur.rowcount == 3
    assert _rows(two, "t1") == [(1, "one"), (100, "x")] and _rows(two, "t2") == [(2, "two")]
    cur.execute("INSERT ALL INTO t1 INTO t2 (v, id) VALUES (v, id + 10) SELECT id + 1000 id, v FROM mt WHERE id < 3")
    assert cur.rowcount == 4
    assert _rows(two, "t1")[-2:] == [(1001, "a"), (1002, "b")]
    assert _rows(two, "t2")[-2:] == [(1011, "a"), (1012, "b")]


def test_conditional_insert_all_and_first(two):
    cur = two.cursor()
    conditional = ("INSERT {} WHEN n >= 20 THEN INTO t1 VALUES (id, v) WHEN n >= 10 THEN INTO t2 VALUES (id, v) "
                   "ELSE INTO t2 VALUES (id, 'else') SELECT id, v, n FROM mt UNION ALL SELECT 4, 'd', NULL FROM dual")
    cur.execute(conditional.format("ALL"))
    assert cur.rowcount == 6
    assert _rows(two, "t1") == [(2, "b"), (3, "c")]
    assert _rows(two, "t2") == [(1, "a"), (2, "b"), (3, "c"), (4, "else")]
    cur.execute("DELETE FROM t1")
    cur.execute("DELETE FROM t2")
    cur.execute(conditional.format("FIRST"))
    assert cur.rowcount == 4
    assert _rows(two, "t1") == [(2, "b"), (3, "c")] and _rows(two, "t2") == [(1, "a"), (4, "else")]


def test_the_subquery_is_read_before_any_row_is_inserted(two):
    cur = two.cursor()
    cur.execute("INSERT ALL INTO mt (id, v) VALUES (id + 10, v) INTO mt (id, v) VALUES (id + 20, v) "
                "SELECT id, v FROM mt")
    assert cur.rowcount == 6 and len(_rows(two)) == 9


def test_a_multitable_insert_is_atomic(two):
    cur = two.cursor()
    cur.execute("INSERT INTO t2 (id, v) VALUES (3, 'taken')")
    assert raised_code(cur.execute, "INSERT ALL INTO t1 (id, v) VALUES (id, v) INTO t2 (id, v) VALUES (id, v) "
                       "SELECT id, v FROM mt") == "ORA-00001"
    assert _rows(two, "t1") == [] and _rows(two, "t2") == [(3, "taken")]


@pytest.mark.parametrize("sql, code", [
    ("INSERT FIRST INTO t1 VALUES (1, 'a') SELECT * FROM dual", "ORA-00905"),
    ("INSERT ALL INTO t1 (id, v) VALUES (1) SELECT * FROM dual", "ORA-00947"),
    ("INSERT ALL INTO t1 (id, v) VALUES (1, 'a')", "ORA-00928"),
])
def test_malformed_multitable_inserts(two, sql, code):
    assert query_code(two, sql) == code
    assert _rows(two, "t1") == []


def test_insert_all_in_a_block_with_sql_rowcount(two):
    cur = two.cursor()
    count = cur.var(int)
    cur.execute("""
        DECLARE
          v_base NUMBER := 50;
        BEGIN
          INSERT ALL INTO t1 (id, v) VALUES (v_base, 'one') INTO t2 (id, v) VALUES (v_base + 1, 'two')
            SELECT * FROM dual;
          :n := SQL%ROWCOUNT;
        END;""", n=count)
    assert count.getvalue() == 2
    assert _rows(two, "t1") == [(50, "one")] and _rows(two, "t2") == [(51, "two")]


# -- synchronous capture -------------------------------------------------------------------
def test_a_sync_capture_sees_merge_as_its_updates_inserts_and_deletes(senv):
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name=rs)
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)", f"INSERT INTO {t} VALUES (2, 'b', 1)")
    senv.dequeue_all()
    cur = senv.conn.cursor()
    cur.execute(f"MERGE INTO {t} e USING (SELECT 1 id, 'A' name FROM dual UNION ALL SELECT 2, 'gone' FROM dual "
                f"UNION ALL SELECT 3, 'c' FROM dual) s ON (e.id = s.id) "
                f"WHEN MATCHED THEN UPDATE SET e.name = s.name DELETE WHERE e.name = 'gone' "
                f"WHEN NOT MATCHED THEN INSERT (id, name, dept) VALUES (s.id, s.name, 9)")
    assert cur.rowcount == 3
    senv.conn.commit()
    got = sorted((lcr.get_command_type(), lcr.get_value("OLD" if lcr.get_command_type() == "DELETE" else "NEW",
                                                        "ID").value) for lcr in senv.dequeue_all())
    # PostgreSQL's MERGE deletes the row it would update and then delete: no UPDATE of it
    updates = [("UPDATE", 1), ("UPDATE", 2)] if senv.sqlite else [("UPDATE", 1)]
    assert got == sorted([("DELETE", 2), ("INSERT", 3), *updates])
