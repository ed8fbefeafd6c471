"""Issue 17 §1: ``sluice top`` — the same numbers in a terminal (rich), with --once."""

from __future__ import annotations

from click.testing import CliRunner
from rich.console import Console

import sluice
from sluice.cli import main
from sluice.monitor import snapshot
from sluice.monitor.top import render, top
from sluice.streams.propagation.runner import PropagationRunner

from ..conftest import make_queue
from ..security.conftest import PASSWORD, create_user
from ..streams.propkit import enqueue
from .kit import two_sites


def screen(renderable) -> str:
    console = Console(record=True, width=200)
    console.print(renderable)
    return console.export_text()


def test_top_once_shows_queues_processes_and_topology(sites):
    a, _ = two_sites(sites)
    enqueue(a, "SRC", [b"1", b"2", b"3"])
    r = CliRunner().invoke(main, ["--dsn", sites.dsn_of("dbs1"), "top", "--once"], catch_exceptions=False,
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    out = r.output
    assert "DBS1" in out and "errors: 0" in out
    row = next(line for line in out.splitlines() if "SLUICE.SRC " in line)
    assert row.split("│")[2].strip() == "3"                       # ready
    prop = next(line for line in out.splitlines() if "P1 → SLUICE.DST@DBS2" in line)
    assert "ENABLED" in prop and prop.split("│")[7].strip() == "3"    # backlog
    assert "queue:SLUICE.SRC@DBS1" in out and "queue:SLUICE.DST@DBS2" in out and "propagation P1" in out


def test_top_rates_move_with_traffic(sites):
    a, _ = two_sites(sites)
    enqueue(a, "SRC", [b"x"] * 6)
    first = snapshot.take(a)
    assert PropagationRunner(a).run_once(force=True) == 6
    second = snapshot.take(a)
    text = screen(render(second, first))
    prop = next(line for line in text.splitlines() if "P1 →" in line)
    cells = [c.strip() for c in prop.split("│")]
    assert cells[5] == "6" and cells[6].endswith("/s") and float(cells[6][:-2]) > 0
    queue = next(line for line in text.splitlines() if "SLUICE.SRC " in line)
    assert [c.strip() for c in queue.split("│")][7].startswith("-")      # the depth fell
    first_screen = next(line for line in screen(render(second, None)).splitlines() if "P1 →" in line)
    assert [c.strip() for c in first_screen.split("│")][6] == "-"       # no rate without a previous


def test_top_live_redraws_until_stopped(conn):
    make_queue(conn, "LIVE")
    taken = []

    def take():
        taken.append(snapshot.take(conn))
        return taken[-1]
    console = Console(record=True, width=160)
    top(take, console, interval=0.01, stop=lambda: len(taken) >= 3)
    assert len(taken) == 3 and "SLUICE.LIVE" not in console.export_text()   # empty: not shown
    assert "SLUICE.LIVE" in screen(render(taken[-1], taken[-2], all_queues=True))


def test_top_needs_monitor(dsn):
    with sluice.connect(dsn) as admin:
        create_user(admin, "NOBODY")
        create_user(admin, "WATCHER", "MONITOR")
    r = CliRunner().invoke(main, ["--dsn", dsn, "--user", "nobody", "--password", PASSWORD, "top", "--once"])
    assert r.exit_code == 1 and "ORA-01031" in r.stderr
    r = CliRunner().invoke(main, ["--dsn", dsn, "--user", "watcher", "--password", PASSWORD, "top", "--once"])
    assert r.exit_code == 0 and "Queues" in r.output
