"""The apply process (issue 15 §1 "Queues", "Conflicts", handlers; §3 the error queue round
trip): messages from its queue under its rule sets, Table 3-1 (a transactional queue's
queue transaction is one target transaction, a nontransactional queue's message is one),
whole transactions into the error queue, EXECUTE_ERROR / DELETE_ERROR, disable_on_error,
SET_EXECUTE and SET_ENQUEUE_DESTINATION, the message handler.

Spec: seed 001 "Transactional and Nontransactional Queues" (Table 3-1); seed 000
"Execution Directives for Messages During Apply", "Enqueue Destinations for Messages
During Apply".  The store runs on both backends, the target on both databases."""

from __future__ import annotations

import pytest

import sluice
from sluice.rules.engine.ruleset import rules_catalog
from sluice.streams import RowLCR
from sluice.streams.apply import ApplyDefinition, ApplyProcess
from tests.conftest import pg_admin
from tests.streams.applykit import SOURCE_DB, procedures, target  # noqa: F401

APPLY = "APPLY1"


def user_lcr(cmd, owner, old=None, new=None):
    """A row LCR an application constructs and enqueues (no commit SCN: not captured)."""
    return RowLCR.construct(SOURCE_DB, cmd, owner, "EMP", None, None, None, old, new)


@pytest.fixture
def world(conn, target):
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40))")
    conn.streams_adm.set_up_queue(queue_table="APPLY_QT", queue_name="APPLY_Q")
    conn.aqadm.create_queue_table(queue_table="PLAIN_QT", queue_payload_type="SYS.ANYDATA",
                                  multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="PLAIN_Q", queue_table="PLAIN_QT")
    conn.aqadm.start_queue(queue_name="PLAIN_Q")
    for q in ("APPLY_Q", "PLAIN_Q"):
        conn.aqadm.add_subscriber(queue_name=q, subscriber=sluice.Agent(APPLY))
    procs = []

    def process(queue="APPLY_Q", **kw):
        kw.setdefault("apply_captured", False)
        d = ApplyDefinition(APPLY, conn.username, queue, apply_database_link=target.link, **kw)
        p = ApplyProcess(sluice.connect(conn.dsn), d)
        procs.append(p)
        return p
    yield process
    for p in procs:
        p.stop()
        p.conn.close()


def enqueue(conn, queue, *payloads):
    q = conn.queue(queue)
    for p in payloads:
        q.enqone(conn.msgproperties(payload=p))
    conn.commit()


def rule_action_context(conn, rule):
    return rules_catalog(conn.context.store).rule(f"{conn.username}.{rule}").action_context


def errors(conn):
    cols, rows = conn.query("SELECT * FROM DBA_APPLY_ERROR ORDER BY ERROR_CREATION_TIME", None)
    return [dict(zip(cols, r)) for r in rows]


