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

from .constants import *  # noqa: F401,F403  (python-oracledb's AQ constants)
from .connection import AUTH_MODE_DEFAULT, AUTH_MODE_SYSDBA, Connection, connect
from .connect_params import ConnectParams, IgnoredParameterWarning, PoolParams
from .pool import (POOL_GETMODE_FORCEGET, POOL_GETMODE_NOWAIT, POOL_GETMODE_TIMEDWAIT, POOL_GETMODE_WAIT,
                   PURITY_DEFAULT, PURITY_NEW, PURITY_SELF, ConnectionPool, create_pool, get_pool)
from .cursor import Cursor
from .errors import (DatabaseError, DataError, Error, IntegrityError, InterfaceError,
                     NotSupportedError, OperationalError, ProgrammingError)
from .model import Agent, DeqOptions, EnqOptions, MessageProperties
from .aq.queue import Queue
from .routines import register_function
from .streams.lcr import DDLLCR, RowLCR

__version__ = "0.1.0"

__all__ = [
    "connect", "Connection", "ConnectParams", "PoolParams", "ConnectionPool", "create_pool", "get_pool",
    "IgnoredParameterWarning", "Cursor", "Queue", "Agent", "MessageProperties", "EnqOptions",
    "DeqOptions", "register_function", "RowLCR", "DDLLCR",
    "Error", "DatabaseError", "DataError", "IntegrityError", "InterfaceError", "NotSupportedError",
    "OperationalError", "ProgrammingError",
]
