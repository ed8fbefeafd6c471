"""A table made at a cursor holds as Oracle's on both stores (src/sluice/store/constraintddl.py,
sqlitetables.py, numberscale.py): foreign keys enforced (ORA-02291 / 02292 named OWNER.NAME,
ON DELETE CASCADE / SET NULL, DEFERRABLE INITIALLY DEFERRED checked at COMMIT: ORA-02091 with
its cause), NUMBER(p, s) values rounded to the scale (ORA-01438 past the precision), CHAR(n)
compared blank-padded, ALTER TABLE ADD / DROP CONSTRAINT with the table's rows checked first
(ORA-01449 / 02437 / 02299 / 02293 / 02298 / 02260 / 02264 / 02443 / 02273), a PRIMARY KEY
column added, TRUNCATE firing no DML trigger.  Before, SQLite took children without parents,
kept 1.235 in a NUMBER(5, 2), missed ``c = 'ab'`` of a CHAR(5) 'ab' and refused every ADD
CONSTRAINT (SLU-00001)."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import create_table, query_code, query_rows, raised_code


def _run(conn, *statements):
    cur = conn.cursor()
    for sql in statements:
        cur.execute(sql)
    return cur


def _message(fn) -> str:
    with pytest.raises(sluice.Error) as e:
        fn()
    return e.value.args[0].message


def _family(conn):
    _run(conn, "create table dept (id number(4) constraint dept_pk primary key, dname varchar2(20))",
         "create table emp (id number(6) primary key, dept_id number(4) constraint emp_dept_fk references dept (id), "
         "name varchar2(20))",
         "insert into dept values (10, 'Sales')", "insert into emp values (1, 10, 'Ann')")
    conn.commit()


# -- foreign keys ----------------------------------------------------------------------------
def test_a_child_without_its_parent_and_a_parent_with_children_are_refused(conn):
    _family(conn)
    owner = conn.username.upper()
    cur = conn.cursor()
    msg = _message(lambda: cur.execute("insert into emp values (2, 99, 'Bob')"))
    assert msg == f"ORA-02291: integrity constraint ({owner}.EMP_DEPT_FK) violated - parent key not found"
    assert query_code(conn, "update emp set dept_id = 98 where id = 1") == "ORA-02291"
    msg = _message(lambda: cur.execute("delete from dept where id = 10"))
    assert msg == f"ORA-02292: integrity constraint ({owner}.EMP_DEPT_FK) violated - child record found"
    assert query_code(conn, "update dept set id = 11 where id = 10") == "ORA-02292"
    # the statements alone were undone: the transaction goes on, a NULL key needs no parent
    _run(conn, "insert into emp values (3, null, 'Cy')", "insert into emp values (4, 10, 'Di')")
    conn.commit()
    assert query_rows(conn, "select id, dept_id from emp order by id") == [(1, 10), (3, None), (4, 10)]
    assert query_rows(conn, "select id from dept") == [(10,)]


def test_on_delete_cascade_and_set_null(conn):
    _run(conn, "create table p (id number primary key)",
         "create table kids (id number, pid number references p on delete cascade)",
         "create table pets (id number, pid number, constraint pets_fk foreign key (pid) references p (id) "
         "on delete set null)",
         "insert into p values (1)", "insert into p values (2)",
         "insert into kids values (1, 1)", "insert into kids values (2, 2)",
         "insert into pets values (1, 1)", "insert into pets values (2, 2)",
         "delete from p where id = 1")
    conn.commit()
    assert query_rows(conn, "select id, pid from kids order by id") == [(2, 2)]
    assert query_rows(conn, "select id, pid from pets order by id") == [(1, None), (2, 2)]


def test_a_deferred_foreign_key_is_checked_at_commit(conn):
    _run(conn, "create table p (id number primary key)",
         "create table c (id number, pid number constraint c_p_fk references p (id) deferrable initially deferred)")
    # the child first, its parent later in the same transaction: Oracle checks at COMMIT
    _run(conn, "insert into c values (1, 7)", "insert into p values (7)")
    conn.commit()
    assert query_rows(conn, "select id, pid from c") == [(1, 7)]
    _run(conn, "insert into c values (2, 8)", "insert into p values (9)")
    with pytest.raises(sluice.IntegrityError) as e:
        conn.commit()
    assert e.value.args[0].full_code == "ORA-02091"
    assert str(e.value).splitlines() == [
        "ORA-02091: transaction rolled back",
        f"ORA-02291: integrity constraint ({conn.username.upper()}.C_P_FK) violated - parent key not found"]
    # all of the transaction rolled back, the session goes on
    assert query_rows(conn, "select count(*) from c") == [(1,)]
    assert query_rows(conn, "select count(*) from p") == [(1,)]
    _run(conn, "insert into p values (8)")
    conn.commit()
    assert query_rows(conn, "select id from p order by id") == [(7,), (8,)]


def test_a_foreign_key_must_name_a_key_of_its_parent(conn):
    _run(conn, "create table p (id number primary key, code varchar2(5), tag varchar2(5) unique)",
         "create table nokey (a number)")
    assert query_code(conn, "create table c (x varchar2(5) references p (code))") == "ORA-02270"
    assert query_code(conn, "create table c (x number references nokey)") == "ORA-02268"
    assert query_code(conn, "create table c (x number, y number, foreign key (x, y) references p)") == "ORA-02256"
    _run(conn, "create table c (x varchar2(5) references p (tag))", "insert into p values (1, 'a', 't')",
         "insert into c values ('t')")
    assert query_code(conn, "insert into c values ('u')") == "ORA-02291"


def test_drop_table_cascade_constraints_drops_the_childrens_foreign_keys(conn):
    _family(conn)
    _run(conn, "drop table dept cascade constraints")
    _run(conn, "insert into emp values (2, 99, 'Bob')")     # no parent left to need
    conn.commit()
    assert query_rows(conn, "select id, dept_id from emp order by id") == [(1, 10), (2, 99)]


# -- NUMBER(p, s) ----------------------------------------------------------------------------
def test_number_values_are_rounded_to_the_columns_scale(conn):
    _run(conn, "create table n (id number, a number(5,2), b number(3), c number(5,-2), d number(4,5), e number)")
    cur = conn.cursor()
    cur.execute("insert into n (id, a, b, c, d, e) values (1, 1.235, 123.5, 12345.345, 0.01234567, 1.23456)")
    cur.execute("insert into n values (:1, :2, :3, :4, :5, :6)", [2, -1.235, -0.5, 1234567, 0.000127, 2.5])
    cur.executemany("insert into n (id, a) values (:1, :2)", [(3, 2.345), (4, 9.999)])
    cur.execute("insert into n (id, a, b) select 5, a + 0.001, b from n where id = 1")
    conn.commit()
    assert query_rows(conn, "select id, a, b, c, d, e from n order by id") == [
        (1, 1.24, 124, 12300, 0.01235, 1.23456), (2, -1.24, -1, 1234600, 0.00013, 2.5),
        (3, 2.35, None, None, None, None), (4, 10.0, None, None, None, None), (5, 1.24, 124, None, None, None)]
    cur.execute("update n set a = a / 3, b = 2.5 where id = 3")
    assert cur.rowcount == 1
    assert query_rows(conn, "select a, b from n where id = 3") == [(0.78, 3)]
    # past the precision after rounding: ORA-01438, nothing written
    assert query_code(conn, "insert into n (id, a) values (6, 999.996)") == "ORA-01438"
    assert query_code(conn, "insert into n (id, c) values (7, 12345678)") == "ORA-01438"
    assert query_code(conn, "insert into n (id, d) values (8, 0.1)") == "ORA-01438"
    assert query_code(conn, "update n set b = 999.5 where id = 1") == "ORA-01438"
    assert query_rows(conn, "select count(*) from n where id > 5") == [(0,)]
    cur.execute("insert into n (id, a) values (6, 999.994)")
    assert query_rows(conn, "select a from n where id = 6") == [(999.99,)]
    out = cur.var(float)        # RETURNING gives the value stored
    cur.execute("update n set a = :v where id = 6 returning a into :out", v=1.005, out=out)
    assert out.getvalue() == [1.01]


# -- CHAR(n) ---------------------------------------------------------------------------------
def test_char_columns_compare_blank_padded(conn):
    _run(conn, "create table ch (c char(5), v varchar2(5))", "insert into ch values ('ab', 'ab')")
    conn.commit()
    assert query_rows(conn, "select c from ch where c = 'ab'") == [("ab   ",)]
    assert query_rows(conn, "select c from ch where c = 'ab   '") == [("ab   ",)]
    assert query_rows(conn, "select count(*) from ch where c = :x", {"x": "ab"}) == [(1,)]
    assert query_rows(conn, "select count(*) from ch where v = 'ab '") == [(0,)]     # VARCHAR2: not padded
    _run(conn, "alter table ch add constraint ch_uk unique (c)")
    assert query_code(conn, "insert into ch (c) values ('ab ')") == "ORA-00001"


# -- ADD / DROP CONSTRAINT ------------------------------------------------------------------
def test_add_constraint_checks_the_rows_first(conn):
    owner = conn.username.upper()
    _run(conn, "create table t (id number, code varchar2(5), qty number)",
         "insert into t values (1, 'a', 5)", "insert into t values (1, 'a', -1)", "insert into t values (null, 'b', 2)")
    conn.commit()
    cur = conn.cursor()
    assert raised_code(lambda: cur.execute("alter table t add constraint t_pk primary key (id)")) == "ORA-01449"
    _run(conn, "delete from t where id is null")
    conn.commit()
    assert _message(lambda: cur.execute("alter table t add constraint t_pk primary key (id)")) == \
        f"ORA-02437: cannot validate ({owner}.T_PK) - primary key violated"
    assert _message(lambda: cur.execute("alter table t add constraint t_uk unique (code)")) == \
        f"ORA-02299: cannot validate ({owner}.T_UK) - duplicate keys found"
    assert _message(lambda: cur.execute("alter table t add constraint t_ck check (qty > 0)")) == \
        f"ORA-02293: cannot validate ({owner}.T_CK) - check constraint violated"
    assert query_rows(conn, "select count(*) from t") == [(2,)]
    _run(conn, "update t set id = 2, code = 'b', qty = 1 where qty = -1")
    conn.commit()
    _run(conn, "alter table t add constraint t_pk primary key (id)", "alter table t add (constraint t_uk unique (code))",
         "alter table t add check (qty > 0)")
    refused = [("insert into t values (2, 'c', 1)", "ORA-00001"), ("insert into t values (null, 'c', 1)", "ORA-01400"),
               ("insert into t values (3, 'a', 1)", "ORA-00001"), ("insert into t values (3, 'c', 0)", "ORA-02290"),
               ("alter table t add primary key (code)", "ORA-02260"),
               ("alter table t add constraint t_uk unique (qty)", "ORA-02264"),
               ("alter table t add constraint t_x unique (nope)", "ORA-00904")]
    assert [query_code(conn, sql) for sql, _ in refused] == [code for _, code in refused]
    assert query_rows(conn, "select id, code, qty from t order by id") == [(1, "a", 5), (2, "b", 1)]
    assert query_code(conn, "alter table t drop unique (qty)") == "ORA-02443"
    _run(conn, "alter table t drop unique (code)", "insert into t values (3, 'a', 1)")
    assert query_rows(conn, "select count(*) from t where code = 'a'") == [(2,)]


def test_add_and_drop_a_foreign_key(conn):
    owner = conn.username.upper()
    _run(conn, "create table p (id number primary key)", "create table c (id number, pid number)",
         "insert into p values (1)", "insert into c values (1, 1)", "insert into c values (2, 5)",
         "insert into c values (3, null)")
    conn.commit()
    cur = conn.cursor()
    assert _message(lambda: cur.execute("alter table c add constraint c_fk foreign key (pid) references p")) == \
        f"ORA-02298: cannot validate ({owner}.C_FK) - parent keys not found"
    _run(conn, "delete from c where id = 2", "alter table c add constraint c_fk foreign key (pid) references p (id)")
    assert query_code(conn, "insert into c values (4, 6)") == "ORA-02291"
    assert query_code(conn, "delete from p") == "ORA-02292"
    # the parent's key goes only with the foreign keys on it
    assert query_code(conn, "alter table p drop primary key") == "ORA-02273"
    assert query_code(conn, "alter table c drop constraint nope") == "ORA-02443"
    _run(conn, "alter table c drop constraint c_fk", "insert into c values (4, 6)")
    conn.commit()
    assert query_rows(conn, "select id, pid from c order by id") == [(1, 1), (3, None), (4, 6)]


def test_drop_constraint_and_drop_primary_key_cascade(conn):
    _family(conn)
    _run(conn, "alter table emp add constraint emp_name_ck check (name <> 'X')")
    assert query_code(conn, "insert into emp values (5, 10, 'X')") == "ORA-02290"
    _run(conn, "alter table emp drop constraint emp_name_ck", "insert into emp values (5, 10, 'X')")
    assert query_code(conn, "alter table dept drop constraint dept_pk") == "ORA-02273"
    _run(conn, "alter table dept drop constraint dept_pk cascade")
    _run(conn, "insert into dept values (10, 'Twice')", "insert into emp values (6, 77, 'Ed')")
    conn.commit()
    assert query_code(conn, "alter table dept drop primary key") == "ORA-02441"
    assert query_rows(conn, "select count(*) from dept") == [(2,)]
    assert query_rows(conn, "select count(*) from emp") == [(3,)]


def test_a_table_made_again_keeps_its_indexes_owner_and_checks(conn, dsn):
    _run(conn, "create table k (id number, v varchar2(3), n number(4,1))", "create index k_v on k (v)",
         "insert into k values (1, 'abc', 1.25)")
    conn.commit()
    if dsn.startswith("sqlite"):      # what a synchronous capture puts on a table: kept
        create_table(dsn, "CREATE TABLE k_log (what TEXT)")
        create_table(dsn, "CREATE TRIGGER k_ins AFTER INSERT ON k BEGIN INSERT INTO k_log VALUES ('ins'); END")
    else:
        create_table(dsn, "CREATE TABLE k_log (what TEXT)")
        create_table(dsn, "CREATE FUNCTION k_ins() RETURNS trigger LANGUAGE plpgsql AS "
                          "$$BEGIN INSERT INTO k_log VALUES ('ins'); RETURN NULL; END$$")
        create_table(dsn, "CREATE TRIGGER k_ins AFTER INSERT ON k FOR EACH ROW EXECUTE FUNCTION k_ins()")
    create_table(dsn, "CREATE VIEW k_ids AS SELECT id FROM k")      # (a view naming it still reads it)
    conn.commit()
    _run(conn, "alter table k add constraint k_pk primary key (id)", "insert into k values (2, 'de', 2.25)")
    conn.commit()
    assert query_code(conn, "create index k_v on k (n)") == "ORA-00955"     # the index is still there
    assert query_code(conn, "insert into k values (3, 'long', 1)") == "ORA-12899"
    assert query_rows(conn, "select what from k_log") == [("ins",)]
    assert query_rows(conn, "select id, v, n from k order by id") == [(1, "abc", 1.3), (2, "de", 2.3)]
    assert query_rows(conn, "select count(*) from k_ids") == [(2,)]
    _run(conn, "alter table k drop constraint k_pk", "insert into k values (2, 'de', 0)")
    assert query_rows(conn, "select count(*) from k_log") == [(2,)]


def test_a_primary_key_column_added(conn):
    _run(conn, "create table a (v varchar2(5))", "alter table a add (id number primary key)",
         "insert into a values ('x', 1)")
    assert query_code(conn, "insert into a values ('y', 1)") == "ORA-00001"
    assert query_code(conn, "alter table a add (k number primary key)") == "ORA-01758"
    _run(conn, "create table b (v varchar2(5))")
    _run(conn, "alter table b add (u number unique)", "insert into b values ('x', 1)")
    assert query_code(conn, "insert into b values ('y', 1)") == "ORA-00001"


# -- TRUNCATE --------------------------------------------------------------------------------
def test_truncate_fires_no_delete_trigger(conn, dsn):
    _run(conn, "create table tr (id number)", "insert into tr values (1)", "insert into tr values (2)")
    conn.commit()
    create_table(dsn, "CREATE TABLE tr_log (what TEXT)")
    if dsn.startswith("sqlite"):
        create_table(dsn, "CREATE TRIGGER tr_del AFTER DELETE ON tr BEGIN INSERT INTO tr_log VALUES ('del'); END")
    else:
        create_table(dsn, "CREATE FUNCTION tr_del() RETURNS trigger LANGUAGE plpgsql AS "
                          "$$BEGIN INSERT INTO tr_log VALUES ('del'); RETURN NULL; END$$")
        create_table(dsn, "CREATE TRIGGER tr_del AFTER DELETE ON tr FOR EACH ROW EXECUTE FUNCTION tr_del()")
    _run(conn, "truncate table tr")
    assert query_rows(conn, "select count(*) from tr") == [(0,)]
    assert query_rows(conn, "select count(*) from tr_log") == [(0,)]
    _run(conn, "insert into tr values (3)", "delete from tr")      # the trigger is still there
    conn.commit()
    assert query_rows(conn, "select what from tr_log") == [("del",)]
