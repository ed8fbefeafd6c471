"""Rule-set evaluation throughput (Python path), side by side with the rule-engine package.

Run by hand (not part of the test suite):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/bench_rules.py [--lcrs 200000] [--rules 10000] [--small 10]

Two positive rule sets of system-style table rules, as DBMS_STREAMS_ADM.ADD_TABLE_RULES
writes them (seed 000)::

    (((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T42'))
     and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )

one with ``--rules`` rules and one with ``--small`` rules, created through
``conn.rule_adm`` on a fresh SQLite store.  Each set is fed row LCRs of which 80 %
hit one of its tables, 10 % carry a tag and 10 % name a table no rule knows.  Measured,
one LCR at a time, as LCRs per second:

* ``engine``: the compiled rule set (``RuleSetEvaluator.evaluate``, Streams semantics,
  stop on first hit) — what a capture/apply loop runs per message;
* ``streams client``: :func:`sluice.streams.evaluate_rule_sets` — the one function every
  Streams client calls (catalog check, event context, variable value functions);
* ``DBMS_RULE.EVALUATE``: ``conn.rule.evaluate(...)`` with ``variable_values={"dml": lcr}``.

The peer, rule-engine, gets equivalent conditions
(``owner == 'HR' and name == 'T42' and tag == null and source == 'DBS1.NET'``) over a
plain dict per LCR (built outside the timing, which favours it), evaluated rule by
rule until the first match: it has no index, so it runs on fewer LCRs.  Every figure
is the best of ``--repeat`` passes.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time

EC = "SYS.STREAMS$_EVALUATION_CONTEXT"


def condition(i: int) -> str:
    return (f"(((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T{i}')) "
            "and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )")


def make_rule_set(conn, name: str, n: int, condition=condition) -> float:
    """Rules ``name_0`` ... ``name_<n-1>`` of ``condition(i)`` in a new rule set; seconds taken."""
    t0 = time.perf_counter()
    conn.rule_adm.create_rule_set(name, EC)
    for i in range(n):
        conn.rule_adm.create_rule(f"{name}_{i}", condition(i), EC)
        conn.rule_adm.add_rule(f"{name}_{i}", name)
    return time.perf_counter() - t0


def lcr_stream(n_rules: int, count: int, seed: int):
    from sluice.streams import RowLCR
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        r = rnd.random()
        table = f"T{rnd.randrange(n_rules)}" if r < 0.9 else f"NOPE{rnd.randrange(1000)}"
        tag = b"\x01" if 0.8 <= r < 0.9 else None
        out.append(RowLCR.construct(source_database_name="dbs1.net", command_type="INSERT",
                                    object_owner="HR", object_name=table, tag=tag,
                                    new_values={"ID": 1}))
    return out


REPEAT = 3


def rate(fn, items) -> float:
    """Items per second, the best of REPEAT passes (the machine is shared)."""
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - t0)
    return len(items) / best


def sluice_rates(conn, name: str, lcrs) -> dict[str, float]:
    from sluice.rules.engine.evaluator import Event
    from sluice.rules.evaluate import evaluator_for
    from sluice.rules.engine.ruleset import rules_catalog
    from sluice.streams import evaluate_rule_sets
    qualified = f"{conn.username}.{name.upper()}"
    evaluator = evaluator_for(rules_catalog(conn.context.store), qualified, EC)
    evaluate, rule = evaluator.evaluate, conn.rule
    hits = sum(1 for l in lcrs[:1000] if evaluate_rule_sets(conn, l, name).perform)
    assert 700 <= hits <= 900, hits          # ~80 % of LCRs satisfy the rule set
    return {
        "engine": rate(lambda l: evaluate(Event({"DML": l}), streams=True, stop_on_first_hit=True), lcrs),
        "streams client": rate(lambda l: evaluate_rule_sets(conn, l, name), lcrs),
        "DBMS_RULE.EVALUATE": rate(lambda l: rule.evaluate(rule_set_name=name, evaluation_context=EC,
                                                           variable_values={"dml": l}), lcrs),
    }


def peer_rate(n_rules: int, lcrs) -> float:
    import rule_engine
    rules = [rule_engine.Rule(f"owner == 'HR' and name == 'T{i}' and tag == null "
                              f"and source == 'DBS1.NET'") for i in range(n_rules)]
    things = [{"owner": l.get_object_owner(), "name": l.get_object_name(), "tag": l.get_tag(),
               "source": l.get_source_database_name()} for l in lcrs]

    def first_hit(thing):
        for r in rules:
            if r.matches(thing):
                return r
        return None
    return rate(first_hit, things)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lcrs", type=int, default=200_000)
    ap.add_argument("--rules", type=int, default=10_000)
    ap.add_argument("--small", type=int, default=10)
    ap.add_argument("--peer-lcrs-big", type=int, default=100)
    ap.add_argument("--peer-lcrs-small", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3, help="passes per measurement; the best counts")
    args = ap.parse_args()
    global REPEAT
    REPEAT = args.repeat

    import sluice
    import rule_engine
    d = tempfile.mkdtemp(prefix="bench_rules_")
    conn = sluice.connect(f"sqlite:///{os.path.join(d, 'rules.db')}")
    setup_big = make_rule_set(conn, "big", args.rules)
    make_rule_set(conn, "small", args.small)
    big_lcrs, small_lcrs = lcr_stream(args.rules, args.lcrs, 1), lcr_stream(args.small, args.lcrs, 2)
    big, small = sluice_rates(conn, "big", big_lcrs), sluice_rates(conn, "small", small_lcrs)
    peer_big = peer_rate(args.rules, big_lcrs[:args.peer_lcrs_big])
    peer_small = peer_rate(args.small, small_lcrs[:args.peer_lcrs_small])
    conn.close()

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}, "
          f"Python {platform.python_version()}; rule-engine {rule_engine.__version__}")
    print(f"setup: {args.rules:,} rules created and added through DBMS_RULE_ADM in {setup_big:.1f} s")
    print(f"| path | {args.small:,} rules | {args.rules:,} rules | µs/LCR ratio ({args.rules:,} / {args.small:,}) |")
    print("|---|---:|---:|---:|")
    for key in big:
        print(f"| Sluice {key} | {small[key]:,.0f} | {big[key]:,.0f} | {small[key] / big[key]:.2f} |")
    print(f"| rule-engine {rule_engine.__version__} (first match, no index) | {peer_small:,.0f} | "
          f"{peer_big:,.0f} | {peer_small / peer_big:.0f} |")


if __name__ == "__main__":
    main()
