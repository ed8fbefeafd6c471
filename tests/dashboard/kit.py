"""What the dashboard tests share: a store with users of each kind, and ``sluice serve``'s
application (servlet + dashboard) on uvicorn in a thread on 127.0.0.1."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import httpx

import sluice
from sluice.dashboard import Dashboard
from sluice.idap import IdapConfig, create_app
from tests.idap.conftest import ServerThread

# user -> password; WATCHER may look (MONITOR), ADMIN may also act (SELECT_CATALOG_ROLE and
# AQ_ADMINISTRATOR_ROLE), NOBODY only log on
USERS = {"watcher": "watch", "admin": "admin", "nobody": "nobody"}


def make_users(conn) -> None:
    cur = conn.cursor()
    for user, password in USERS.items():
        cur.execute(f"CREATE USER {user} IDENTIFIED BY {password}")
        cur.execute(f"GRANT CONNECT TO {user}")
    cur.execute("GRANT MONITOR TO watcher")                    # Sluice's privilege
    cur.execute("GRANT SELECT_CATALOG_ROLE, AQ_ADMINISTRATOR_ROLE TO admin")   # Oracle's role gives it
    conn.commit()


def basic(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS.get(user, 'x')}".encode()).decode()
    return {"Authorization": "Basic " + token}


@dataclass
class Served:
    server: ServerThread
    dashboard: Dashboard
    dsn: str

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, user: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=basic(user) if user else {}, timeout=30)

    def stop(self) -> None:
        self.server.stop()


def serve(dsn: str, **dashboard) -> Served:
    d = Dashboard(**dashboard)
    app = create_app(IdapConfig(dsn), [d])
    return Served(ServerThread(app).start(), d, dsn)


def open_store(dsn: str):
    conn = sluice.connect(dsn)
    make_users(conn)
    return conn
