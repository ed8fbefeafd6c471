"""Sluice: Oracle Streams Advanced Queuing, rebuilt in Python.

The AQ API is python-oracledb's::

    import sluice
    conn = sluice.connect("sqlite:///demo.db")
    conn.aqadm.create_queue_table(queue_table="qt", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="q", queue_table="qt")
    conn.aqadm.start_queue("q")
    q = conn.queue("q")
    q.enqone(conn.msgproperties(payload=b"hello"))
    conn.commit()
"""

import datetime as _dt
from typing import Any

from .constants import *  # noqa: F401,F403  (python-oracledb's AQ constants)
from .connection import AUTH_MODE_DEFAULT, AUTH_MODE_SYSDBA, Connection, open_connection
from .connect_params import (ConnectParams, ConnectSpec, IgnoredParameterWarning, PoolParams,
                             resolve_positional)
from .pool import (POOL_GETMODE_FORCEGET, POOL_GETMODE_NOWAIT, POOL_GETMODE_TIMEDWAIT, POOL_GETMODE_WAIT,
                   PURITY_DEFAULT, PURITY_NEW, PURITY_SELF, ConnectionPool, acquire_from, create_pool,
                   get_pool)
from .cursor import Cursor
from .lobs import LOB
from .defaults import defaults   # (after .connection imports the module: the name is the object)
from .objtypes import (DB_TYPE_BINARY_DOUBLE, DB_TYPE_BINARY_FLOAT, DB_TYPE_BLOB, DB_TYPE_BOOLEAN,
                       DB_TYPE_CHAR, DB_TYPE_CLOB, DB_TYPE_CURSOR, DB_TYPE_DATE, DB_TYPE_INTERVAL_DS, DB_TYPE_LONG,
                       DB_TYPE_LONG_NVARCHAR, DB_TYPE_LONG_RAW, DB_TYPE_NCHAR, DB_TYPE_NCLOB,
                       DB_TYPE_NUMBER, DB_TYPE_NVARCHAR, DB_TYPE_OBJECT, DB_TYPE_RAW, DB_TYPE_TIMESTAMP,
                       DB_TYPE_TIMESTAMP_LTZ, DB_TYPE_TIMESTAMP_TZ, DB_TYPE_VARCHAR)
from .objtypes import DB_TYPE_JSON
from .errors import (DatabaseError, DataError, Error, IntegrityError, InterfaceError,
                     NotSupportedError, OperationalError, ProgrammingError)
from .model import Agent, DeqOptions, EnqOptions, MessageProperties
from .aq.queue import Queue
from .aio import AsyncConnection, AsyncConnectionPool, AsyncCursor, AsyncQueue
from .routines import register_function
from .dsn import makedsn
from .driver_mode import clientversion, init_oracle_client, is_thin_mode
from .streams.lcr import DDLLCR, RowLCR

from .version import __version__

# the DB-API type constructors python-oracledb has (its tests build JSON payloads with
# oracledb.Timestamp): the Python types themselves
# python-oracledb's alias of DB_TYPE_CURSOR (kept there for backwards compatibility)
CURSOR = DB_TYPE_CURSOR

Date, Timestamp, Binary = _dt.date, _dt.datetime, bytes
DateFromTicks, TimestampFromTicks = _dt.date.fromtimestamp, _dt.datetime.fromtimestamp


