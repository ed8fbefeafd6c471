"""sluice.connect() as python-oracledb's connect(): every keyword it takes is used, ignored
with a warning, or refused with python-oracledb's kind of error; DSNs in every form it
allows; ConnectParams; pools.  And every bad DSN is a sluice.Error with an ORA code."""

import gc
import os
import threading
import time
import warnings

import pytest

import sluice
from sluice import connect_params
from tests.conftest import make_queue, nowait
from tests.sqlhelpers import raised_code

PW = "Secret-pw-1"

# python-oracledb's oracledb.connect() keywords (its documented signature), less dsn,
# pool, pool_alias, conn_class and params, which connect() names itself
ORACLEDB_CONNECT_KEYWORDS = {
    "user", "proxy_user", "password", "newpassword", "wallet_password", "access_token", "host",
    "port", "protocol", "https_proxy", "https_proxy_port", "service_name", "instance_name", "sid",
    "server_type", "cclass", "purity", "expire_time", "retry_count", "retry_delay",
    "tcp_connect_timeout", "ssl_server_dn_match", "ssl_server_cert_dn", "wallet_location", "events",
    "externalauth", "mode", "disable_oob", "stmtcachesize", "edition", "tag", "matchanytag",
    "config_dir", "appcontext", "shardingkey", "supershardingkey", "debug_jdwp",
    "connection_id_prefix", "ssl_context", "sdu", "pool_boundary", "use_tcp_fast_open", "ssl_version",
    "program", "machine", "terminal", "osuser", "driver_name", "use_sni", "thick_mode_dsn_passthrough",
    "extra_auth_params", "pool_name", "on_connect_callback", "handle",
}


@pytest.fixture
def store(dsn):
    """A store with a user SCOTT (password PW) and the bootstrap administrator."""
    with sluice.connect(dsn) as admin:
        cur = admin.cursor()
        cur.execute(f'CREATE USER scott IDENTIFIED BY "{PW}"')
        cur.execute("GRANT CREATE SESSION TO scott")
    return dsn


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(connect_params, "_warned", set())


# -- every keyword has its place ------------------------------------------------------

def test_every_oracledb_keyword_is_sorted():
    used, ignored = set(connect_params.USED), set(connect_params.IGNORED)
    refused, address = set(connect_params.REFUSED), set(connect_params.ADDRESS)
    assert used | ignored | refused | address == ORACLEDB_CONNECT_KEYWORDS
    assert len(used) + len(ignored) + len(refused) + len(address) == len(ORACLEDB_CONNECT_KEYWORDS)


def test_user_password_dsn_in_every_form(store, tmp_path, monkeypatch):
    forms = [
        lambda: sluice.connect(user="scott", password=PW, dsn=store),
        lambda: sluice.connect(store, user="scott", password=PW),
        lambda: sluice.connect(store, "scott", PW),                # Sluice's positional order
        lambda: sluice.connect("scott", PW, store),                # cx_Oracle's
        lambda: sluice.connect(f"scott/{PW}@{store}"),             # user/password@dsn
        lambda: sluice.connect(dsn=f"scott/{PW}@{store}"),
        lambda: sluice.connect(f"scott@{store}", password=PW),
    ]
    for form in forms:
        with form() as c:
            assert c.username == "SCOTT"
    assert raised_code(lambda: sluice.connect(f"scott/wrong@{store}")) == "ORA-01017"
    # user/password alone: the default store (./sluice.db)
    monkeypatch.chdir(tmp_path)
    with sluice.connect() as admin:
        admin.cursor().execute(f'CREATE USER carol IDENTIFIED BY "{PW}"')
        admin.cursor().execute("GRANT CREATE SESSION TO carol")
    with sluice.connect(f"carol/{PW}") as c:
        assert c.username == "CAROL" and c.dsn == "sqlite:///sluice.db"


def test_connect_params(store):
    params = sluice.ConnectParams(user="scott", password=PW, events=True)
    params.parse_connect_string(store)
    assert params.user == "scott" and params.events is True and params.get_connect_string() == store
    assert "password" not in repr(params) and PW not in repr(params)
    with sluice.connect(params=params) as c:
        assert c.username == "SCOTT"
    with sluice.connect(store, params=sluice.ConnectParams(user="nobody", password="x"),
                        user="scott", password=PW) as c:   # keywords win over params
        assert c.username == "SCOTT"
    copy = params.copy()
    copy.set(user="other", events=None)   # None leaves a value as it is
    assert (copy.user, copy.events, params.user) == ("other", True, "scott")
    assert sluice.ConnectParams.parse_dsn_with_credentials("u/p@postgresql://pg@h/db") == \
        ("u", "p", "postgresql://pg@h/db")
    assert raised_code(lambda: sluice.connect(store, params={"user": "scott"})) == "DPY-2025"


