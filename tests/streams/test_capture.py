"""Capture processes over a PostgreSQL source (issue 13 §2): row LCRs with their content,
transactions and commit order, rule sets, tags, DDL LCRs, unsupported types, the queue
without subscribers, and the views.

Spec: seed 001_0cd730aa595c4170.txt (Streams 11.1 ch. 3 "Staging and Propagation":
"Queues and Capture Processes", "Secure Queues and Oracle Streams Clients") and seed
000_c58e7ef949d95dc2.txt (Table 6-1, "System-Created Rules", tags).  Every test runs
with the store on both backends; the source is always PostgreSQL (the store's own
database, or ``source_dsn`` for an SQLite store).
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

import sluice
from sluice.streams import RowLCR
from sluice.streams.capture import emit_tag, tag_transaction
from tests.streams.capturekit import env  # noqa: F401  (fixture)


def rows(lcrs):
    return [lcr for lcr in lcrs if isinstance(lcr, RowLCR)]


def values(lcr, which):
    return {u.column_name: u.data.value for u in lcr.get_values(which, "N")}


def test_row_lcrs_content_order_transactions(env):
    """Inserts, updates and deletes in several source transactions reach the queue as row
    LCRs: command type, owner and object named as Oracle's dictionary would (upper case),
    old and new values with their types, the source transaction id, SCNs (LSNs) and commit
    SCNs, commit time, the source database's global name — in commit order, each source
    transaction whole."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.emp (id int PRIMARY KEY, name text, sal numeric(10,2), hired date, "
            f"seen timestamptz, photo bytea, active boolean, doc jsonb, rate double precision)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "emp"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.emp VALUES (1, 'King', 5000.50, '2020-01-02', '2021-03-04 05:06:07.5+00', "
            f"'\\x0102', true, '{{\"a\": 1}}', 0.25)",
            f"INSERT INTO {s}.emp (id, name) VALUES (2, '')")
    env.sql(f"UPDATE {s}.emp SET sal = 6000 WHERE id = 1")
    env.sql(f"DELETE FROM {s}.emp WHERE id = 2", f"UPDATE {s}.emp SET name = 'KING' WHERE id = 1")
    proc = env.process()
    assert proc.catch_up() >= 3
    lcrs = env.dequeue_all()
    assert [(x.get_command_type(), x.get_object_owner(), x.get_object_name()) for x in lcrs] == [
        ("INSERT", env.owner, "EMP"), ("INSERT", env.owner, "EMP"), ("UPDATE", env.owner, "EMP"),
        ("DELETE", env.owner, "EMP"), ("UPDATE", env.owner, "EMP")]
    first = lcrs[0]
    assert values(first, "NEW") == {
        "ID": 1, "NAME": "King", "SAL": Decimal("5000.50"), "HIRED": datetime(2020, 1, 2),
        "SEEN": datetime(2021, 3, 4, 5, 6, 7, 500000, tzinfo=timezone.utc), "PHOTO": b"\x01\x02",
        "ACTIVE": 1, "DOC": '{"a": 1}', "RATE": 0.25}
    types = {u.column_name: u.data.get_type_name() for u in first.get_values("NEW")}
    assert types == {"ID": "SYS.NUMBER", "NAME": "SYS.VARCHAR2", "SAL": "SYS.NUMBER",
                     "HIRED": "SYS.DATE", "SEEN": "SYS.TIMESTAMP", "PHOTO": "SYS.RAW",
                     "ACTIVE": "SYS.NUMBER", "DOC": "SYS.CLOB", "RATE": "SYS.BINARY_DOUBLE"}
    assert first.get_value("NEW", "name").access_varchar2() == "King"
    assert values(lcrs[1], "NEW")["NAME"] == ""          # PostgreSQL's empty string, not NULL
    assert values(lcrs[2], "OLD") == {"ID": 1}           # the replica identity: the key
    assert values(lcrs[2], "NEW")["SAL"] == 6000
    assert values(lcrs[3], "OLD") == {"ID": 2} and values(lcrs[3], "NEW") == {}
    assert first.get_source_database_name() == env.pg.info.dbname.upper()
    assert first.is_null_tag() == "Y"
    # transactions: the first two LCRs share one, which commits once; order = commit order
    txns = [x.get_transaction_id() for x in lcrs]
    assert txns[0] == txns[1] and txns[3] == txns[4] and len(set(txns)) == 3
    cscn = [x.get_commit_scn() for x in lcrs]
    assert cscn[0] == cscn[1] < cscn[2] < cscn[3] == cscn[4]
    assert all(x.get_scn() < x.get_commit_scn() for x in lcrs)
    assert lcrs[0].get_scn() < lcrs[1].get_scn() and lcrs[3].get_scn() < lcrs[4].get_scn()
    assert all(isinstance(x.get_source_time(), datetime) for x in lcrs)
    # the views
    cap = env.view("SELECT * FROM DBA_CAPTURE")[0]
    assert (cap["CAPTURE_NAME"], cap["QUEUE_NAME"], cap["QUEUE_OWNER"], cap["RULE_SET_NAME"],
            cap["STATUS"], cap["ERROR_NUMBER"]) == ("CAP", "STRM_Q", "SLUICE", "RS", "ENABLED", None)
    assert cap["CAPTURED_SCN"] >= cscn[-1] and cap["FIRST_SCN"] <= cap["START_SCN"] <= lcrs[0].get_scn()
    assert cap["SOURCE_DATABASE"] == env.pg.info.dbname.upper()
    v = env.view("SELECT * FROM V$STREAMS_CAPTURE")[0]
    assert v["CAPTURE_NAME"] == "CAP" and v["STATE"] in ("CAPTURING CHANGES", "WAITING FOR REDO")
    assert v["TOTAL_MESSAGES_ENQUEUED"] == 5 and v["TOTAL_MESSAGES_CAPTURED"] >= 5
    assert v["ENQUEUE_MESSAGE_NUMBER"] == lcrs[-1].get_scn()
    assert 0 <= v["LATENCY_SECONDS"] < 60
    proc.stop()
    assert env.view("SELECT * FROM V$STREAMS_CAPTURE") == []   # only running captures


