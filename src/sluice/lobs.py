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

A query's CLOB / NCLOB / BLOB column fetched by a cursor gives one too (:func:`fetched_lob`,
python-oracledb's ``defaults.fetch_lobs`` True; :mod:`sluice.fetchvars`): its contents read
when fetched, held here — writing to it changes this LOB, not the row (Oracle's locator
would write the row's LOB, under ``SELECT … FOR UPDATE``).  A CLOB's offsets and sizes are
Oracle's: UCS-2 code points, which are characters except for one beyond U+FFFF (two).
BFILE's methods (``fileexists``, ``getfilename``, ``setfilename``) are DPY-3026: Sluice has
no BFILE.  An object's CLOB / NCLOB / BLOB attribute reads as a LOB over the object's value
(:func:`attribute_lob`, registered with ``objtypes.set_attribute_lob``): its writes change
the object, as a locator's would.
"""

from __future__ import annotations

from typing import Any

from .errors import dpy, ora
from .objtypes import DB_TYPE_BLOB, DB_TYPE_CLOB, DB_TYPE_NCLOB, DbType, LobValue, set_attribute_lob
from .plsql.binds import BindVariable

__all__ = ["LOB", "AsyncLOB", "attribute_lob", "create_lob", "fetched_lob"]

_CHUNK_SIZE = 8132      # what Oracle reports for a temporary LOB in an 8K-block database
_LOB_TYPES = (DB_TYPE_CLOB, DB_TYPE_NCLOB, DB_TYPE_BLOB)


def _astral(text: str | bytes) -> bool:
    """Whether ``text`` has a character beyond U+FFFF (two UCS-2 code points to Oracle)."""
    return isinstance(text, str) and not text.isascii() and max(text) > "\uffff"


def _units(text: str) -> str:
    """``text`` with each character beyond U+FFFF as its two surrogates: one str index a
    UCS-2 code point, as Oracle counts a CLOB's offsets."""
    return "".join(c if c <= "\uffff" else chr(0xD7C0 + (ord(c) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF))
                   for c in text)


def _joined(units: str) -> str:
    """:func:`_units` undone (a surrogate split off its pair stays alone)."""
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


class LOB(BindVariable, LobValue):
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
        data = self._data
        if _astral(data):
            data = _units(data)
            return _joined(data[start:] if amount is None else data[start:start + amount])
        return data[start:] if amount is None else data[start:start + amount]

    def write(self, data: str | bytes, offset: int = 1) -> None:
        """Write ``data`` at ``offset``, over what is there, extending the LOB as needed."""
        data = self._checked(data)
        if offset <= 0:
            raise dpy(2030)
        start = offset - 1
        current = self._data
        astral = _astral(current) or _astral(data)
        if astral:
            current, data = _units(current), _units(data)
        if start > len(current):
            current = current + self._blank(start - len(current))
        current = current[:start] + data + current[start + len(data):]
        self._data = _joined(current) if astral else current

    def size(self) -> int:
        """Its length: bytes for a BLOB, UCS-2 code points for a CLOB or NCLOB."""
        data = self._data
        return len(_units(data)) if _astral(data) else len(data)

    def trim(self, new_size: int = 0, *, newSize: int | None = None) -> None:  # noqa: N803
        """Cut the LOB to ``new_size`` (``newSize``, the deprecated name, alone: DPY-2014)."""
        if newSize is not None:
            if new_size != 0:
                raise dpy(2014, "newSize", "new_size")
            new_size = newSize
        if new_size > self.size():
            raise ora(22926)
        data = self._data
        self._data = _joined(_units(data)[:new_size]) if _astral(data) else data[:new_size]

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

    def fileexists(self) -> bool:
        raise dpy(3026)         # (a BFILE's: Sluice has none)

    def getfilename(self) -> tuple:
        raise dpy(3026)

    def setfilename(self, dir_alias: str, name: str) -> None:
        raise dpy(3026)

    def __str__(self) -> str:
        return self.read()      # (python-oracledb's: the contents)

    def __reduce__(self):
        value = self.read()
        return type(value), (value,)

    # -- as a bind (sluice.plsql.binds.BindVariable): the contents
    def bind_value(self) -> str | bytes:
        return self._data

    lob_contents = bind_value       # (sluice.objtypes.LobValue: what Sluice's own code reads)

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


class AsyncLOB(BindVariable, LobValue):
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

    async def fileexists(self) -> bool:
        return self._lob.fileexists()

    async def getfilename(self) -> tuple:
        return self._lob.getfilename()

    async def setfilename(self, dir_alias: str, name: str) -> None:
        self._lob.setfilename(dir_alias, name)

    def bind_value(self) -> str | bytes:
        return self._lob.bind_value()

    lob_contents = bind_value

    def assign_out(self, value: Any) -> None:
        self._lob.assign_out(value)

    def __repr__(self) -> str:
        return f"<sluice.AsyncLOB of type {self.type.name}>"


class _AttributeLOB(LOB):
    """A CLOB / NCLOB / BLOB attribute of an object, as python-oracledb gives it (``obj.BODY``
    is a LOB): its contents are the object's value of the attribute, read and written there."""

    def __init__(self, obj: Any, name: str, dbtype: DbType) -> None:
        self._type, self._open = dbtype, False
        self._object, self._name = obj, name

    @property
    def _data(self) -> str | bytes:       # type: ignore[override]
        value = self._object._data[self._name]
        return self._blank(0) if value is None else value

    @_data.setter
    def _data(self, value: str | bytes) -> None:
        self._object._data[self._name] = value


def attribute_lob(obj: Any, name: str, dbtype: DbType) -> LOB:
    """The LOB attribute ``name`` of the object ``obj`` (a ``DbObject``), as a :class:`LOB`."""
    return _AttributeLOB(obj, name, dbtype)


set_attribute_lob(attribute_lob)      # (objtypes reads a LOB attribute through it)


def create_lob(lob_type: Any, data: str | bytes | None = None) -> LOB:
    """python-oracledb's ``connection.createlob``: a new temporary LOB of ``lob_type``,
    holding ``data`` when given."""
    if lob_type not in _LOB_TYPES:
        raise TypeError("parameter should be one of oracledb.DB_TYPE_CLOB, oracledb.DB_TYPE_BLOB "
                        "or oracledb.DB_TYPE_NCLOB")
    lob = LOB(lob_type)
    if data:
        lob.write(data)
    return lob


def fetched_lob(dbtype: DbType, value: str | bytes | None) -> LOB | None:
    """A fetched CLOB / NCLOB / BLOB column's value as python-oracledb gives it (its
    ``defaults.fetch_lobs``): a :class:`LOB` of ``dbtype`` holding ``value`` (text for a
    CLOB, bytes for a BLOB, as the stores keep them); NULL stays None."""
    if value is None:
        return None
    lob = LOB(dbtype)
    if dbtype is DB_TYPE_BLOB:
        lob._data = value.encode() if isinstance(value, str) else bytes(value)
    else:
        lob._data = bytes(value).decode() if isinstance(value, (bytes, bytearray)) else str(value)
    return lob
