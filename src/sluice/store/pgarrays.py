"""One-dimensional PostgreSQL arrays in the binary wire format, for bulk inserts.

A batch of messages is inserted as ``INSERT … SELECT … FROM unnest($1::bigint[], …)``
(see :mod:`.sqlops`), one array per column.  psycopg dumps a Python list element by
element in Python — ~5 µs a message for the six columns every message has, as much
as the rest of the client's enqueue work.  Here a column is packed with one
``struct`` call (fixed-size types) or one ``bytes.join`` (bytea, text) and handed to
psycopg as ready-made bytes of the array type (:class:`EncodedArray`), which its
dumper passes through unchanged.

The format is ``array_send``'s: ndim, has-nulls flag, element type oid, then per
dimension its length and lower bound (1), then each element as a 4-byte length
(-1 for NULL) and its bytes.
"""

from __future__ import annotations

import struct
from typing import Callable, Sequence

import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

_HEAD = struct.Struct(">iiIii")       # ndim, has nulls, element oid, length, lower bound
_LENGTH = struct.Struct(">i")
_NULL = _LENGTH.pack(-1)


class EncodedArray(bytes):
    """An array already in PostgreSQL's binary format; subclasses name its type."""

    __slots__ = ()
    oid = 0


def _array_class(name: str, element: str) -> type[EncodedArray]:
    info = psycopg.postgres.types[element]
    cls = type(name, (EncodedArray,), {"__slots__": (), "oid": info.array_oid})
    dumper = type(f"{name}Dumper", (Dumper,), {"format": Format.BINARY, "oid": info.array_oid,
                                               "dump": lambda self, obj: obj})
    psycopg.adapters.register_dumper(cls, dumper)    # every connection made from now on
    return cls


Int8Array = _array_class("Int8Array", "int8")
Float8Array = _array_class("Float8Array", "float8")
ByteaArray = _array_class("ByteaArray", "bytea")
TextArray = _array_class("TextArray", "text")

_fixed_structs: dict[tuple[str, int], struct.Struct] = {}


def _fixed(values: Sequence, code: str, size: int, cls: type[EncodedArray], oid: int,
           convert: Callable) -> EncodedArray:
    n = len(values)
    if None in values:
        return _varying([None if v is None else struct.pack(">" + code, convert(v)) for v in values], cls, oid)
    body = _fixed_structs.get((code, n))
    if body is None:
        body = _fixed_structs[(code, n)] = struct.Struct(">" + ("i" + code) * n)
    flat = [size] * (2 * n)
    flat[1::2] = values
    try:
        packed = body.pack(*flat)
    except struct.error:    # e.g. a float for a BIGINT: converted as psycopg would
        flat[1::2] = [convert(v) for v in values]
        packed = body.pack(*flat)
    return cls(_HEAD.pack(1, 0, oid, n, 1) + packed)


def _varying(values: Sequence, cls: type[EncodedArray], oid: int) -> EncodedArray:
    """bytea / text elements (``bytes``; None for NULL)."""
    parts = []
    append = parts.append
    pack = _LENGTH.pack
    nulls = 0
    for v in values:
        if v is None:
            append(_NULL)
            nulls = 1
        else:
            append(pack(len(v)))
            append(v)
    return cls(_HEAD.pack(1, nulls, oid, len(values), 1) + b"".join(parts))


_INT8 = psycopg.postgres.types["int8"].oid
_FLOAT8 = psycopg.postgres.types["float8"].oid
_BYTEA = psycopg.postgres.types["bytea"].oid
_TEXT = psycopg.postgres.types["text"].oid


def int8_array(values: Sequence[int | None]) -> EncodedArray:
    return _fixed(values, "q", 8, Int8Array, _INT8, int)


def float8_array(values: Sequence[float | None]) -> EncodedArray:
    return _fixed(values, "d", 8, Float8Array, _FLOAT8, float)


def bytea_array(values: Sequence[bytes | None]) -> EncodedArray:
    return _varying(values, ByteaArray, _BYTEA)     # bytes, bytearray, memoryview: as they are


def text_array(values: Sequence[str | None]) -> EncodedArray:
    return _varying([None if v is None else v.encode() for v in values], TextArray, _TEXT)


ENCODERS: dict[str, Callable[[Sequence], EncodedArray]] = {
    "BIGINT": int8_array, "DOUBLE PRECISION": float8_array, "BYTEA": bytea_array, "TEXT": text_array}
