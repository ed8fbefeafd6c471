"""Soak: the kill -9 harness for minutes instead of seconds (issue 11, item 5).

Producer and consumer processes work on one queue while a controller SIGKILLs a random
one every 0.5-2 s and starts it again; at the end a checker proves from the workers' logs
that every committed message was consumed exactly once (tests/crashharness.py explains
the logs and what is excused: the one transaction a kill leaves in doubt).

    .venv/bin/python bench/soak.py --minutes 3                      # SQLite, a fresh file
    .venv/bin/python bench/soak.py --minutes 3 --dsn postgresql://postgres@127.0.0.1:5432/test

A PostgreSQL DSN without ``schema=`` gets a fresh schema, dropped afterwards.  Prints
lost / duplicated / kills / msg/s (and the rest of the checker's report); exits 1 when
the checker found anything wrong.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "src")]

from tests import crashharness  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--dsn", help="default: an SQLite file in a temporary directory")
    ap.add_argument("--producers", type=int, default=2)
    ap.add_argument("--consumers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the logs (and SQLite file)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every kill")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="sluice-soak-")
    dsn = args.dsn or f"sqlite:///{workdir}/soak.db"
    dsn, drop = crashharness.fresh_dsn(dsn)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    print(f"soak: {args.minutes:g} min on {dsn.split('?')[0]}, {args.producers} producers, "
          f"{args.consumers} consumers, seed {seed}, logs in {workdir}", flush=True)
    started = time.strftime("%Y-%m-%d %H:%M")
    try:
        rep = crashharness.run(dsn, os.path.join(workdir, "logs"), args.minutes * 60,
                               producers=args.producers, consumers=args.consumers, seed=seed,
                               progress=print if args.verbose else None)
    finally:
        drop()
    print(f"started {started}, {rep.seconds:.0f} s")
    print(f"lost {len(rep.lost)}  duplicated {len(rep.duplicated)}  "
          f"kills {sum(rep.kills.values())}  msg/s {rep.rate:,.0f}")
    print(rep.summary())
    for name in ("duplicated", "lost", "phantom", "torn", "wrong_attempts", "malformed",
                 "worker_failures"):
        found = getattr(rep, name)
        if found:
            print(f"{name}: {found[:10]}")
    if rep.ok and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    print("OK" if rep.ok else "FAILED")
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())