def apply_rule_set(conn, **rules):
    """APPLY_RS in the Streams evaluation context, holding ``rules`` (name: condition, or
    (condition, action context)); its qualified name."""
    adm = conn.rule_adm
    adm.create_rule_set(rule_set_name="APPLY_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    for name, rule in rules.items():
        condition, actx = rule if isinstance(rule, tuple) else (rule, None)
        adm.create_rule(rule_name=name, condition=condition, action_context=actx)
        adm.add_rule(rule_name=name, rule_set_name="APPLY_RS")
    return f"{conn.username}.APPLY_RS"


def test_transactional_queue_applies_queue_transactions(conn, target, world):
    """Table 3-1, transactional queue: the messages one transaction enqueued are applied as
    one transaction; one that fails sends all of them to the error queue and the process
    goes on (disable_on_error = N)."""
    o = target.owner
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 1, "NAME": "a"}),
            user_lcr("INSERT", o, new={"ID": 2, "NAME": "b"}))
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 3, "NAME": "c"}),
            user_lcr("UPDATE", o, old={"ID": 99}, new={"NAME": "x"}))          # fails
    enqueue(conn, "APPLY_Q", user_lcr("DELETE", o, old={"ID": 1}))
    captured = RowLCR.construct(SOURCE_DB, "INSERT", o, "EMP", None, "9.9.9", 77, None,
                                {"ID": 77, "NAME": "captured"}, commit_scn=77)
    enqueue(conn, "APPLY_Q", captured)     # not for an apply process with apply_captured FALSE
    proc = world(parameters={"DISABLE_ON_ERROR": "N"})
    assert proc.drain() == 6
    assert target.rows("emp") == [(2, "b")]
    (err,) = errors(conn)
    assert (err["APPLY_NAME"], err["MESSAGE_COUNT"], err["MESSAGE_NUMBER"], err["ERROR_NUMBER"]) == \
        (APPLY, 2, 2, 26787)
    assert "does not exist" in err["ERROR_MESSAGE"] and err["LOCAL_TRANSACTION_ID"]
    # what the running process shows
    assert conn.query("SELECT TOTAL_MESSAGES_DEQUEUED FROM V$STREAMS_APPLY_READER", None)[1] == [(6,)]
    assert conn.query("SELECT TOTAL_RECEIVED, TOTAL_APPLIED, TOTAL_ERRORS FROM V$STREAMS_APPLY_COORDINATOR",
                      None)[1] == [(3, 2, 1)]
    assert conn.query("SELECT SERVER_ID, TOTAL_MESSAGES_APPLIED FROM V$STREAMS_APPLY_SERVER", None)[1] == [(1, 3)]
    proc.stop()
    assert conn.query("SELECT COUNT(*) FROM V$STREAMS_APPLY_COORDINATOR", None)[1] == [(0,)]
    # the error queue round trip: fix the cause, EXECUTE_ERROR applies the whole transaction
    target.sql(f"INSERT INTO {target.table('emp')} VALUES (99, 'z')")
    procedures(conn).execute_error(err["LOCAL_TRANSACTION_ID"])
    assert target.rows("emp") == [(2, "b"), (3, "c"), (99, "x")]
    assert errors(conn) == []
    with pytest.raises(sluice.DatabaseError) as e:
        procedures(conn).execute_error(err["LOCAL_TRANSACTION_ID"])
    assert e.value.code == 26673


def test_a_null_primary_key_goes_to_the_error_queue_as_ora_01400(conn, target, world):
    """An INSERT LCR with a NULL for the target's primary key column: Oracle raises
    ORA-01400 (a key column is NOT NULL), and so does the apply on both targets -- SQLite's
    ``integer PRIMARY KEY`` used to take the next rowid for the NULL and apply the row.
    The transaction goes to the error queue whole; the next one applies."""
    o = target.owner
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 1, "NAME": "a"}),
            user_lcr("INSERT", o, new={"ID": None, "NAME": "no key"}))
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 2, "NAME": "b"}))
    proc = world(parameters={"DISABLE_ON_ERROR": "N"})
    assert proc.drain() == 3
    assert target.rows("emp") == [(2, "b")]
    (err,) = errors(conn)
    assert (err["MESSAGE_COUNT"], err["MESSAGE_NUMBER"], err["ERROR_NUMBER"]) == (2, 2, 1400)
    assert f'"{o}"."EMP"."ID"' in err["ERROR_MESSAGE"], err["ERROR_MESSAGE"]


