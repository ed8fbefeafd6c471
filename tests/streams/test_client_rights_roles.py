"""A Streams client acts on its user's behalf, not in a session: no role counts there.

Oracle runs a capture, apply or propagation with its user's privileges as definer's-rights
code runs, with every role disabled, and its Streams documentation asks for the privileges
of an apply user (its queue, its handlers) and of a capture user to be granted to the user
explicitly, not through a role.  PUBLIC's grants count (Oracle keeps them in definer's
rights).  A session's own call (DBMS_AQ.ENQUEUE by the user) counts its roles:
tests/security/test_roles.py, test_a_queue_privilege_granted_to_a_role_counts_and_stays_the_roles.
"""

from __future__ import annotations

import sluice
from sluice.streams.capture.context import CaptureContext
from sluice.streams.clientrights import check_capture_user
from tests.security.conftest import code_of, create_user
from tests.streams.test_client_privileges import APPLY, applied, process, restarted, send  # noqa: F401  (fixtures)


def test_the_apply_user_dequeues_with_no_role(conn, applied, process):
    """DEQUEUE on the apply's queue granted to a role APUSER holds (its own, nested, or
    AQ_ADMINISTRATOR_ROLE's DEQUEUE ANY QUEUE): the process aborts with ORA-01031, the
    message stays; granted to PUBLIC, a restarted process applies it."""
    cur = conn.cursor()
    conn.aqadm.revoke_queue_privilege(privilege="DEQUEUE", queue_name="SQ", grantee="APUSER")
    for statement in ("CREATE ROLE apply_inner", "CREATE ROLE apply_outer", "GRANT apply_inner TO apply_outer",
                      "GRANT apply_outer, AQ_ADMINISTRATOR_ROLE TO apuser"):
        cur.execute(statement)
    conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="SQ", grantee="APPLY_INNER")
    send(conn, 1)
    p = process()
    p.drain()
    assert p.state == "ABORTED" and p.error.code == 1031
    assert applied == []
    conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="SQ", grantee="PUBLIC")
    restarted(conn, process)
    assert applied == [{"n": 1}]


def test_a_handler_executed_through_a_role_is_not_there_for_the_apply_user(conn, applied, process):
    """EXECUTE on the message handler, or EXECUTE ANY PROCEDURE, granted to a role APUSER
    holds: to the apply user the handler is still a procedure that is not there (ORA-06550,
    PLS-00201), the transaction goes to the error queue; granted to APUSER itself,
    EXECUTE_ALL_ERRORS delivers it."""
    got: list = []
    sluice.register_function("client_roles_test.on_message", got.append)
    conn.apply_adm.alter_apply(apply_name=APPLY, message_handler="client_roles_test.on_message")
    cur = conn.cursor()
    cur.execute("CREATE ROLE handler_users")
    cur.execute("GRANT EXECUTE ON client_roles_test.on_message, EXECUTE ANY PROCEDURE TO handler_users")
    cur.execute("GRANT handler_users TO apuser")
    send(conn, 1)
    p = process()
    p.drain()
    assert p.state == "ABORTED" and p.error.code == 6550
    assert got == []
    cur.execute("GRANT EXECUTE ON client_roles_test.on_message TO apuser")
    conn.apply_adm.execute_all_errors(apply_name=APPLY)
    assert got == [{"n": 1}]


def test_the_capture_user_enqueues_with_no_role(conn):
    """The check a capture process makes before it enqueues (and whenever the catalog
    changes): ENQUEUE on its queue through a role -- its own, DBA, one granted to PUBLIC --
    is not CAPUSER's; PUBLIC's grant of ENQUEUE, or its own, is."""
    create_user(conn, "capuser")
    conn.aqadm.create_queue_table("sluice.qt", "RAW", multiple_consumers=True)
    conn.aqadm.create_queue("sluice.q", "sluice.qt")
    cur = conn.cursor()
    cur.execute("CREATE ROLE capture_users")
    cur.execute("GRANT capture_users, DBA TO capuser")
    conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="sluice.q", grantee="capture_users")

    def check():
        check_capture_user(CaptureContext(conn), "CAP", "CAPUSER", "SLUICE", "Q")
    assert code_of(check) == 1031
    cur.execute("GRANT capture_users TO PUBLIC")             # a role still, PUBLIC's or not
    assert code_of(check) == 1031
    conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="sluice.q", grantee="PUBLIC")
    check()
    conn.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="sluice.q", grantee="PUBLIC")
    assert code_of(check) == 1031
    conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="sluice.q", grantee="capuser")
    check()

