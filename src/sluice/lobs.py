"""python-oracledb's ``LOB``: what ``conn.createlob(DB_TYPE_CLOB / DB_TYPE_NCLOB / DB_TYPE_BLOB)`` gives.

Oracle's temporary LOB, held in this process: ``write`` / ``read`` at 1-based offsets
(characters for a CLOB or NCLOB, bytes for a BLOB), ``size``, ``trim``, ``open`` /
``close`` / ``isopen`` and ``getchunksize`` as python-oracledb names them.  Bound to a
statement it stands for its contents — text for a CLOB or NCLOB, bytes for a BLOB — as
the store keeps such columns; a PL/SQL block's OUT value is written back into it.

Oracle's answers to misuse: DPY-2030 / DPY-2047 for an offset / amount not above zero,
ORA-22293 to open an open LOB, ORA-22289 to close one not open, ORA-22926 to trim past
its end; data of the other kind (bytes for a CLOB, text for a BLOB) is a ``TypeError``
as python-oracledb raises it.
"""

from __future__ import annotations

from typing import Any

from .errors import dpy, ora
from .objtypes import DB_TYPE_BLOB, DB_TYPE_CLOB, DB_TYPE_NCLOB, DbType
from .plsql.binds import BindVariable

__all__ = ["LOB", "AsyncLOB", "create_lob"]

_CHUNK_SIZE = 8132      # what Oracle reports for a temporary LOB in an 8K-block database


class LOB(BindVariable):
    """A temporary CLOB, NCLOB or BLOB (python-oracledb's ``oracledb.LOB``)."""

    def __init__(self, dbtype: DbType) -> None:
        self._type = dbtype
        self._data: str | bytes = b"" if dbtype is DB_TYPE_BLOB else ""
        self._open = False

    @property
    def type(self) -> DbType:
        return self._type

    def _blank(self, length: int) -> str | bytes:
        """What Oracle fills a gap a write past the end leaves with: zero bytes, spaces."""
        return bytes(length) if self._type is DB_TYPE_BLOB else " " * length

    def _checked(self, data: Any) -> str | bytes:
        if self._type is DB_TYPE_BLOB:
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError("expecting bytes data")
            return bytes(data)
        if not isinstance(data, str):
            raise TypeError("expecting string data")
        return data

    def read(self, offset: int = 1, amount: int | None = None) -> str | bytes:
        """``amount`` characters (bytes) from ``offset``; to the end when None."""
        if offset <= 0:
            raise dpy(2030)
        if amount is not None and amount <= 0:
            raise dpy(2047)
        start = offset - 1
        return self._data[start:] if amount is None else self._data[start:start + amount]

    def write(self, data: str | bytes, offset: int = 1) -> None:
        """Write ``data`` at ``offset``, over what is there, extending the LOB as needed."""
        data = self._checked(data)
        if offset <= 0:
            raise dpy(2030)
        start = offset - 1
        current = self._data
        if start > len(current):
            current = current + self._blank(start - len(current))
        self._data = current[:start] + data + current[start + len(data):]

    def size(self) -> int:
        return len(self._data)

    def trim(self, new_size: int = 0, *, newSize: int | None = None) -> None:  # noqa: N803
        """Cut the LOB to ``new_size`` (``newSize``, the deprecated name, alone: DPY-2014)."""
        if newSize is not None:
            if new_size != 0:
                raise dpy(2014, "newSize", "new_size")
            new_size = newSize
        if new_size > len(self._data):
            raise ora(22926)
        self._data = self._data[:new_size]

    def getchunksize(self) -> int:
        return _CHUNK_SIZE

    def open(self) -> None:
        if self._open:
            raise ora(22293)
        self._open = True

    def close(self) -> None:
        if not self._open:
            raise ora(22289)
        self._open = False

    def isopen(self) -> bool:
        return self._open

    def __str__(self) -> str:
        return self.read()      # (python-oracledb's: the contents)

    def __reduce__(self):
        value = self.read()
        return type(value), (value,)

    # -- as a bind (sluice.plsql.binds.BindVariable): the contents
    def bind_value(self) -> str | bytes:
        return self._data

    def assign_out(self, value: Any) -> None:
        if value is None:
            value = self._blank(0)
        elif self._type is DB_TYPE_BLOB and isinstance(value, str):
            value = value.encode()
        elif self._type is not DB_TYPE_BLOB and isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode()
        self._data = self._checked(value)

    def __repr__(self) -> str:
        return f"<sluice.LOB of type {self._type.name}>"


class AsyncLOB(BindVariable):
    """python-oracledb's ``AsyncLOB`` (``await async_conn.createlob(…)``): a :class:`LOB`
    whose methods are awaited, as python-oracledb's asyncio API has them (no round trip
    here: the LOB is in this process)."""

    def __init__(self, lob: LOB) -> None:
        self._lob = lob

    @property
    def type(self) -> DbType:
        return self._lob.type

    async def read(self, offset: int = 1, amount: int | None = None) -> str | bytes:
        return self._lob.read(offset, amount)

    async def write(self, data: str | bytes, offset: int = 1) -> None:
        self._lob.write(data, offset)

    async def size(self) -> int:
        return self._lob.size()

    async def trim(self, new_size: int = 0, *, newSize: int | None = None) -> None:  # noqa: N803
        self._lob.trim(new_size, newSize=newSize)

    async def getchunksize(self) -> int:
        return self._lob.getchunksize()

    async def open(self) -> None:
        self._lob.open()

    async def close(self) -> None:
        self._lob.close()

    async def isopen(self) -> bool:
        return self._lob.isopen()

    def bind_value(self) -> str | bytes:
        return self._lob.bind_value()

    def assign_out(self, value: Any) -> None:
        self._lob.assign_out(value)


def create_lob(lob_type: Any, data: str | bytes | None = None) -> LOB:
    """python-oracledb's ``connection.createlob``: a new temporary LOB of ``lob_type``,
    holding ``data`` when given."""
    if lob_type not in (DB_TYPE_CLOB, DB_TYPE_NCLOB, DB_TYPE_BLOB):
        raise TypeError("parameter should be one of oracledb.DB_TYPE_CLOB, oracledb.DB_TYPE_BLOB "
                        "or oracledb.DB_TYPE_NCLOB")
    lob = LOB(lob_type)
    if data:
        lob.write(data)
    return lob
