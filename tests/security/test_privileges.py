"""Issue 5, acceptance 1: the privilege matrix.

{owner, granted user, user with only one privilege, user with system privileges,
unrelated user} x {enqueue, dequeue, browse, administer} x {secure, non-secure
queue}: every cell allowed or refused as seeds 001-003 say; a refused cell changes
nothing.
"""

import pytest

import sluice
from tests.security.conftest import create_user, login

USERS = ("OWNER_U", "GRANTED_U", "ENQ_ONLY_U", "ANY_U", "NOBODY_U")
OPS = ("enqueue", "dequeue", "browse", "admin")

# seed 003 "Queue-Level / System-Level Access Control"; seeds 001/002 "Secure Queues"
# (on a secure queue a non-owner acts through its mapped agent, which every user
# here except NOBODY_U has)
EXPECTED = {
    "OWNER_U":    {"enqueue": True,  "dequeue": True,  "browse": True,  "admin": True},
    "GRANTED_U":  {"enqueue": True,  "dequeue": True,  "browse": True,  "admin": False},
    "ENQ_ONLY_U": {"enqueue": True,  "dequeue": False, "browse": False, "admin": False},
    "ANY_U":      {"enqueue": True,  "dequeue": True,  "browse": True,  "admin": True},
    "NOBODY_U":   {"enqueue": False, "dequeue": False, "browse": False, "admin": False},
}


@pytest.fixture
def world(admin, dsn):
    create_user(admin, "OWNER_U", "EXECUTE ON DBMS_AQ", "EXECUTE ON DBMS_AQADM")
    create_user(admin, "GRANTED_U", "EXECUTE ON DBMS_AQ")
    create_user(admin, "ENQ_ONLY_U", "EXECUTE ON DBMS_AQ")
    create_user(admin, "ANY_U", "EXECUTE ON DBMS_AQ", "EXECUTE ON DBMS_AQADM")
    create_user(admin, "NOBODY_U", "EXECUTE ON DBMS_AQ")
    for priv in ("ENQUEUE_ANY", "DEQUEUE_ANY", "MANAGE_ANY"):
        admin.aqadm.grant_system_privilege(privilege=priv, grantee="ANY_U")
    for user in USERS:
        admin.aqadm.create_aq_agent(agent_name=f"{user}_AGENT")
        if user != "NOBODY_U":
            admin.aqadm.enable_db_access(agent_name=f"{user}_AGENT", db_username=user)
    with login(dsn, "OWNER_U") as owner:
        for name, secure in (("PLAIN", False), ("SECURE", True)):
            owner.aqadm.create_queue_table(queue_table=f"{name}_QT", queue_payload_type="RAW",
                                           secure=secure)
            owner.aqadm.create_queue(queue_name=f"{name}_Q", queue_table=f"{name}_QT")
            owner.aqadm.start_queue(queue_name=f"{name}_Q")
            owner.aqadm.grant_queue_privilege(privilege="ALL", queue_name=f"{name}_Q", grantee="GRANTED_U")
            owner.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name=f"{name}_Q",
                                              grantee="ENQ_ONLY_U")
            q = owner.queue(f"OWNER_U.{name}_Q")
            q.enqone(owner.msgproperties(payload=b"seed"))
        owner.commit()
    return dsn


def _state(admin, name):
    rows = admin.query(f"SELECT MSG_STATE, CORR_ID FROM OWNER_U.AQ${name}_QT ORDER BY LOCAL_ORDER_NO", None)[1]
    meta = admin.query(f"SELECT USER_COMMENT, ENQUEUE_ENABLED FROM DBA_QUEUES WHERE OWNER = 'OWNER_U' "
                       f"AND NAME = '{name}_Q'", None)[1]
    return rows, meta


def _do(conn, user, op, name):
    q = conn.queue(f"OWNER_U.{name}_Q")
    agent = sluice.Agent(f"{user}_AGENT")
    if op == "enqueue":
        q.enqone(conn.msgproperties(payload=b"new", correlation=user, sender_id=agent))
    elif op in ("dequeue", "browse"):
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        q.deqoptions.consumername = agent.name
        q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        q.deqoptions.mode = sluice.DEQ_REMOVE if op == "dequeue" else sluice.DEQ_BROWSE
        assert q.deqone() is not None
    else:
        conn.aqadm.alter_queue(queue_name=f"OWNER_U.{name}_Q", comment=f"altered by {user}")
    conn.rollback()   # leave the queue as it was, whatever the operation did


