"""python-oracledb's asyncio API over Sluice: ``connect_async``, ``create_pool_async``,
``AsyncConnection``, ``AsyncQueue``, ``AsyncCursor``, ``AsyncConnectionPool``.

Code written for python-oracledb's async AQ runs by changing the connect line::

    async with sluice.connect_async("sqlite:///app.db") as conn:
        queue = conn.queue("DEMO_RAW_QUEUE")
        await queue.enqone(conn.msgproperties(payload=b"hello"))
        await conn.commit()
        message = await queue.deqone()

Each async connection wraps a Sluice :class:`~sluice.connection.Connection` and runs its
calls, one at a time and in the order they were made (python-oracledb's async connection
makes one round trip at a time), on a thread of its own: a dequeue that waits for a
message holds that thread, never the event loop.  Cancelling the task that awaits such a
dequeue ends its wait at once (``Connection.cancel()``: it takes nothing), so the
connection is free for the next call; a call cancelled before its turn does not run.  The
thread stops when the connection closes (or is collected)."""

from __future__ import annotations

import asyncio
import queue as _queue
import threading
import weakref
from typing import Any, Callable

from .connection import Connection
from .errors import dpy

_CANCEL_EVERY = 0.05     # seconds between cancels of a call that began waiting after the first


class _Worker:
    """The thread that runs one async connection's calls in turn."""

    def __init__(self) -> None:
        self._calls: _queue.SimpleQueue = _queue.SimpleQueue()
        # held only at a call's start and end: a cancel of the running call can never end
        # the wait of the call after it
        self._turn = threading.Lock()
        self._running: asyncio.Future | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, name="sluice-async", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (call := self._calls.get()) is not None:
            fn, args, loop, future = call
            with self._turn:
                if future.cancelled():      # cancelled before its turn: it does not run
                    continue
                self._running = future
            try:
                result, error = fn(*args), None
            except BaseException as e:      # noqa: BLE001 (handed to the awaiting task)
                result, error = None, e
            finally:
                with self._turn:
                    self._running = None
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:            # the loop closed meanwhile: nobody awaits it
                pass
            # idle, the thread keeps no call: its closure may hold the connection, which
            # must stay collectable (its finaliser stops this thread)
            del call, fn, args, loop, future, result, error

    async def run(self, fn: Callable[..., Any], *args: Any, cancel: Callable[[], None] | None = None) -> Any:
        """``fn(*args)`` on the thread, in turn; ``cancel`` ends it should the awaiting task
        be cancelled while it runs (a wait for messages)."""
        if self._stopped:       # the connection is closed: nothing runs its calls any more
            raise dpy(1001)
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._calls.put((fn, args, loop, future))
        try:
            return await future
        except asyncio.CancelledError:
            if cancel is not None:
                self._cancel_while_running(future, cancel, loop)
            raise

    def _cancel_while_running(self, future: asyncio.Future, cancel: Callable[[], None],
                              loop: asyncio.AbstractEventLoop) -> None:
        # the call may not have begun its wait yet when the first cancel comes (a cancel
        # without a wait does nothing): cancel again until the call has ended
        with self._turn:
            running = self._running is future
            if running:
                cancel()
        if running:
            loop.call_later(_CANCEL_EVERY, self._cancel_while_running, future, cancel, loop)

    def stop(self) -> None:
        self._stopped = True
        self._calls.put(None)

    def join(self, timeout: float) -> None:
        """Until the thread has ended (after :meth:`stop`; its call in progress first)."""
        self._thread.join(timeout)


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class AsyncConnection:
    """python-oracledb's ``AsyncConnection``: await it (or ``async with`` it) to connect."""

    def __init__(self, open_sync: Callable[[], Connection]) -> None:
        self._open_sync = open_sync
        self._sync: Connection | None = None
        self._worker = _Worker()
        # collected without close(): the thread ends (the sync connection closes itself)
        weakref.finalize(self, self._worker.stop)

    async def _connect(self) -> "AsyncConnection":
        if self._sync is None:
            try:
                self._sync = await self._worker.run(self._open_sync)
            except BaseException:
                self._worker.stop()
                raise
        return self

    def __await__(self):
        return self._connect().__await__()

    async def __aenter__(self) -> "AsyncConnection":
        return await self._connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def sync_connection(self) -> Connection:
        """The Sluice connection underneath (not awaited yet: DPY-1001, as closed)."""
        if self._sync is None:
            raise dpy(1001)
        return self._sync

    async def _call(self, fn: Callable[..., Any], *args: Any, waits: bool = False) -> Any:
        return await self._worker.run(fn, *args, cancel=self.sync_connection.cancel if waits else None)

    # -- python-oracledb's AsyncConnection ------------------------------------
    @property
    def username(self) -> str:
        return self.sync_connection.username

    @property
    def autocommit(self) -> bool:
        return self.sync_connection.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        self.sync_connection.autocommit = value

    @property
    def transaction_in_progress(self) -> bool:
        return self.sync_connection.transaction_in_progress

    def _forward(name: str, settable: bool = False) -> property:   # noqa: N805 (class body helper)
        """The connection's python-oracledb attribute ``name`` (no round trip: not awaited)."""
        def get(self: "AsyncConnection") -> Any:
            return getattr(self.sync_connection, name)

        def put(self: "AsyncConnection", value: Any) -> None:
            setattr(self.sync_connection, name, value)
        return property(get, put if settable else None)

    version, thin, edition, ltxid = _forward("version"), _forward("thin"), _forward("edition"), _forward("ltxid")
    max_open_cursors, max_identifier_length = _forward("max_open_cursors"), _forward("max_identifier_length")
    current_schema, stmtcachesize = _forward("current_schema", True), _forward("stmtcachesize", True)
    internal_name, external_name = _forward("internal_name", True), _forward("external_name", True)
    module, action, dbop = _forward("module", True), _forward("action", True), _forward("dbop", True)
    client_identifier, clientinfo = _forward("client_identifier", True), _forward("clientinfo", True)
    econtext_id = _forward("econtext_id", True)
    call_timeout = _forward("call_timeout", True)
    inputtypehandler = _forward("inputtypehandler", True)     # (sluice.bindtypes)
    del _forward

    def is_healthy(self) -> bool:
        """python-oracledb's: no round trip (False before the connection is awaited)."""
        return self._sync is not None and self._sync.is_healthy()

    @property
    def outputtypehandler(self) -> Any:
        """python-oracledb's: the connection's output type handler (see sluice.fetchvars)."""
        return self.sync_connection.outputtypehandler

    @outputtypehandler.setter
    def outputtypehandler(self, value: Any) -> None:
        self.sync_connection.outputtypehandler = value

    async def createlob(self, lob_type: Any, data: str | bytes | None = None) -> Any:
        """python-oracledb's: a temporary LOB whose methods are awaited (sluice.lobs.AsyncLOB)."""
        from .lobs import AsyncLOB
        return AsyncLOB(await self._call(self.sync_connection.createlob, lob_type, data))

    def queue(self, name: str, payload_type: Any = None, *, payloadType: Any = None) -> "AsyncQueue":  # noqa: N803
        return AsyncQueue(self, self.sync_connection.queue(name, payload_type, payloadType=payloadType))

    def msgproperties(self, *args: Any, **kwargs: Any) -> Any:
        return self.sync_connection.msgproperties(*args, **kwargs)

    def cursor(self, scrollable: bool = False) -> "AsyncCursor":
        return AsyncCursor(self, self.sync_connection.cursor(scrollable))

    def cancel(self) -> None:
        """End the wait of the call in progress (ORA-01013), from anywhere."""
        self.sync_connection.cancel()

    async def fetch_df_all(self, statement: str, parameters: Any = None, arraysize: int | None = None,
                           requested_schema: Any = None) -> Any:
        """python-oracledb's: ``await conn.fetch_df_all(sql)`` (:mod:`sluice.dataframes`)."""
        return await self._call(self.sync_connection.fetch_df_all, statement, parameters, arraysize,
                                requested_schema)

    async def fetch_df_batches(self, statement: str, parameters: Any = None, size: int | None = None,
                               requested_schema: Any = None) -> Any:
        """python-oracledb's: ``async for df in conn.fetch_df_batches(sql, size=…)``."""
        def batches() -> list:
            return list(self.sync_connection.fetch_df_batches(statement, parameters, size,
                                                              requested_schema))
        for frame in await self._call(batches):
            yield frame

    async def gettype(self, name: str) -> Any:
        return await self._call(self.sync_connection.gettype, name)

    async def commit(self) -> None:
        await self._call(self.sync_connection.commit)

    async def rollback(self) -> None:
        await self._call(self.sync_connection.rollback)

    async def ping(self) -> None:
        await self._call(self.sync_connection.ping)

    async def close(self) -> None:
        """Close, also while a dequeue of this connection waits (it ends with DPY-1001):
        the close runs beside the connection's thread, not in turn behind that wait."""
        try:
            if self._sync is not None:
                await asyncio.to_thread(self._sync.close)
        finally:
            self._worker.stop()
        # the thread is gone when close() returns (its call in progress ended with the close)
        await asyncio.to_thread(self._worker.join, 10.0)

    async def execute(self, statement: str, parameters: Any = None) -> None:
        await self.cursor().execute(statement, parameters)

    async def executemany(self, statement: str, parameters: Any) -> None:
        await self.cursor().executemany(statement, parameters)

    async def fetchall(self, statement: str, parameters: Any = None, arraysize: int | None = None,
                       rowfactory: Callable | None = None, *, fetch_lobs: bool | None = None) -> list:
        rows = await self._query(statement, parameters, lambda c: c.fetchall(), fetch_lobs)
        return [rowfactory(*r) for r in rows] if rowfactory else rows

    async def fetchmany(self, statement: str, parameters: Any = None, num_rows: int | None = None,
                        rowfactory: Callable | None = None, *, fetch_lobs: bool | None = None) -> list:
        rows = await self._query(statement, parameters, lambda c: c.fetchmany(num_rows), fetch_lobs)
        return [rowfactory(*r) for r in rows] if rowfactory else rows

    async def fetchone(self, statement: str, parameters: Any = None, rowfactory: Callable | None = None,
                       *, fetch_lobs: bool | None = None) -> Any:
        row = await self._query(statement, parameters, lambda c: c.fetchone(), fetch_lobs)
        return rowfactory(*row) if rowfactory and row is not None else row

    async def _query(self, statement: str, parameters: Any, take: Callable[[Any], Any],
                     fetch_lobs: bool | None) -> Any:
        def run() -> Any:
            with self.sync_connection.cursor() as c:
                c._async_lobs = True        # (python-oracledb's AsyncLOBs)
                c.execute(statement, parameters, fetch_lobs=fetch_lobs)
                return take(c)
        return await self._call(run, waits=True)

    async def callproc(self, name: str, parameters: Any = None, keyword_parameters: dict | None = None) -> list:
        return await self.cursor().callproc(name, parameters, keyword_parameters)

    # -- Sluice's packages (DBMS_AQADM …): their procedures awaited ---------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in _PACKAGES:
            raise AttributeError(name)
        return _AsyncPackage(self, getattr(self.sync_connection, name))