def test_events_is_accepted_and_subscriptions_work_either_way(conn, dsn):
    """python-oracledb's Thin mode (its default) ignores events; so does Sluice: a
    subscription works whether the connection was opened with events=True or not."""
    make_queue(conn)
    conn.commit()
    for events in (True, None):
        heard = threading.Event()
        with sluice.connect(dsn, events=events) as c:
            sub = c.subscribe(namespace=sluice.SUBSCR_NAMESPACE_AQ, name="Q", callback=lambda m: heard.set())
            conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
            conn.commit()
            assert heard.wait(10)
            c.unsubscribe(sub)


def test_networking_keywords_are_ignored_with_one_warning_each(dsn, fresh_warnings):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            sluice.connect(dsn, tcp_connect_timeout=5.0, retry_count=3, retry_delay=1, expire_time=2,
                           sdu=65535, stmtcachesize=40, disable_oob=True, config_dir="/etc",
                           ssl_server_dn_match=True, wallet_location="/w", https_proxy="p",
                           program="app", host="dbhost", port=1521, service_name="orclpdb").close()
    ignored = [w for w in caught if issubclass(w.category, sluice.IgnoredParameterWarning)]
    names = sorted(str(w.message).split()[3] for w in ignored)
    assert names == sorted(["tcp_connect_timeout", "retry_count", "retry_delay", "expire_time", "sdu",
                            "stmtcachesize", "disable_oob", "config_dir", "ssl_server_dn_match",
                            "wallet_location", "https_proxy", "program", "host", "port", "service_name"])
    assert all(w.filename == __file__ for w in ignored)   # they point at the caller's line
    with warnings.catch_warnings(record=True) as caught:   # not specified: nothing to say
        warnings.simplefilter("always")
        sluice.connect(dsn, tcp_connect_timeout=None, events=False, disable_oob=None).close()
    assert not caught


def test_what_cannot_be_honoured_is_refused(dsn, tmp_path, monkeypatch):
    for name, value in [("access_token", "tok"), ("externalauth", True), ("edition", "E1"),
                        ("appcontext", [("ns", "n", "v")]), ("shardingkey", [1]),
                        ("supershardingkey", ["a"]), ("extra_auth_params", {"a": 1}), ("handle", 1)]:
        with pytest.raises(sluice.NotSupportedError) as e:
            sluice.connect(dsn, **{name: value})
        assert e.value.full_code == "DPY-3001" and name in str(e.value)
    monkeypatch.chdir(tmp_path)   # an Oracle listener's address without a DSN: no store named
    assert raised_code(lambda: sluice.connect(host="dbhost", port=1521, service_name="orclpdb")) == "DPY-3001"
    assert not os.path.exists(tmp_path / "sluice.db")
    with pytest.raises(sluice.ProgrammingError) as e:       # unknown to python-oracledb too
        sluice.connect(dsn, no_such_keyword=1)
    assert e.value.full_code == "DPY-2025" and isinstance(e.value, TypeError)
    assert raised_code(lambda: sluice.connect(dsn, conn_class=dict)) == "DPY-2023"


def test_proxy_newpassword_conn_class_and_callback(store):
    with sluice.connect(store) as admin:
        admin.cursor().execute(f'CREATE USER aqadm IDENTIFIED BY "{PW}"')
        admin.cursor().execute("GRANT CREATE SESSION TO aqadm")
        admin.cursor().execute("ALTER USER scott GRANT CONNECT THROUGH aqadm")
    with sluice.connect(store, user="aqadm[scott]", password=PW) as c:        # proxy[client]
        assert c.username == "SCOTT"
    with sluice.connect(store, user="aqadm", proxy_user="scott", password=PW) as c:
        assert c.username == "SCOTT"
    assert raised_code(lambda: sluice.connect(store, user="scott[aqadm]", password=PW)) == "ORA-28150"

    with sluice.connect(store, user="scott", password=PW, newpassword="New-pw-2"):
        pass
    assert raised_code(lambda: sluice.connect(store, user="scott", password=PW)) == "ORA-01017"
    sluice.connect(store, user="scott", password="New-pw-2").close()

    class MyConnection(sluice.Connection):
        pass
    seen = []
    with sluice.connect(store, conn_class=MyConnection, on_connect_callback=seen.append) as c:
        assert type(c) is MyConnection and seen == [c]


