"""python-oracledb's data frames: ``Connection.fetch_df_all()`` / ``fetch_df_batches()``.

A query's rows become a :class:`DataFrame` of Apache Arrow arrays, one a column, typed
as python-oracledb's "Data Frame Type Mapping" says (user guide, dataframes.rst):

* NUMBER: INT64 when declared with scale 0 and precision 1..18, DECIMAL128(p, s) under
  ``defaults.fetch_decimals`` for a declared precision, DOUBLE otherwise (no precision,
  an expression, a non-zero scale);
* BINARY_DOUBLE DOUBLE, BINARY_FLOAT FLOAT, BOOLEAN BOOLEAN;
* VARCHAR2, CHAR, NVARCHAR2, NCHAR, LONG, CLOB, NCLOB: LARGE_STRING;
* RAW, LONG RAW, BLOB: LARGE_BINARY;
* DATE: TIMESTAMP in seconds; TIMESTAMP [WITH [LOCAL] TIME ZONE]: TIMESTAMP whose unit
  follows the fractional precision (0 s, 1-3 ms, 4-6 us, 7-9 ns), without a time zone;
* any other type: DPY-3030.  Output type handlers are not used.

``requested_schema`` (any Arrow schema, e.g. ``pyarrow.schema([...])``) names and types
the columns instead, one field a column; a conversion Arrow cannot make is DPY-3038.

The DataFrame exposes the Arrow PyCapsule stream interface (``pyarrow.table(df)``), its
columns (:class:`ArrowArray`) the array interface (``pyarrow.array(col)``)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Iterator

import pyarrow as pa

from . import objtypes as ot
from .defaults import defaults
from .errors import dpy

_STRINGS = {ot.DB_TYPE_VARCHAR, ot.DB_TYPE_CHAR, ot.DB_TYPE_NVARCHAR, ot.DB_TYPE_NCHAR,
            ot.DB_TYPE_LONG, ot.DB_TYPE_CLOB, ot.DB_TYPE_NCLOB, ot.DB_TYPE_LONG_NVARCHAR}
_BINARIES = {ot.DB_TYPE_RAW, ot.DB_TYPE_LONG_RAW, ot.DB_TYPE_BLOB}
_TIMESTAMPS = {ot.DB_TYPE_TIMESTAMP, ot.DB_TYPE_TIMESTAMP_LTZ, ot.DB_TYPE_TIMESTAMP_TZ}


class ArrowArray:
    """python-oracledb's ``ArrowArray``: one column of a :class:`DataFrame`."""

    def __init__(self, name: str, array: pa.Array) -> None:
        self._name, self._array = name, array

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> str:
        return str(self._array.type)

    @property
    def null_count(self) -> int:
        return self._array.null_count

    @property
    def num_rows(self) -> int:
        return len(self._array)

    def __len__(self) -> int:
        return len(self._array)

    def __repr__(self) -> str:
        return f"ArrowArray(name={self.name}, len={self.num_rows}, type={self.dtype})"

    __str__ = __repr__

    def __arrow_c_schema__(self) -> Any:
        return self._array.type.__arrow_c_schema__()

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        if requested_schema is not None:
            raise NotImplementedError("requested_schema")
        return self._array.__arrow_c_array__()


class DataFrame:
    """python-oracledb's ``DataFrame`` (3.3 and later; ``OracleDataFrame`` before)."""

    def __init__(self, arrays: list[ArrowArray]) -> None:
        self._arrays = arrays
        self._by_name = {a.name: a for a in arrays}

    def column_arrays(self) -> list[ArrowArray]:
        return list(self._arrays)

    def column_names(self) -> list[str]:
        return [a.name for a in self._arrays]

    def get_column(self, i: int) -> ArrowArray:
        if i < 0 or i >= self.num_columns():
            raise IndexError(f"Column index {i} is out of bounds for DataFrame with "
                             f"{self.num_columns()} columns")
        return self._arrays[i]

    def get_column_by_name(self, name: str) -> ArrowArray:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"Column {name} not found in DataFrame") from None

    def num_columns(self) -> int:
        return len(self._arrays)

    def num_rows(self) -> int:
        return len(self._arrays[0]) if self._arrays else 0

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        if requested_schema is not None:
            raise NotImplementedError("requested_schema")
        table = pa.Table.from_arrays([a._array for a in self._arrays], names=self.column_names())
        return table.__arrow_c_stream__()


def fetch_df_all(conn: Any, statement: str, parameters: Any = None, arraysize: int | None = None,
                 requested_schema: Any = None) -> DataFrame:
    """All the rows of ``statement`` as one DataFrame (an empty one when there are none)."""
    description, rows, _ = _query(conn, statement, parameters, arraysize)
    return _frame(description, rows, requested_schema)