def test_a_renamed_site_captures_its_own_database_under_its_global_name(env):
    """ALTER DATABASE RENAME GLOBAL_NAME names the site (DESIGN.md section 7): a capture of
    the store's own database then puts that name in its LCRs and DBA_CAPTURE, as Oracle's
    capture gives its database's global name (seed 000's rules test
    ``:dml.get_source_database_name() = 'DBS1.NET'``); a capture of another database
    (``source_dsn``) keeps that database's name."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.emp (id int PRIMARY KEY, name text)")
    env.conn.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO dbs1.net")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "emp"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.emp VALUES (1, 'King')")
    env.process().catch_up()
    lcrs = env.dequeue_all()
    name = "DBS1.NET" if env.source_dsn is None else env.pg.info.dbname.upper()
    assert [x.get_source_database_name() for x in lcrs] == [name]
    assert env.view("SELECT SOURCE_DATABASE FROM DBA_CAPTURE") == [{"SOURCE_DATABASE": name}]


def test_one_byte_char_column_is_captured(env):
    """PostgreSQL's one-byte ``"char"`` (wal2json names it bare ``char``) and ``char(n)``
    become SYS.CHAR values; the table is captured, not reported unsupported."""
    s = env.src
    env.sql(f'CREATE TABLE {s}.flags (id int PRIMARY KEY, f "char", code char(3))')
    env.create_capture(rule_set_name=env.table_rule_set("RS", "flags"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.flags VALUES (1, 'y', 'ab')")
    assert env.process().catch_up() >= 1
    (lcr,) = rows(env.dequeue_all())
    assert values(lcr, "NEW") == {"ID": 1, "F": "y", "CODE": "ab "}
    assert {u.column_name: u.data.get_type_name() for u in lcr.get_values("NEW")} == {
        "ID": "SYS.NUMBER", "F": "SYS.CHAR", "CODE": "SYS.CHAR"}

def test_rule_sets_table_6_1(env):
    """Seed 000 Table 6-1: the negative rule set is evaluated first and discards; of the
    rest, what the positive rule set finds TRUE is captured; without a positive rule set
    everything not discarded is."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.a (id int PRIMARY KEY, v text)", f"CREATE TABLE {s}.b (id int PRIMARY KEY)")
    positive = env.table_rule_set("POS", "a")
    adm = env.conn.rule_adm
    adm.create_rule_set(rule_set_name="NEG", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="NO_DELETES", condition=":dml.get_command_type() = 'DELETE'")
    adm.add_rule(rule_name="NO_DELETES", rule_set_name="NEG")
    env.create_capture(rule_set_name=positive, negative_rule_set_name="NEG")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.a VALUES (1, 'x')", f"INSERT INTO {s}.b VALUES (1)")
    env.sql(f"DELETE FROM {s}.a", f"DELETE FROM {s}.b")
    proc = env.process()
    proc.catch_up()
    got = [(x.get_command_type(), x.get_object_name()) for x in env.dequeue_all()]
    assert got == [("INSERT", "A")]
    # only the negative rule set: everything of this schema but deletes
    proc.stop()
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    env.conn.capture_adm.alter_capture(capture_name="CAP", remove_rule_set=True)
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.a VALUES (2, 'y')", f"INSERT INTO {s}.b VALUES (2)", f"DELETE FROM {s}.a")
    proc = env.process()
    proc.catch_up()
    got = [(x.get_command_type(), x.get_object_name()) for x in env.dequeue_all()
           if x.get_object_owner() == env.owner]
    assert got == [("INSERT", "A"), ("INSERT", "B")]


