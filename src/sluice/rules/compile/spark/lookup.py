"""A table of constants looked up per row as a Column, in about one key comparison.

Spark finds a key in a map by comparing it with the map's keys one after the other
(``element_at``, ``GetMapValue``): a literal map of a hundred tables or rules costs every
row about fifty string comparisons, the largest part of the decide plan's CPU
(bench/RESULTS.md, job16).  :func:`literal_lookup` cuts the table into buckets by the
CRC-32 of the key's UTF-8 bytes -- the same function in Python (:func:`zlib.crc32`) and
in Spark (``crc32``) -- and holds them as ONE literal array of small maps: a row takes its
bucket by index, then looks its key up among the one or two keys there.  The answer is
the map's: the value for a key the table holds, NULL for any other key and for NULL.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

__all__ = ["literal_lookup", "bucket_of"]


def _buckets(size: int) -> int:
    """A power of two at least ``size`` (one bucket per key on average, at least one)."""
    n = 1
    while n < size:
        n *= 2
    return n


def bucket_of(key: str, buckets: int) -> int | None:
    """The bucket Spark's ``pmod(crc32(CAST(key AS BINARY)), buckets)`` gives ``key``; None
    when the key is no valid UTF-8 text (a lone surrogate: Spark never holds such a key)."""
    try:
        return zlib.crc32(key.encode("utf-8")) % buckets
    except UnicodeEncodeError:
        return None


def literal_lookup(entries: Mapping[str, Any], value_type: T.DataType, key: Column) -> Column:
    """``element_at(map(entries), key)`` for a ``key`` Column of strings: the value (of
    ``value_type``; ``entries``' values as JSON gives them) for a key of ``entries``,
    else NULL.  The constants are one JSON text parsed once per plan (constant folding),
    so the generated code does not depend on them."""
    buckets = _buckets(len(entries))
    cut: list[dict[str, Any]] = [{} for _ in range(buckets)]
    for k, v in entries.items():
        b = bucket_of(k, buckets)
        if b is None:   # a key no row can equal: the plain map, scanned
            return F.element_at(F.from_json(F.lit(json.dumps(dict(entries))),
                                            T.MapType(T.StringType(), value_type)), key)
        cut[b][k] = v
    table = F.from_json(F.lit(json.dumps(cut)), T.ArrayType(T.MapType(T.StringType(), value_type)))
    if buckets == 1:
        return F.element_at(F.get(table, 0), key)
    # get, not element_at: a NULL index gives NULL (PySpark 4.3's element_at of a constant
    # array at a NULL index gives the last element)
    bucket = F.pmod(F.crc32(key.cast("binary")), F.lit(buckets)).cast("int")
    return F.element_at(F.get(table, bucket), key)