def test_nontransactional_queue_applies_each_message(conn, target, world):
    """Table 3-1, nontransactional queue: each message is its own transaction."""
    o = target.owner
    enqueue(conn, "PLAIN_Q", user_lcr("INSERT", o, new={"ID": 1, "NAME": "a"}),
            user_lcr("INSERT", o, new={"ID": 1, "NAME": "dup"}),
            user_lcr("INSERT", o, new={"ID": 2, "NAME": "b"}))
    proc = world("PLAIN_Q", parameters={"DISABLE_ON_ERROR": "N"})
    assert proc.drain() == 3
    assert target.rows("emp") == [(1, "a"), (2, "b")]
    (err,) = errors(conn)
    assert (err["MESSAGE_COUNT"], err["ERROR_NUMBER"]) == (1, 1)
    target.sql(f"DELETE FROM {target.table('emp')} WHERE id = 1")     # the cause, fixed
    procedures(conn).execute_all_errors(APPLY)
    assert target.rows("emp") == [(1, "dup"), (2, "b")]
    assert errors(conn) == []


def test_disable_on_error_aborts_and_keeps_the_rest(conn, target, world):
    """disable_on_error = Y (the default): the failing transaction goes to the error queue,
    the process stops, the transactions after it stay in the queue for the next start."""
    o = target.owner
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 1, "NAME": "a"}))
    enqueue(conn, "APPLY_Q", user_lcr("DELETE", o, old={"ID": 42}))
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 2, "NAME": "b"}))
    proc = world()
    proc.drain()
    assert proc.state == "ABORTED" and proc.error.code == 26787
    assert [e["ERROR_NUMBER"] for e in errors(conn)] == [26787]
    assert target.rows("emp") == [(1, "a")]
    again = world()                  # restarted: the rest, without the error transaction
    assert again.drain() >= 1
    assert target.rows("emp") == [(1, "a"), (2, "b")]
    procedures(conn).delete_all_errors(APPLY)
    assert errors(conn) == []


def test_rules_execute_directive_enqueue_destination(conn, target, world):
    """The apply rule set decides (Table 6-1); SET_EXECUTE(FALSE) keeps a message that
    satisfies the rule from being executed, SET_ENQUEUE_DESTINATION enqueues it into
    another queue (the APPLY$_EXECUTE / APPLY$_ENQUEUE pairs of the rule's action context)."""
    o = target.owner
    apply_rule_set(conn, R_INS=":dml.get_command_type() = 'INSERT'", R_DEL=":dml.get_command_type() = 'DELETE'")
    p = procedures(conn)
    p.set_execute("R_DEL", False)
    p.set_enqueue_destination("R_DEL", "PLAIN_Q")
    actx = rule_action_context(conn, "R_DEL")
    assert actx.get_value("APPLY$_EXECUTE").value == "NO"
    assert actx.get_value("APPLY$_ENQUEUE").value == f'"{conn.username}"."PLAIN_Q"'
    target.sql(f"INSERT INTO {target.table('emp')} VALUES (7, 'kept')")
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 1, "NAME": "a"}),
            user_lcr("UPDATE", o, old={"ID": 7}, new={"NAME": "not in the rule set"}),
            user_lcr("DELETE", o, old={"ID": 7}))
    proc = world(rule_set=f"{conn.username}.APPLY_RS")
    proc.drain()
    assert target.rows("emp") == [(1, "a"), (7, "kept")]
    q = conn.queue("PLAIN_Q")
    q.deqoptions.consumername = APPLY
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    moved = q.deqone()
    assert moved is not None and moved.payload.get_command_type() == "DELETE"
    p.set_execute("R_DEL", True)
    p.set_enqueue_destination("R_DEL", None)
    assert rule_action_context(conn, "R_DEL") is None


def test_message_handler_gets_user_messages(conn, target, world):
    """A user message (not an LCR) goes to the message handler, a registered procedure."""
    got = []
    sluice.register_function("apply_test.on_message", lambda m: got.append(m))
    enqueue(conn, "APPLY_Q", {"order": 1}, {"order": 2})
    proc = world(message_handler="apply_test.on_message")
    proc.drain()
    assert got == [{"order": 1}, {"order": 2}]


