"""Issue 14 §1 semantics and §3 tests, in process: sites are separate stores of the test's
backend (another SQLite file, another PostgreSQL schema) joined by database links, and
PropagationRunner(conn).run_once() is one pass of a site's propagation process."""

from __future__ import annotations

import time

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.store.sqlschema import SCHEMA_VERSION
from sluice.routines import register_function
from sluice.rules.engine.types import NVList
from sluice.streams import RowLCR
from sluice.streams.propagation.runner import PropagationRunner

from ..conftest import make_queue
from .propkit import Sites, drain, enqueue, lose_first_commit, multi_queue, rows

STREAMS_EC = "SYS.STREAMS$_EVALUATION_CONTEXT"


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def link(conn, name, sites, site=None, user=None, password=None):
    creds = f" CONNECT TO {user} IDENTIFIED BY {password}" if user else ""
    conn.cursor().execute(f"CREATE DATABASE LINK {name}{creds} USING '{sites.dsn_of(site or name)}'")


def schedule(conn, source="SRC"):
    return rows(conn, "SELECT DESTINATION, TOTAL_NUMBER, FAILURES, LAST_ERROR_MSG, SCHEDULE_DISABLED "
                      "FROM DBA_QUEUE_SCHEDULES WHERE QNAME = :q ORDER BY DESTINATION", {"q": source})


def payloads(msgs):
    return sorted(m.payload for m in msgs)


def test_a_to_b_queue_to_queue(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")                                 # a single-consumer destination
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p1", "src", "dst", "dbs2", queue_to_queue=True)
    sent = [b"m%03d" % i for i in range(25)]
    enqueue(a, "SRC", sent, correlation="C", priority=3)
    assert PropagationRunner(a, batch_size=10).run_once(force=True) == 25
    got = drain(b, "DST")
    assert payloads(got) == sent
    assert {(m.correlation, m.priority) for m in got} == {("C", 3)}
    assert schedule(a) == [('"SLUICE"."DST"@DBS2', 25, 0, None, "N")]
    assert rows(b, "SELECT SRC_DBNAME, DST_QUEUE_NAME, TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [
        ("DBS1", "SLUICE.DST", 25)]
    # the de-duplication rows of messages the source let go are gone: only the last
    # batch's (in doubt until the next batch says otherwise) remain — on PostgreSQL the
    # last two (two batches in flight: a batch tells of the one two before it)
    pipelined = sites.dsn_of("dbs2").startswith("postgresql")
    assert rows(b, "SELECT SUM(MSG_COUNT) FROM SLUICE_PROPAGATION_INDOUBT") == [(15 if pipelined else 5,)]
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]          # gone from the source
    assert PropagationRunner(a).run_once(force=True) == 0


