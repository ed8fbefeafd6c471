"""Rule-set evaluation throughput, Spark path (sluice.rules.compile.spark), beside rule-engine.

Run by hand (not part of the test suite):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/bench_rules_spark.py [--lcrs 10000000] [--rules 10,100,1000]

Spark as DESIGN.md section 5 sets it up: ``local[2]``, ``spark.sql.shuffle.partitions=2``,
``spark.ui.enabled=false``, ``SPARK_LOCAL_IP=127.0.0.1``, ANSI mode (Spark 4's default).

Rule sets of system-style table rules created through ``conn.rule_adm`` on a fresh
SQLite store, four in five as DBMS_STREAMS_ADM.ADD_TABLE_RULES writes them (seed 000)::

    (((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T42'))
     and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )

and one in five also naming a command type, with a ``tag IS NULL`` term (the residue
evaluated on joined rows)::

    :dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T44'
    and :dml.get_command_type() = 'INSERT' and :dml.get_tag() IS NULL
    and :dml.get_source_database_name() = 'DBS1.NET'

The LCRs are generated inside Spark (``spark.range`` and expressions, the schema of
``sluice.rules.compile.typed.lcrschema``), cached and counted before any timing: 80 %
are untagged row LCRs on a table of the rule set, 10 % the same with a tag, 5 % name a
table no rule knows, 3 % another owner, 1 % another source database, 1 % are DDL LCRs;
commands are INSERT / UPDATE / DELETE in equal parts, so most LCRs fire one rule or none
(about 69 % one).
Measured (wall time of one action, the best of ``--repeat``):

* ``scan``: the columns the rules read (kind, owner, name, command, tag, source database)
  and the transaction id, read from the cache and dropped -- the floor;
* ``fired``: ``SparkRuleSet.fired`` -- each LCR's TRUE rules by name, written to the
  ``noop`` format with the LCR's transaction id;
* ``verdict``: ``streams_verdict`` -- Table 6-1 (perform, the rule), written to ``noop``;
* ``count``: the number of LCRs the client would process (``streams_verdict``, ``perform``
  filtered and counted).

Also printed: LCRs per CPU-second of the Spark JVM (all its threads) for the same
actions, a figure the other load on a shared machine moves less than wall time.

The peer, rule-engine, gets the equivalent conditions over a dict per LCR (a sample of
the same LCRs, built outside the timing), evaluated rule by rule until the first match.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time

from bench_rules import EC, make_rule_set  # the Python-path bench beside this file

COMMANDS = ("INSERT", "UPDATE", "DELETE")
READ = ("lcr_kind", "object_owner", "object_name", "command_type", "tag", "source_database_name")


def condition(i: int) -> str:
    if i % 5 == 4:
        return (f":dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T{i}' and "
                f":dml.get_command_type() = '{COMMANDS[i % 3]}' and :dml.get_tag() IS NULL and "
                ":dml.get_source_database_name() = 'DBS1.NET'")
    return (f"(((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T{i}')) "
            "and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )")


def peer_condition(i: int) -> str:
    if i % 5 == 4:
        return (f"kind == 'ROW' and owner == 'HR' and name == 'T{i}' and command == '{COMMANDS[i % 3]}' "
                "and tag == null and source == 'DBS1.NET'")
    return f"kind == 'ROW' and owner == 'HR' and name == 'T{i}' and tag == null and source == 'DBS1.NET'"


def start_spark(memory: str):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    return (SparkSession.builder.master("local[2]").appName("bench-rules-spark")
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2").config("spark.sql.ansi.enabled", "true")
            .config("spark.driver.memory", memory).getOrCreate())


def lcr_frame(spark, n_lcrs: int, n_rules: int, partitions: int = 2):
    """``n_lcrs`` row LCRs in the lcrschema layout, computed by Spark from ``spark.range``."""
    from pyspark.sql import functions as F
    from sluice.rules.compile.typed.lcrschema import spark_schema

    # 0-79 untagged row LCRs on a table of the set, 80-89 the same tagged, 90-94 a table no
    # rule names, 95-97 another owner, 98 another source database, 99 a DDL LCR.  Nothing is
    # a constant Spark could fold into the rules' key checks.
    draw = F.pmod(F.xxhash64("id", F.lit(1)), F.lit(100))
    table = F.pmod(F.xxhash64("id", F.lit(2)), F.lit(n_rules)).cast("string")
    command = F.element_at(F.array(*map(F.lit, COMMANDS)),
                           (F.pmod(F.xxhash64("id", F.lit(3)), F.lit(3)) + 1).cast("int"))
    ddl = draw == 99
    text = F.col("id").cast("string")
    values = {
        "lcr_kind": F.when(ddl, F.lit("DDL")).otherwise(F.lit("ROW")),
        "source_database_name": F.when(draw == 98, F.lit("DBS2.NET")).otherwise(F.lit("DBS1.NET")),
        "command_type": F.when(ddl, F.lit("CREATE TABLE")).otherwise(command),
        "object_owner": F.when((draw >= 95) & (draw < 98), F.lit("OE")).otherwise(F.lit("HR")),
        "object_name": F.concat(F.when((draw >= 90) & (draw < 95), F.lit("NOPE")).otherwise(F.lit("T")), table),
        "object_type": F.when(ddl, F.lit("TABLE")),
        "tag": F.when((draw >= 80) & (draw < 90), F.lit(bytearray(b"\x01"))),
        "transaction_id": F.concat(text, F.lit(".0.1")), "scn": F.col("id").cast("decimal(38,0)"),
        "commit_scn": F.col("id").cast("decimal(38,0)"), "compatible": F.lit(10),
        "new_values": F.when(~ddl, F.create_map(F.lit("ID"), text)),
        "new_types": F.when(~ddl, F.create_map(F.lit("ID"), F.lit("SYS.NUMBER"))),
    }
    schema = spark_schema()
    columns = [values.get(f.name, F.lit(None)).cast(f.dataType).alias(f.name) for f in schema.fields]
    return spark.range(0, n_lcrs, 1, partitions).select(*columns)


class JvmCpu:
    """CPU seconds of the Spark JVM (all threads): what an action cost whatever else the
    shared machine was running."""

    def __init__(self, spark) -> None:
        self.path = f"/proc/{spark._jvm.java.lang.ProcessHandle.current().pid()}/stat"

    def __call__(self) -> float:
        fields = open(self.path).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(action, repeat: int, cpu: JvmCpu) -> tuple[float, float, float]:
    """(first run, best of ``repeat`` runs after it, least JVM CPU of those), seconds."""
    t0 = time.perf_counter()
    action()
    first = time.perf_counter() - t0
    best = best_cpu = float("inf")
    for _ in range(repeat):
        c0, t0 = cpu(), time.perf_counter()
        action()
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, cpu() - c0)
    return first, best, best_cpu


def noop(df):
    return lambda: df.write.format("noop").mode("overwrite").save()


def spark_rates(conn, spark, name: str, n_rules: int, n_lcrs: int, repeat: int, partitions: int) -> dict:
    from sluice.rules.compile.spark.ruleset import SparkRuleSet, streams_verdict

    t0 = time.perf_counter()
    rule_set = SparkRuleSet.from_rule_set(conn, name)
    build = time.perf_counter() - t0
    lcrs = lcr_frame(spark, n_lcrs, n_rules, partitions).cache()
    t0 = time.perf_counter()
    assert lcrs.count() == n_lcrs
    cache = time.perf_counter() - t0
    performed = streams_verdict(lcrs, rule_set).where("perform")
    hits = performed.count()
    assert 0.6 * n_lcrs <= hits <= 0.75 * n_lcrs, hits   # 80 % x (4/5 + 1/5 x 1/3 commands)
    out = {"build": build, "cache": cache, "hit share": hits / n_lcrs, "shape": rule_set.describe()}
    actions = {
        "scan": noop(lcrs.select(*READ, "transaction_id")),
        "fired": noop(rule_set.fired(lcrs).select("transaction_id", "fired")),
        "verdict": noop(streams_verdict(lcrs, rule_set).select("transaction_id", "perform", "rule")),
        "count": performed.count,
    }
    cpu = JvmCpu(spark)
    for key, action in actions.items():
        first, best, best_cpu = timed(action, repeat, cpu)
        out[key] = n_lcrs / best
        out[key + " first"] = first
        out[key + " cpu"] = n_lcrs / best_cpu
    lcrs.unpersist(blocking=True)
    return out


def peer_rate(spark, n_rules: int, n_lcrs: int, repeat: int) -> float:
    import rule_engine
    rules = [rule_engine.Rule(peer_condition(i)) for i in range(n_rules)]
    sample = lcr_frame(spark, n_lcrs, n_rules).select(*READ).collect()
    things = [{"kind": r[0], "owner": r[1], "name": r[2], "command": r[3], "tag": r[4], "source": r[5]}
              for r in sample]

    def first_hit(thing):
        for rule in rules:
            if rule.matches(thing):
                return rule
        return None
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        hits = sum(first_hit(t) is not None for t in things)
        best = min(best, time.perf_counter() - t0)
    assert 0.6 * n_lcrs <= hits <= 0.75 * n_lcrs, hits
    return n_lcrs / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lcrs", type=int, default=10_000_000)
    ap.add_argument("--rules", default="10,100,1000", help="rule-set sizes, comma-separated")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per action; the best counts")
    ap.add_argument("--peer-lcrs", type=int, default=200_000,
                    help="rule-engine sample for 10 rules; divided by the rule-set size / 10 for more")
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--partitions", type=int, default=8,
                    help="of the cached LCRs: more than the 2 cores, so a core another process "
                         "holds does not leave the other idle at the end of a stage")
    args = ap.parse_args()
    sizes = [int(s) for s in args.rules.split(",")]

    import sluice
    import pyspark
    import rule_engine
    d = tempfile.mkdtemp(prefix="bench_rules_spark_")
    conn = sluice.connect(f"sqlite:///{os.path.join(d, 'rules.db')}")
    setup = {n: make_rule_set(conn, f"rs{n}", n, condition) for n in sizes}

    t0 = time.perf_counter()
    spark = start_spark(args.driver_memory)
    spark.sparkContext.setLogLevel("ERROR")
    jvm = time.perf_counter() - t0
    t0 = time.perf_counter()
    spark.range(1000).selectExpr("sum(id)").collect()
    warm = time.perf_counter() - t0

    results = {n: spark_rates(conn, spark, f"rs{n}", n, args.lcrs, args.repeat, args.partitions) for n in sizes}
    peers = {n: peer_rate(spark, n, max(100, args.peer_lcrs * 10 // n), args.repeat) for n in sizes}
    spark.stop()
    conn.close()

    print(f"machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}, "
          f"Python {platform.python_version()}, PySpark {pyspark.__version__}, Java 17; "
          f"rule-engine {rule_engine.__version__}; load average {os.getloadavg()[0]:.1f}")
    print(f"JVM start (getOrCreate) {jvm:.1f} s; first job {warm:.1f} s")
    for n in sizes:
        r = results[n]
        print(f"{n:,} rules: created through DBMS_RULE_ADM in {setup[n]:.1f} s, SparkRuleSet built in "
              f"{r['build']:.2f} s {r['shape']}; {args.lcrs:,} LCRs generated and cached in {r['cache']:.1f} s; "
              f"{r['hit share']:.1%} fire a rule; first runs (s): "
              + ", ".join(f"{k} {r[k + ' first']:.1f}" for k in ("scan", "fired", "verdict", "count")))
    print("| LCRs/s (best of %d), %s LCRs cached in %d partitions | " % (args.repeat, f"{args.lcrs:,}", args.partitions)
          + " | ".join(f"{n:,} rules" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for key in ("scan", "fired", "verdict", "count"):
        print(f"| Sluice Spark {key} | " + " | ".join(f"{results[n][key]:,.0f}" for n in sizes) + " |")
    for key in ("fired", "verdict"):
        print(f"| Sluice Spark {key}, per JVM CPU-second | "
              + " | ".join(f"{results[n][key + ' cpu']:,.0f}" for n in sizes) + " |")
    print(f"| rule-engine {rule_engine.__version__} (first match, one process) | "
          + " | ".join(f"{peers[n]:,.0f}" for n in sizes) + " |")


if __name__ == "__main__":
    main()