_PACKAGES = frozenset({"aqadm", "aq", "transform", "streams_adm", "capture_adm", "apply_adm",
                       "streams_messaging", "propagation_adm", "streams", "aqelm", "rule_adm", "rule"})


class _AsyncPackage:
    """A DBMS_* package of an async connection: each procedure is awaited."""

    def __init__(self, connection: AsyncConnection, package: Any) -> None:
        self._connection, self._package = connection, package

    def __getattr__(self, name: str) -> Any:
        procedure = getattr(self._package, name)
        if not callable(procedure):
            return procedure

        async def call(*args: Any, **kwargs: Any) -> Any:
            # DBMS_AQ.DEQUEUE and LISTEN wait for messages: a cancel ends them
            return await self._connection._call(lambda: procedure(*args, **kwargs), waits=True)
        call.__name__ = name
        return call


class AsyncQueue:
    """python-oracledb's ``AsyncQueue``: enqueue and dequeue are awaited."""

    def __init__(self, connection: AsyncConnection, queue: Any) -> None:
        self.connection = connection
        self._queue = queue

    @property
    def name(self) -> str:
        return self._queue.name

    @property
    def payload_type(self) -> Any:
        return self._queue.payload_type

    @property
    def enqoptions(self) -> Any:
        return self._queue.enqoptions

    @property
    def deqoptions(self) -> Any:
        return self._queue.deqoptions

    # python-oracledb's deprecated camelCase spellings
    payloadType = payload_type     # noqa: N815
    enqOptions = enqoptions        # noqa: N815
    deqOptions = deqoptions        # noqa: N815

    async def enqone(self, message: Any) -> None:
        await self.connection._call(self._queue.enqone, message)

    async def enqmany(self, messages: list) -> None:
        await self.connection._call(self._queue.enqmany, messages)

    async def deqone(self) -> Any:
        return await self.connection._call(self._queue.deqone, waits=True)

    async def deqmany(self, max_num_messages: int) -> list:
        return await self.connection._call(self._queue.deqmany, max_num_messages, waits=True)