# -- pools -------------------------------------------------------------------------------

def test_pool_acquire_release_and_context_manager(dsn):
    pool = sluice.create_pool(dsn=dsn, min=1, max=2, increment=1)
    assert (pool.opened, pool.busy, pool.dsn) == (1, 0, dsn)
    with pool.acquire() as c:
        assert isinstance(c, sluice.Connection) and pool.busy == 1
        make_queue(c)
        c.commit()
        c.queue("Q").enqone(c.msgproperties(payload=b"not committed"))
    assert pool.busy == 0 and pool.opened == 1
    with pytest.raises(sluice.InterfaceError) as e:          # the handle is spent
        c.queue("Q")
    assert e.value.full_code == "DPY-1001"
    c = pool.acquire()
    assert nowait(c.queue("Q")).deqone() is None             # released work was rolled back
    pool.release(c)
    c = sluice.connect(pool=pool)                            # python-oracledb's older spelling
    c.close()                                                # closing a pooled one releases it
    assert pool.busy == 0
    pool.close()
    assert raised_code(pool.acquire) == "DPY-1002"


def test_pool_limits_and_get_modes(dsn):
    pool = sluice.create_pool(dsn, min=0, max=2, getmode=sluice.POOL_GETMODE_NOWAIT)
    a, b = pool.acquire(), pool.acquire()
    assert (pool.busy, pool.opened) == (2, 2)
    assert raised_code(pool.acquire) == "DPY-4005"
    pool.getmode = sluice.POOL_GETMODE_TIMEDWAIT
    pool.wait_timeout = 200
    t0 = time.monotonic()
    assert raised_code(pool.acquire) == "DPY-4005" and time.monotonic() - t0 >= 0.2
    pool.getmode = sluice.POOL_GETMODE_WAIT           # waits for a release
    threading.Timer(0.3, pool.release, [a]).start()
    c = pool.acquire()
    assert pool.busy == 2
    assert raised_code(pool.close) == "DPY-1005"
    del c                                              # forgotten, not released: it comes back
    gc.collect()
    pool.getmode = sluice.POOL_GETMODE_NOWAIT
    e = pool.acquire()
    assert pool.busy == 2
    pool.getmode = sluice.POOL_GETMODE_FORCEGET        # beyond max
    d = pool.acquire()
    assert pool.opened == 3
    pool.drop(d)
    assert pool.opened == 2
    pool.close(force=True)
    assert raised_code(lambda: e.queue("Q")) == "DPY-1001"
    assert raised_code(lambda: sluice.create_pool(dsn, min=3, max=2)) == "DPY-2064"


def test_named_and_heterogeneous_pools(store):
    params = sluice.PoolParams(min=0, max=3, homogeneous=False)
    with sluice.create_pool(store, params=params, pool_alias="web") as pool:
        assert sluice.get_pool("web") is pool
        assert raised_code(lambda: sluice.create_pool(store, pool_alias="web")) == "DPY-2055"
        with sluice.connect(pool_alias="web") as c:
            assert c.username == "SLUICE"
        with pool.acquire(user="scott", password=PW) as c:
            assert c.username == "SCOTT"
        with pool.acquire(user="scott", password=PW) as c:   # the idle session, password checked
            assert c.username == "SCOTT"
        assert raised_code(lambda: pool.acquire(user="scott", password="wrong")) == "ORA-01017"
        assert raised_code(lambda: sluice.connect(pool=pool, pool_alias="web")) == "DPY-2014"
    assert sluice.get_pool("web") is None
    assert raised_code(lambda: sluice.connect(pool_alias="web")) == "DPY-2054"
    with sluice.create_pool(store, min=0, max=1) as pool:
        assert raised_code(lambda: pool.acquire(user="scott", password=PW)) == "SLU-00001"


# -- a bad DSN is one sluice.Error with an ORA code ------------------------------------------