def fetch_df_batches(conn: Any, statement: str, parameters: Any = None, size: int | None = None,
                     requested_schema: Any = None) -> Iterator[DataFrame]:
    """DataFrames of ``size`` rows (a cursor's ``arraysize``, 100, when not given), the
    last one what is left; one empty DataFrame when there are no rows."""
    description, rows, size = _query(conn, statement, parameters, size)
    for start in range(0, max(len(rows), 1), size):
        yield _frame(description, rows[start:start + size], requested_schema)


def _query(conn: Any, statement: str, parameters: Any, arraysize: int | None) -> tuple[list, list, int]:
    cursor = conn.cursor()
    try:
        if arraysize is not None:
            cursor.arraysize = arraysize          # (DPY-2045 for a bad one, as python-oracledb)
        cursor.outputtypehandler = _no_handler    # python-oracledb: handlers are not used
        cursor.execute(statement, parameters, fetch_lobs=False)
        if cursor.description is None:
            raise dpy(1003)
        return list(cursor.description), cursor.fetchall(), cursor.arraysize
    finally:
        cursor.close()


def _no_handler(cursor: Any, metadata: Any) -> None:
    return None


def _frame(description: list, rows: list, requested_schema: Any) -> DataFrame:
    arrays = [_column(d, [row[i] for row in rows]) for i, d in enumerate(description)]
    names = [d[0] for d in description]
    if requested_schema is not None:
        names, arrays = _requested(pa.schema(requested_schema), description, arrays)
    return DataFrame([ArrowArray(n, a) for n, a in zip(names, arrays)])


def _requested(schema: pa.Schema, description: list, arrays: list[pa.Array]) -> tuple[list, list]:
    if len(schema) != len(arrays):
        raise dpy(2069, len(schema), len(arrays))
    out = []
    for field, d, array in zip(schema, description, arrays):
        try:
            out.append(array.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise dpy(3038, _type_name(d[1]), str(field.type)) from None
    return [f.name for f in schema], out


def _type_name(db_type: Any) -> str:
    return getattr(db_type, "name", None) or str(db_type)


def arrow_type(d: tuple) -> pa.DataType:
    """The Arrow type of a column described by ``d`` (a ``cursor.description`` row)."""
    db_type, precision, scale = d[1], d[4], d[5]
    if db_type is ot.DB_TYPE_NUMBER:
        if defaults.fetch_decimals and precision and scale is not None and 0 <= scale <= precision:
            return pa.decimal128(precision, scale)
        if scale == 0 and precision is not None and 0 < precision <= 18:
            return pa.int64()
        return pa.float64()
    if db_type in _STRINGS:
        return pa.large_string()
    if db_type in _BINARIES:
        return pa.large_binary()
    if db_type is ot.DB_TYPE_DATE:
        return pa.timestamp("s")
    if db_type in _TIMESTAMPS:
        fs = 6 if scale is None else scale
        return pa.timestamp("s" if fs == 0 else "ms" if fs <= 3 else "us" if fs <= 6 else "ns")
    if db_type is ot.DB_TYPE_BINARY_DOUBLE:
        return pa.float64()
    if db_type is ot.DB_TYPE_BINARY_FLOAT:
        return pa.float32()
    if db_type is ot.DB_TYPE_BOOLEAN:
        return pa.bool_()
    raise dpy(3030, _type_name(db_type))


def _column(d: tuple, values: list) -> pa.Array:
    if d[1] is None:        # a column Sluice could not type: Arrow's own reading of the values
        return _untyped(values)
    kind = arrow_type(d)
    if pa.types.is_int64(kind):
        values = [_integer(v) for v in values]
    elif pa.types.is_floating(kind):
        values = [None if v is None else float(v) for v in values]
    elif pa.types.is_decimal(kind):
        values = [None if v is None else Decimal(str(v)) for v in values]
    elif pa.types.is_timestamp(kind):
        values = [_naive(v) for v in values]
    elif pa.types.is_large_string(kind):
        values = [None if v is None else v if isinstance(v, str) else str(v) for v in values]
    return pa.array(values, type=kind)


def _integer(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, int) or (isinstance(v, (float, Decimal)) and v == int(v)):
        return int(v)
    raise dpy(4036, v)


def _naive(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day)
    return v


def _untyped(values: list) -> pa.Array:
    array = pa.array(values)
    if pa.types.is_string(array.type) or pa.types.is_null(array.type):
        return array.cast(pa.large_string())
    if pa.types.is_binary(array.type):
        return array.cast(pa.large_binary())
    return array
