"""The outage rule (run/outage.py, README "Run status") on step outcomes as the step's
controller makes them: no lost connection is never degraded however the seconds went
(a loaded machine, a lock), connections reopened at once are ok, an outage that kept
the driver threads reopening is degraded with the reason, a loop of no operation is
failed; and a second with nothing finished is a row of 0 (intervals.ZeroRows)."""
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
             threads: int = 4, refused: int = 0) -> StepOutcome:
    step = StepSpec("r.L2", "run", loop=2, threads=4)
    client = measure.ClientResult("c", "h", step.name, reconnects=reconnects, reconnect_s=reconnect_s,
                                  driver_threads=threads, refused=refused)
    return StepOutcome(step, NOW, NOW, secs, ops, 0, "ok", None, client_results=[client])


def test_no_lost_connection_is_never_degraded():
    o = _outcome(120, 33.0)          # a loaded machine's or a lock's seconds: whatever they were
    outage.judge(o)
    assert (o.status, o.reconnects, o.outage_s) == ("ok", 0, 0.0)


def test_each_connection_ended_once_and_reopened_at_the_first_attempt_is_ok():
    # the kill tests at load 20 on 2 cores: PyMySQL reopened each of 4 in 0.38-0.45 s
    o = _outcome(9_775, 4.0, reconnects=4, reconnect_s=0.40 + 0.38 + 0.40 + 0.45)
    outage.judge(o)
    assert o.status == "ok" and o.reconnects == 4 and o.outage_s > 0.1 * o.secs


def test_an_outage_is_degraded_with_the_reason():
    # the ybio loop: 8 sessions each waiting 3.9 s of 4.67 s for the server
    o = _outcome(30_200, 4.67, reconnects=8, reconnect_s=8 * 3.9, threads=8, refused=48)
    outage.judge(o)
    assert (o.status, o.outage_s) == ("degraded", 3.9)
    assert o.error == ("outage: 8 connections lost and reopened, 48 attempts refused; the clients "
                       "spent 3.9 s of 4.7 s reopening them")
    o = _outcome(30_200, 4.67, reconnects=8, reconnect_s=8 * 0.4, threads=8, refused=8)
    outage.judge(o)
    assert o.status == "ok"          # refused, but back in 0.4 s of 4.67: under 10 %


def test_connections_ended_again_and_again_are_an_outage():
    # pg_terminate_backend every 50 ms for 2 s: 40 reopened, each at once, 35 ms each
    o = _outcome(4_000, 3.0, reconnects=40, reconnect_s=40 * 0.035)
    outage.judge(o)
    assert o.status == "degraded" and o.error.startswith("outage: 40 connections lost and reopened; ")


def test_a_multiplexing_thread_is_out_for_all_its_connections():
    # one thread drives 4 connections: its 2.7 s reopening one is 2.7 s out for all
    o = _outcome(6_232, 6.0, reconnects=4, reconnect_s=2.66 + 0.09 + 0.02 + 0.06, threads=1, refused=6)
    outage.judge(o)
    assert o.status == "degraded" and round(o.outage_s, 2) == 2.83


def test_a_run_loop_of_no_operation_is_failed_and_a_failed_step_stays_failed():
    o = _outcome(0, 3.0, reconnects=3, reconnect_s=2.0)
    outage.judge(o)
    assert (o.status, o.error) == ("failed", "no operation completed (3 connections lost and reopened)")
    o = _outcome(10, 3.0, reconnects=3, reconnect_s=9.0)
    o.status, o.error = "failed", "stopped: too many failed"
    outage.judge(o)
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
