"""The driver's own ceiling: YCSB against the ``basic`` target (no database at all).

Reference in the same session: a naive Python loop that does the least a driver must
per operation — call a no-op function and take two clock readings — over the same
number of operations. The ratio says what benchlib's measuring (histograms,
per-second intervals, process start, chunk preparation inside the window) costs.

    .venv/bin/python bench/bench_ceiling.py [--secs 5] [--threads 1,2]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results


def naive_loop(secs: float) -> float:
    def op(key, field):
        return 0
    ns = time.perf_counter_ns
    lat = []
    app = lat.append
    args = [(f"user{i}", -1) for i in range(100_000)]
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < secs:
        for a in args:
            s = ns()
            op(*a)
            app(ns() - s)
        n += len(args)
        lat.clear()
    return n / (time.perf_counter() - t0)


def benchlib_basic(threads: int, secs: float, data: Path) -> float:
    exp = validate({
        "experiment": f"ceiling-{threads}", "workload": "ycsb",
        "properties": {"recordcount": 100_000, "operationcount": 10**9, "readproportion": 1.0,
                       "updateproportion": 0, "requestdistribution": "zipfian"},
        "targets": [{"name": "basic", "url": "basic"}],
        "load": {"skip": True},
        "run": {"threads": [threads], "loops": 1, "loop_secs": secs, "status_interval_s": 3600},
    }, "bench")
    with open(os.devnull, "w") as devnull:
        assert run_experiment(exp, data, progress=False, out=devnull).ok
    s = load_results(data / exp.experiment)["steps"].set_index("step").loc["r.L1"]
    return float(s["ops"] / s["secs"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=float, default=5)
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-ceiling-"))
    ref = naive_loop(a.secs)
    print("| threads | naive loop (ops/s, 1 thread) | benchlib basic (ops/s) | ratio |")
    print("|---:|---:|---:|---:|")
    for t in [int(x) for x in a.threads.split(",")]:
        ops = benchlib_basic(t, a.secs, data)
        print(f"| {t} | {ref:,.0f} | {ops:,.0f} | {ops / ref:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
