"""LISTEN for one store in this process: the thread that turns other processes'
commits into in-process wake-ups.

Two kinds of channel (names from :class:`~.pgconn.PgTarget`):

* the store's channel, always listened to: ``'c'`` when the catalog changed,
  ``'t<POSIX seconds>'`` when a commit created a time event (a delay, an
  expiration, a retry delay, a retention end);
* one channel per queue table, ``'m'`` when messages may have become available
  there.  The process listens to a queue table's channel only from the first time
  one of its sessions found that table empty (:meth:`Listener.add_channel`), so
  producers and consumers of other queues are not woken for nothing.

PostgreSQL delivers a notification only when the sending transaction commits, so
a woken dequeuer always finds the committed rows.  The thread blocks in
``select()`` on the connection's socket and a wake-up pipe: no polling.  When the
server goes away it reconnects with back-off and, once listening again, reports
``on_reconnect`` (the store then wakes every waiter: notifications sent meanwhile
were lost).
"""

from __future__ import annotations

import os
import select
import threading
import time
from typing import Callable

import psycopg
from psycopg.pq import ConnStatus

from .pgconn import PgTarget
from .sqlschema import quote


class Listener(threading.Thread):
    """One LISTEN connection per store per process."""

    IDLE_CHECK = 5.0        # seconds between backstop calls of ``on_idle`` when nothing arrives

    def __init__(self, target: PgTarget, on_notify: Callable[[str], None],
                 on_lost: Callable[[], None], on_reconnect: Callable[[], None],
                 on_idle: Callable[[], None]) -> None:
        super().__init__(name=f"sluice-listen-{target.schema}", daemon=True)
        self.target = target
        self.on_notify, self.on_lost = on_notify, on_lost
        self.on_reconnect, self.on_idle = on_reconnect, on_idle
        self.connected = threading.Event()
        self._stopped = False
        self._wake_r, self._wake_w = os.pipe()
        self._conn: psycopg.Connection | None = None
        self._channels = [target.channel]           # listened to (on every reconnect too)
        self._pending: list[tuple[str, Callable[[], None]]] = []
        self._lock = threading.Lock()

    def listen(self, raw: psycopg.Connection | None = None) -> None:
        """Connect and LISTEN (raising the ORA error if the server is unreachable), then
        start the thread.  Whatever commits after this returns is noticed.  ``raw``: an
        idle connection of :meth:`PgTarget.connect`'s to listen on instead of a new one
        (the store's set-up connection); this listener owns it from now on."""
        self._conn = self._open(raw)
        self.connected.set()
        self.start()

    def add_channel(self, channel: str, on_listening: Callable[[], None]) -> None:
        """Listen to ``channel`` too; ``on_listening`` is called once it is in effect (from
        then on nothing committed on it is missed)."""
        with self._lock:
            self._pending.append((channel, on_listening))
        os.write(self._wake_w, b"c")

    def stop(self) -> None:
        self._stopped = True
        os.write(self._wake_w, b"x")
        if self.is_alive() and self is not threading.current_thread():
            self.join(timeout=5)
        self._close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)

    def _open(self, raw: psycopg.Connection | None = None) -> psycopg.Connection:
        raw = raw or self.target.connect()
        try:
            raw.add_notify_handler(lambda n: self.on_notify(n.payload))
            for channel in self._channels:
                raw.execute(f"LISTEN {quote(channel)}")
        except BaseException:
            raw.close()
            raise
        return raw

    def _add_pending(self, conn: psycopg.Connection) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for channel, _ in pending:
            if channel not in self._channels:
                self._channels.append(channel)   # first: a reconnect listens to it too
                conn.execute(f"LISTEN {quote(channel)}")
        for _, on_listening in pending:
            on_listening()

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def run(self) -> None:
        backoff = 0.05
        last_idle = time.monotonic()
        while not self._stopped:
            conn = self._conn
            if conn is None:
                if self._sleep(backoff):
                    return
                try:
                    self._conn = self._open()
                except Exception:
                    backoff = min(backoff * 2, 2.0)
                    continue
                backoff = 0.05
                self.connected.set()
                self._add_pending(self._conn)
                self.on_reconnect()
                continue
            try:
                ready, _, _ = select.select([conn.pgconn.socket, self._wake_r], [], [], self.IDLE_CHECK)
                if self._stopped:
                    return
                if self._wake_r in ready:
                    os.read(self._wake_r, 512)
                    self._add_pending(conn)
                if conn.pgconn.socket in ready:
                    self._drain(conn)
                elif time.monotonic() - last_idle >= self.IDLE_CHECK:
                    last_idle = time.monotonic()
                    self.on_idle()
            except Exception:
                if self._stopped:
                    return
                self.connected.clear()
                self._close()
                self.on_lost()

    def _drain(self, conn: psycopg.Connection) -> None:
        """Read what arrived and report each notification."""
        pg = conn.pgconn
        pg.consume_input()
        while True:
            n = pg.notifies()
            if n is None:
                break
            self.on_notify(n.extra.decode())
        if pg.status == ConnStatus.BAD:
            raise psycopg.OperationalError("the listener's connection was closed by the server")

    def _sleep(self, seconds: float) -> bool:
        """Wait, waking early on :meth:`stop`; True when stopped."""
        ready, _, _ = select.select([self._wake_r], [], [], seconds)
        if ready:
            os.read(self._wake_r, 512)
        return self._stopped
