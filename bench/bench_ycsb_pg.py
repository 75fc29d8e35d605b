"""benchlib's driver against pgbench on the machine's PostgreSQL, in one session.

YCSB workload C (100% read, zipfian; 100k records) for ``--secs`` at 1, 4 and 16
clients, next to ``pgbench -S -M prepared`` with the same client counts on a
pgbench database of the same row count (scale 1 = 100k accounts), alternating so
both see the same machine; then the load of 100k records. Prints a Markdown table
for BENCHMARKS.md: ops/s, the ratio to pgbench, and client CPU seconds per operation
(pgbench: its process's CPU from RUSAGE_CHILDREN; benchlib: the sampler's client_cpu_s
during the step), in µs per operation.

    .venv/bin/python bench/bench_ycsb_pg.py [--url postgresql://postgres@127.0.0.1:5432/test] [--secs 20]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results


def child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pgbench(url: str, clients: int, secs: int) -> tuple[float, float]:
    u = urlsplit(url)
    args = ["pgbench", "-n", "-S", "-M", "prepared", "-c", str(clients), "-j", str(min(clients, 2)),
            "-T", str(secs), "-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432),
            "-U", u.username or "postgres", u.path.lstrip("/") or "test"]
    cpu0 = child_cpu_s()
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    cpu = child_cpu_s() - cpu0
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    return tps, cpu / (tps * secs) * 1e6


def benchlib_run(url: str, data_dir: Path, name: str, threads: int, secs: float | None,
                 load: bool, records: int, multiplex: bool = False) -> tuple[float, float, dict]:
    exp = validate({
        "experiment": name, "workload": "ycsb",
        "properties": {"recordcount": records, "operationcount": 10**9, "readproportion": 1.0,
                       "table": "ycsb_bench",  # its own table: test suites may share the database
                       "updateproportion": 0, "requestdistribution": "zipfian"},
        "targets": [{"name": "pg", "url": url}],
        "load": {"skip": not load, "threads": 2, "processes": [2], "batch_size": 5000},
        "run": {"skip": secs is None, "threads": [threads], "loops": 1, "loop_secs": secs or 1,
                "status_interval_s": 3600, "multiplex": multiplex},
        "seed": 1,
    }, "bench")
    with open("/dev/null", "w") as devnull:
        res = run_experiment(exp, data_dir, progress=False, out=devnull)
    assert res.ok, res.runs
    t = load_results(data_dir / name)
    steps = t["steps"].set_index("step")
    step = "r.L1" if secs else "l.pre"
    ops, s = float(steps.loc[step, "ops"]), float(steps.loc[step, "secs"])
    if steps.loc[step, "errors"]:
        raise SystemExit(f"{name}: {steps.loc[step, 'errors']} errors: is the table loaded?")
    # the sampler's client CPU: the client processes during the step only (not their
    # interpreter start-up or the preparation of operations)
    cpu = float(t["hw"].loc[t["hw"].step == step, "client_cpu_s"].sum())
    return ops / s, cpu / ops * 1e6, steps.loc[step].to_dict()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--records", type=int, default=100_000)
    a = ap.parse_args()
    u = urlsplit(a.url)
    subprocess.run(["pgbench", "-i", "-q", "-s", str(max(a.records // 100_000, 1)), "-h", u.hostname,
                    "-p", str(u.port or 5432), "-U", u.username or "postgres", u.path.lstrip("/")],
                   check=True, capture_output=True)
    data = Path(tempfile.mkdtemp(prefix="bench-ycsb-"))
    # the load first (it also makes the table the runs read)
    load_rate, load_cpu, _ = benchlib_run(a.url, data, "load", 1, None, True, a.records)
    rows = []
    for n in [int(x) for x in a.clients.split(",")]:
        tps, pg_cpu = pgbench(a.url, n, a.secs)
        ops, bl_cpu, _ = benchlib_run(a.url, data, f"c{n}", n, a.secs, False, a.records)
        if n > 1:
            mops, m_cpu, _ = benchlib_run(a.url, data, f"m{n}", n, a.secs, False, a.records, True)
        else:
            mops, m_cpu = float("nan"), float("nan")
        rows.append((n, tps, ops, mops, pg_cpu, bl_cpu, m_cpu))
        print(f"clients {n}: pgbench {tps:,.0f} tps, benchlib {ops:,.0f} ops/s, "
              f"multiplexed {mops:,.0f} ops/s", file=sys.stderr)
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"YCSB C, {a.records:,} records, {a.secs} s per point\n")
    print("| clients | pgbench -S -M prepared (tps) | benchlib, thread per client (ops/s) | ratio "
          "| benchlib, multiplexed (ops/s) | ratio | client CPU µs/op: pgbench / threads / multiplexed |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for n, tps, ops, mops, pc, bc, mc in rows:
        print(f"| {n} | {tps:,.0f} | {ops:,.0f} | {ops / tps:.2f} | {mops:,.0f} | {mops / tps:.2f} "
              f"| {pc:.1f} / {bc:.1f} / {mc:.1f} |")
    print(f"\nLoad of {a.records:,} records (2 loader processes, COPY batches of 5000): "
          f"{load_rate:,.0f} records/s (client CPU {load_cpu:.1f} µs/record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