@pytest.mark.parametrize("serialization", ["FULL", "NONE"])
def test_parallel_apply_keeps_the_serial_result(conn, target, world, serialization):
    """parallelism 4: transactions updating the same rows are applied in source order (each
    UPDATE carries the old value the previous transaction set: any other order would be a
    conflict), independent ones overlap; commits in source commit order (FULL) or as soon as
    what they depend on has committed (NONE); each transaction once."""
    import random
    o = target.owner
    rng = random.Random(4)
    scn = 100
    current = {i: "v0" for i in range(1, 11)}
    txns = [[RowLCR.construct(SOURCE_DB, "INSERT", o, "EMP", None, "t0", scn, None, {"ID": i, "NAME": "v0"},
                              commit_scn=scn) for i in current]]
    for t in range(1, 81):
        scn += 1
        lcrs = []
        for i in rng.sample(sorted(current), rng.randint(1, 3)):
            lcrs.append(RowLCR.construct(SOURCE_DB, "UPDATE", o, "EMP", None, f"t{t}", scn,
                                         {"ID": i, "NAME": current[i]}, {"NAME": f"v{t}"}, commit_scn=scn))
            current[i] = f"v{t}"
        txns.append(lcrs)
    q = conn.queue("APPLY_Q")
    for lcrs in txns:                      # one queue transaction per source transaction
        q.enqmany([conn.msgproperties(payload=x) for x in lcrs])
        conn.commit()
    procedures(conn).set_schema_instantiation_scn(o, SOURCE_DB, 0, apply_database_link=target.link)
    proc = world(parameters={"PARALLELISM": "4", "DISABLE_ON_ERROR": "N",
                             "COMMIT_SERIALIZATION": serialization}, apply_captured=True)
    if target.kind == "sqlite":           # one writer at a time: SQLite targets apply serially
        assert proc.parallel is None
    else:
        assert proc.parallel is not None and proc.parallel.parallelism == 4
    proc.drain()
    assert errors(conn) == []
    assert target.rows("emp") == sorted(current.items())
    applied = proc.parallel.applied if proc.parallel else proc.engine.applied
    assert applied == {SOURCE_DB: scn}


def test_parallel_dependencies():
    """Who waits for whom: per key the last earlier transaction changing it; a transaction
    that is not only row LCRs (here: DDL) is a barrier both ways."""
    from types import SimpleNamespace
    from sluice.streams import DDLLCR
    from sluice.streams.apply.parallel import ParallelApply

    class Keys:                                     # an engine whose tables' key is ID
        def _plain(self, txn):
            return all(isinstance(i.message, RowLCR) for i in txn.items)

        def _key(self, lcr, index):
            return ["ID"]
    par = ParallelApply.__new__(ParallelApply)
    par.engines = [Keys()]

    def t(*ops):
        items = []
        for op in ops:
            if op == "DDL":
                items.append(SimpleNamespace(message=DDLLCR.construct(SOURCE_DB, "ALTER TABLE", "O", "T", "TABLE",
                                                                      "ALTER TABLE t ADD c int")))
            else:
                cmd, i = op
                items.append(SimpleNamespace(message=RowLCR.construct(
                    SOURCE_DB, cmd, "O", "T", None, None, None,
                    None if cmd == "INSERT" else {"ID": i}, {"ID": i} if cmd == "INSERT" else None)))
        return SimpleNamespace(items=items)
    txns = [t(("INSERT", 1)), t(("INSERT", 2)), t(("DELETE", 1), ("DELETE", 2)), t(("INSERT", 3)),
            t("DDL"), t(("INSERT", 4)), t(("INSERT", 5))]
    par.ordered = False
    assert par._dependencies(txns) == [[], [], [0, 1], [], [0, 1, 2, 3], [4], [4]]
    par.ordered = True
    assert par._dependencies(txns) == [[], [], [0, 1], [], [3], [4], [4]]


