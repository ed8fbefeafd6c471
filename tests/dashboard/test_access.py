"""The dashboard's doors, without a browser (issue 17 §2 "Security"): no page, script or
JSON without authentication; reading needs the monitoring privilege; the error-queue
actions need the CSRF token and DBMS_APPLY_ADM's privilege; what the store says reaches
the browser as inert data (a queue named ``<script>`` is text)."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from sluice.dashboard.web import to_json

from .kit import basic, open_store, serve

EVIL = '<script>alert("x")</script>'


def evil_reading(conn):
    """A reading as :mod:`sluice.dashboard.view` makes them, full of markup."""
    def read():
        qid = f"q:DBS1:{EVIL}"
        return {"site": "DBS1", "nodes": [{"id": qid, "kind": "queue", "label": EVIL, "site": "DBS1",
                                           "state": "ENABLED", "health": "ok"}],
                "edges": [], "queues": [{"id": qid, "name": EVIL, "site": "DBS1", "ready": 1,
                                         "enq_key": f"enq:{qid}", "deq_key": f"deq:{qid}",
                                         "depth_key": f"depth:{qid}"}],
                "errors": {"total": 0, "entries": []},
                "counters": {f"enq:{qid}": 1}, "gauges": {f"depth:{qid}": 1}}
    return read


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    dsn = f"sqlite:///{tmp_path_factory.mktemp('dash') / 'site.db'}"
    conn = open_store(dsn)
    s = serve(dsn, interval=0.2, reader=evil_reading)
    yield s
    s.stop()
    conn.close()


PATHS = ["/dashboard", "/dashboard/", "/dashboard/static/dashboard.js", "/dashboard/static/dashboard.css",
         "/dashboard/api/state"]


@pytest.mark.parametrize("path", PATHS)
def test_nothing_without_authentication(served, path):
    with served.client() as anonymous:
        r = anonymous.get(path)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith('Basic realm="Sluice dashboard"')
    assert "dashboard.js" not in r.text and "DBS1" not in r.text


def test_wrong_password_and_unknown_user_are_refused(served):
    for header in ({"Authorization": "Basic d2F0Y2hlcjpub3Bl"},       # watcher:nope
                   {"Authorization": "Basic Z2hvc3Q6Z2hvc3Q="},       # ghost:ghost
                   {"Authorization": "Basic !!!"}, {"Authorization": "Bearer x"}):
        with served.client() as c:
            assert c.get("/dashboard/api/state", headers=header).status_code == 401


@pytest.mark.parametrize("path", PATHS)
def test_reading_needs_the_monitoring_privilege(served, path):
    with served.client("nobody") as c:
        r = c.get(path)
    assert r.status_code == 403
    assert r.json()["error"].startswith("ORA-01031") and "SELECT_CATALOG_ROLE" in r.json()["error"]


def test_monitor_reads_page_assets_and_state(served):
    with served.client("watcher") as c:
        page = c.get("/dashboard")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        assert re.search(r'<meta name="csrf-token" content="[0-9a-f]{64}">', page.text)
        assert c.get("/dashboard/static/dashboard.js").headers["content-type"].startswith("text/javascript")
        # a name too long for the file system was an OSError (a 500)
        for bad in ("../web.py", "..%2Fweb.py", "__init__.py", "nope.js", ".hidden.js", "a" * 300 + ".js"):
            assert c.get(f"/dashboard/static/{bad}").status_code == 404
        state = c.get("/dashboard/api/state")
    assert state.status_code == 200 and state.json()["user"] == "WATCHER"
    assert state.json()["reading"]["queues"][0]["name"] == EVIL


def test_markup_from_the_store_arrives_inert(served):
    """A queue named like a script: the JSON carries no ``<`` at all (escaped as \\u003c,
    so the text is unchanged once parsed), and the page has no place where data becomes
    HTML (the script sets textContent only: checked in the browser test)."""
    with served.client("watcher") as c:
        raw = c.get("/dashboard/api/state").content
    assert b"<" not in raw and b">" not in raw and b"\\u003cscript\\u003e" in raw
    assert json.loads(raw)["reading"]["nodes"][0]["label"] == EVIL
    assert to_json({"a": "</script><b>&"}) == b'{"a":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'


def test_user_name_in_the_page_is_escaped(served):
    from sluice.dashboard import web
    assert "&lt;" in web.html.escape("<b>")           # the page escapes what it inserts
    with served.client("watcher") as c:
        assert "signed in as <b>WATCHER</b>" in c.get("/dashboard").text


def _token(client) -> str:
    return re.search(r'name="csrf-token" content="([0-9a-f]+)"', client.get("/dashboard").text).group(1)


def test_actions_need_the_csrf_token(served):
    with served.client("admin") as c:
        token = _token(c)
        # a token with non-ASCII characters made hmac.compare_digest raise TypeError (a 500)
        for headers in ({}, {"X-CSRF-Token": "0" * 64}, {"X-CSRF-Token": ""}, {"X-CSRF-Token": b"\xc3\xa9"}):
            r = c.post("/dashboard/api/errors/1.2.3/execute", headers=headers)
            assert r.status_code == 403 and "CSRF" in r.json()["error"]
        with served.client("watcher") as w:         # another user's token is no token
            r = c.post("/dashboard/api/errors/1.2.3/execute", headers={"X-CSRF-Token": _token(w)})
            assert r.status_code == 403 and "CSRF" in r.json()["error"]
        r = c.post("/dashboard/api/errors/1.2.3/execute",
                   headers={"X-CSRF-Token": token, "Origin": "http://evil.example"})
        assert r.status_code == 403 and "cross-origin" in r.json()["error"]
        # with the token: DBMS_APPLY_ADM runs, and says there is no such error transaction
        r = c.post("/dashboard/api/errors/1.2.3/execute", headers={"X-CSRF-Token": token})
        assert r.status_code == 404 and r.json()["error"].startswith("ORA-26673")
        assert c.post("/dashboard/api/errors/1.2.3/nuke", headers={"X-CSRF-Token": token}).status_code == 404


def test_actions_need_the_apply_administrator_privilege(served):
    """A monitor with a valid token is still refused by DBMS_APPLY_ADM itself."""
    with served.client("watcher") as c:
        r = c.post("/dashboard/api/errors/1.2.3/delete", headers={"X-CSRF-Token": _token(c)})
    assert r.status_code == 403 and r.json()["error"].startswith("ORA-01031")


def test_delete_removes_the_entry_and_a_monitor_cannot(served):
    """DELETE_ERROR through the page's endpoint: refused for WATCHER (the entry stays),
    done for ADMIN (gone from DBA_APPLY_ERROR)."""
    import sqlite3
    path = served.dsn.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO SLUICE_APPLY_ERROR (LOCAL_TRANSACTION_ID, APPLY_NAME, QUEUE_OWNER, QUEUE_NAME, "
                   "MESSAGE_NUMBER, ERROR_NUMBER, ERROR_MESSAGE, MESSAGE_COUNT, ERROR_CREATION_TIME, KIND, "
                   "MESSAGES) VALUES ('7.7.7', 'A1', 'SLUICE', 'Q', 1, 1, 'ORA-00001: unique constraint', 1, "
                   "0, 'USER', '[]')")

    def left():
        with sqlite3.connect(path) as db:
            return db.execute("SELECT COUNT(*) FROM SLUICE_APPLY_ERROR").fetchone()[0]
    with served.client("watcher") as c:
        assert c.post("/dashboard/api/errors/7.7.7/delete", headers={"X-CSRF-Token": _token(c)}).status_code == 403
    assert left() == 1
    with served.client("admin") as c:
        r = c.post("/dashboard/api/errors/7.7.7/delete", headers={"X-CSRF-Token": _token(c)})
    assert r.status_code == 200 and r.json() == {"done": "delete", "id": "7.7.7"}
    assert left() == 0


def test_actions_need_authentication_first(served):
    with served.client() as anonymous:
        assert anonymous.post("/dashboard/api/errors/1.2.3/execute").status_code == 401
    with served.client("nobody") as c:
        assert c.post("/dashboard/api/errors/1.2.3/execute").status_code == 403


def test_sluice_serve_serves_the_dashboard(tmp_path):
    """The command line wires it in (``--no-dashboard`` leaves it out)."""
    from tests.idap.conftest import CliServer
    dsn = f"sqlite:///{tmp_path / 'cli.db'}"
    open_store(dsn).close()
    server = CliServer(dsn)
    try:
        assert httpx.get(server.url + "/dashboard", timeout=10).status_code == 401
        r = httpx.get(server.url + "/dashboard/api/state", timeout=10, headers=basic("watcher"))
        assert r.status_code == 200 and r.json()["user"] == "WATCHER"
    finally:
        assert server.stop() in (0, -15)