def test_tags(env):
    """Seed 000: system-created rules capture only untagged LCRs (``:dml.is_null_tag() =
    'Y'``).  A source transaction carrying a tag gives its LCRs that tag; DBMS_STREAMS.
    SET_TAG / GET_TAG hold the session's tag (Python and PL/SQL), and
    ``tag_transaction`` writes it into a source transaction."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    adm = env.conn.rule_adm
    adm.create_rule_set(rule_set_name="ALLT", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="ALL_T", condition=f":dml.get_object_owner() = '{env.owner}'")
    adm.add_rule(rule_name="ALL_T", rule_set_name="ALLT")
    env.create_capture(rule_set_name="ALLT")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    assert env.conn.streams.get_tag() is None
    env.conn.streams.set_tag(b"\x02")
    assert env.conn.streams.get_tag() == b"\x02"
    with env.pg.transaction():
        tag_transaction(env.conn, env.pg)                  # the session's tag: 02
        env.pg.execute(f"INSERT INTO {s}.t VALUES (1)")
        emit_tag(env.pg, None)                              # untagged from here
        env.pg.execute(f"INSERT INTO {s}.t VALUES (2)")
    env.sql(f"INSERT INTO {s}.t VALUES (3)")               # another transaction: no tag
    cur = env.conn.cursor()
    cur.execute("BEGIN DBMS_STREAMS.SET_TAG(tag => HEXTORAW('1D')); END;")
    assert env.conn.streams.get_tag() == b"\x1d"
    # the block clears the tag only if GET_TAG gave 1D and the COMPATIBLE functions work
    cur.execute("DECLARE t RAW(2000); BEGIN t := DBMS_STREAMS.GET_TAG; "
                "IF t = HEXTORAW('1D') AND DBMS_STREAMS.COMPATIBLE_10_2 > DBMS_STREAMS.COMPATIBLE_9_2 "
                "THEN DBMS_STREAMS.SET_TAG(NULL); END IF; END;")
    assert env.conn.streams.get_tag() is None
    with pytest.raises(sluice.DatabaseError) as e:
        env.conn.streams.set_tag(b"x" * 2001)
    assert e.value.code == 6502
    env.process().catch_up()
    got = [(values(x, "NEW")["ID"], x.get_tag(), x.is_null_tag()) for x in env.dequeue_all()]
    assert got == [(1, b"\x02", "N"), (2, None, "Y"), (3, None, "Y")]
    # a rule as ADD_TABLE_RULES writes it (include_tagged_lcr => FALSE) skips the tagged one
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    env.conn.capture_adm.alter_capture(capture_name="CAP", rule_set_name=env.table_rule_set("UNTAGGED", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    with env.pg.transaction():
        emit_tag(env.pg, b"\x02")
        env.pg.execute(f"INSERT INTO {s}.t VALUES (4)")
    env.sql(f"INSERT INTO {s}.t VALUES (5)")
    env.process().catch_up()
    assert [values(x, "NEW")["ID"] for x in env.dequeue_all()] == [5]


def test_ddl_lcrs(env):
    """DDL LCRs from the event trigger: command type, object type, DDL text, current
    schema, base table owner and name, in their transaction among its row LCRs; TRUNCATE
    (a change in PostgreSQL's log) is a TRUNCATE TABLE DDL LCR; DDL rules with
    GET_BASE_TABLE_OWNER / _NAME (seed 000's table DDL rule) select them."""
    s = env.src
    env.create_capture(rule_set_name=env.table_rule_set("RS", "items", ddl=True))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"CREATE TABLE {s}.items (id int PRIMARY KEY, v text)", f"INSERT INTO {s}.items VALUES (1, 'a')")
    env.sql(f"SET search_path = {s}", "ALTER TABLE items ADD COLUMN qty int",
            "INSERT INTO items VALUES (2, 'b', 7)", "SET search_path = public")
    env.sql(f"CREATE INDEX items_v ON {s}.items (v)")
    env.sql(f"TRUNCATE {s}.items")
    env.sql(f"CREATE TABLE {s}.other (id int)")           # no rule for it
    env.sql(f"DROP TABLE {s}.items")
    env.process().catch_up()
    lcrs = env.dequeue_all()
    summary = [(x.oracle_type[9:], x.get_command_type()) for x in lcrs]
    assert summary == [("DDL_RECORD", "CREATE TABLE"), ("ROW_RECORD", "INSERT"), ("DDL_RECORD", "ALTER TABLE"),
                       ("ROW_RECORD", "INSERT"), ("DDL_RECORD", "CREATE INDEX"), ("DDL_RECORD", "TRUNCATE TABLE"),
                       ("DDL_RECORD", "DROP TABLE")]
    create, ins, alter, ins2, index, trunc, drop = lcrs
    assert (create.get_object_owner(), create.get_object_name(), create.get_object_type()) == \
        (env.owner, "ITEMS", "TABLE")
    assert create.get_ddl_text() == f"CREATE TABLE {s}.items (id int PRIMARY KEY, v text)"
    assert create.get_transaction_id() == ins.get_transaction_id()
    assert create.get_commit_scn() == ins.get_commit_scn() and create.get_scn() < ins.get_scn()
    assert (alter.get_current_schema(), alter.get_ddl_text()) == (env.owner, "ALTER TABLE items ADD COLUMN qty int")
    assert values(ins2, "NEW") == {"ID": 2, "V": "b", "QTY": 7}     # the row as altered
    assert (index.get_object_name(), index.get_object_type(), index.get_base_table_owner(),
            index.get_base_table_name()) == ("ITEMS_V", "INDEX", env.owner, "ITEMS")
    assert (trunc.get_object_name(), trunc.get_base_table_name()) == ("ITEMS", "ITEMS")
    assert (drop.get_object_name(), drop.get_object_type(), drop.get_logon_user()) == \
        ("ITEMS", "TABLE", "POSTGRES")
    assert all(x.get_source_database_name() == env.pg.info.dbname.upper() for x in lcrs)


def test_ddl_lcrs_of_a_multi_statement_query_hold_their_own_statement(env):
    """A client's query string with several statements (one simple query): each DDL LCR
    holds the statement that made it, not the whole string (an apply ran all of it for
    every LCR: the second CREATE TABLE failed into the error queue).  DDL the string does
    not show (a DO block's EXECUTE) keeps the whole string, as before."""
    s = env.src
    env.create_capture(rule_set_name=env.table_rule_set("RS", "items", "parts", ddl=True))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    script = (f"CREATE TABLE {s}.items (id int PRIMARY KEY, v text DEFAULT 'a;b'); "
              f"INSERT INTO {s}.items VALUES (1, 'x'); "
              f"/* the parts; */ CREATE TABLE {s}.parts (id int); "
              f"CREATE INDEX items_v ON {s}.items (v); "
              f"ALTER TABLE {s}.parts ADD COLUMN n int")
    env.pg.execute(script)                    # no parameters: one simple query
    do = f"DO $$ BEGIN EXECUTE 'ALTER TABLE {s}.items ADD COLUMN q int'; END $$; SELECT 1"
    env.pg.execute(do)
    env.process().catch_up()
    got = [(x.get_command_type(), x.get_ddl_text() if x.oracle_type.endswith("DDL_RECORD") else None)
           for x in env.dequeue_all()]
    assert got == [
        ("CREATE TABLE", f"CREATE TABLE {s}.items (id int PRIMARY KEY, v text DEFAULT 'a;b')"),
        ("INSERT", None),
        ("CREATE TABLE", f"CREATE TABLE {s}.parts (id int)"),
        ("CREATE INDEX", f"CREATE INDEX items_v ON {s}.items (v)"),
        ("ALTER TABLE", f"ALTER TABLE {s}.parts ADD COLUMN n int"),
        ("ALTER TABLE", do),
    ]


def test_unsupported_column_types(env):
    """A change to a table with a column type capture cannot carry (an array, an
    interval …) is not captured and the table is listed in DBA_STREAMS_UNSUPPORTED with
    the reason; the capture carries on with the others (issue 13 §2)."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.odd (id int PRIMARY KEY, tags text[], span interval)",
            f"CREATE TABLE {s}.fine (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "odd", "fine"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.odd VALUES (1, '{{a}}', '1 day')", f"INSERT INTO {s}.fine VALUES (1)")
    env.sql(f"INSERT INTO {s}.fine VALUES (2)")
    proc = env.process()
    proc.catch_up()
    assert [(x.get_object_name(), values(x, "NEW")["ID"]) for x in env.dequeue_all()] == \
        [("FINE", 1), ("FINE", 2)]
    un = env.view("SELECT OWNER, TABLE_NAME, REASON, AUTO_FILTERED, CAPTURE_NAME FROM DBA_STREAMS_UNSUPPORTED")
    assert un == [{"OWNER": env.owner, "TABLE_NAME": "ODD", "AUTO_FILTERED": "YES", "CAPTURE_NAME": "CAP",
                   "REASON": 'column "tags" of type text[]; column "span" of type interval'}]
    assert env.view("SELECT STATUS FROM DBA_CAPTURE") == [{"STATUS": "ENABLED"}]


def test_no_subscribers_keeps_the_changes(env):
    """Seed 001: "a message cannot be enqueued unless a subscriber who can dequeue the
    message is configured".  Without any subscriber the capture waits (WAITING FOR
    INACTIVE DEQUEUERS) and consumes nothing from its slot, so the first subscriber gets
    every change made meanwhile — none is lost."""
    s = env.src
    env.conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY1"))
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.t VALUES (1)")
    proc = env.process()
    proc.start()
    assert proc.run_batch() == 0
    assert env.view("SELECT STATE FROM V$STREAMS_CAPTURE") == [{"STATE": "WAITING FOR INACTIVE DEQUEUERS"}]
    env.conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("LATE"))
    env.sql(f"INSERT INTO {s}.t VALUES (2)")
    proc.catch_up()
    assert [values(x, "NEW")["ID"] for x in env.dequeue_all("LATE")] == [1, 2]


def test_plsql_blocks_and_capture_for_rules(env):
    """The PL/SQL form of DBMS_CAPTURE_ADM, and the implicit creation ADD_*_RULES uses."""
    from sluice.streams.capture import capture_for_rules
    cur = env.conn.cursor()
    src = f", source_dsn => '{env.source_dsn}'" if env.source_dsn else ""
    cur.execute(f"BEGIN DBMS_CAPTURE_ADM.CREATE_CAPTURE(queue_name => 'strm_q', capture_name => 'strm01_capture'"
                f"{src}); END;")
    cur.execute("BEGIN DBMS_CAPTURE_ADM.START_CAPTURE(capture_name => 'strm01_capture'); END;")
    assert env.view("SELECT CAPTURE_NAME, STATUS, RULE_SET_NAME FROM DBA_CAPTURE") == \
        [{"CAPTURE_NAME": "STRM01_CAPTURE", "STATUS": "ENABLED", "RULE_SET_NAME": None}]
    cur.execute("BEGIN DBMS_CAPTURE_ADM.STOP_CAPTURE(capture_name => 'strm01_capture'); "
                "DBMS_CAPTURE_ADM.DROP_CAPTURE(capture_name => 'strm01_capture'); END;")
    assert env.view("SELECT * FROM DBA_CAPTURE") == []
    if env.source_dsn is None:   # an SQLite store needs source_dsn, which ADD_*_RULES has not
        spec = capture_for_rules(env.conn, "implicit_cap", "strm_q")
        assert (spec.name, spec.status, spec.rule_set_name) == ("IMPLICIT_CAP", "DISABLED", None)
        assert capture_for_rules(env.conn, "implicit_cap", "strm_q").slot == spec.slot
        with pytest.raises(sluice.DatabaseError) as e:
            capture_for_rules(env.conn, "implicit_cap", "strm_qt")
        assert e.value.code == 26667
    # seed 001 "Secure Queues and Oracle Streams Clients": an agent named like the capture
    assert env.conn.query("SELECT AGENT_NAME FROM DBA_AQ_AGENTS WHERE AGENT_NAME = 'STRM01_CAPTURE'",
                          None)[1] == [("STRM01_CAPTURE",)]


def test_rules_reading_column_values(env):
    """A rule that reads column values (as subset rules do) is evaluated on each LCR — the
    decoder's LCR gives its values when asked — while identity-only rules are decided
    once per owner, object, command and tag (prefiltering)."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.orders (id int PRIMARY KEY, amount numeric(12,2), note text)")
    adm = env.conn.rule_adm
    adm.create_rule_set(rule_set_name="BIG", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="BIG_ORDERS", condition=(
        f":dml.get_object_owner() = '{env.owner}' AND :dml.get_object_name() = 'ORDERS' AND "
        f":dml.get_value('NEW', '\"AMOUNT\"').AccessNumber() > 100"))
    adm.add_rule(rule_name="BIG_ORDERS", rule_set_name="BIG")
    env.create_capture(rule_set_name="BIG")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(*(f"INSERT INTO {s}.orders VALUES ({i}, {i * 50}.25, 'n{i}')" for i in range(1, 6)))
    proc = env.process()
    proc.catch_up()
    assert not proc._verdict.usable
    got = [values(x, "NEW") for x in env.dequeue_all()]
    assert got == [{"ID": i, "AMOUNT": Decimal(f"{i * 50}.25"), "NOTE": f"n{i}"} for i in (2, 3, 4, 5)]


