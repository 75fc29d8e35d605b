"""The outage rule (run/outage.py, README "Run status") on step outcomes as the step's
controller makes them: no lost connection is never degraded however the seconds went
(a loaded machine, a lock), one lost connection reopened at once is ok, an outage that
cost the loop its seconds or its rate is degraded with the reason, a loop of no
operation is failed; and a second with nothing finished is a row of 0 (intervals.ZeroRows)."""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from benchlib import measure
from benchlib.run import outage
from benchlib.run.intervals import ZeroRows, interval_rows
from benchlib.run.step import StepOutcome
from benchlib.workloads.base import StepSpec

NOW = datetime.now(timezone.utc)


def _outcome(ops: int, secs: float, reconnects: int = 0, reconnect_s: float = 0.0,
             phase: str = "run") -> StepOutcome:
    step = StepSpec("r.L2" if phase == "run" else "l.pre", phase, loop=2 if phase == "run" else None, threads=4)
    client = measure.ClientResult("c", "h", step.name, reconnects=reconnects, reconnect_s=reconnect_s)
    return StepOutcome(step, NOW, NOW, secs, ops, 0, "ok", None, client_results=[client])


def _meter(per_second: list[int]) -> outage.SecondsMeter:
    m = outage.SecondsMeter()
    for n in per_second:
        m.add(n, 1.0)
    m.add(3, 0.01)          # the sliver after the loop's end: not a second that can be out
    return m


def test_no_lost_connection_is_never_degraded():
    rng = np.random.default_rng(1)
    loaded = [int(x) for x in rng.integers(50, 5000, 30)] + [0, 0, 0]   # a lock's zeros too
    o = _outcome(sum(loaded), 33.0)
    outage.judge(o, _meter(loaded), 4)
    assert (o.status, o.reconnects, o.outage_s) == ("ok", 0, 0.0)
    outage.judge_against(o, [_outcome(10**6, 33.0)])     # far below the earlier loop: no loss
    assert o.status == "ok"


def test_a_connection_reopened_at_once_is_ok():
    seconds = [5000, 4800, 4100, 5100, 4900, 5000, 5050, 4950, 5000, 4990]
    o = _outcome(sum(seconds), 10.0, reconnects=4, reconnect_s=4 * 0.02)
    outage.judge(o, _meter(seconds), 4)
    outage.judge_against(o, [_outcome(52_000, 10.0)])
    assert o.status == "ok" and o.reconnects == 4 and o.outage_s < 1.0


def test_an_outage_is_degraded_with_the_reason():
    seconds = [30_200, 0, 0, 0]                     # the ybio loop: 0.7 s, then out
    o = _outcome(30_200, 4.67, reconnects=8, reconnect_s=8 * 3.9)
    outage.judge(o, _meter(seconds), 8)
    assert o.status == "degraded" and o.outage_s >= 3.0
    assert o.error.startswith("outage: 8 connections lost and reopened; 3.9 s of 4.7 s out")


def test_a_loop_that_fell_against_the_earlier_ones_is_degraded():
    # the MariaDB loop: 3,020 ops against 20-33 k, its seconds all alike
    o = _outcome(3_020, 10.0, reconnects=2, reconnect_s=0.1)
    outage.judge(o, _meter([302] * 10), 2)
    assert o.status == "ok"
    outage.judge_against(o, [_outcome(20_000, 10.0), _outcome(33_000, 10.0), _outcome(0, 0.0)])
    assert o.status == "degraded" and "302 ops/s against 2,650 in the run's earlier loops" in o.error


def test_a_run_loop_of_no_operation_is_failed_and_a_failed_step_stays_failed():
    o = _outcome(0, 3.0, reconnects=3, reconnect_s=2.0)
    outage.judge(o, _meter([]), 4)
    assert (o.status, o.error) == ("failed", "no operation completed (3 connections lost and reopened)")
    o = _outcome(10, 3.0, reconnects=3, reconnect_s=9.0)
    o.status, o.error = "failed", "stopped: too many failed"
    outage.judge(o, _meter([10, 0, 0]), 4)
    assert (o.status, o.error) == ("failed", "stopped: too many failed")


def test_a_second_with_nothing_finished_is_a_row_of_zero_per_op():
    svc = np.array([120, 80], dtype=np.int32)
    payload = {"READ-BATCH": (svc, np.zeros(0, np.int32), 0, 40, 0)}
    zeros = ZeroRows(["UPDATE"], {"READ-BATCH": "READ"})
    rows = interval_rows(0, [payload], {"READ-BATCH": "READ"})
    zeros.see(rows)
    filled = zeros.fill(0, rows)
    assert {r["op"]: r["ops"] for r in filled} == {"READ-BATCH": 2, "READ": 40, "UPDATE": 0}
    empty = zeros.fill(1, interval_rows(1, [], {"READ-BATCH": "READ"}))
    assert {r["op"]: r["ops"] for r in empty} == {"UPDATE": 0, "READ-BATCH": 0, "READ": 0}
    assert all(np.isnan(r["p99_us"]) and r["errors"] == 0 for r in empty)
    assert [r.get("_inner", False) for r in empty] == [False, True, False]   # counted once: READ