@pytest.mark.parametrize("queue", ["PLAIN", "SECURE"])
def test_privilege_matrix(world, admin, queue):
    for user in USERS:
        with login(world, user) as conn:
            for op in OPS:
                before = _state(admin, queue)
                allowed = EXPECTED[user][op]
                if allowed:
                    _do(conn, user, op, queue)
                else:
                    with pytest.raises(sluice.DatabaseError) as e:
                        _do(conn, user, op, queue)
                    assert e.value.full_code in ("ORA-01031", "ORA-24093", "ORA-25224"), (user, op, e.value)
                    assert _state(admin, queue) == before, (user, op)
                if op == "admin" and allowed:   # DDL commits: put the comment back
                    admin.aqadm.alter_queue(queue_name=f"OWNER_U.{queue}_Q", comment="")


def test_secure_queue_needs_the_users_own_mapped_agent(world, admin):
    with login(world, "GRANTED_U") as conn:
        q = conn.queue("OWNER_U.SECURE_Q")
        with pytest.raises(sluice.DatabaseError) as e:
            q.enqone(conn.msgproperties(payload=b"x"))               # no sender agent
        assert e.value.full_code == "ORA-25224"
        with pytest.raises(sluice.DatabaseError) as e:                # somebody else's agent
            q.enqone(conn.msgproperties(payload=b"x", sender_id=sluice.Agent("OWNER_U_AGENT")))
        assert e.value.full_code == "ORA-24093"
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        with pytest.raises(sluice.DatabaseError) as e:
            q.deqone()                                                # no consumer agent
        assert e.value.full_code == "ORA-24093"
        # the non-secure queue needs no agent
        conn.queue("OWNER_U.PLAIN_Q").enqone(conn.msgproperties(payload=b"x"))
        conn.commit()


def test_revoked_privilege_is_gone(world, admin):
    with login(world, "OWNER_U") as owner:
        owner.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="PLAIN_Q", grantee="ENQ_ONLY_U")
    with login(world, "ENQ_ONLY_U") as conn:
        with pytest.raises(sluice.DatabaseError) as e:
            conn.queue("OWNER_U.PLAIN_Q").enqone(conn.msgproperties(payload=b"x"))
        assert e.value.full_code == "ORA-01031"


def test_a_dropped_queues_privileges_go_with_it(world, admin):
    """The privileges granted on a queue go with it (DROP_QUEUE, DROP_QUEUE_TABLE): a queue
    created again under the name starts with none.  They used to stay, so the new queue let
    GRANTED_U in on the old grant."""
    def grantees(name):
        return sorted(admin.query("SELECT DISTINCT grantee FROM DBA_TAB_PRIVS WHERE owner = 'OWNER_U' "
                                  f"AND table_name = '{name}'", None)[1])
    assert grantees("PLAIN_Q") == [("ENQ_ONLY_U",), ("GRANTED_U",)]
    admin.aqadm.stop_queue(queue_name="OWNER_U.PLAIN_Q")
    admin.aqadm.drop_queue(queue_name="OWNER_U.PLAIN_Q")
    admin.aqadm.drop_queue_table(queue_table="OWNER_U.SECURE_QT", force=True)
    assert grantees("PLAIN_Q") == grantees("SECURE_Q") == []
    admin.aqadm.create_queue(queue_name="OWNER_U.PLAIN_Q", queue_table="OWNER_U.PLAIN_QT")
    admin.aqadm.start_queue(queue_name="OWNER_U.PLAIN_Q")
    with login(world, "GRANTED_U") as conn:
        with pytest.raises(sluice.DatabaseError) as e:
            conn.queue("OWNER_U.PLAIN_Q").enqone(conn.msgproperties(payload=b"x"))
        assert e.value.full_code == "ORA-01031"


def test_grant_option(world, admin, dsn):
    create_user(admin, "THIRD_U", "EXECUTE ON DBMS_AQ")
    with login(world, "OWNER_U") as owner:
        owner.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="PLAIN_Q", grantee="ENQ_ONLY_U",
                                          grant_option=True)
    with login(world, "GRANTED_U") as conn:       # ALL, but without grant option
        with pytest.raises(sluice.DatabaseError) as e:
            conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="OWNER_U.PLAIN_Q",
                                             grantee="THIRD_U")
        assert e.value.full_code == "ORA-01031"
    with login(world, "ENQ_ONLY_U") as conn:
        conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="OWNER_U.PLAIN_Q", grantee="THIRD_U")
    with login(world, "THIRD_U") as conn:
        q = conn.queue("OWNER_U.PLAIN_Q")
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        assert q.deqone().payload == b"seed"
        conn.rollback()


