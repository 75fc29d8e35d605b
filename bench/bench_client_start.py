"""What starting a step's client processes costs: forked from benchlib's forkserver (the
default) against spawned as new interpreters (``BENCHLIB_START_METHOD=spawn``, the way
before), alternating, the same experiment run whole through the CLI.

Per run: wall time and the CPU of the whole process tree (the controller, its forkserver,
every client, the SQLite engine they run), counted exactly: this script is the tree's
subreaper (``PR_SET_CHILD_SUBREAPER``), so the forkserver, which outlives its controller
by a moment, is reaped here and its clients' CPU (reaped by it) with it; RUSAGE_CHILDREN
before and after. The reference is the spawned run of the same sitting; the ratio is
forked ÷ spawned, per alternation, and their median.

    .venv/bin/python bench/bench_client_start.py [--reps 5] [--loop-secs 1]
        [--experiment parameters/quickstart.yaml] [-p KEY=VALUE ...]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36   # linux/prctl.h
HERE = Path(__file__).resolve().parent.parent


def tree_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def reap_all() -> None:
    """Every descendant re-parented here (the forkserver after its controller) reaped."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def one_run(method: str, experiment: Path, overrides: list[str], data: Path) -> tuple[float, float]:
    env = dict(os.environ, BENCHLIB_START_METHOD=method)
    cmd = [str(Path(sys.executable).with_name("benchlib")), "run", str(experiment), "--data-dir", str(data),
           "--no-progress"] + [a for o in overrides for a in ("-p", o)]
    cpu0, t0 = tree_cpu_s(), time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    reap_all()
    if r.returncode:
        raise SystemExit(f"bench_client_start: {method} run failed ({r.returncode}): "
                         f"{r.stderr.strip().splitlines()[-1:] or ''}")
    return wall, tree_cpu_s() - cpu0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--loop-secs", type=float, default=1.0)
    ap.add_argument("--experiment", type=Path, default=HERE / "parameters" / "quickstart.yaml")
    ap.add_argument("-p", dest="overrides", action="append", default=[])
    a = ap.parse_args()
    if not a.experiment.is_file():
        raise SystemExit(f"bench_client_start: no experiment file {a.experiment}")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("bench_client_start: cannot become the runs' subreaper (prctl), "
                         "the forkserver's CPU would be lost")
    overrides = [f"run.loop_secs={a.loop_secs}"] + a.overrides
    print(f"{a.experiment.name} {' '.join(overrides)}; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}; {time.strftime('%Y-%m-%d %H:%M')}")
    print("\n| alternation | spawn: wall s / tree CPU s | forkserver: wall s / tree CPU s | "
          "CPU forked ÷ spawned | wall forked ÷ spawned | load avg |\n|---:|---|---|---:|---:|---:|")
    cpu_ratios, wall_ratios, rows = [], [], {"spawn": [], "forkserver": []}
    with tempfile.TemporaryDirectory(prefix="bench_client_start_") as tmp:
        for i in range(1, a.reps + 1):
            got = {}
            for method in ("spawn", "forkserver"):
                got[method] = one_run(method, a.experiment, overrides, Path(tmp) / f"{method}{i}")
                rows[method].append(got[method])
            (ws, cs), (wf, cf) = got["spawn"], got["forkserver"]
            cpu_ratios.append(cf / cs)
            wall_ratios.append(wf / ws)
            print(f"| {i} | {ws:.1f} / {cs:.1f} | {wf:.1f} / {cf:.1f} | {cf / cs:.2f} | {wf / ws:.2f} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)
    med = {m: [statistics.median(x[k] for x in v) for k in (0, 1)] for m, v in rows.items()}
    print(f"\nmedians: spawn {med['spawn'][0]:.1f} s wall / {med['spawn'][1]:.1f} s CPU, forkserver "
          f"{med['forkserver'][0]:.1f} s / {med['forkserver'][1]:.1f} s; ratio forked ÷ spawned CPU "
          f"{statistics.median(cpu_ratios):.2f}, wall {statistics.median(wall_ratios):.2f}")


if __name__ == "__main__":
    main()
