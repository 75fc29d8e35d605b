"""benchlib's kv GET against redis-benchmark on the machine's Redis, in one session.

GET alone (``read: 1``, uniform over ``--keys`` keys of 16 B with 100 B values) for
``--secs`` at 1 and 8 clients, next to ``redis-benchmark -t get -c N -P 1`` on keys of
its own of the same count and value size (``-r``, ``-d``), and a bare redis-py loop of
the same GETs at one client; alternating so all see the same machine. Then the
``basic`` target (no database) at 1 and 8 clients: the driver's own ceiling. Prints a
Markdown table for BENCHMARKS.md. Uses Redis database ``--db`` (default 9) and empties
it at the end.

    .venv/bin/python bench/bench_kv_redis.py [--secs 10] [--keys 100000] [--db 9]
"""
from __future__ import annotations

import argparse
import os
import random
import re
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


def redis_benchmark(clients: int, secs: float, keys: int, db: int, guess_ops_s: float) -> float:
    n = max(int(guess_ops_s * secs), 10_000)
    subprocess.run(["redis-benchmark", "--dbnum", str(db), "-t", "set", "-r", str(keys),
                    "-n", str(keys * 3), "-d", "100", "-q"], capture_output=True, check=True)
    out = subprocess.run(["redis-benchmark", "--dbnum", str(db), "-t", "get", "-c", str(clients),
                          "-P", "1", "-r", str(keys), "-n", str(n), "-d", "100", "-q"],
                         capture_output=True, text=True, check=True).stdout
    return float(re.findall(r"GET: ([\d.]+) requests per second", out)[-1])


def bare_redis_py(url: str, secs: float, keys: int) -> float:
    import redis

    from benchlib.workloads.kv.plan import key_strings
    r = redis.Redis.from_url(url)
    ks = key_strings(list(range(keys)), 16, "kvbench:")
    random.seed(1)
    order = [ks[random.randrange(keys)] for _ in range(200_000)]
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < secs:
        for k in order[:20_000]:
            r.get(k)
        n += 20_000
    return n / (time.perf_counter() - t0)


def benchlib_run(url: str, data_dir: Path, name: str, threads: int, secs: float | None,
                 keys: int, processes="auto") -> float:
    exp = validate({
        "experiment": name, "workload": "kv",
        "properties": {"read": 1.0, "key_count": keys, "value_size": 100, "table": "kvbench",
                       "op_count": 0},
        "targets": [{"name": "t", "url": url}],
        "load": {"skip": secs is not None, "threads": 2, "batch_size": 5000},
        "run": {"skip": secs is None, "threads": [threads], "processes": processes, "loops": 1,
                "loop_secs": secs or 1, "status_interval_s": 3600},
        "seed": 1,
    }, "bench")
    with open("/dev/null", "w") as devnull:
        res = run_experiment(exp, data_dir, progress=False, out=devnull)
    assert res.ok, res.runs
    steps = load_results(data_dir / name)["steps"].set_index("step")
    step = "r.L1" if secs else "l.pre"
    if secs and steps.loc[step, "errors"]:
        raise SystemExit(f"{name}: {steps.loc[step, 'errors']} errors: are the keys loaded?")
    return float(steps.loc[step, "ops"]) / float(steps.loc[step, "secs"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--db", type=int, default=9)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    need({"redis-benchmark": "apt-get install redis-tools"})
    url = f"redis://127.0.0.1:6379/{a.db}"
    data = Path(tempfile.mkdtemp(prefix="bench-kv-"))
    load = benchlib_run(url, data, "load", 2, None, a.keys)
    pts: dict[int, list] = {1: [], 8: []}
    for rep in range(a.reps):  # alternating, so that both see the same (shared) machine
        for n in (1, 8):
            rb = redis_benchmark(n, a.secs, a.keys, a.db, 40_000 if n == 1 else 80_000)
            ops = benchlib_run(url, data, f"c{n}-{rep}", n, a.secs, a.keys)
            per = benchlib_run(url, data, f"p{n}-{rep}", n, a.secs, a.keys, processes=n) \
                if n > 1 else ops
            pts[n].append((rb, ops, per))
            print(f"rep {rep} clients {n}: redis-benchmark {rb:,.0f}, benchlib {ops:,.0f} / "
                  f"{per:,.0f} op/s", file=sys.stderr)
    bare = bare_redis_py(url, a.secs, a.keys)
    basic = [benchlib_run("basic", data, f"b{n}", n, a.secs, a.keys) for n in (1, 8)]
    import redis
    redis.Redis.from_url(url).flushdb()
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores (shared); {time.strftime('%Y-%m-%d %H:%M')}; "
          f"GET, {a.keys:,} keys of 16 B, 100 B values, {a.secs:g} s per point, "
          f"{a.reps} alternating repetitions (median; ratios per repetition in brackets)\n")
    print("| clients | redis-benchmark -P 1 (op/s) | benchlib kv, processes auto (op/s) | ratio "
          "| benchlib kv, a process per client (op/s) | ratio | µs/op = 1e6·clients/op/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, rows in pts.items():
        rb, ops, per = (statistics.median(x) for x in zip(*rows))
        r1 = statistics.median(o / r for r, o, _ in rows)
        r2 = statistics.median(p / r for r, _, p in rows)
        each1 = ", ".join(f"{o / r:.2f}" for r, o, _ in rows)
        each2 = ", ".join(f"{p / r:.2f}" for r, _, p in rows)
        print(f"| {n} | {rb:,.0f} | {ops:,.0f} | {r1:.2f} [{each1}] | {per:,.0f} | {r2:.2f} [{each2}] "
              f"| {1e6 * n / ops:.1f} |")
    print(f"\nBare redis-py loop (`r.get`, one client): {bare:,.0f} op/s. Load of {a.keys:,} keys: "
          f"{load:,.0f} keys/s. basic target (no database): {basic[0]:,.0f} op/s at 1 client, "
          f"{basic[1]:,.0f} at 8.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