def test_a_sender_dead_after_its_source_commit_has_its_last_batch_forgotten_by_the_next(sites):
    """The de-duplication rows of the last batch of a sender that died between its source
    commit and its next batch are dropped by the next sender of that schedule: what the
    dead one let go is recorded with the source's commit."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p1", "src", "dst", "dbs2", queue_to_queue=True)
    enqueue(a, "SRC", [b"first%d" % i for i in range(4)])
    dead = PropagationRunner(a)
    assert dead.run_once(force=True) == 4
    assert rows(b, "SELECT SUM(MSG_COUNT) FROM SLUICE_PROPAGATION_INDOUBT") == [(4,)]
    del dead       # gone without another batch: nothing in memory tells the destination
    enqueue(a, "SRC", [b"next"])
    assert PropagationRunner(a).run_once(force=True) == 1
    # the first batch's rows are gone; the last batch's stay until the batch after it
    assert rows(b, "SELECT SUM(MSG_COUNT) FROM SLUICE_PROPAGATION_INDOUBT") == [(1,)]
    assert payloads(drain(b, "DST")) == [b"first0", b"first1", b"first2", b"first3", b"next"]
    a.aqadm.unschedule_propagation("src", "dbs2", destination_queue="dst")
    assert rows(a, "SELECT COUNT(*) FROM SLUICE_PROPAGATION_UNTOLD") == [(0,)]


def test_a_to_b_to_c_queue_forwarding_keeps_the_original_msgid(sites):
    a, b, c = sites.open("dbs1"), sites.open("dbs2"), sites.open("dbs3")
    multi_queue(a, "SRC")
    multi_queue(b, "MID")
    multi_queue(c, "DST")
    c.aqadm.add_subscriber("dst", sluice.Agent("APP"))
    link(a, "dbs2", sites)
    link(b, "dbs3", sites)
    a.propagation_adm.create_propagation("a_b", "src", "mid", "dbs2")
    b.propagation_adm.create_propagation("b_c", "mid", "dst", "dbs3")
    q = a.queue("SRC")
    m = a.msgproperties(payload=b"hop")
    q.enqone(m)
    a.commit()
    assert PropagationRunner(a).run_once(force=True) == 1
    assert PropagationRunner(b).run_once(force=True) == 1
    got = drain(c, "DST", "APP")
    assert [g.payload for g in got] == [b"hop"] and got[0].original_msgid == m.msgid


def test_fan_out_to_two_sites(sites):
    a, b, c = sites.open("dbs1"), sites.open("dbs2"), sites.open("dbs3")
    multi_queue(a, "SRC")
    a.aqadm.add_subscriber("src", sluice.Agent("LOCAL_APP"))
    for conn in (b, c):
        make_queue(conn, "DST")
    link(a, "dbs2", sites)
    link(a, "dbs3", sites)
    a.propagation_adm.create_propagation("to_b", "src", "dst", "dbs2")
    a.propagation_adm.create_propagation("to_c", "src", "dst", "dbs3")
    enqueue(a, "SRC", [b"x", b"y"])
    assert PropagationRunner(a).run_once(force=True) == 4
    assert payloads(drain(b, "DST")) == payloads(drain(c, "DST")) == [b"x", b"y"]
    # seed 001: the message stays for the local consumer
    assert payloads(drain(a, "SRC", "LOCAL_APP")) == [b"x", b"y"]


def test_local_propagation_in_one_transaction(sites):
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    multi_queue(a, "DST")
    a.aqadm.add_subscriber("dst", sluice.Agent("S1"))
    a.aqadm.add_subscriber("dst", sluice.Agent("S2"))
    a.propagation_adm.create_propagation("p", "src", "dst")
    enqueue(a, "SRC", [b"1", b"2", b"3"])
    assert PropagationRunner(a).run_once(force=True) == 3
    # a multi-consumer destination feeds its subscribers
    assert payloads(drain(a, "DST", "S1")) == payloads(drain(a, "DST", "S2")) == [b"1", b"2", b"3"]


def test_local_propagation_needs_the_source_owners_enqueue_privilege(sites):
    """Seed 001 "Message Propagation Between Queues": "The user who owns the source queue is
    the user who propagates messages, and this user must have the necessary privileges to
    propagate messages" — into a queue of the same database, ENQUEUE on it (as the link's
    user needs at a remote one).  Without it the schedule records ORA-01031 and the message
    stays at the source; once granted it goes.  It used to be propagated with the rights of
    the session running the propagation."""
    a = sites.open("dbs1")
    a.cursor().execute("CREATE USER src_owner IDENTIFIED BY pw")
    multi_queue(a, "SRC_OWNER.SRC")
    multi_queue(a, "DST")
    a.aqadm.add_subscriber("dst", sluice.Agent("S1"))
    a.propagation_adm.create_propagation("p", "src_owner.src", "dst")
    enqueue(a, "SRC_OWNER.SRC", [b"1"])
    assert PropagationRunner(a).run_once(force=True) == 0
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES", None) == [
        (0, 1, "ORA-01031: insufficient privileges")]
    assert drain(a, "DST", "S1") == []
    a.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="DST", grantee="SRC_OWNER")
    later = time.time() + 60          # past the first retry (30 s after the failure)
    assert PropagationRunner(a, clock=lambda: later).run_once(force=True) == 1
    assert payloads(drain(a, "DST", "S1")) == [b"1"]


def test_local_propagation_counts_no_role_of_the_source_owner(sites):
    """The source queue's owner propagates on its own behalf, not in a session: Oracle
    counts no role there (definer's rights disable roles), so ENQUEUE on the destination
    granted to a role it holds -- one of its own, or AQ_ADMINISTRATOR_ROLE's ENQUEUE ANY
    QUEUE -- leaves the message at the source (ORA-01031); a grant to PUBLIC counts (Oracle
    keeps PUBLIC's privileges in definer's rights).  Roles used to count."""
    a = sites.open("dbs1")
    cur = a.cursor()
    cur.execute("CREATE USER src_owner IDENTIFIED BY pw")
    multi_queue(a, "SRC_OWNER.SRC")
    multi_queue(a, "DST")
    a.aqadm.add_subscriber("dst", sluice.Agent("S1"))
    a.propagation_adm.create_propagation("p", "src_owner.src", "dst")
    cur.execute("CREATE ROLE senders")
    cur.execute("GRANT senders, AQ_ADMINISTRATOR_ROLE TO src_owner")
    a.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="DST", grantee="SENDERS")
    enqueue(a, "SRC_OWNER.SRC", [b"1"])
    assert PropagationRunner(a).run_once(force=True) == 0
    assert rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES", None) == [
        (1, "ORA-01031: insufficient privileges")]
    a.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="DST", grantee="PUBLIC")
    later = time.time() + 60          # past the first retry (30 s after the failure)
    assert PropagationRunner(a, clock=lambda: later).run_once(force=True) == 1
    assert payloads(drain(a, "DST", "S1")) == [b"1"]


def test_remote_recipients_route_across_the_link(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    multi_queue(b, "INBOX")
    b.aqadm.add_subscriber("inbox", sluice.Agent("EVERYONE"))
    link(a, "dbs2.net", sites, "dbs2")
    a.aqadm.schedule_propagation(queue_name="src", destination="dbs2.net", latency=0)
    q = a.queue("SRC")
    q.enqone(a.msgproperties(payload=b"for S", recipients=[sluice.Agent("S", "inbox@dbs2.net")]))
    q.enqone(a.msgproperties(payload=b"for the subscribers", recipients=[sluice.Agent(None, "inbox@dbs2.net")]))
    q.enqone(a.msgproperties(payload=b"for S and T", recipients=[sluice.Agent("S", "inbox@dbs2.net"),
                                                                 sluice.Agent("T", "inbox@dbs2.net")]))
    a.commit()
    assert PropagationRunner(a).run_once(force=True) == 3
    assert payloads(drain(b, "INBOX", "S")) == [b"for S", b"for S and T"]
    assert payloads(drain(b, "INBOX", "T")) == [b"for S and T"]
    assert payloads(drain(b, "INBOX", "EVERYONE")) == [b"for the subscribers"]


def test_delay_and_expiration_lose_the_time_spent(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    enqueue(a, "SRC", [b"e"], expiration=3600)
    enqueue(a, "SRC", [b"d"], delay=1800, expiration=60)
    # the propagation runs 15 minutes after the enqueue
    assert PropagationRunner(a, clock=lambda: time.time() + 900).run_once(force=True) == 2
    got = rows(b, "SELECT EXPIRATION, DELAY, MSG_STATE FROM AQ$DST_QT ORDER BY EXPIRATION")
    # seed 003: an hour's expiration propagated after 15 minutes is 45 minutes there; a
    # message still delayed keeps its expiration and the rest of its delay (900 s)
    assert got[0][0] == 60 and got[0][2] == "WAITING"
    assert 2700 - 5 <= got[1][0] <= 2700 + 1 and got[1][2] == "READY"


def test_rule_sets_and_rule_based_transformations_on_lcrs(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    a.streams_adm.set_up_queue(queue_table="src_qt", queue_name="src")
    b.streams_adm.set_up_queue(queue_table="dst_qt", queue_name="dst")
    b.aqadm.add_subscriber("dst", sluice.Agent("APPLY"))
    link(a, "dbs2", sites)

    def rename(lcr):             # a rule-based transformation (seed 000)
        lcr.set_object_name("REGIONS_COPY")
        return lcr
    register_function("upper_region", rename)
    adm = a.rule_adm
    actx = NVList({"STREAMS$_TRANSFORM_FUNCTION": "upper_region"})
    adm.create_rule("regions", ":dml.get_object_name() = 'REGIONS'", STREAMS_EC, action_context=actx)
    adm.create_rule("secret", ":dml.get_object_name() = 'SECRET'", STREAMS_EC)
    adm.create_rule_set("pos", STREAMS_EC)
    adm.create_rule_set("neg", STREAMS_EC)
    adm.add_rule("regions", "pos")
    a.streams_adm.rename_schema("regions", "hr", "hr2")      # declarative: before the custom one
    adm.add_rule("secret", "neg")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2", rule_set_name="pos",
                                         negative_rule_set_name="neg")
    q = a.queue("SRC", "SYS.ANYDATA")
    for table in ("REGIONS", "SECRET", "OTHER"):
        q.enqone(a.msgproperties(payload=RowLCR.construct(
            source_database_name="dbs1", command_type="INSERT", object_owner="HR", object_name=table,
            tag=b"\x11", transaction_id="1.2.3", new_values={"ID": 1})))
    a.commit()
    PropagationRunner(a).run_once(force=True)
    got = drain(b, "DST", "APPLY", "SYS.ANYDATA")
    assert len(got) == 1
    lcr = got[0].payload
    assert (lcr.get_object_owner(), lcr.get_object_name()) == ("HR2", "REGIONS_COPY")
    assert lcr.get_tag() == b"\x11" and lcr.get_source_database_name() == "DBS1"     # kept
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]     # the discarded ones too


def test_subscriber_transformation_on_propagation(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST", payload="JSON")
    link(a, "dbs2", sites)
    register_function("sluice.raw_to_json", lambda raw: {"text": raw.decode()})
    a.transform.create_transformation(schema="sluice", name="to_json", from_schema="sys", from_type="RAW",
                                      to_schema="sys", to_type="JSON",
                                      transformation="sluice.raw_to_json(source.user_data)")
    a.aqadm.add_subscriber("src", sluice.Agent(None, "dst@dbs2"), transformation="to_json")
    a.aqadm.schedule_propagation(queue_name="src", destination="dbs2", latency=0)
    enqueue(a, "SRC", [b"hello"])
    assert PropagationRunner(a).run_once(force=True) == 1
    assert [m.payload for m in drain(b, "DST", payload_type="JSON")] == [{"text": "hello"}]


def test_source_transactions_stay_whole(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC", message_grouping=1)           # DBMS_AQADM.TRANSACTIONAL
    make_queue(b, "DST", message_grouping=1)
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    for t in range(3):
        enqueue(a, "SRC", [b"t%d-%d" % (t, i) for i in range(3)])
    runner = PropagationRunner(a, batch_size=2)          # a batch never splits a transaction
    assert runner.run_once(force=True) == 9
    assert runner.last_results[next(iter(runner.last_results))].batches == 3
    groups: dict = {}
    for m in drain(b, "DST"):
        groups.setdefault(m.payload[:2], set()).add(m.transaction_group)
    assert {k: len(v) for k, v in groups.items()} == {b"t0": 1, b"t1": 1, b"t2": 1}
    assert len({g for v in groups.values() for g in v}) == 3


# -- failures -----------------------------------------------------------------------------
def test_unknown_link_is_ora_02019_in_the_schedule(sites):
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    a.propagation_adm.create_propagation("p", "src", "dst", "nowhere")
    enqueue(a, "SRC", [b"kept"])
    PropagationRunner(a).run_once(force=True)
    [(dest, total, failures, error, disabled)] = schedule(a)
    assert (total, failures, disabled) == (0, 1, "N") and error.startswith("ORA-02019")
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT WHERE RETRY_COUNT = 0") == [(1,)]   # still there


def test_unknown_destination_queue_is_ora_24010_in_a_queue_to_queue_schedule(sites):
    """Queue-to-queue: the propagation stops with the error and the message waits (seed
    003 "Propagation failures"); queue-to-dblink marks it UNDELIVERABLE (below)."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "no_such_queue", "dbs2", queue_to_queue=True)
    enqueue(a, "SRC", [b"kept"])
    PropagationRunner(a).run_once(force=True)
    [(_, _, failures, error, _)] = schedule(a)
    assert failures == 1 and error.startswith("ORA-24010")
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(1,)]
    make_queue(b, "NO_SUCH_QUEUE")        # fixed: the next try (after the back-off) delivers
    runner = PropagationRunner(a, clock=lambda: time.time() + 31)
    assert runner.run_once(force=True) == 1
    assert schedule(a)[0][1:3] == (1, 0)