def test_declarative_transformation_renames_the_schema(conn, target, world):
    """A declarative rule-based transformation on the apply rule (DBMS_STREAMS_ADM.
    RENAME_SCHEMA): LCRs for HR.EMP are applied to the target's own schema."""
    apply_rule_set(conn, R_HR=":dml.get_object_owner() = 'HR'")
    conn.streams_adm.rename_schema("R_HR", "hr", target.owner)
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", "HR", new={"ID": 1, "NAME": "renamed"}))
    proc = world(rule_set=f"{conn.username}.APPLY_RS")
    proc.drain()
    assert errors(conn) == []
    assert target.rows("emp") == [(1, "renamed")]


def test_custom_rule_based_transformation(conn, target, world):
    """A custom rule-based transformation (the rule's STREAMS$_TRANSFORM_FUNCTION, a
    registered function) changes the LCR before it is applied."""
    from sluice.rules.engine.types import NVList

    def shout(lcr):
        lcr.set_value("NEW", "NAME", lcr.get_value("NEW", "NAME").value.upper())
        return lcr
    sluice.register_function("apply_test.shout", shout)
    apply_rule_set(conn, R_T=(":dml.get_command_type() = 'INSERT'",
                              NVList({"STREAMS$_TRANSFORM_FUNCTION": "apply_test.shout"})))
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", target.owner, new={"ID": 1, "NAME": "quiet"}))
    world(rule_set=f"{conn.username}.APPLY_RS").drain()
    assert target.rows("emp") == [(1, "QUIET")]


def test_a_value_the_target_cannot_hold_goes_to_the_error_queue(conn, target, world):
    """An integer beyond 64 bits: an SQLite target raised OverflowError past the apply
    (nothing recorded, the same message taken again at every restart, ORA-00600 under the
    host); PostgreSQL's 'integer out of range' was already an apply error.  Now both put the
    transaction in the error queue and apply the next one."""
    o = target.owner
    for id_, name in ((100, "pre"), (10**40, "huge"), (101, "post")):     # three queue transactions
        enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": id_, "NAME": name}))
    proc = world(parameters={"DISABLE_ON_ERROR": "N"})
    proc.drain()
    assert target.rows("emp") == [(100, "pre"), (101, "post")]
    [error] = errors(conn)
    assert error["ERROR_NUMBER"] == 26714 and error["MESSAGE_COUNT"] == 1, error


@pytest.mark.parametrize("function, reason", [
    (lambda lcr: 1 / 0, "ZeroDivisionError"),
    (lambda: None, "TypeError"),
    (lambda lcr: [1, object()], "no queue can hold"),
])
def test_a_failing_custom_transformation_disables_the_apply(conn, target, world, function, reason):
    """A custom rule-based transformation that raises (or returns what no queue can hold:
    the error queue's write then failed) escaped the apply process: nothing recorded, the
    batch taken again at every restart, ORA-00600 under the host.  Now the process stops
    ABORTED with ORA-26714 naming the cause and leaves the messages in the queue (neither
    applied untransformed nor in the error queue); mended, a new process applies them once."""
    from sluice.rules.engine.types import NVList
    sluice.register_function("apply_test.failing", function)
    name = ":dml.get_value('NEW', 'NAME').AccessVarchar2()"
    apply_rule_set(conn, R_T=(f"{name} = 'odd'", NVList({"STREAMS$_TRANSFORM_FUNCTION": "apply_test.failing"})),
                   R_PLAIN=f"{name} <> 'odd'")
    o = target.owner
    enqueue(conn, "APPLY_Q", user_lcr("INSERT", o, new={"ID": 1, "NAME": "pre"}),
            user_lcr("INSERT", o, new={"ID": 2, "NAME": "odd"}),
            user_lcr("INSERT", o, new={"ID": 3, "NAME": "post"}))
    proc = world(rule_set=f"{conn.username}.APPLY_RS", parameters={"DISABLE_ON_ERROR": "N"})
    proc.drain()
    assert proc.state == "ABORTED" and proc.error.full_code == "ORA-26714" and reason in str(proc.error)
    assert target.rows("emp") == [] and errors(conn) == []
    sluice.register_function("apply_test.failing", lambda lcr: lcr)      # mended
    world(rule_set=f"{conn.username}.APPLY_RS", parameters={"DISABLE_ON_ERROR": "N"}).drain()
    assert target.rows("emp") == [(1, "pre"), (2, "odd"), (3, "post")]