def test_bad_dsns_are_sluice_errors(tmp_path):
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("this is not a database, it is a text file with words in it\n")
    a_file = tmp_path / "plain"
    a_file.write_text("x")
    cases = [
        (f"sqlite:///{tmp_path}/no/such/dir/x.db", "ORA-27041", sluice.OperationalError),
        (f"sqlite:///{a_file}/x.db", "ORA-27041", sluice.OperationalError),      # not a directory
        ("sqlite:////sys/sluice-test.db", "ORA-27041", sluice.OperationalError),  # not writable
        (f"sqlite:///{tmp_path}", "ORA-27041", sluice.OperationalError),          # a directory
        (f"sqlite:///{not_sqlite}", "ORA-01157", sluice.OperationalError),
        (f"sqlite:///{tmp_path}/x.db?synchronous=sometimes", "ORA-12154", sluice.DatabaseError),
        ("mysql://u:secret@host/db", "ORA-12154", sluice.DatabaseError),
        ("dbhost:1521/orclpdb", "ORA-12154", sluice.DatabaseError),               # Easy Connect
        ("orclpdb", "ORA-12154", sluice.DatabaseError),                           # a TNS alias
        ("postgresql://postgres@127.0.0.1:1/test", "ORA-12541", sluice.OperationalError),
        ("postgresql://127.0.0.1:notaport/test", "ORA-12154", sluice.DatabaseError),
        ("postgresql://postgres@127.0.0.1:5432/test?bogus=1", "ORA-12154", sluice.DatabaseError),
        ("postgresql://u:secret@127.0.0.1:5432/test?schema=bad-name!", "ORA-12154", sluice.DatabaseError),
        ("postgresql://127.0.0.1:5432/test?schema=1st", "ORA-12154", sluice.DatabaseError),
        ("postgresql://postgres@no-such-host.invalid/test", "ORA-12545", sluice.OperationalError),
    ]
    for bad, code, cls in cases:
        with pytest.raises(sluice.Error) as e:
            sluice.connect(bad)
        assert (e.value.full_code, isinstance(e.value, cls)) == (code, True), (bad, str(e.value))
        assert "\n" not in str(e.value) and "secret" not in str(e.value)
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "plain"]   # nothing left beside them


# -- keyword values of the wrong type are python-oracledb's errors, before anything opens ---

@pytest.mark.parametrize("kwargs, code", [
    ({"user": 5}, "DPY-2025"), ({"user": ["a"]}, "DPY-2025"), ({"user": b"x"}, "DPY-2025"),
    ({"password": 5}, "DPY-2025"), ({"proxy_user": 5}, "DPY-2025"), ({"newpassword": 5}, "DPY-2025"),
    ({"mode": "x"}, "DPY-4022"), ({"mode": 1.5}, "DPY-4022"), ({"mode": 99}, "DPY-4022"),
    ({"on_connect_callback": 5}, "DPY-2070"),
])
def test_connect_keywords_of_the_wrong_type(dsn, kwargs, code):
    assert raised_code(lambda: sluice.connect(dsn, **kwargs)) == code
    assert raised_code(lambda: sluice.ConnectParams(**kwargs)) == code
    assert raised_code(lambda: sluice.create_pool(dsn, min=0, **kwargs)) == code
    if "user" in kwargs or "password" in kwargs:
        with sluice.create_pool(dsn, min=0, homogeneous=False) as pool:
            assert raised_code(lambda: pool.acquire(**{"user": "scott", **kwargs})) == code
    if code == "DPY-2025":
        with pytest.raises(TypeError):   # an ArgumentError is a TypeError, as python-oracledb's
            sluice.connect(dsn, **kwargs)


def test_mode_by_name_and_a_dsn_that_is_not_a_string(dsn):
    with sluice.connect(dsn, mode="sysdba") as c:
        assert c.username == "SYS"
    assert raised_code(lambda: sluice.ConnectParams.parse_dsn_with_credentials(5)) == "DPY-2025"


def test_a_nul_in_a_dsn_is_ora_12154(tmp_path):
    for dsn in (f"sqlite:///{tmp_path}/\x00x.db", "postgresql://postgres@127.0.0.1:5432/te\x00st"):
        with pytest.raises(sluice.DatabaseError) as e:
            sluice.connect(dsn)
        assert e.value.full_code == "ORA-12154"
    assert os.listdir(tmp_path) == []
