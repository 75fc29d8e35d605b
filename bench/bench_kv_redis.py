"""benchlib's kv GET and SET against redis-benchmark on the machine's Redis, in one session.

For each of GET (kv ``read: 1``) and SET (kv ``update: 1``: ``SET k v XX`` on loaded
keys) at each client count (``--clients``, default 1, 8, 32): ``redis-benchmark -t
get|set -c N -P 1`` on keys of its own of the same count and value size (``-r``,
``-d``), then benchlib's run loop for ``--secs`` (``run.driver`` ``--driver``, default
auto: the C loop over hiredis where it is built), alternating, ``--reps`` times. Each
point's client CPU per operation beside it: redis-benchmark's from getrusage of the
child, benchlib's the client processes' own (the steps table's ``client_cpu_s``), and
the load average when it ran. Prints a Markdown table for BENCHMARKS.md.

Uses Redis database ``--db`` (default 13), benchlib's keys under the prefix
``hiredis_kvbench:`` and redis-benchmark's ``key:*`` there; removes both at the end
(the database's other keys are left alone).

    .venv/bin/python bench/bench_kv_redis.py [--secs 5] [--reps 3] [--clients 1,8,32]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reference_tools import need

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results

TABLE = "hiredis_kvbench"
MIX = {"get": {"read": 1.0}, "set": {"update": 1.0}}


def child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def redis_benchmark(test: str, clients: int, secs: float, keys: int, db: int, guess: float):
    """(op/s, client CPU µs per op) of ``redis-benchmark -t test -c clients -P 1``."""
    n = max(int(guess * secs), 10_000)
    cpu0 = child_cpu_s()
    out = subprocess.run(["redis-benchmark", "--dbnum", str(db), "-t", test, "-c", str(clients),
                          "-P", "1", "-r", str(keys), "-n", str(n), "-d", "100", "-q"],
                         capture_output=True, text=True, check=True).stdout
    ops_s = float(re.findall(rf"{test.upper()}: ([\d.]+) requests per second", out)[-1])
    return ops_s, (child_cpu_s() - cpu0) / n * 1e6


def benchlib_run(url: str, data_dir: Path, name: str, mix: dict, threads: int, secs: float | None,
                 keys: int, processes, driver: str):
    """(op/s, client CPU µs per op, driver_path) of one kv run (secs None: the load)."""
    exp = validate({
        "experiment": name, "workload": "kv",
        "properties": {**mix, "key_count": keys, "value_size": 100, "table": TABLE, "op_count": 0},
        "targets": [{"name": "t", "url": url}],
        "load": {"skip": secs is not None, "threads": 2, "batch_size": 5000},
        "run": {"skip": secs is None, "threads": [threads], "processes": processes, "loops": 1,
                "loop_secs": secs or 1, "status_interval_s": 3600, "driver": driver},
        "seed": 1,
    }, "bench")
    with open("/dev/null", "w") as devnull:
        res = run_experiment(exp, data_dir, progress=False, out=devnull)
    assert res.ok, res.runs
    t = load_results(data_dir / name)
    steps = t["steps"].set_index("step")
    step = "r.L1" if secs else "l.pre"
    if secs and steps.loc[step, "errors"]:
        raise SystemExit(f"{name}: {steps.loc[step, 'errors']} errors: are the keys loaded?")
    ops = float(steps.loc[step, "ops"])
    path = t["runs"]["meta"].iloc[0].get("driver_path")
    return ops / float(steps.loc[step, "secs"]), float(steps.loc[step, "client_cpu_s"]) / ops * 1e6, path


def drop_keys(url: str) -> None:
    import redis
    r = redis.Redis.from_url(url)
    for pattern in (f"{TABLE}:*", "key:*"):
        batch = list(r.scan_iter(match=pattern, count=5000))
        for i in range(0, len(batch), 5000):
            r.unlink(*batch[i:i + 5000])
    r.close()


def measure(a, url: str, data: Path) -> dict:
    """{(test, clients): [(rb op/s, rb µs, benchlib op/s, benchlib µs, load avg), …]}"""
    pts: dict[tuple, list] = {}
    guess = {}
    for rep in range(a.reps):  # alternating, so that both see the same (shared) machine
        for test in a.tests:
            for n in a.clients:
                rb, rb_cpu = redis_benchmark(test, n, a.secs, a.keys, a.db, guess.get((test, n), 40_000))
                guess[(test, n)] = rb
                ops, cpu, path = benchlib_run(url, data, f"{test}{n}-{rep}", MIX[test], n, a.secs,
                                              a.keys, a.processes, a.driver)
                pts.setdefault((test, n), []).append((rb, rb_cpu, ops, cpu, os.getloadavg()[0]))
                print(f"rep {rep} {test} clients {n}: redis-benchmark {rb:,.0f} op/s {rb_cpu:.1f} µs/op, "
                      f"benchlib ({path}) {ops:,.0f} op/s {cpu:.1f} µs/op, ratio {ops / rb:.2f}, "
                      f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    return pts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=float, default=5)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--db", type=int, default=13)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--tests", default="get,set")
    ap.add_argument("--processes", default="auto")
    ap.add_argument("--driver", default="auto", choices=("auto", "c", "python"))
    a = ap.parse_args()
    need({"redis-benchmark": "apt-get install redis-tools"})
    a.clients = [int(x) for x in a.clients.split(",")]
    a.tests = a.tests.split(",")
    a.processes = a.processes if a.processes == "auto" else int(a.processes)
    url = f"redis://127.0.0.1:6379/{a.db}"
    data = Path(tempfile.mkdtemp(prefix="bench-kv-"))
    try:
        subprocess.run(["redis-benchmark", "--dbnum", str(a.db), "-t", "set", "-r", str(a.keys),
                        "-n", str(a.keys * 3), "-d", "100", "-q"], capture_output=True, check=True)
        load, _, _ = benchlib_run(url, data, "load", {"read": 1.0}, 2, None, a.keys, "auto", "auto")
        pts = measure(a, url, data)
    finally:
        drop_keys(url)
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores shared with other engineers' work; "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {a.keys:,} keys of 16 B, 100 B values, {a.secs:g} s "
          f"per point, {a.reps} alternating repetitions (median; each repetition's ratio in brackets); "
          f"benchlib run.driver {a.driver}, processes {a.processes}\n")
    print("| op | clients | redis-benchmark -P 1 (op/s) | benchlib kv (op/s) | ratio | "
          "client CPU µs/op: redis-benchmark / benchlib | load average |")
    print("|---|---:|---:|---:|---|---|---|")
    for (test, n), rows in pts.items():
        rb, rb_cpu, ops, cpu_us, _ = (statistics.median(x) for x in zip(*rows))
        each = ", ".join(f"{r[2] / r[0]:.2f}" for r in rows)
        ratio = statistics.median(r[2] / r[0] for r in rows)
        loads = [r[4] for r in rows]
        print(f"| {test.upper()} | {n} | {rb:,.0f} | {ops:,.0f} | {ratio:.2f} [{each}] | "
              f"{rb_cpu:.1f} / {cpu_us:.1f} | {min(loads):.1f}–{max(loads):.1f} |")
    print(f"\nLoad of {a.keys:,} keys (2 threads, pipelined MSET + ZADD): {load:,.0f} keys/s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
