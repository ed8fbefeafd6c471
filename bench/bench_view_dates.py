"""What the session's time zone costs PostgreSQL's AQ$<queue_table> view (session-zone, 2026-11-30).

Run by hand (not part of the test suite; about a minute):

    .venv/bin/python bench/bench_view_dates.py [--pg postgresql://postgres@127.0.0.1:5432/postgres]
        [--n 5000] [--rounds 6] [--zones +00:00,+05:30,Europe/Paris]

One queue table of ``--n`` RAW messages (half of them dequeued and kept: retention), in a
schema of its own (dropped after), and three views over it, the same columns:

- **utc** — the dates as before the session-zone views (``to_timestamp(x) AT TIME ZONE 'UTC'``:
  the floor, not Oracle's answer);
- **per-date** — the session-zone views until 2026-11-30 evening: each date reads the
  ``sluice.time_zone`` setting and ``AT TIME ZONE`` parses the zone's name and looks it up;
- **once** — the store's own view (``sqlschema.aq_view_select``): the zone read once a
  statement (``SLUICE_SESSION_ZONE()``, LEFT JOINed as an aggregate of its one row: dropped
  from a statement that reads no date), an offset zone shifted by an interval.

Per session zone, rounds alternating the order: ``SELECT *`` fetched whole (psycopg, ms),
the server's time of the same statement (``EXPLAIN (ANALYZE, TIMING OFF)``, ms), and, at the
server (a PL/pgSQL loop, each statement parsed and planned), a one-row ``SELECT * … WHERE
LOCAL_ORDER_NO = k`` and a one-row ``SELECT MSG_STATE …`` (µs): what a statement of few
rows pays for the join.  The per-date and once views' dates are compared row by row
first (the same answers).  The machine may be loaded: read the ranges.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import uuid

import psycopg

import sluice
from sluice.store import dialect, sqlschema
from sluice.store.sessionzone import parse

PER_DATE = dialect.POSTGRESQL._epoch        # noqa: SLF001  (the per-date form, kept for small views)
UTC = "(to_timestamp({x}) AT TIME ZONE 'UTC')"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--zones", default="+00:00,+05:30,Europe/Paris")
    ap.add_argument("--small", type=int, default=1000, help="one-row statements per round")
    args = ap.parse_args()
    schema = "bench_vd_" + uuid.uuid4().hex[:8]
    conn = sluice.connect(f"{args.pg}?schema={schema}")
    try:
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name="Q", queue_table="QT", retention_time=3600)
        conn.aqadm.start_queue("Q")
        q = conn.queue("Q")
        q.enqmany([conn.msgproperties(payload=b"x" * 20) for _ in range(args.n)])
        conn.commit()
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        taken = 0
        while taken < args.n // 2:
            taken += len(q.deqmany(min(500, args.n // 2 - taken)))
        conn.commit()
        qt = conn.context.catalog.queue_table("QT")
        run(args, schema, qt)
    finally:
        conn.close()
        with psycopg.connect(args.pg, autocommit=True) as pg:
            pg.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def run(args, schema: str, qt) -> None:
    table = sqlschema.table_name(qt)
    views = {"utc": '"V_UTC"', "per-date": '"V_PER_DATE"', "once": sqlschema.view_name(qt)}
    with psycopg.connect(args.pg, autocommit=True, options=f'-c search_path="{schema}"') as pg:
        for name, epoch in (("utc", UTC), ("per-date", PER_DATE)):
            d = dataclasses.replace(dialect.POSTGRESQL, _epoch=epoch, _epoch_joined=epoch, zone_join="")
            pg.execute(f"CREATE VIEW {views[name]} AS {sqlschema.aq_view_select(qt, d, table)}")
        rows = pg.execute(f"SELECT count(*) FROM {views['once']}").fetchone()[0]
        load = open("/proc/loadavg").read().split()[:3]
        print(f"{rows} rows, {args.rounds} rounds alternating, load average {' '.join(load)}")
        print("  zone           view      SELECT * ms (client)  server ms     one row µs   no date µs")
        names = list(views)
        for zone in args.zones.split(","):
            pg.execute("SELECT set_config('sluice.time_zone', %s, false)", (parse(zone).postgres,))
            order = "ORDER BY LOCAL_ORDER_NO"
            per_date = pg.execute(f"SELECT * FROM {views['per-date']} {order}").fetchall()
            assert pg.execute(f"SELECT * FROM {views['once']} {order}").fetchall() == per_date, zone
            figures: dict[str, list[list[float]]] = {n: [[], [], [], []] for n in names}
            for r in range(args.rounds):
                for n in (names if r % 2 == 0 else names[::-1]):
                    v, f = views[n], figures[n]
                    t = time.perf_counter()
                    pg.execute(f"SELECT * FROM {v}").fetchall()
                    f[0].append((time.perf_counter() - t) * 1e3)
                    plan = pg.execute(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT * FROM {v}").fetchone()[0]
                    f[1].append(plan[0]["Execution Time"])
                    f[2].append(server_loop(pg, f"SELECT * FROM {v} WHERE LOCAL_ORDER_NO = $1", args.small))
                    f[3].append(server_loop(pg, f"SELECT MSG_STATE FROM {v} WHERE LOCAL_ORDER_NO = $1", args.small))
            for n in names:
                c, s, one, nodate = figures[n]
                print(f"  {zone:14} {n:9} {min(c):7.1f}-{max(c):6.1f}      {min(s):5.1f}-{max(s):5.1f}"
                      f"    {min(one):5.0f}-{max(one):5.0f}    {min(nodate):5.0f}-{max(nodate):5.0f}")


def server_loop(pg, sql: str, times: int) -> float:
    """µs per run of ``sql`` (one parameter, $1 = 1 … ``times``) in a PL/pgSQL loop at the
    server: parsed and planned every time (EXECUTE), no client or network in it."""
    body = sql.replace("'", "''")
    pg.execute(f"""DO $$ DECLARE r record; t0 timestamptz := clock_timestamp(); BEGIN
        FOR i IN 1..{times} LOOP EXECUTE '{body}' INTO r USING i; END LOOP;
        PERFORM set_config('bench.us', (extract(epoch FROM clock_timestamp() - t0) * 1e6 / {times})::text, false);
        END $$""")
    return float(pg.execute("SELECT current_setting('bench.us')").fetchone()[0])

if __name__ == "__main__":
    main()