def test_large_transaction_spills_over_the_threshold(conn, target, world):
    """SET_PARAMETER txn_lcr_spill_threshold: a captured transaction with more LCRs than the
    threshold is not held in memory — the process stops reading it at the threshold and its
    LCRs so far leave the queue for the spill table (DBA_APPLY_SPILL_TXN lists it, the target
    has none of it); the transactions before it are applied meanwhile.  A restarted process
    goes on with the spill, reads the rest, and applies the transaction whole, in order,
    then the one after it; the spill is gone.  INFINITE spills nothing."""
    o = target.owner
    procedures(conn).set_schema_instantiation_scn(o, SOURCE_DB, 0, apply_database_link=target.link)

    def captured(scn, ids):
        return [RowLCR.construct(SOURCE_DB, "INSERT", o, "EMP", None, f"1.{scn}.0", scn * 100 + k, None,
                                 {"ID": i, "NAME": f"t{scn}"}, commit_scn=scn) for k, i in enumerate(ids)]
    enqueue(conn, "APPLY_Q", *captured(10, range(1, 4)))        # 3 LCRs
    enqueue(conn, "APPLY_Q", *captured(20, range(10, 22)))      # 12 LCRs: over the threshold
    enqueue(conn, "APPLY_Q", *captured(30, range(30, 32)))      # 2 LCRs
    spill_view = "SELECT APPLY_NAME, SOURCE_DATABASE, XIDSQN, FIRST_SCN, MESSAGE_COUNT FROM DBA_APPLY_SPILL_TXN"
    proc = world(apply_captured=True, parameters={"TXN_LCR_SPILL_THRESHOLD": "5"})
    proc.run_batch(wait=0)
    assert conn.query(spill_view, None)[1] == [(APPLY, SOURCE_DB, "1.20.0", 2000, 7)]
    assert [r[0] for r in target.rows("emp")] == [1, 2, 3]
    proc.stop()
    again = world(apply_captured=True, parameters={"TXN_LCR_SPILL_THRESHOLD": "5"})
    seen = []
    real_apply = again.engine.apply
    again.engine.apply = lambda txn, *a, **k: (seen.append((txn.commit_scn, len(txn.items),
                                                            type(txn.items).__name__)), real_apply(txn, *a, **k))[1]
    again.drain()
    assert seen[0] == (20, 12, "SpilledItems") and seen[1:] == [(30, 2, "list")]
    assert [r[0] for r in target.rows("emp")] == [1, 2, 3, *range(10, 22), 30, 31]
    assert conn.query(spill_view, None)[1] == []
    assert errors(conn) == []
    enqueue(conn, "APPLY_Q", *captured(40, range(40, 52)))
    unlimited = world(apply_captured=True, parameters={"TXN_LCR_SPILL_THRESHOLD": "INFINITE"})
    unlimited.run_batch(wait=0)
    assert conn.query(spill_view, None)[1] == [] and len(target.rows("emp")) == 29


