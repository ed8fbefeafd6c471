"""The hashed literal table (rules/compile/spark/lookup.py) against Spark's own map lookup.

One Spark action: tables of 0, 1, 2, 3, 100 and 300 keys (ASCII, NUL-joined owner and
table names as the rule sets and the staged apply key them, non-ASCII, a character outside
the BMP, an empty key), looked up with every key they hold, keys they do not hold and NULL;
each answer must be ``element_at`` of the plain map literal.  And the bucket Python puts a
key in must be the one Spark computes for it -- the table would otherwise miss a key it holds.
"""

from __future__ import annotations

import json

from pyspark.sql import functions as F
from pyspark.sql import types as T

from sluice.rules.compile.spark.lookup import bucket_of, literal_lookup

KEYS = ([f"U{i // 10}\0T{i % 10}" for i in range(100)] + ["", "é", "Ünïcødé\0名前", "😀 outside the BMP"]
        + [f"K{i:03d}" for i in range(200)])
ARRAY = T.ArrayType(T.StringType())
STRUCT = T.StructType([T.StructField("f0", T.IntegerType()), T.StructField("a0", T.ArrayType(T.IntegerType()))])


def _table(n: int) -> dict[str, list[str]]:
    return {k: [k, str(i)] for i, k in enumerate(KEYS[:n])}


def test_the_hashed_table_answers_as_the_map_and_buckets_as_spark(spark):
    sizes = (0, 1, 2, 3, 100, 300)
    probes = KEYS + ["U0\0T10", "U0", "k000", "e", "Ünïcødé", None]
    df = spark.createDataFrame([(k,) for k in probes], "k string")
    key = F.col("k")
    columns = []
    for n in sizes:
        table = _table(n)
        plain = F.element_at(F.from_json(F.lit(json.dumps(table)), T.MapType(T.StringType(), ARRAY)), key)
        columns += [literal_lookup(table, ARRAY, key).alias(f"h{n}"), plain.alias(f"p{n}")]
    structs = {k: {"f0": i, "a0": [i, i + 1]} for i, k in enumerate(KEYS[:100])}
    plain = F.element_at(F.from_json(F.lit(json.dumps(structs)), T.MapType(T.StringType(), STRUCT)), key)
    columns += [literal_lookup(structs, STRUCT, key).alias("hs"), plain.alias("ps")]
    buckets = (1, 2, 8, 128, 512)
    columns += [F.pmod(F.crc32(key.cast("binary")), F.lit(b)).alias(f"b{b}") for b in buckets]
    rows = df.select("k", *columns).collect()

    assert len(rows) == len(probes)
    for r in rows:
        for n in sizes:
            assert r[f"h{n}"] == r[f"p{n}"], (n, r["k"])
            assert r[f"h{n}"] == _table(n).get(r["k"]), (n, r["k"])
        assert r["hs"] == r["ps"]
        for b in buckets:
            assert (bucket_of(r["k"], b) if r["k"] is not None else None) == r[f"b{b}"], (b, r["k"])
    held = [r for r in rows if r["k"] in _table(300)]
    assert len(held) == 300 and all(r["h300"] is not None for r in held)


def test_a_key_that_is_no_text_goes_to_no_bucket():
    assert bucket_of("\ud800", 8) is None
    assert bucket_of("HR\0T0", 1) == 0
