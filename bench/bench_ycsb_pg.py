"""benchlib's driver against pgbench on the machine's PostgreSQL, in one session.

The fair limit is pgbench doing the same work: YCSB's table (100k records of ten
100-character fields) copied with an integer key, and a pgbench script fetching the
same ~1 KB row (key and every field) by a uniformly drawn key; for workload A a second
script updating one field, the two at 50/50 as YCSB's A. benchlib runs YCSB C (all
reads) and A (reads and updates) with uniform keys too, through its C loop over libpq
(``run.driver: c``) and its Python loop (``python``, multiplexed from 4 connections per
process as by default); ``pgbench -S -M prepared`` on a scale-1 pgbench database
stays beside them, the reference of the earlier figures. At 1, 4 and 16 clients for
``--secs`` each, alternating so all see the same machine; then the load of 100k
records. Prints Markdown tables for BENCHMARKS.md: ops/s, ratios to the fair limit,
and client CPU µs per operation (pgbench: its process's CPU from RUSAGE_CHILDREN;
benchlib: the client processes' own getrusage over the step, the steps table's
client_cpu_s).

    .venv/bin/python bench/bench_ycsb_pg.py [--url postgresql://postgres@127.0.0.1:5432/test]
                                             [--secs 20] [--clients 1,4,16] [--mixes C,A]
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

from reference_tools import need

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results


def child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _conn_args(url: str) -> list[str]:
    u = urlsplit(url)
    return ["-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432), "-U", u.username or "postgres",
            u.path.lstrip("/") or "test"]


def pgbench(url: str, clients: int, secs: int, scripts: list[str] | None = None) -> tuple[float, float]:
    """pgbench -S (or the given script files, ``path@weight``): tps and its own CPU µs per
    transaction (RUSAGE_CHILDREN: the pgbench process alone, not the server)."""
    mode = ["-S"] if not scripts else [x for f in scripts for x in ("-f", f)]
    args = ["pgbench", "-n", *mode, "-M", "prepared", "-c", str(clients), "-j", str(min(clients, 2)),
            "-T", str(secs), *_conn_args(url)]
    cpu0 = child_cpu_s()
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    cpu = child_cpu_s() - cpu0
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    return tps, cpu / (tps * secs) * 1e6


def same_row_scripts(url: str, records: int, folder: Path, fields: int = 10,
                     table: str = "ycsb_bench") -> dict[str, list[str]]:
    """The fair limit: a copy of the loaded YCSB table (``<table>_int``) with an integer
    key, and pgbench scripts that do what YCSB's read and update do on it: the same ~1 KB
    row (the key and every field) by a uniformly drawn key; an update of one field to 100
    characters."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,58}", table):
        raise SystemExit(f"table {table!r}: a plain lower-case SQL name, please")
    cols = ", ".join(f"field{i}" for i in range(fields))
    copy = f"{table}_int"
    sql = [f"DROP TABLE IF EXISTS {copy}",
           f"CREATE TABLE {copy} AS SELECT (row_number() OVER ())::int AS id, ycsb_key, {cols} "
           f"FROM {table}", f"ALTER TABLE {copy} ADD PRIMARY KEY (id)", f"VACUUM ANALYZE {copy}"]
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", *_conn_args(url), *(x for q in sql for x in ("-c", q))],
                   check=True, capture_output=True)
    value = "x" * 100
    read = folder / "read.sql"
    read.write_text(f"\\set id random(1, {records})\nSELECT ycsb_key, {cols} FROM {copy} WHERE id = :id;\n")
    update = folder / "update.sql"
    update.write_text(f"\\set id random(1, {records})\n"
                      f"UPDATE {copy} SET field0 = '{value}' WHERE id = :id;\n")
    return {"C": [str(read)], "A": [f"{read}@50", f"{update}@50"]}