def _mixed_batch(sites, bad_queue):
    """Site dbs1's SRC with six messages over the queue-to-dblink schedule to dbs2: three
    for G at dbs2's INBOX, interleaved with three for B at ``bad_queue`` there."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    multi_queue(b, "INBOX")
    multi_queue(b, "JSONQ", payload="JSON")
    b.aqadm.create_sharded_queue(queue_name="SHQ", queue_payload_type="RAW", multiple_consumers=True)
    b.aqadm.start_queue("SHQ")
    link(a, "dbs2", sites)
    a.aqadm.schedule_propagation(queue_name="src", destination="dbs2", latency=0)
    q = a.queue("SRC")
    for i in range(3):
        q.enqone(a.msgproperties(payload=b"good%d" % i, recipients=[sluice.Agent("G", "inbox@dbs2")]))
        q.enqone(a.msgproperties(payload=b"bad%d" % i, recipients=[sluice.Agent("B", f"{bad_queue}@dbs2")]))
    a.commit()
    return a, b


@pytest.mark.parametrize("bad_queue, code", [("no_such_queue", "ORA-24010"), ("jsonq", "ORA-25215"),
                                             ("shq", "ORA-24205")],
                         ids=["missing-queue", "type-mismatch", "sharded-queue"])
def test_an_application_error_marks_the_message_undeliverable_in_a_queue_to_dblink_schedule(
        sites, caplog, bad_queue, code):
    """Seed 003 "Propagation failures": in a queue-to-dblink propagation the messages the
    destination can never take — their queue does not exist there, holds another
    payload type, or is a sharded queue ("You cannot propagate between sharded and
    non-sharded queues") — are marked UNDELIVERABLE and logged in the alert log; the others of
    the batch go, once, and the schedule does not fail.  They blocked the schedule: each
    run failed, the good messages never went, and it was disabled after 16 failures."""
    a, b = _mixed_batch(sites, bad_queue)
    with caplog.at_level("ERROR", logger="sluice.alert"):
        assert PropagationRunner(a, batch_size=10).run_once(force=True) == 3
    assert payloads(drain(b, "INBOX", "G")) == [b"good0", b"good1", b"good2"]
    [(_, total, failures, error, disabled)] = schedule(a)
    assert (total, failures, error, disabled) == (3, 0, None, "N")
    assert rows(a, "SELECT CONSUMER_NAME, ADDRESS, MSG_STATE, USER_DATA FROM AQ$SRC_QT ORDER BY USER_DATA") == [
        ("B", f"SLUICE.{bad_queue.upper()}@DBS2", "UNDELIVERABLE", b"bad%d" % i) for i in range(3)]
    logged = [r.getMessage() for r in caplog.records if r.name == "sluice.alert"]
    assert len(logged) == 3 and all("UNDELIVERABLE" in m and code in m for m in logged), logged
    # not dequeued or propagated again; nothing delivered twice
    assert PropagationRunner(a).run_once(force=True) == 0
    assert drain(b, "INBOX", "G") == []
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT WHERE MSG_STATE = 'UNDELIVERABLE'") == [(3,)]
    assert schedule(a)[0][1:3] == (3, 0)


def test_a_sifted_batch_that_fails_later_delivers_each_message_once(sites, monkeypatch):
    """The parts of a sifted batch are committed at the destination one by one: when a
    later part fails (the link drops), the whole batch goes back to the source, and the
    next run's parts delivered before are skipped there (de-duplication rows), not
    delivered twice."""
    from sluice.errors import ora
    from sluice.streams.propagation.sites import StoreSite
    a, b = _mixed_batch(sites, "no_such_queue")
    multi_queue(b, "OTHER")
    q = a.queue("SRC")
    for i in range(2):
        q.enqone(a.msgproperties(payload=b"other%d" % i, recipients=[sluice.Agent("O", "other@dbs2")]))
    a.commit()
    drops = []
    real = StoreSite._send

    def send(self, batch):
        if not drops and {m.dest_queue for m in batch.messages} == {"SLUICE.OTHER"}:
            drops.append(len(batch.messages))
            raise ora(3113)
        return real(self, batch)
    monkeypatch.setattr(StoreSite, "_send", send)
    assert PropagationRunner(a, batch_size=20).run_once(force=True) == 0
    assert drops == [2] and schedule(a)[0][2] == 1                    # the run failed
    assert rows(a, "SELECT MSG_STATE, COUNT(*) FROM AQ$SRC_QT GROUP BY MSG_STATE") == [("READY", 8)]
    assert rows(b, "SELECT COUNT(*) FROM AQ$INBOX_QT") == [(3,)]     # committed there before the drop
    assert PropagationRunner(a, batch_size=20, clock=lambda: time.time() + 31).run_once(force=True) == 5
    assert payloads(drain(b, "INBOX", "G")) == [b"good0", b"good1", b"good2"]
    assert payloads(drain(b, "OTHER", "O")) == [b"other0", b"other1"]
    assert rows(a, "SELECT MSG_STATE, COUNT(*) FROM AQ$SRC_QT GROUP BY MSG_STATE") == [("UNDELIVERABLE", 3)]
    assert schedule(a)[0][2] == 0


def test_a_type_mismatch_stops_a_queue_to_queue_propagation(sites):
    """Seed 003: "When a type mismatch is detected in queue-to-queue propagation,
    propagation stops and throws an error ... The message is not marked as UNDELIVERABLE"."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    multi_queue(b, "JSONQ", payload="JSON")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "jsonq", "dbs2", queue_to_queue=True)
    enqueue(a, "SRC", [b"kept"])
    PropagationRunner(a).run_once(force=True)
    [(_, total, failures, error, _)] = schedule(a)
    assert (total, failures) == (0, 1) and error.startswith("ORA-25215")
    assert rows(a, "SELECT MSG_STATE, RETRY_COUNT FROM AQ$SRC_QT") == [("READY", 0)]