def connect(dsn: str | None = None, user: str | None = None, password: str | None = None,
            mode: int = AUTH_MODE_DEFAULT, *, pool: Any = None, pool_alias: str | None = None,
            conn_class: type | None = None, params: Any = None, **kwargs: Any) -> Connection:
    """Open a connection: ``sluice.connect("sqlite:///app.db", user="scott", password="…")``;
    ``mode=sluice.AUTH_MODE_SYSDBA`` connects as SYS by operating-system authentication.

    Every keyword of python-oracledb's ``oracledb.connect()`` is taken: see
    :mod:`sluice.connect_params` for which are used, ignored (with a warning) or refused;
    ``pool=`` / ``pool_alias=`` acquire from a :func:`sluice.create_pool` pool.  (Here, above
    both :mod:`sluice.connection` and :mod:`sluice.pool`, which it uses.)"""
    dsn, user, password = resolve_positional(dsn, user, password)
    kwargs.update(user=user, password=password, mode=mode or None)
    if pool is not None or pool_alias is not None:
        kwargs.pop("mode")
        return acquire_from(pool, pool_alias, **kwargs)
    return open_connection(ConnectSpec(dsn, params, kwargs), conn_class)

def connect_async(dsn: str | None = None, user: str | None = None, password: str | None = None,
                  mode: int = AUTH_MODE_DEFAULT, **kwargs: Any) -> AsyncConnection:
    """python-oracledb's ``connect_async``: ``conn = await sluice.connect_async(dsn)`` or
    ``async with sluice.connect_async(dsn) as conn`` -- :func:`connect`'s arguments; the
    connection's calls are awaited (:mod:`sluice.aio`); ``pool=`` an async pool."""
    if isinstance(kwargs.get("pool"), AsyncConnectionPool):
        kwargs["pool"] = kwargs["pool"].sync_pool
    return AsyncConnection(lambda: connect(dsn, user, password, mode, **kwargs))


def create_pool_async(dsn: str | None = None, **kwargs: Any) -> AsyncConnectionPool:
    """python-oracledb's ``create_pool_async``: :func:`create_pool`'s arguments; its
    ``acquire()`` gives connections whose calls are awaited."""
    return AsyncConnectionPool(create_pool(dsn, **kwargs))


def __getattr__(name: str) -> Any:
    """python-oracledb's ``DataFrame`` and ``ArrowArray`` classes, imported on first use
    (pyarrow is not loaded by ``import sluice``)."""
    if name in ("DataFrame", "ArrowArray"):
        from . import dataframes
        return getattr(dataframes, name)
    raise AttributeError(f"module 'sluice' has no attribute {name!r}")


__all__ = [
    "connect", "Connection", "connect_async", "create_pool_async", "AsyncConnection", "AsyncConnectionPool",
    "AsyncCursor", "AsyncQueue", "ConnectParams", "PoolParams", "ConnectionPool", "create_pool", "get_pool",
    "IgnoredParameterWarning", "Cursor", "LOB", "Queue", "Agent", "MessageProperties", "EnqOptions",
    "DeqOptions", "register_function", "RowLCR", "DDLLCR",
    "makedsn", "init_oracle_client", "is_thin_mode", "clientversion",
    "Error", "DatabaseError", "DataError", "IntegrityError", "InterfaceError", "NotSupportedError",
    "OperationalError", "ProgrammingError",
    "Date", "Timestamp", "Binary", "DateFromTicks", "TimestampFromTicks", "defaults",
    "DB_TYPE_BINARY_DOUBLE", "DB_TYPE_BINARY_FLOAT", "DB_TYPE_BLOB", "DB_TYPE_BOOLEAN", "DB_TYPE_CHAR",
    "DB_TYPE_CLOB", "DB_TYPE_CURSOR", "CURSOR", "DB_TYPE_DATE", "DB_TYPE_INTERVAL_DS", "DB_TYPE_LONG", "DB_TYPE_LONG_NVARCHAR",
    "DB_TYPE_LONG_RAW", "DB_TYPE_NCHAR", "DB_TYPE_NCLOB", "DB_TYPE_NUMBER",
    "DB_TYPE_NVARCHAR", "DB_TYPE_OBJECT", "DB_TYPE_RAW", "DB_TYPE_TIMESTAMP", "DB_TYPE_TIMESTAMP_LTZ", "DB_TYPE_TIMESTAMP_TZ",
    "DB_TYPE_VARCHAR",
    "DB_TYPE_JSON",
]