@pytest.mark.parametrize("condition, usable", [
    # seed 000 "System-Created Rules": the global, schema and table rules
    ("((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'LOCATIONS')) and "
     ":dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET'", True),
    (":dml.get_compatible() <= DBMS_STREAMS.COMPATIBLE_10_2 AND :dml.get_command_type() IN "
     "('INSERT', 'UPDATE')", True),
    ("UPPER(:dml.get_object_owner()) LIKE 'H%' OR :dml.get_tag() = HEXTORAW('02')", True),
    (":dml.get_value('NEW', '\"REGION_ID\"').AccessNumber() = 2", False),
    (":dml.get_object_owner() = 'HR' AND SYSDATE > DATE '2020-01-01'", False),
    (":dml.get_object_owner() = my_pkg.owner_of(:dml.get_object_name())", False),
    (":dml IS NOT NULL", False),
])
def test_prefilter_only_for_identity_rules(condition, usable):
    from sluice.streams.capture.prefilter import Prefilter, key_only
    assert key_only(condition) is usable
    assert Prefilter([(condition, "SYS.STREAMS$_EVALUATION_CONTEXT")], bool).usable is usable
    assert not Prefilter([(condition, "HR.MY_CONTEXT")], bool).usable


def test_partitioned_table_changes_name_the_table(env):
    """PostgreSQL logs a change to a partitioned table under the partition that holds the
    row; Oracle's LCR names the table, and so do the rules ADD_TABLE_RULES makes for it:
    row LCRs of every partition (at any level, and of one created after the capture
    started) name the partitioned table, a row moving between partitions is its DELETE
    and INSERT; TRUNCATE of the table is one TRUNCATE TABLE LCR, of one partition a
    TRUNCATE TABLE of the partition with the table as its base table (a table DDL rule
    of the table selects it).  Before, they named the partitions: a table rule for the
    partitioned table captured nothing."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.sales (id int, region text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)",
            f"CREATE TABLE {s}.sales_east PARTITION OF {s}.sales FOR VALUES IN ('east')",
            f"CREATE TABLE {s}.sales_west PARTITION OF {s}.sales FOR VALUES IN ('west', 'north') "
            f"PARTITION BY LIST (region)",
            f"CREATE TABLE {s}.sales_west_w PARTITION OF {s}.sales_west FOR VALUES IN ('west')",
            f"CREATE TABLE {s}.sales_west_n PARTITION OF {s}.sales_west FOR VALUES IN ('north')")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "sales", ddl=True))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    proc = env.process()
    proc.start()
    env.sql(f"INSERT INTO {s}.sales VALUES (1, 'east'), (2, 'west'), (3, 'north')")
    env.sql(f"CREATE TABLE {s}.sales_south PARTITION OF {s}.sales FOR VALUES IN ('south')",
            f"INSERT INTO {s}.sales VALUES (4, 'south')")
    env.sql(f"UPDATE {s}.sales SET region = 'east' WHERE id = 2")
    env.sql(f"TRUNCATE {s}.sales_south")
    env.sql(f"TRUNCATE {s}.sales")
    proc.catch_up()
    got = [(x.get_command_type(), x.get_object_name(), x.get_base_table_name() if not isinstance(x, RowLCR)
            else values(x, "OLD" if x.get_command_type() == "DELETE" else "NEW")) for x in env.dequeue_all()
           if x.get_command_type() != "CREATE TABLE"]
    assert got == [
        ("INSERT", "SALES", {"ID": 1, "REGION": "east"}), ("INSERT", "SALES", {"ID": 2, "REGION": "west"}),
        ("INSERT", "SALES", {"ID": 3, "REGION": "north"}), ("INSERT", "SALES", {"ID": 4, "REGION": "south"}),
        ("DELETE", "SALES", {"ID": 2, "REGION": "west"}), ("INSERT", "SALES", {"ID": 2, "REGION": "east"}),
        ("TRUNCATE TABLE", "SALES_SOUTH", "SALES"), ("TRUNCATE TABLE", "SALES", "SALES")]


def test_numbers_of_any_length(env):
    """A PostgreSQL numeric holds up to 131,072 digits before its point; wal2json writes
    an integral one as a JSON integer, past the 4,300 digits Python's ``int`` converts.
    It is captured (a NUMBER with every digit), as are the other rows; before, reading
    the row raised a ValueError at every start of the capture, which captured nothing
    more."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY, n numeric)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.t VALUES (1, repeat('9', 5000)::numeric), (2, ('-1' || repeat('0', 4400))::numeric)",
            f"INSERT INTO {s}.t VALUES (3, ('1' || repeat('0', 5000) || '.5')::numeric), (4, 7)")
    env.process().catch_up()
    got = [values(x, "NEW") for x in env.dequeue_all()]
    assert got == [{"ID": 1, "N": Decimal("9" * 5000)}, {"ID": 2, "N": -Decimal(10) ** 4400},
                   {"ID": 3, "N": Decimal("1" + "0" * 5000 + ".5")}, {"ID": 4, "N": 7}]
    assert env.view("SELECT STATUS FROM DBA_CAPTURE") == [{"STATUS": "ENABLED"}]