@pytest.mark.parametrize("grouptransops", [None, "100"])
def test_grouptransops_groups_whole_source_transactions_only_when_set(conn, target, world, grouptransops):
    """By default every source transaction is its own target transaction (seed 001); Sluice's
    GROUPTRANSOPS parameter (after GoldenGate's) lets serial apply put several whole ones into
    one target transaction -- the same rows either way, one PostgreSQL transaction (xmin) for
    the group."""
    o = target.owner
    for scn, ids in ((101, (1, 2)), (102, (3,)), (103, (4, 5))):
        enqueue(conn, "APPLY_Q", *[RowLCR.construct(SOURCE_DB, "INSERT", o, "EMP", None, f"1.{scn}.1",
                                                    scn, None, {"ID": i, "NAME": f"n{i}"}, commit_scn=scn)
                                   for i in ids])
    procedures(conn).set_schema_instantiation_scn(o, SOURCE_DB, 0, apply_database_link=target.link)
    params = {"DISABLE_ON_ERROR": "N"}
    if grouptransops:
        params["GROUPTRANSOPS"] = grouptransops
    proc = world(apply_captured=True, parameters=params)
    assert proc.drain() == 5
    assert target.rows("emp") == [(i, f"n{i}") for i in range(1, 6)]
    assert errors(conn) == []
    if target.kind == "postgresql":
        with pg_admin() as pg:
            xmins = [r[0] for r in pg.execute(f"SELECT xmin::text FROM {target.table('emp')} ORDER BY id")]
        assert len(set(xmins)) == (1 if grouptransops else 3)


def test_grouptransops_parameter_checked(conn, world):
    """GROUPTRANSOPS takes a whole number of row LCRs, 1 or more (ORA-23605 otherwise)."""
    conn.apply_adm.create_apply(queue_name="APPLY_Q", apply_name="GROUPED", apply_captured=True)
    conn.apply_adm.set_parameter("GROUPED", "grouptransops", "1000")
    for bad in ("0", "-1", "many"):
        with pytest.raises(sluice.DatabaseError) as e:
            conn.apply_adm.set_parameter("GROUPED", "grouptransops", bad)
        assert e.value.code == 23605


def test_an_apply_without_a_database_link_applies_to_the_stores_own_database(conn, dsn):
    """Without apply_database_link the target is the store's own database, whose catalog
    already has a SLUICE_APPLY_PROGRESS of another layout: the apply crashed at every start
    ('no such column: APPLIED_SCN').  Its low-watermark now lives beside the store's table,
    and a restarted process applies nothing twice."""
    import sqlite3

    import psycopg
    if dsn.startswith("sqlite"):
        path = dsn.removeprefix("sqlite:///")
        with sqlite3.connect(path) as db:
            db.execute('CREATE TABLE "HR.EMP" (id INTEGER PRIMARY KEY, name TEXT)')
        owner = "HR"

        def rows():
            with sqlite3.connect(path) as db:
                return db.execute('SELECT id, name FROM "HR.EMP"').fetchall()
    else:
        schema = dsn.rsplit("schema=", 1)[1]
        with psycopg.connect(dsn.partition("?")[0], autocommit=True) as db:
            db.execute(f"CREATE TABLE {schema}.emp (id integer PRIMARY KEY, name text)")
        owner = schema.upper()

        def rows():
            with psycopg.connect(dsn.partition("?")[0]) as db:
                return db.execute(f"SELECT id, name FROM {schema}.emp").fetchall()
    conn.streams_adm.set_up_queue(queue_table="APPLY_QT", queue_name="APPLY_Q")
    conn.aqadm.add_subscriber(queue_name="APPLY_Q", subscriber=sluice.Agent(APPLY))
    procedures(conn).set_schema_instantiation_scn(owner, SOURCE_DB, 0)
    change = RowLCR.construct(SOURCE_DB, "INSERT", owner, "EMP", None, "1.5.0", 500, None,
                              {"ID": 1, "NAME": "a"}, commit_scn=5)
    for _ in range(2):      # the second time, a replay of what was applied: skipped
        enqueue(conn, "APPLY_Q", change)
        p = ApplyProcess(sluice.connect(conn.dsn), ApplyDefinition(APPLY, conn.username, "APPLY_Q",
                                                                   apply_captured=True))
        try:
            p.drain()
            assert p.state != "ABORTED", p.error
        finally:
            p.stop()
            p.conn.close()
        assert rows() == [(1, "a")] and errors(conn) == []
