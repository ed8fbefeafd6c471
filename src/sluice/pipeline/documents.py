"""Plain row-LCR documents decoded in the JVM.

The source (``documents`` option, :func:`.rows.source_rows`) hands Spark the stored text of
each row LCR whose form the JVM decodes exactly as :func:`.rows.to_row` would (the pattern
``rows._PLAIN_ROW``: integers, NULLs, strings of types not converted when read, RAW as
hexadecimal, NUMBER text, isoformat dates) in column :data:`~.rows.DOCUMENT`, its LCR columns NULL; every other row was
decoded in Python already.  :func:`decode` fills those rows' LCR columns with ``from_json``
-- the same columns, the same text forms: an integer's digits as written (``str(int)``), a
NUMBER's decimal text as ``number_text`` writes it, a date with a space for the T, a
string as it is with ``''`` NULL, RAW in capitals, a column named twice keeping its place
and its last value and type (a Python dict's), SCNs as decimals, the tag as bytes,
``compatible`` from the column types -- and drops :data:`~.rows.DOCUMENT`.
"""

from __future__ import annotations

from typing import Any

from ..rules.compile.typed.lcrschema import LCR_COLUMNS
from ..streams.lcr import COMPATIBLE_9_2, COMPATIBLE_10_1
from .rows import DOCUMENT

__all__ = ["decode", "DOCUMENT_SCHEMA"]

# the envelope's value, as far as the pattern lets it through (time: read by the source)
DOCUMENT_SCHEMA = ("struct<value:struct<db:string,cmd:string,own:string,obj:string,tag:string,txn:string,"
                   "scn:decimal(38,0),cscn:decimal(38,0),old:array<array<string>>,new:array<array<string>>>>")
_BINARY = ("SYS.RAW", "SYS.BLOB")
_DATES = ("SYS.DATE", "SYS.TIMESTAMP")
_TYPES_10_1 = ("SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE")


def _number(v: Any) -> Any:
    """``number_text(Decimal(v))`` of an integer or decimal text of at most 38 digits: no
    leading zeros, no trailing zeros of a fraction, '.5' not '0.5', '0' not '-0'."""
    from pyspark.sql import functions as F

    plain = ~v.contains(".") & (~v.startswith("0") | (v == F.lit("0"))) & ~v.startswith("-0")
    negative = v.startswith("-")
    body = F.when(negative, F.substring(v, 2, 64)).otherwise(v)
    whole = F.regexp_replace(F.substring_index(body, ".", 1), "^0+", "")
    fraction = F.regexp_replace(F.when(body.contains("."), F.substring_index(body, ".", -1)).otherwise(F.lit("")),
                                "0+$", "")
    signed = F.concat(F.when(negative, F.lit("-")).otherwise(F.lit("")), whole,
                      F.when(fraction == F.lit(""), F.lit("")).otherwise(F.concat(F.lit("."), fraction)))
    return (F.when(plain, v).when((whole == F.lit("")) & (fraction == F.lit("")), F.lit("0"))
            .otherwise(signed))


def _entries(items: Any) -> Any:
    """A stored column list (array of [name, type, value]) as (n, t, v) structs, v the text."""
    from pyspark.sql import functions as F

    def entry(x: Any) -> Any:
        v, t = x[2], x[1]
        text = (F.when(t == F.lit("SYS.NUMBER"), _number(v))
                .when(t.isin(*_DATES), F.overlay(v, F.lit(" "), 11, 1))     # isoformat(sep=" ")
                .when(t.isin(*_BINARY), F.nullif(F.upper(v), F.lit("")))
                .otherwise(F.nullif(v, F.lit(""))))
        return F.struct(x[0].alias("n"), t.alias("t"), text.alias("v"))
    return F.transform(items, entry)


def _maps(entries: Any) -> tuple[Any, Any]:
    """(values map, types map) of :func:`_entries`' column; a name given twice keeps its
    first place and its last entry (a dict's update)."""
    from pyspark.sql import functions as F

    names = entries["n"]
    distinct = F.array_distinct(names)
    once = F.size(distinct) == F.size(names)

    def last(n: Any) -> Any:
        return F.element_at(F.filter(entries, lambda e: e["n"] == n), -1)

    value_map = F.when(once, F.map_from_arrays(names, entries["v"])).otherwise(
        F.map_from_arrays(distinct, F.transform(distinct, lambda n: last(n)["v"])))
    type_map = F.when(once, F.map_from_arrays(names, entries["t"])).otherwise(
        F.map_from_arrays(distinct, F.transform(distinct, lambda n: last(n)["t"])))
    return value_map, type_map


def decode(df: Any) -> Any:
    """``df`` (the source's rows with :data:`~.rows.DOCUMENT`) with the documents' LCR
    columns filled and :data:`~.rows.DOCUMENT` dropped; ``df`` itself when it has none.
    Three projections: the document parsed once, its column lists' entries made once,
    then the columns (each step's result used several times, so Spark keeps them apart)."""
    from pyspark.sql import functions as F

    if DOCUMENT not in df.columns:
        return df
    doc = F.col("__lcr_doc")
    parsed = df.withColumn("__lcr_doc", F.from_json(F.col(DOCUMENT), DOCUMENT_SCHEMA)["value"])
    parsed = parsed.withColumn("__lcr_old", _entries(doc["old"])).withColumn("__lcr_new", _entries(doc["new"]))
    old_values, old_types = _maps(F.col("__lcr_old"))
    new_values, new_types = _maps(F.col("__lcr_new"))
    tag = doc["tag"]
    types_seen = F.concat(F.map_values(old_types), F.map_values(new_types))
    lcr = {
        "lcr_kind": F.lit("ROW"), "source_database_name": doc["db"], "command_type": doc["cmd"],
        "object_owner": F.nullif(doc["own"], F.lit("")), "object_name": F.nullif(doc["obj"], F.lit("")),
        "object_type": F.lit(None), "base_table_owner": F.lit(None), "base_table_name": F.lit(None),
        "tag": F.when(tag != F.lit(""), F.unhex(tag)), "transaction_id": F.nullif(doc["txn"], F.lit("")),
        "scn": doc["scn"], "commit_scn": doc["cscn"],
        "compatible": F.when(F.exists(types_seen, lambda t: t.isin(*_TYPES_10_1)), F.lit(COMPATIBLE_10_1))
                       .otherwise(F.lit(COMPATIBLE_9_2)),
        "old_values": old_values, "new_values": new_values, "old_types": old_types, "new_types": new_types,
    }
    present = F.col(DOCUMENT).isNotNull()
    spark_types = {n: t for n, (_, t, _) in LCR_COLUMNS.items()}
    out = [F.when(present, lcr[c].cast(spark_types[c])).otherwise(F.col(c)).alias(c) if c in lcr else F.col(c)
           for c in df.columns if c != DOCUMENT]
    return parsed.select(*out)
