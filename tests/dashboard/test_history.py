"""The dashboard's last hour (``sluice.dashboard.history``): counters become rates between
readings, a counter that went down (a restarted process) gives no negative rate, the
ring keeps one hour, sparklines keep the last points of the queues that still exist, and
a failing reading is reported without stopping the sampler."""

from __future__ import annotations

import threading

from sluice.dashboard.history import SPARK_POINTS, History, Sampler


def reading(enq=0, prop=0, depth=None, lag=None):
    gauges = {f"depth:{q}": d for q, d in (depth or {}).items()}
    if lag is not None:
        gauges["lag:p:S:P"] = lag
    return {"counters": {"enq:q:S:A": enq, "prop:p:S:P": prop}, "gauges": gauges}


def test_rates_between_readings():
    h = History(interval=2.0)
    h.add(reading(enq=10, prop=0), now=100.0)
    h.add(reading(enq=30, prop=5, lag=1.5), now=102.0)
    first, second = h.since(0)
    assert (first["enq"], first["prop"]) == (0.0, 0.0)           # nothing to compare with yet
    assert (second["enq"], second["prop"], second["lag"]) == (10.0, 2.5, 1.5)
    assert h.latest["rates"] == {"enq:q:S:A": 10.0, "prop:p:S:P": 2.5} and h.latest["time"] == 102.0
    assert h.since(100.0) == [second]


def test_a_counter_that_goes_down_is_a_restart_not_a_negative_rate():
    h = History(interval=1.0)
    h.add(reading(prop=50), now=1.0)
    h.add(reading(prop=3), now=2.0)
    assert h.since(1.0)[0]["prop"] == 0.0


def test_the_ring_keeps_one_hour_and_sparklines_their_last_points():
    h = History(interval=60.0)                                    # 60 samples make an hour
    for i in range(100):
        h.add(reading(enq=i, depth={"q:S:A": i, "q:S:B": 1} if i < 99 else {"q:S:A": i}), now=60.0 * i)
    points = h.since(0)
    assert len(points) == 60 and points[0]["t"] == 60.0 * 40
    spark = h.sparklines()
    assert list(spark) == ["depth:q:S:A"]                        # B was dropped
    assert spark["depth:q:S:A"] == list(range(100 - SPARK_POINTS, 100))


def test_a_failing_reading_is_reported_and_the_next_one_taken():
    calls = []
    done = threading.Event()

    def read():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("store away")
        done.set()
        return reading(enq=len(calls))

    h = History(interval=0.01)
    s = Sampler(read, h)
    s.sample()
    assert s.error == "RuntimeError: store away" and h.latest is None
    s.start()
    assert done.wait(10)
    s.stop()
    assert s.error is None and h.latest is not None
    assert s.readings >= 2 and s.cpu_seconds > 0             # what the readings cost, measured


def test_rates_are_averaged_over_the_window():
    h = History(interval=1.0)                                     # window: 10 s
    for t in range(15):
        h.add(reading(enq=100 if t >= 5 else 0), now=float(t))   # 100 messages at t = 5
    rates = [p["enq"] for p in h.since(-1)]
    assert rates[5] == 20.0 and rates[9] == 11.111             # spread over the window so far
    assert rates[14] == 10.0 and h.latest["rates"]["enq:q:S:A"] == 10.0