def test_wrong_link_password_is_recorded_and_backs_off(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    b.cursor().execute("CREATE USER scott IDENTIFIED BY tiger")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    link(a, "dbs2", sites, user="scott", password="wrong")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    enqueue(a, "SRC", [b"kept"])
    now = [time.time()]
    runner = PropagationRunner(a, clock=lambda: now[0])
    runner.run_once(force=True)
    assert schedule(a)[0][2] == 1 and schedule(a)[0][3].startswith("ORA-01017")
    next_run = rows(a, "SELECT NEXT_RUN_DATE, LAST_ERROR_DATE FROM DBA_QUEUE_SCHEDULES")
    assert next_run[0][0] != next_run[0][1]
    now[0] += 29
    runner.run_once(force=True)                   # backing off: not tried again yet
    assert schedule(a)[0][2] == 1
    now[0] += 2
    runner.run_once(force=True)
    assert schedule(a)[0][2] == 2                 # tried at 30 s, failed again: next in 60 s


def _propagating_with_an_administrator(sites):
    """Sites dbs1 (SRC, propagation p to DST at dbs2) and dbs2, and a second session at
    dbs1 for the administrator: ``(dbs1, dbs2, administrator)``."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    admin = sites.open("dbs1")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    return a, b, admin


def test_an_administrators_change_keeps_the_statistics_of_a_run_meanwhile(sites, monkeypatch):
    """ALTER_/DISABLE_PROPAGATION_SCHEDULE read the schedule, then write it: a run recorded
    in between (TOTAL_NUMBER, LAST_RUN_DATE) went back to what the procedure had read."""
    from sluice.streams.propagation.schedules import ScheduleAdm
    a, b, admin = _propagating_with_an_administrator(sites)
    runner = PropagationRunner(a)
    real_write = ScheduleAdm._write
    moved = []

    def a_run_meanwhile(self, work):
        enqueue(a, "SRC", [b"x", b"y"])
        moved.append(runner.run_once(force=True))
        return real_write(self, work)
    monkeypatch.setattr(ScheduleAdm, "_write", a_run_meanwhile)
    admin.aqadm.alter_propagation_schedule(queue_name="src", destination="dbs2", latency=5)
    admin.aqadm.disable_propagation_schedule(queue_name="src", destination="dbs2")
    assert moved == [2, 2]
    assert rows(a, "SELECT TOTAL_NUMBER, LATENCY, SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES") == [(4, 5.0, "Y")]
    assert rows(a, "SELECT COUNT(*) FROM DBA_QUEUE_SCHEDULES WHERE LAST_RUN_DATE IS NOT NULL") == [(1,)]
    assert len(drain(b, "DST")) == 4


@pytest.mark.parametrize("change", ["disable", "stop", "unschedule"])
def test_a_schedule_disabled_during_a_run_stops_at_the_next_batch(sites, monkeypatch, change):
    """DISABLE_PROPAGATION_SCHEDULE, STOP_PROPAGATION or UNSCHEDULE_PROPAGATION made while
    a run moves a backlog: the run went on to the end of the backlog (up to 1000 batches);
    now the batch in flight finishes and the next is not taken.  Nothing is lost or sent
    twice: what stayed goes once the schedule is back."""
    from sluice.streams.propagation.sites import StoreSite
    a, b, admin = _propagating_with_an_administrator(sites)
    sent = [b"m%02d" % i for i in range(20)]
    enqueue(a, "SRC", sent)
    batches = []

    def during(real):
        def send(self, batch):
            batches.append(len(batch.messages))
            if len(batches) == 3:           # an administrator, meanwhile
                if change == "disable":
                    admin.aqadm.disable_propagation_schedule(queue_name="src", destination="dbs2")
                elif change == "stop":
                    admin.propagation_adm.stop_propagation("p")
                else:
                    admin.aqadm.unschedule_propagation(queue_name="src", destination="dbs2")
            return real(self, batch)
        return send
    monkeypatch.setattr(StoreSite, "_send", during(StoreSite._send))
    monkeypatch.setattr(StoreSite, "post", during(StoreSite.post))      # PostgreSQL: pipelined
    moved = PropagationRunner(a, batch_size=1).run_once(force=True)
    assert 3 <= moved <= 4 and len(batches) == moved
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(20 - moved,)]
    monkeypatch.undo()
    if change == "unschedule":        # the run's last commit left no row of the schedule
        assert rows(a, "SELECT COUNT(*) FROM SLUICE_PROPAGATION_UNTOLD") == [(0,)]
        a.aqadm.schedule_propagation(queue_name="src", destination="dbs2")
    else:
        a.propagation_adm.start_propagation("p")
    assert PropagationRunner(a).run_once(force=True) == 20 - moved
    assert payloads(drain(b, "DST")) == sent


def test_stopping_one_propagation_during_a_run_of_its_shared_schedule_stops_the_job_at_the_next_batch(
        sites, monkeypatch):
    """Two queue-to-dblink propagations share the link's schedule (seed 001: "any change to
    the propagation schedule affects all" of them); STOP_PROPAGATION of one while a run
    moves their backlog disables that shared job: from the next batch nothing goes, and
    START_PROPAGATION of that one moves the rest of both."""
    from sluice.streams.propagation.sites import StoreSite
    a, b = sites.open("dbs1"), sites.open("dbs2")
    admin = sites.open("dbs1")
    multi_queue(a, "SRC")
    make_queue(b, "D1")
    make_queue(b, "D2")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p1", "src", "d1", "dbs2")
    a.propagation_adm.create_propagation("p2", "src", "d2", "dbs2")
    enqueue(a, "SRC", [b"m%02d" % i for i in range(10)])
    batches = []

    def during(real):
        def send(self, batch):
            batches.append(len(batch.messages))
            if len(batches) == 2:
                admin.propagation_adm.stop_propagation("p2")
            return real(self, batch)
        return send
    monkeypatch.setattr(StoreSite, "_send", during(StoreSite._send))
    monkeypatch.setattr(StoreSite, "post", during(StoreSite.post))
    PropagationRunner(a, batch_size=2).run_once(force=True)
    at_d1, at_d2 = len(drain(b, "D1")), len(drain(b, "D2"))
    assert at_d1 + at_d2 <= 3 * 2                         # the batches taken before it was seen
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(20 - at_d1 - at_d2,)]
    assert rows(a, "SELECT STATUS FROM DBA_PROPAGATION ORDER BY 1") == [("DISABLED",), ("DISABLED",)]
    monkeypatch.undo()
    a.propagation_adm.start_propagation("p2")
    PropagationRunner(a).run_once(force=True)
    assert (len(drain(b, "D1")), len(drain(b, "D2"))) == (10 - at_d1, 10 - at_d2)
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]


def test_a_destination_sqlite_file_locked_by_another_process_is_ora_00054_in_the_schedule(tmp_path):
    """Another process holds the destination file's write lock past the busy timeout: the
    destination's commit raised sqlite3's bare "database is locked", which ended the run
    with a Python traceback (nothing recorded in the schedule); now it is ORA-00054, the
    failure is recorded, and the message goes once the lock is released."""
    import sqlite3
    sites = Sites(f"sqlite:///{tmp_path / 'base.db'}", tmp_path)
    try:
        a, b = sites.open("dbs1"), sites.open("dbs2")
        multi_queue(a, "SRC")
        make_queue(b, "DST")
        link(a, "dbs2", sites)
        a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
        enqueue(a, "SRC", [b"waits"])

        def impatient(dsn, user, password):       # the destination session waits 0.2 s, not 60
            conn = sluice.connect(dsn, user=user, password=password)
            conn.context.session.conn.execute("PRAGMA busy_timeout = 200")
            return conn
        other = sqlite3.connect(sites.dsn_of("dbs2").removeprefix("sqlite:///"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        assert PropagationRunner(a, connect=impatient).run_once(force=True) == 0
        other.execute("ROLLBACK")
        other.close()
        [(_, total, failures, error, _)] = schedule(a)
        assert (total, failures) == (0, 1) and error.startswith("ORA-00054"), error
        assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(1,)]
        runner = PropagationRunner(a, connect=impatient, clock=lambda: time.time() + 31)
        assert runner.run_once(force=True) == 1
        assert payloads(drain(b, "DST")) == [b"waits"]
    finally:
        sites.close()


def test_a_lost_answer_does_not_duplicate(sites, monkeypatch):
    """The destination committed, the source did not (its process died between the two, or
    the answer was lost): the next run sends the batch again and the destination keeps
    each message once."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    enqueue(a, "SRC", [b"once-%d" % i for i in range(5)])
    session = a.context.session
    real_commit = type(session).commit
    calls = {"n": 0}

    def lost(self):               # the source's commit fails once, after the destination's
        if self is session:
            calls["n"] += 1
        if self is session and calls["n"] == 1:
            raise sluice.OperationalError("ORA-03113: end-of-file on communication channel", 3113)
        return real_commit(self)
    monkeypatch.setattr(type(session), "commit", lost)
    runner = PropagationRunner(a)
    runner.run_once(force=True)
    monkeypatch.setattr(type(session), "commit", real_commit)
    assert rows(b, "SELECT COUNT(*) FROM AQ$DST_QT") == [(5,)]          # committed there
    assert schedule(a)[0][2:4] == (1, "ORA-03113: end-of-file on communication channel")
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(5,)]          # back at the source
    assert PropagationRunner(a, clock=lambda: time.time() + 31).run_once(force=True) == 5
    assert payloads(drain(b, "DST")) == [b"once-%d" % i for i in range(5)]
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]


