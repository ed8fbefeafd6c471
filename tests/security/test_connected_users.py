"""DROP USER of a connected user (ORA-01940) and V$SESSION, over the session registry
(sluice.store.sessions): a session is listed while open -- in this process or another,
plain, pooled or a proxy's -- and gone once closed or once its process is killed."""

import os
import subprocess
import sys
import time

import sluice
from sluice.connection import proxy_connect
from tests.security.conftest import PASSWORD, code_of, create_user, login
from tests.sqlhelpers import query_rows

# a process holding a session of SESSION_U and one of KILLED_U; it closes the first when told
CHILD = """
import sys, sluice
conn = sluice.connect(sys.argv[1], user="SESSION_U", password=sys.argv[2])
other = sluice.connect(sys.argv[1], user="KILLED_U", password=sys.argv[2])
print("connected", flush=True)
sys.stdin.readline()
conn.close()
print("closed", flush=True)
sys.stdin.readline()
"""
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))


def _drop_refused(admin, user="SESSION_U") -> None:
    cur = admin.cursor()
    assert code_of(lambda: cur.execute(f"DROP USER {user}")) == 1940
    assert code_of(lambda: cur.execute(f"DROP USER {user} CASCADE")) == 1940
    assert query_rows(admin, f"SELECT USERNAME FROM DBA_USERS WHERE USERNAME = '{user}'") == [(user,)]   # still there


def _drop(admin, user="SESSION_U") -> None:
    admin.cursor().execute(f"DROP USER {user}")
    assert query_rows(admin, f"SELECT USERNAME FROM DBA_USERS WHERE USERNAME = '{user}'") == []


def test_a_user_connected_in_another_process_is_dropped_once_it_closes_or_the_process_dies(dsn, admin):
    create_user(admin, "SESSION_U")
    create_user(admin, "KILLED_U")
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", CHILD, dsn, PASSWORD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "connected"
        _drop_refused(admin, "SESSION_U")
        _drop_refused(admin, "KILLED_U")
        assert query_rows(admin, "SELECT USERNAME FROM V$SESSION ORDER BY USERNAME") \
            == [("KILLED_U",), ("SESSION_U",), ("SLUICE",)]
        child.stdin.write("close\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "closed"     # the process lives on
        _drop(admin, "SESSION_U")
        _drop_refused(admin, "KILLED_U")
    finally:
        child.kill()        # kill -9: nothing closes KILLED_U's session
        child.wait(10)
    # SQLite: the kernel dropped the lock with the process.  PostgreSQL: the server ends the
    # session once it reads the closed socket, a moment after the process died
    deadline = time.monotonic() + 10
    while query_rows(admin, "SELECT SID FROM V$SESSION WHERE USERNAME = 'KILLED_U'") and time.monotonic() < deadline:
        time.sleep(0.02)
    _drop(admin, "KILLED_U")


def test_sessions_of_this_process_count_too_plain_pooled_and_proxy(dsn, admin):
    create_user(admin, "SESSION_U")
    create_user(admin, "PROXY_U")
    admin.cursor().execute("ALTER USER session_u GRANT CONNECT THROUGH proxy_u")
    plain = login(dsn, "SESSION_U")
    _drop_refused(admin)
    plain.close()
    pool = sluice.create_pool(dsn=dsn, user="SESSION_U", password=PASSWORD, min=1, max=1)
    pool.release(pool.acquire())
    _drop_refused(admin)                  # an idle pooled session is connected too
    pool.close()
    proxied = proxy_connect(dsn, "SESSION_U", "PROXY_U")   # as the IDAP servlet acts for a user
    assert proxied.username == "SESSION_U"
    _drop_refused(admin)
    proxied.close()
    _drop(admin)


def test_v_session_lists_the_open_sessions(dsn, admin):
    create_user(admin, "SESSION_U")
    u = login(dsn, "SESSION_U")
    cols = "SID, USERNAME, STATUS, PROGRAM, LOGON_TIME"
    listed = query_rows(admin, f"SELECT {cols} FROM V$SESSION ORDER BY USERNAME")
    assert [(r[1], r[2]) for r in listed] == [("SESSION_U", "INACTIVE"), ("SLUICE", "ACTIVE")]  # ACTIVE: the asker
    assert len({r[0] for r in listed}) == 2 and all(isinstance(r[0], int) and r[0] > 0 for r in listed)
    assert all(r[3] and r[4] is not None for r in listed)
    # the same from the other session, and by SYS's name
    assert query_rows(u, "SELECT USERNAME, STATUS FROM SYS.V$SESSION ORDER BY USERNAME") \
        == [("SESSION_U", "ACTIVE"), ("SLUICE", "INACTIVE")]
    u.close()
    assert query_rows(admin, "SELECT USERNAME FROM V$SESSION") == [("SLUICE",)]
