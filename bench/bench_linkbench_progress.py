"""The controller's cost of LinkBench's terminal lines (log.LiveProgress: progress lines
and the displayfreq statistics) against the status lines they replace, on the same
interval rows: the maintained mix at a given request rate, 120 seconds of them.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_linkbench_progress.py --rates 5000,50000 --rounds 3
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from benchlib.run.intervals import status_line
from benchlib.workloads.linkbench.log import LiveProgress, Progress
from benchlib.workloads.linkbench.properties import PERCENTAGES, from_properties

SECONDS = 120


def _rows(rate: int, p, rng) -> list[list[dict]]:
    mix = {PERCENTAGES[k]: getattr(p, k) / 100 for k in PERCENTAGES}
    return [[{"second": s, "op": op, "ops": int(rate * f), "errors": 0, "_failed": 0,
              "interval_s": 1.0, "_svc": rng.exponential(300, int(rate * f))}
             for op, f in mix.items() if int(rate * f)] for s in range(SECONDS)]


def _live(seconds, p) -> float:
    live, t = LiveProgress(Progress(p, "run", None, 600)), time.process_time()
    for rows in seconds:
        live(rows, rows[0]["second"] + 1.5)
    return time.process_time() - t


def _status(seconds, every: int = 10) -> float:
    """The collector's status-line path: the window's latencies, a line every 10 s."""
    window, t, total = {}, time.process_time(), 0
    for rows in seconds:
        for r in rows:
            w = window.setdefault(r["op"], {"count": 0, "svc": []})
            w["count"] += r["ops"]
            w["svc"].append(r["_svc"])
            total += r["ops"]
        if (rows[0]["second"] + 1) % every == 0:
            status_line(rows[0]["second"] + 1, total, total / (rows[0]["second"] + 1), window)
            window = {}
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="5000,50000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    p = from_properties({"progressfreq": 10, "displayfreq": 60})
    rng = np.random.default_rng(1)
    print(f"load average {os.getloadavg()[0]:.1f}")
    for rate in (int(x) for x in args.rates.split(",")):
        seconds, live, status = _rows(rate, p, rng), [], []
        for _ in range(args.rounds):   # alternating
            live.append(_live(seconds, p))
            status.append(_status(seconds))
        lm, sm = statistics.median(live), statistics.median(status)
        print(f"{rate} req/s: LinkBench lines {lm / SECONDS * 1e3:.2f} ms CPU per second of the "
              f"step, status lines {sm / SECONDS * 1e3:.2f} ms; ratio {lm / sm:.2f} "
              f"(median of {args.rounds})")


if __name__ == "__main__":
    main()
