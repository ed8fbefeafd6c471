"""Ready Spark SQL reports over the message warehouse (``sluice pipeline report``).

* ``volume``: messages per queue and hour of enqueue;
* ``lag``: end-to-end lag percentiles (p50, p90, p99, max) per queue, in seconds, from the
  source commit (an LCR's source time; a user message's enqueue time) to its arrival in
  the warehouse;
* ``tables``: the tables with the most changes (row LCRs) per command type.
"""

from __future__ import annotations

from typing import Any

from .paths import has_parquet_files

__all__ = ["REPORTS", "report"]

# the warehouse columns the reports read: what an empty warehouse (a run that has not
# written a file yet) is read as, since Spark cannot infer a schema from no files
_READ = ("queue string, enq_time timestamp, source_time timestamp, arrived timestamp, lcr_kind string, "
         "object_owner string, object_name string, command_type string")

REPORTS = {
    "volume": """SELECT queue, date_trunc('HOUR', enq_time) AS hour, count(*) AS messages
                 FROM warehouse GROUP BY queue, date_trunc('HOUR', enq_time) ORDER BY hour, queue""",
    "lag": """SELECT queue, count(*) AS messages,
                     round(percentile_approx(lag, 0.5), 3) AS p50_seconds,
                     round(percentile_approx(lag, 0.9), 3) AS p90_seconds,
                     round(percentile_approx(lag, 0.99), 3) AS p99_seconds,
                     round(max(lag), 3) AS max_seconds
              FROM (SELECT queue, unix_micros(arrived) / 1e6
                           - unix_micros(coalesce(source_time, enq_time)) / 1e6 AS lag FROM warehouse)
              GROUP BY queue ORDER BY queue""",
    "tables": """SELECT object_owner, object_name, count(*) AS changes,
                        count_if(command_type = 'INSERT') AS inserts,
                        count_if(command_type = 'UPDATE') AS updates,
                        count_if(command_type = 'DELETE') AS deletes
                 FROM warehouse WHERE lcr_kind = 'ROW'
                 GROUP BY object_owner, object_name ORDER BY changes DESC, object_owner, object_name
                 LIMIT {top}""",
}


def report(spark: Any, path: str, name: str, top: int = 10) -> tuple[list[str], list[tuple]]:
    """Run report ``name`` over the warehouse at ``path``: (column names, rows)."""
    if name not in REPORTS:
        raise ValueError(f"no report {name!r} (one of {', '.join(REPORTS)})")
    frame = spark.read.parquet(path) if has_parquet_files(path) else spark.createDataFrame([], _READ)
    frame.createOrReplaceTempView("warehouse")
    df = spark.sql(REPORTS[name].format(top=int(top)))
    return df.columns, [tuple(r) for r in df.collect()]   # a report's rows, not LCR data
