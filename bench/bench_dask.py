"""What the Dask executor costs: the same YCSB workload C run by local processes and by
Dask tasks, in one sitting.

Workload C (100% read, zipfian; ``--records`` records, loaded once into its own table)
against the machine's PostgreSQL for ``--secs`` per loop, with 1 and 2 driver processes
(``--threads-per-process`` threads each), alternating local / dask ``--rounds`` times so
both see the same machine. The Dask runs use one LocalCluster of 2 worker processes over
loopback TCP, started once (its start-up is not in any measured window); a warm-up loop
comes first and the order within a round alternates. Prints a
Markdown table for BENCHMARKS.md: the median ops/s of each, and dask / local — the
throughput the coordination costs (the barrier, the per-second queue through the
scheduler, the worker's own threads beside the driver's).

    .venv/bin/python bench/bench_dask.py [--url postgresql://postgres@127.0.0.1:5432/test] [--secs 10]
    .venv/bin/python bench/bench_dask.py --url basic     # no database: the drivers' ceiling
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

from reference_tools import need

from benchlib.params import plan, validate
from benchlib.run.dask_executor import DaskExecutor
from benchlib.run.executors import LocalExecutor
from benchlib.run.experiment import run_one
from benchlib.store.folders import load_results

TABLE = "ycsb_dask_bench"   # its own table: test suites may share the database


def experiment(url: str, name: str, records: int, load: bool, procs: int, threads: int,
               secs: float, executor: str):
    return validate({
        "experiment": name, "workload": "ycsb", "executor": executor,
        "properties": {"recordcount": records, "operationcount": 10**9, "readproportion": 1.0,
                       "table": TABLE, "updateproportion": 0, "requestdistribution": "zipfian"},
        "targets": [{"name": "pg", "url": url}],
        "load": {"skip": not load, "threads": 2, "processes": [2], "batch_size": 5000},
        "run": {"skip": load, "threads": [procs * threads], "processes": procs, "loops": 1,
                "loop_secs": secs, "status_interval_s": 3600, "multiplex": False},
        "seed": 1,
    }, "bench")


def one(exp, data_dir: Path, executor) -> tuple[float, float, float]:
    """ops/s of the step; the drivers' own CPU µs per operation; this controller's CPU
    seconds over the run (with a local cluster, its scheduler's too)."""
    (spec,) = plan(exp)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    exp_dir = data_dir / exp.experiment
    exp_dir.mkdir(parents=True, exist_ok=True)
    with open(os.devnull, "w") as devnull:
        status = run_one(exp, spec, exp_dir, data_dir, out=devnull, progress=False, executor=executor)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    ctl = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    if status != "ok":
        raise SystemExit(f"{exp.experiment}: {status}")
    t = load_results(exp_dir / spec.run_id)
    steps = t["steps"].set_index("step")
    step = "l.pre" if "r.L1" not in steps.index else "r.L1"
    if steps.loc[step, "errors"]:
        raise SystemExit(f"{exp.experiment}: {steps.loc[step, 'errors']} errors")
    ops = float(steps.loc[step, "ops"])
    drv = t["drivers"].query("step == @step")
    return ops / float(steps.loc[step, "secs"]), float(drv["cpu_s"].sum()) / ops * 1e6, ctl


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test",
                    help="or basic: no database, the drivers' own ceiling")
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads-per-process", type=int, default=1)
    args = ap.parse_args()
    need(modules={"distributed": "pip install 'benchlib[dask]'"})
    tpp = args.threads_per_process
    data_dir = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    local = LocalExecutor()
    if args.url != "basic":
        one(experiment(args.url, "load", args.records, True, 1, 1, 1, "local"), data_dir, local)
    dask = DaskExecutor.connect(None, workers=2)
    rates: dict[tuple[int, str], list[tuple[float, float, float]]] = {}
    try:
        # a warm-up loop, not counted: the first after the load runs on a cold cache
        one(experiment(args.url, "warm", args.records, False, 2, tpp, args.secs, "local"), data_dir, local)
        for r in range(args.rounds):
            for procs in (1, 2):
                # which goes first alternates: a drift of the machine touches both alike
                pair = [("local", local), ("dask", dask)]
                for name, ex in (pair if r % 2 == 0 else pair[::-1]):
                    exp = experiment(args.url, f"c-{name}-p{procs}-{r}", args.records, False, procs,
                                     tpp, args.secs, name)
                    got = one(exp, data_dir, ex)
                    rates.setdefault((procs, name), []).append(got)
                    print(f"round {r + 1} p{procs} {name}: {got[0]:,.0f} ops/s, drivers {got[1]:.2f} µs/op, "
                          f"controller {got[2]:.2f} s", file=sys.stderr, flush=True)
    finally:
        dask.close()
    print("| driver processes × threads | local ops/s | dask ops/s | dask / local: median of rounds "
          "(range) | driver CPU µs/op local / dask | controller CPU s local / dask |\n|---|---|---|---|---|---|")
    for procs in (1, 2):
        lo, da = rates[(procs, "local")], rates[(procs, "dask")]
        ratios = [d[0] / v[0] for d, v in zip(da, lo)]
        med = [statistics.median(x[i] for x in runs) for runs in (lo, da) for i in range(3)]
        print(f"| {procs} × {tpp} | {med[0]:,.0f} | {med[3]:,.0f} | {statistics.median(ratios):.3f} "
              f"({min(ratios):.2f}–{max(ratios):.2f}) | {med[1]:.2f} / {med[4]:.2f} | "
              f"{med[2]:.2f} / {med[5]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