class AsyncCursor:
    """python-oracledb's ``AsyncCursor``: execute and fetch are awaited."""

    def __init__(self, connection: AsyncConnection, cursor: Any) -> None:
        object.__setattr__(self, "connection", connection)
        object.__setattr__(self, "_cursor", cursor)
        cursor._async_lobs = True       # its LOBs are AsyncLOBs (sluice.fetchvars)

    # description, rowcount, arraysize, output …: the cursor's own
    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._cursor, name, value)

    async def execute(self, statement: str, parameters: Any = None, **keyword_parameters: Any) -> None:
        await self.connection._call(lambda: self._cursor.execute(statement, parameters, **keyword_parameters),
                                    waits=True)

    async def executemany(self, statement: str, parameters: Any, *, batcherrors: bool = False,
                          arraydmlrowcounts: bool = False) -> None:
        await self.connection._call(lambda: self._cursor.executemany(
            statement, parameters, batcherrors=batcherrors, arraydmlrowcounts=arraydmlrowcounts), waits=True)

    async def callproc(self, name: str, parameters: Any = None, keyword_parameters: dict | None = None) -> list:
        return await self.connection._call(self._cursor.callproc, name, parameters, keyword_parameters,
                                           waits=True)

    async def callfunc(self, name: str, return_type: Any, parameters: Any = None,
                       keyword_parameters: dict | None = None) -> Any:
        return await self.connection._call(self._cursor.callfunc, name, return_type, parameters,
                                           keyword_parameters, waits=True)

    async def scroll(self, value: int = 0, mode: str = "relative") -> None:
        self._cursor.scroll(value, mode)     # the rows are here already: no round trip

    async def fetchone(self) -> Any:
        return await self.connection._call(self._cursor.fetchone)

    async def fetchmany(self, size: int | None = None) -> list:
        return await self.connection._call(self._cursor.fetchmany, size)

    async def fetchall(self) -> list:
        return await self.connection._call(self._cursor.fetchall)

    def close(self) -> None:
        self._cursor.close()

    def __aiter__(self) -> "AsyncCursor":
        return self

    async def __anext__(self) -> Any:
        row = await self.fetchone()
        if row is None:
            raise StopAsyncIteration
        return row

    def __enter__(self) -> "AsyncCursor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "AsyncCursor":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class AsyncConnectionPool:
    """python-oracledb's ``AsyncConnectionPool`` over a Sluice :class:`ConnectionPool`:
    ``async with pool.acquire() as conn`` gives an :class:`AsyncConnection` that goes back
    to the pool at the block's end."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @property
    def sync_pool(self) -> Any:
        """The Sluice pool underneath."""
        return self._pool

    def __getattr__(self, name: str) -> Any:    # busy, opened, min, max, dsn …
        return getattr(self._pool, name)

    def acquire(self, *args: Any, **kwargs: Any) -> AsyncConnection:
        return AsyncConnection(lambda: self._pool.acquire(*args, **kwargs))

    async def release(self, connection: AsyncConnection, tag: str | None = None) -> None:
        try:
            await asyncio.to_thread(self._pool.release, connection.sync_connection, tag)
        finally:
            connection._worker.stop()
        await asyncio.to_thread(connection._worker.join, 10.0)

    async def close(self, force: bool = False) -> None:
        await asyncio.to_thread(self._pool.close, force)

    async def __aenter__(self) -> "AsyncConnectionPool":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