def test_source_output_settings_of_its_own(env):
    """The source's sessions may have their own output settings (a database's or role's
    default, here the connection's): ``bytea_output = escape`` wrote bytea values as
    ``\\000\\377A``, which reading the LCR's RAW refused with a ValueError.  The
    capture's decoding session sets every setting the values' text depends on."""
    from tests.conftest import PG_BASE
    s = env.src
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY, b bytea, d date)")
    sep = "&" if "?" in PG_BASE else "?"
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"),
                       source_dsn=f"{PG_BASE}{sep}options=-c%20bytea_output%3Descape%20-c%20DateStyle%3DSQL")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.t VALUES (1, '\\x00ff41', '2020-01-31')")
    env.process().catch_up()
    assert [values(x, "NEW") for x in env.dequeue_all()] == [{"ID": 1, "B": b"\x00\xffA",
                                                               "D": datetime(2020, 1, 31)}]


def test_a_rule_set_changed_while_the_capture_waits_for_changes_decides_them(env):
    """ALTER_CAPTURE committed while the capture's read of the slot waits for changes: the
    changes committed after it are decided by the new rule set (they were by the one the batch
    began with — CI 2026-11-30 caught a host capture taking table T after its rule set became U's)."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY)", f"CREATE TABLE {s}.u (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.table_rule_set("RS2", "u")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    proc = env.process()
    proc.catch_up()                           # started, its rule set read: RS
    peek = proc.source.peek

    def altered_while_waiting(*args, **kwargs):
        if not altered:
            altered.append(1)
            env.conn.capture_adm.alter_capture(capture_name="CAP", rule_set_name="RS2")
            env.sql(f"INSERT INTO {s}.t VALUES (2)", f"INSERT INTO {s}.u VALUES (2)")
        return peek(*args, **kwargs)
    altered: list = []
    proc.source.peek = altered_while_waiting
    n = proc.run_batch()                      # (catch_up would read only up to where the WAL was)
    assert altered
    got = env.dequeue_all()
    assert [x.get_object_name() for x in got] == ["U"], (n, proc.state, [x.get_object_name() for x in got])