def benchlib_run(url: str, data_dir: Path, name: str, threads: int, secs: float | None,
                 load: bool, records: int, multiplex: bool | str = False, driver: str = "auto",
                 mix: str = "C", distribution: str = "zipfian",
                 table: str = "ycsb_bench") -> tuple[float, float, dict]:
    read = 1.0 if mix == "C" else 0.5
    exp = validate({
        "experiment": name, "workload": "ycsb",
        "properties": {"recordcount": records, "operationcount": 10**9, "readproportion": read,
                       "table": table,  # its own table: test suites may share the database
                       "updateproportion": 1.0 - read, "requestdistribution": distribution},
        "targets": [{"name": "pg", "url": url}],
        "load": {"skip": not load, "threads": 2, "processes": [2], "batch_size": 5000},
        "run": {"skip": secs is None, "threads": [threads], "loops": 1, "loop_secs": secs or 1,
                "status_interval_s": 3600, "multiplex": multiplex, "driver": driver},
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
    if secs and driver == "c":
        assert t["runs"]["meta"].iloc[0]["driver_path"].startswith("c-")
    # the client processes' own CPU over the step (getrusage in each: exact at any length;
    # their interpreter start-up and first chunk are before it)
    cpu = float(steps.loc[step, "client_cpu_s"])
    return ops / s, cpu / ops * 1e6, steps.loc[step].to_dict()


def _point(url: str, data: Path, n: int, mix: str, secs: int, records: int, scripts: dict, rep: int) -> dict:
    """One client count of one mix, alternating: pgbench's fair limit, benchlib's C loop,
    benchlib's Python loop (multiplex auto, as a run gets by default); for C also -S."""
    r = {}
    if mix == "C":
        r["S"] = pgbench(url, n, secs)
    r["pgb"] = pgbench(url, n, secs, scripts[mix])
    r["c"] = benchlib_run(url, data, f"{mix}c{n}-{rep}", n, secs, False, records, "auto", "c", mix,
                          "uniform")[:2]
    r["py"] = benchlib_run(url, data, f"{mix}p{n}-{rep}", n, secs, False, records, "auto", "python", mix,
                           "uniform")[:2]
    print(f"{mix} clients {n}: " + ", ".join(f"{k} {v[0]:,.0f}/s {v[1]:.1f} µs" for k, v in r.items()),
          file=sys.stderr)
    return r


def _medians(reps: list[dict]) -> dict:
    """Per column, the median of the repetitions' (rate, CPU µs/op) pairs, each median
    of its own (a shared machine: one slow repetition is not the driver's)."""
    import statistics
    return {k: tuple(statistics.median(r[k][i] for r in reps) for i in (0, 1)) for k in reps[0]}


def _table(mix: str, points: dict) -> None:
    ref = "pgbench same row" if mix == "C" else "pgbench read+update"
    s_col = " pgbench -S (tps) |" if mix == "C" else ""
    print(f"\nWorkload {mix}:\n\n| clients |{s_col} {ref} (tps) | benchlib, C loop (ops/s) | ratio "
          f"| benchlib, Python (ops/s) | ratio | client CPU µs/op: {ref} / C / Python | CPU ratio C / pgbench |")
    print("|---:|" + ("---:|" if mix == "C" else "") + "---:|---:|---:|---:|---:|---|---:|")
    for n, r in points.items():
        (tps, pc), (c, cc), (p, py) = r["pgb"], r["c"], r["py"]
        s_val = f" {r['S'][0]:,.0f} |" if mix == "C" else ""
        print(f"| {n} |{s_val} {tps:,.0f} | {c:,.0f} | {c / tps:.2f} | {p:,.0f} | {p / tps:.2f} "
              f"| {pc:.1f} / {cc:.1f} / {py:.1f} | {cc / pc:.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--mixes", default="C,A", help="YCSB workloads to run: C (reads), A (reads and updates)")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=1, help="repeat the whole alternation; medians")
    a = ap.parse_args()
    need({"pgbench": "apt-get install postgresql (or postgresql-client, as the release ships it)",
          "psql": "apt-get install postgresql-client"})
    subprocess.run(["pgbench", "-i", "-q", "-s", str(max(a.records // 100_000, 1)), *_conn_args(a.url)],
                   check=True, capture_output=True)
    data = Path(tempfile.mkdtemp(prefix="bench-ycsb-"))
    # the load first (it also makes the table the runs read, and its integer-keyed copy)
    load_rate, load_cpu, _ = benchlib_run(a.url, data, "load", 1, None, True, a.records)
    scripts = same_row_scripts(a.url, a.records, data)
    mixes = a.mixes.split(",")
    points: dict = {m: {} for m in mixes}
    counts = [int(x) for x in a.clients.split(",")]
    for rep in range(a.reps):
        for n in counts:
            for mix in mixes:
                points[mix].setdefault(n, []).append(_point(a.url, data, n, mix, a.secs, a.records, scripts, rep))
    points = {m: {n: _medians(reps) for n, reps in p.items()} for m, p in points.items()}
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"{a.records:,} records, uniform keys, {a.secs} s per point, medians of {a.reps}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    for mix in mixes:
        _table(mix, points[mix])
    print(f"\nLoad of {a.records:,} records (2 loader processes, COPY batches of 5000): "
          f"{load_rate:,.0f} records/s (client CPU {load_cpu:.1f} µs/record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