def test_secure_destination_queue_needs_the_link_users_privileges(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    cur = b.cursor()
    cur.execute("CREATE USER prop IDENTIFIED BY secret")
    cur.execute("GRANT CREATE SESSION TO prop")
    cur.execute("GRANT EXECUTE ON DBMS_AQ TO prop")
    b.aqadm.create_queue_table(queue_table="sec_qt", queue_payload_type="RAW", secure=True)
    b.aqadm.create_queue(queue_name="sec", queue_table="sec_qt")
    b.aqadm.start_queue(queue_name="sec")
    multi_queue(a, "SRC")
    link(a, "dbs2", sites, user="prop", password="secret")
    a.propagation_adm.create_propagation("p", "src", "sec", "dbs2")
    enqueue(a, "SRC", [b"s"], sender_id=sluice.Agent("ORDERS_APP"))
    runner = PropagationRunner(a, clock=time.time)
    runner.run_once(force=True)
    assert schedule(a)[0][3].startswith("ORA-01031")           # no ENQUEUE privilege
    b.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="sec", grantee="prop")
    PropagationRunner(a, clock=lambda: time.time() + 31).run_once(force=True)
    assert schedule(a)[0][3].startswith("ORA-24093")        # the sender is not its agent
    b.aqadm.create_aq_agent(agent_name="orders_app")
    b.aqadm.enable_db_access(agent_name="orders_app", db_username="prop")
    assert PropagationRunner(a, clock=lambda: time.time() + 100).run_once(force=True) == 1
    assert payloads(drain(b, "SEC")) == [b"s"]


