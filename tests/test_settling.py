"""``summary --kind loops``: per loop figures and the loop from which a run has settled,
on a run folder made here of 12 loops that start cold (no timing: the figures are set)."""
from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

from benchlib import load_results, summaries
from benchlib.store import folders
from benchlib.summaries.settling import settling_loop

ROOT = Path(__file__).resolve().parents[1]
# a cold start: throughput climbs, p99 and CPU per op fall, then they stay within ±0.3 %
OPS_S = [1000, 1500, 1800, 1950, 2003, 1998, 2001, 2004, 1997, 2000, 2002, 1999]
READ_P99 = [9000, 5000, 3000, 2100, 2004, 1996, 2002, 2000, 1998, 2003, 1999, 2001]
CPU_S = [30, 36, 40, 41, 42, 42, 42, 42, 42, 42, 42, 42]   # per 60 s loop: CPU/op settles first


def cold_run(tmp_path: Path) -> Path:
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    steps, lat, hw = [], [], []
    for i, (rate, p99, cpu) in enumerate(zip(OPS_S, READ_P99, CPU_S), start=1):
        name = f"r.L{i}"
        started = t0 + timedelta(minutes=i)
        steps.append({"run_id": "cold", "step": name, "phase": "run", "loop": i, "started": started,
                      "ended": started + timedelta(seconds=60), "secs": 60.0, "ops": rate * 60,
                      "errors": 0, "status": "ok", "client_cpu_s": cpu / 2, "dbms_cpu_s": cpu / 2})
        for op, p in (("READ", p99), ("UPDATE", 3000.0)):
            lat.append({"run_id": "cold", "step": name, "op": op, "count": rate * 30, "p99_us": p})
        hw += [{"run_id": "cold", "step": name, "second": s, "disk_read_kb": 100.0,
                "disk_write_kb": 300.0} for s in range(3)]
    meta = {"run_id": "cold", "experiment": "settle", "config": "c", "workload": "ycsb"}
    return folders.write_run(tmp_path / "settle" / "cold", meta, steps=pd.DataFrame(steps),
                             latency=pd.DataFrame(lat), hw=pd.DataFrame(hw))


def test_a_cold_run_settles_at_the_loop_the_rule_says(tmp_path):
    run_dir = cold_run(tmp_path)
    df = summaries.FRAMES["loops"](load_results(run_dir))
    assert len(df) == 12
    run = df.set_index("step")
    # ops/s: the last 4 loops' band is ±1 % (their noise is smaller); r.L4 (1950) is outside
    assert run["settled_ops_s"].iloc[0] == 5
    assert run["settled_p99_READ"].iloc[0] == 5         # 2100 is 5 % off
    assert run["settled_p99_UPDATE"].iloc[0] == 1       # never moved
    assert run["settled_cpu_us_op"].iloc[0] == 4        # 41/(1950·60) is within 1 % of 42/(2000·60)
    assert run["settled_from"].iloc[0] == 5
    assert run.loc["r.L4", "state"] == "warming" and run.loc["r.L5", "state"] == "settled"
    assert abs(run.loc["r.L1", "io_kb_op"] - 400 / 1000) < 1e-12
    assert abs(run.loc["r.L1", "cpu_us_op"] - 30 / 60000 * 1e6) < 1e-9


def test_summary_kind_loops_prints_the_settling_loop(tmp_path):
    run_dir = cold_run(tmp_path)
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "summary", str(run_dir), "--kind", "loops"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("cold: 12 loops, settled from r.L5 (ops/s r.L5, READ.p99_us r.L5")
    assert lines[1].split() == ["loop", "ops/s", "READ.p99_us", "UPDATE.p99_us", "cpu_us/op",
                                "io_kb/op", "state"]
    assert lines[5].split()[0] == "r.L4" and lines[5].split()[-1] == "warming"
    assert lines[6].split()[0] == "r.L5" and lines[6].split()[-1] == "settled"


def test_the_rule_on_its_own():
    assert settling_loop([1, 2, 3]) is None                       # too few loops for a verdict
    assert settling_loop([100] * 6) == 1
    assert settling_loop([50, 100, 100, 100, 100, 100]) == 2
    # noisy final third: its band is wider than ±1 %, and a loop inside it counts as settled
    noisy = [50, 90, 100, 110, 95, 105, 92, 108, 100]
    assert settling_loop(noisy) == 2
    assert settling_loop([100, 100, 100, 100, 100, float("nan")]) is None   # the last loop lacks it
