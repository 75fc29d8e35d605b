"""The time series draw what happened (issue 39): a loop's last sliver (too short for a
rate) is left out, never summed to a fall to 0 ops/s; a real stall (rows of 0 ops) is
drawn as 0; a load's insert rate is on its own axis, so slow run loops are not flat on
the floor. Static (matplotlib) and interactive (plotly) alike, on small made-up tables."""
from __future__ import annotations

import numpy as np
import pandas as pd

from benchlib import plots
from benchlib.plots import interactive
from benchlib.plots.timeseries import _intervals_in_time, all_operations, own_scale_steps, step_offsets


def _run() -> dict:
    """A load of 2 s at 30,000 inserts/s, then two 3-s run loops at ~300 ops/s each
    ending in a 0.02-s sliver; r.L1's second 1 a stall (rows of 0 ops)."""
    t0 = pd.Timestamp("2026-01-01", tz="UTC")
    steps = pd.DataFrame({"run_id": "r", "step": ["l.pre", "r.L1", "r.L2"], "phase": ["load", "run", "run"],
                          "secs": [2.0, 3.02, 3.02], "ops": [60_000, 600, 900],
                          "started": [t0, t0 + pd.Timedelta(seconds=3), t0 + pd.Timedelta(seconds=7)]})
    steps["ended"] = steps["started"] + pd.to_timedelta(steps["secs"], unit="s")
    rows = [("l.pre", 0, 1.0, "INSERT", 30_000), ("l.pre", 1, 1.0, "INSERT", 30_000)]
    for step in ("r.L1", "r.L2"):
        for sec in range(3):
            stall = step == "r.L1" and sec == 1
            rows += [(step, sec, 1.0, op, 0 if stall else 150) for op in ("READ", "UPDATE")]
        rows += [(step, 3, 0.02, op, 1) for op in ("READ", "UPDATE")]          # the sliver
    iv = pd.DataFrame(rows, columns=["step", "second", "interval_s", "op", "ops"]).assign(run_id="r")
    iv["p99_us"] = 500.0
    return {"runs": pd.DataFrame({"run_id": ["r"]}), "steps": steps, "intervals": iv}


def test_all_operations_leave_a_sliver_out_and_keep_a_stall():
    res = _run()
    iv = _intervals_in_time(res["intervals"], step_offsets(res["steps"]))
    tot = all_operations(iv)
    run = tot[tot["step"] == "r.L1"].sort_values("t")
    assert list(run["rate"].iloc[:3]) == [300.0, 0.0, 300.0]          # the stall is a 0
    assert run["rate"].iloc[3] != run["rate"].iloc[3]                 # the sliver: NaN, not 0
    assert own_scale_steps(res["steps"], iv) == {"l.pre"}
    assert own_scale_steps(res["steps"][res["steps"]["phase"] == "run"], iv) == set()


def test_interactive_throughput_has_no_zero_but_the_stall_and_load_on_its_own_axis():
    fig = interactive.timeseries(_run()).figure
    tp = [t for t in fig.data if t.name and t.yaxis in ("y", "y2") and t.x is not None and len(t.x)]
    zeros = [(t.name, x) for t in tp for x, y in zip(t.x, t.y) if y == 0]
    # only the stall second of r.L1 (drawn at its middle, 3 + 1.5 s on the axis)
    assert zeros and {round(x, 1) for _, x in zeros} == {4.5}
    load = [t for t in tp if "INSERT" in t.name or "load" in t.name]
    assert load and all(t.yaxis == "y2" for t in load) and all("load" in t.name for t in load)
    runs = [t for t in tp if t.yaxis == "y"]
    assert runs and max(np.nanmax(np.asarray(t.y, dtype=float)) for t in runs) <= 300
    assert fig.layout.yaxis.title.text.startswith("run loops") and "load" in fig.layout.yaxis2.title.text


def test_static_throughput_has_no_zero_but_the_stall_and_load_on_its_own_axis():
    fig = plots.timeseries(_run())
    ax_tp = fig.axes[0]
    twin = [ax for ax in fig.axes if ax is not ax_tp and ax.bbox.bounds == ax_tp.bbox.bounds]
    assert len(twin) == 1 and "load" in twin[0].get_ylabel()
    ys = [y for line in ax_tp.lines if line.get_marker() == "." for y in line.get_ydata()]   # not the step marks
    assert ys and max(ys) <= 300 and ys.count(0.0) == 3               # the stall: all, READ, UPDATE
    assert max(y for line in twin[0].lines for y in line.get_ydata()) == 30_000