def test_a_duplicate_the_sender_did_not_expect_is_refused_then_skipped(sites):
    """Another host delivered these messages and died before its source commit; this
    sender, whose last batch went well, does not ask for a look-up: the destination's
    de-duplication key refuses the commit, and the batch sent again as a resend enqueues
    only what is new."""
    from sluice.streams.propagation.sites import StoreSite
    from sluice.streams.propagation.links import resolve_link
    from sluice.streams.propagation.wire import Batch, Propagated
    a, b = sites.open("dbs1"), sites.open("dbs2")
    make_queue(b, "DST")
    link(a, "dbs2", sites)

    def batch(*ids):
        return Batch("DBS1", "SLUICE.SRC", [Propagated("SLUICE.DST", bytes([i]) * 16, bytes([i]) * 16, "RAW",
                                                       b"m%d" % i) for i in ids])
    site = StoreSite(resolve_link(a.context.store, "SLUICE", "dbs2"),
                     lambda dsn, user, password: sluice.connect(dsn))
    site.deliver(batch(1, 2))                    # first batch: a resend, looked up
    site.clean = True
    site.deliver(batch(2, 3))                    # 2 again, unexpected: refused, resent, skipped
    site.close()
    assert payloads(drain(b, "DST")) == [b"m1", b"m2", b"m3"]


def _employees_table(sites, site: str) -> str:
    """A table EMPLOYEES at ``site``: in an SQLite store "HR.EMPLOYEES"; on PostgreSQL a
    table of the database, in a schema of the test's own.  Its owner's name."""
    dsn = sites.dsn_of(site)
    if dsn.startswith("sqlite"):
        import sqlite3
        raw = sqlite3.connect(dsn.removeprefix("sqlite:///"))
        raw.execute('CREATE TABLE "HR.EMPLOYEES" (employee_id NUMBER, department_id NUMBER)')
        raw.commit()
        raw.close()
        return "HR"
    from ..conftest import pg_admin
    schema = dsn.partition("?schema=")[2] + "_hr"
    sites.schemas.append(schema)
    with pg_admin() as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        admin.execute(f'CREATE TABLE "{schema}".employees (employee_id numeric, department_id numeric)')
    return schema.upper()