def test_a_dropped_users_grants_go_with_it(world, admin):
    """DROP USER takes what the user granted WITH GRANT OPTION (a queue privilege, SELECT on a
    table), and in turn what its grantees granted on from it, as a REVOKE from it would; and
    the grants on its own objects (a table, a routine) go with its schema.  They used to
    stay in DBA_TAB_PRIVS with a grantor nobody is, so a user re-created under the name
    found the old grants on 'its' objects."""
    create_user(admin, "THIRD_U", "EXECUTE ON DBMS_AQ")
    create_user(admin, "FOURTH_U", "EXECUTE ON DBMS_AQ")
    cur = admin.cursor()
    cur.execute("GRANT SELECT ON hr.employees TO enq_only_u WITH GRANT OPTION")
    cur.execute("GRANT SELECT ON enq_only_u.orders TO granted_u")
    cur.execute("GRANT EXECUTE ON enq_only_u.handler TO granted_u")
    with login(world, "OWNER_U") as owner:
        owner.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="PLAIN_Q", grantee="ENQ_ONLY_U",
                                          grant_option=True)
    with login(world, "ENQ_ONLY_U") as conn:
        conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="OWNER_U.PLAIN_Q", grantee="THIRD_U",
                                         grant_option=True)
        conn.cursor().execute("GRANT SELECT ON hr.employees TO third_u WITH GRANT OPTION")
    with login(world, "THIRD_U") as conn:
        conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="OWNER_U.PLAIN_Q", grantee="FOURTH_U")
        conn.cursor().execute("GRANT SELECT ON hr.employees TO fourth_u")
    privs = ("SELECT grantee, owner, table_name, privilege FROM DBA_TAB_PRIVS WHERE grantee IN "
             "('GRANTED_U', 'THIRD_U', 'FOURTH_U') AND owner <> 'SYS' AND table_name <> 'SECURE_Q' "
             "ORDER BY 1, 2, 3, 4")
    assert admin.query(privs, None)[1] == [
        ("FOURTH_U", "HR", "EMPLOYEES", "SELECT"), ("FOURTH_U", "OWNER_U", "PLAIN_Q", "DEQUEUE"),
        ("GRANTED_U", "ENQ_ONLY_U", "HANDLER", "EXECUTE"), ("GRANTED_U", "ENQ_ONLY_U", "ORDERS", "SELECT"),
        ("GRANTED_U", "OWNER_U", "PLAIN_Q", "DEQUEUE"), ("GRANTED_U", "OWNER_U", "PLAIN_Q", "ENQUEUE"),
        ("THIRD_U", "HR", "EMPLOYEES", "SELECT"), ("THIRD_U", "OWNER_U", "PLAIN_Q", "DEQUEUE")]
    cur.execute("DROP USER enq_only_u")
    assert admin.query(privs, None)[1] == [
        ("GRANTED_U", "OWNER_U", "PLAIN_Q", "DEQUEUE"), ("GRANTED_U", "OWNER_U", "PLAIN_Q", "ENQUEUE")]
    with login(world, "FOURTH_U") as conn:
        q = conn.queue("OWNER_U.PLAIN_Q")
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        with pytest.raises(sluice.DatabaseError) as e:
            q.deqone()
        assert e.value.full_code == "ORA-01031"


def test_execute_on_dbms_aq_is_needed(world, admin, dsn):
    create_user(admin, "NOEXEC_U")
    with login(world, "OWNER_U") as owner:
        owner.aqadm.grant_queue_privilege(privilege="ALL", queue_name="PLAIN_Q", grantee="NOEXEC_U")
    with login(dsn, "NOEXEC_U") as conn:
        with pytest.raises(sluice.DatabaseError) as e:
            conn.queue("OWNER_U.PLAIN_Q").enqone(conn.msgproperties(payload=b"x"))
        assert e.value.full_code == "ORA-01031"
    admin.cursor().execute("GRANT AQ_USER_ROLE TO NOEXEC_U")
    with login(dsn, "NOEXEC_U") as conn:
        conn.queue("OWNER_U.PLAIN_Q").enqone(conn.msgproperties(payload=b"x"))
        conn.commit()


def test_admin_of_other_schemas_needs_manage_any(world, admin, dsn):
    with login(dsn, "GRANTED_U") as conn:
        with pytest.raises(sluice.DatabaseError) as e:
            conn.aqadm.create_queue_table(queue_table="OWNER_U.X_QT", queue_payload_type="RAW")
        assert e.value.full_code == "ORA-01031"
    with login(dsn, "ANY_U") as conn:
        conn.aqadm.create_queue_table(queue_table="OWNER_U.X_QT", queue_payload_type="RAW")
    assert admin.query("SELECT OWNER FROM DBA_QUEUE_TABLES WHERE QUEUE_TABLE = 'X_QT'", None)[1] == [
        ("OWNER_U",)]