def test_subset_rules_migrate_rows_during_propagation(sites):
    """Seed 000 "Row Migration During Propagation": with ADD_SUBSET_PROPAGATION_RULES for
    department_id = 50, an update moving an employee from 50 to 80 reaches the destination
    as a DELETE, one from 80 to 50 as an INSERT; one staying out is not propagated."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    a.streams_adm.set_up_queue(queue_table="src_qt", queue_name="src")
    b.streams_adm.set_up_queue(queue_table="dst_qt", queue_name="dst")
    b.aqadm.add_subscriber("dst", sluice.Agent("APPLY"))
    link(a, "dbs2", sites)
    owner = _employees_table(sites, "dbs1")        # the subset rule needs the table ("must exist")
    a.cursor().execute(f"""
        BEGIN
          DBMS_STREAMS_ADM.ADD_SUBSET_PROPAGATION_RULES(
            table_name => '{owner}.employees', dml_condition => 'department_id = 50',
            streams_name => 'dbs1_to_dbs2', source_queue_name => 'src',
            destination_queue_name => 'dst@dbs2', source_database => 'dbs1');
        END;""")
    q = a.queue("SRC", "SYS.ANYDATA")

    def update(emp, old, new):
        return RowLCR.construct(source_database_name="dbs1", command_type="UPDATE", object_owner=owner,
                                object_name="EMPLOYEES", transaction_id=f"1.{emp}.1",
                                old_values={"EMPLOYEE_ID": emp, "DEPARTMENT_ID": old},
                                new_values={"DEPARTMENT_ID": new})
    for emp, old, new in ((1, 50, 80), (2, 80, 50), (3, 80, 90), (4, 50, 50)):
        q.enqone(a.msgproperties(payload=update(emp, old, new)))
    a.commit()
    PropagationRunner(a).run_once(force=True)
    got = {m.payload.get_value("OLD" if m.payload.get_command_type() == "DELETE" else "NEW",
                               "EMPLOYEE_ID").access_number(): m.payload.get_command_type()
           for m in drain(b, "DST", "APPLY", "SYS.ANYDATA")}
    assert got == {1: "DELETE", 2: "INSERT", 4: "UPDATE"}


def _aborted_after_sixteen_failures(sites):
    """Site dbs1's propagation P from SRC over the missing link NOWHERE, with one message
    waiting: run until the 16th failure disables its schedule and aborts it, then fix the
    cause (the link and its queue exist)."""
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    a.propagation_adm.create_propagation("p", "src", "dst", "nowhere")
    enqueue(a, "SRC", [b"kept"])
    now = [time.time()]
    runner = PropagationRunner(a, clock=lambda: now[0])
    for n in range(16):
        runner.run_once(force=True)
        assert schedule(a)[0][2] == n + 1
        now[0] += 30 * 2 ** n                     # the next try is due exactly then
    assert schedule(a)[0][4] == "Y"
    [(status, error)] = rows(a, "SELECT STATUS, ERROR_MESSAGE FROM DBA_PROPAGATION")
    assert status == "ABORTED" and error.startswith("ORA-02019")
    runner.run_once(force=True)
    assert schedule(a)[0][2] == 16                 # disabled: not tried again
    a.cursor().execute(f"CREATE DATABASE LINK nowhere USING '{sites.dsn_of('dbs2')}'")
    make_queue(sites.open("dbs2"), "DST")
    return a


def test_sixteen_failures_disable_the_schedule_and_abort_the_propagation(sites):
    a = _aborted_after_sixteen_failures(sites)
    a.aqadm.enable_propagation_schedule(queue_name="src", destination="nowhere")
    a.propagation_adm.start_propagation("p")
    assert PropagationRunner(a).run_once(force=True) == 1
    assert schedule(a)[0][1:3] == (1, 0)


def test_enable_propagation_schedule_restarts_a_propagation_aborted_by_sixteen_failures(sites):
    """Seed 003 "Propagation Error Handling": after 16 failures "the schedule is
    automatically disabled … a queue administrator can fix the failure and enable the
    schedule".  DBMS_AQADM.ENABLE_PROPAGATION_SCHEDULE alone does: the failures go back to
    0, the Streams propagation that the failures ABORTED is ENABLED again (DBA_PROPAGATION
    STATUS shows its schedule's state) and the waiting message goes."""
    a = _aborted_after_sixteen_failures(sites)
    a.aqadm.enable_propagation_schedule(queue_name="src", destination="nowhere")
    assert schedule(a)[0][2:5:2] == (0, "N")
    assert rows(a, "SELECT STATUS FROM DBA_PROPAGATION") == [("ENABLED",)]
    assert PropagationRunner(a).run_once(force=True) == 1
    assert schedule(a)[0][1:3] == (1, 0)


def test_start_propagation_restarts_a_propagation_aborted_by_sixteen_failures(sites):
    """Oracle's "Propagation Aborted" alert: "take the appropriate action for this error,
    and restart the propagation process using dbms_propagation_adm.start_propagation" —
    it enables the schedule the failures disabled, with the failures back to 0."""
    a = _aborted_after_sixteen_failures(sites)
    a.propagation_adm.start_propagation("p")
    assert schedule(a)[0][2:5:2] == (0, "N")
    assert rows(a, "SELECT STATUS FROM DBA_PROPAGATION") == [("ENABLED",)]
    assert PropagationRunner(a).run_once(force=True) == 1
    assert schedule(a)[0][1:3] == (1, 0)


@pytest.mark.parametrize("stop", ["disable_propagation_schedule", "stop_propagation"])
def test_a_propagation_follows_its_schedule_being_disabled_and_enabled(sites, stop):
    """Oracle's DBA_PROPAGATION STATUS is its schedule's state: a queue-to-queue
    propagation whose schedule DBMS_AQADM.DISABLE_PROPAGATION_SCHEDULE disables is DISABLED,
    and one stopped by STOP_PROPAGATION (which disables the schedule) runs again, ENABLED,
    when ENABLE_PROPAGATION_SCHEDULE enables it — the procedures of either package, in any
    mix, leave the two in step."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2", queue_to_queue=True)
    where = {"queue_name": "src", "destination": "dbs2", "destination_queue": "dst"}
    if stop == "stop_propagation":
        a.propagation_adm.stop_propagation("p")
    else:
        a.aqadm.disable_propagation_schedule(**where)
    assert rows(a, "SELECT STATUS FROM DBA_PROPAGATION") == [("DISABLED",)]
    assert schedule(a)[0][4] == "Y"
    enqueue(a, "SRC", [b"waits"])
    assert PropagationRunner(a).run_once(force=True) == 0
    a.aqadm.enable_propagation_schedule(**where)
    assert rows(a, "SELECT STATUS FROM DBA_PROPAGATION") == [("ENABLED",)]
    assert PropagationRunner(a).run_once(force=True) == 1
    assert payloads(drain(b, "DST")) == [b"waits"]


def test_cycle_avoidance_by_source_database(sites):
    """A -> B and B -> A on ANYDATA queues: each site's propagation discards the LCRs whose
    source database is the site it sends to (seed 001 "Directed Networks"), so nothing
    circles: each site ends with its own change and the other's, once."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    for conn, other in ((a, "dbs2"), (b, "dbs1")):
        conn.streams_adm.set_up_queue(queue_table="q_qt", queue_name="q")
        conn.aqadm.add_subscriber("q", sluice.Agent("APPLY"))
        link(conn, other, sites)
        conn.rule_adm.create_rule("came_from_there", f":dml.get_source_database_name() = '{other.upper()}'",
                                  STREAMS_EC)
        conn.rule_adm.create_rule_set("not_back", STREAMS_EC)
        conn.rule_adm.add_rule("came_from_there", "not_back")
        conn.propagation_adm.create_propagation("out", "q", "q", other, negative_rule_set_name="not_back")
    for conn, site in ((a, "dbs1"), (b, "dbs2")):
        conn.queue("Q", "SYS.ANYDATA").enqone(conn.msgproperties(payload=RowLCR.construct(
            source_database_name=site, command_type="INSERT", object_owner="HR", object_name="T",
            new_values={"ID": 1})))
        conn.commit()
    for _ in range(3):
        PropagationRunner(a).run_once(force=True)
        PropagationRunner(b).run_once(force=True)
    at_a = sorted(m.payload.get_source_database_name() for m in drain(a, "Q", "APPLY", "SYS.ANYDATA"))
    at_b = sorted(m.payload.get_source_database_name() for m in drain(b, "Q", "APPLY", "SYS.ANYDATA"))
    assert at_a == ["DBS1", "DBS2"] and at_b == ["DBS1", "DBS2"]


def test_verify_queue_types_across_a_link(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "RAWQ")
    make_queue(b, "JSONQ", payload="JSON")
    link(a, "dbs2", sites)
    assert a.aqadm.verify_queue_types(src_queue_name="src", dest_queue_name="rawq", destination="dbs2") == 1
    assert a.aqadm.verify_queue_types(src_queue_name="src", dest_queue_name="jsonq", destination="dbs2") == 0
    with pytest.raises(sluice.DatabaseError, match="ORA-02019"):
        a.aqadm.verify_queue_types(src_queue_name="src", dest_queue_name="rawq", destination="nowhere")


def test_the_propagating_user_needs_dequeue_on_the_source(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    a.cursor().execute("CREATE USER mover IDENTIFIED BY m")
    a.cursor().execute("GRANT CREATE SESSION TO mover")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    a.cursor().execute(f"CREATE PUBLIC DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    enqueue(a, "SRC", [b"x"])
    mover = sites.open("dbs1", user="mover", password="m")
    PropagationRunner(mover).run_once(force=True)
    assert schedule(a)[0][3].startswith("ORA-01031")
    a.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="src", grantee="mover")
    assert PropagationRunner(mover, clock=lambda: time.time() + 31).run_once(force=True) == 1



def test_one_schedules_acknowledgements_leave_anothers_rows_alone(sites, monkeypatch):
    """The same messages go to two queues of one site by two queue-to-queue schedules. The
    second's source commit fails after the destination committed; the first meanwhile tells
    the destination it let the messages go — which drops its own rows only, so the
    second's resend still finds its rows and enqueues nothing twice."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "Q1")
    make_queue(b, "Q2")
    link(a, "dbs2", sites)
    a.propagation_adm.create_propagation("p1", "src", "q1", "dbs2", queue_to_queue=True)
    a.propagation_adm.create_propagation("p2", "src", "q2", "dbs2", queue_to_queue=True)
    enqueue(a, "SRC", [b"a", b"b"])
    first = PropagationRunner(a, only=("SLUICE", "SRC", "SLUICE.Q1@DBS2"))
    second = PropagationRunner(a, only=("SLUICE", "SRC", "SLUICE.Q2@DBS2"))
    assert first.run_once(force=True) == 2
    restore = lose_first_commit(monkeypatch, a.context.session)
    second.run_once(force=True)                       # delivered to Q2, not let go at A
    restore()
    enqueue(a, "SRC", [b"c"])
    assert first.run_once(force=True) == 1            # acknowledges a and b (for Q1)
    second.clock = lambda: time.time() + 31
    assert second.run_once(force=True) == 3           # a, b again (found, skipped) and c
    assert payloads(drain(b, "Q1")) == payloads(drain(b, "Q2")) == [b"a", b"b", b"c"]


def _raw(dsn, statements):
    """Run ``statements`` on the store's database directly (what an older Sluice left)."""
    if dsn.startswith("sqlite:"):
        import sqlite3
        c = sqlite3.connect(dsn.removeprefix("sqlite:///"))
        for s in statements:
            c.execute(s)
        c.commit()
        c.close()
        return
    import psycopg
    head, _, schema = dsn.partition("?schema=")
    with psycopg.connect(head, autocommit=True, options=f'-c search_path="{schema}"') as c:
        for s in statements:
            c.execute(s)


def test_an_older_stores_dba_apply_error_number_becomes_a_number(dsn):
    """Schema version 12's DBA_APPLY showed ERROR_NUMBER as the catalog's JSON text on
    PostgreSQL; a view's column type cannot be replaced, so the upgrade drops and recreates
    it (and V$STREAMS_APPLY_READER, built on it)."""
    conn = sluice.connect(dsn)
    conn.aqadm.create_queue_table(queue_table="AQT", queue_payload_type="SYS.ANYDATA", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="AQ1", queue_table="AQT")
    conn.apply_adm.create_apply(queue_name="AQ1", apply_name="OLD_APPLY", apply_captured=True)
    from sluice.streams.apply.definition import set_status
    from sluice.streams.capture.context import CaptureContext
    set_status(CaptureContext(conn), "OLD_APPLY", "ABORTED", DatabaseError("ORA-01403: no data found", 1403))
    conn.commit()
    conn = reopen_as_older(conn, dsn, 12, [
        "DROP VIEW DBA_APPLY CASCADE",
        "CREATE VIEW DBA_APPLY AS SELECT C.NAME AS APPLY_NAME, "
        "C.SPEC::json ->> 'error_number' AS ERROR_NUMBER FROM SLUICE_CATALOG C WHERE C.KIND = 'APPLY'"])
    try:
        assert rows(conn, "SELECT APPLY_NAME, STATUS, ERROR_NUMBER FROM DBA_APPLY") == [("OLD_APPLY", "ABORTED", 1403)]
        assert rows(conn, "SELECT COUNT(*) FROM V$STREAMS_APPLY_READER") == [(0,)]
    finally:
        conn.close()


def reopen_as_older(conn, dsn, version, pg_statements=()):
    """Close ``conn``, make its store look as schema ``version`` left it (``pg_statements``
    on PostgreSQL), and open it again — the upgrade runs — checking it is current now."""
    conn.close()
    if dsn.startswith("postgresql") and pg_statements:
        _raw(dsn, list(pg_statements))
    _raw(dsn, [f"UPDATE SLUICE_META SET VALUE = '{version}' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    assert rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    return conn


def test_an_older_stores_received_rows_stay_in_doubt_after_the_upgrade(dsn):
    """Schema version 11 kept a row per message in SLUICE_PROPAGATION_RECEIVED: the upgrade
    moves each into SLUICE_PROPAGATION_INDOUBT, so a resend of that message is still skipped."""
    from sluice.streams.propagation.receiver import receive
    from sluice.streams.propagation.wire import Batch, Propagated
    conn = sluice.connect(dsn)
    make_queue(conn, "DST")
    conn.close()
    msgid = bytes(range(16))
    blob = "X'000102030405060708090a0b0c0d0e0f'" if dsn.startswith("sqlite:") else \
        "'\\x000102030405060708090a0b0c0d0e0f'::bytea"
    _raw(dsn, ["DROP TABLE SLUICE_PROPAGATION_INDOUBT",
               "CREATE TABLE SLUICE_PROPAGATION_RECEIVED (SOURCE_SITE TEXT NOT NULL, SOURCE_MSGID BLOB "
               "NOT NULL, DEST_QUEUE TEXT NOT NULL, SOURCE_QUEUE TEXT, RECEIVED REAL NOT NULL, "
               "PRIMARY KEY (SOURCE_SITE, SOURCE_MSGID, DEST_QUEUE))".replace(
                   "BLOB", "BLOB" if dsn.startswith("sqlite:") else "BYTEA"),
               f"INSERT INTO SLUICE_PROPAGATION_RECEIVED VALUES ('DBS1', {blob}, 'SLUICE.DST', 'SLUICE.SRC', 1.0)",
               "UPDATE SLUICE_META SET VALUE = '11' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert rows(conn, "SELECT SOURCE_SITE, DEST_QUEUE, MSG_COUNT, SOURCE_QUEUE FROM "
                          "SLUICE_PROPAGATION_INDOUBT") == [("DBS1", "SLUICE.DST", 1, "SLUICE.SRC")]
        assert rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        again = Batch("DBS1", "SLUICE.SRC", [Propagated("SLUICE.DST", msgid, msgid, "RAW", b"x")], resend=True)
        assert receive(conn.context, again) == 0           # received before the upgrade: skipped
        fresh = Propagated("SLUICE.DST", b"\x01" * 16, b"\x01" * 16, "RAW", b"y")
        assert receive(conn.context, Batch("DBS1", "SLUICE.SRC", [fresh], resend=True)) == 1
        conn.commit()
        assert [m.payload for m in drain(conn, "DST")] == [b"y"]
        assert rows(conn, "SELECT SUM(MSG_COUNT) FROM SLUICE_PROPAGATION_INDOUBT") == [(2,)]
    finally:
        conn.close()
