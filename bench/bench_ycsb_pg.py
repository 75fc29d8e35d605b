"""benchlib's driver against pgbench on the machine's PostgreSQL, in one session.

The fair limit is pgbench doing the same work: YCSB's table (100k records of ten
100-character fields) copied with an integer key, and a pgbench script fetching the
same ~1 KB row (key and every field) by a uniformly drawn key; for workload A a second
script updating one field, the two at 50/50 as YCSB's A. benchlib runs YCSB C (all
reads) and A (reads and updates) with uniform keys too, through its C loop over libpq
(``run.driver: c``) and its Python loop (``python``, multiplexed from 4 connections per
process as by default); ``pgbench -S -M prepared`` on a scale-1 pgbench database
stays beside them, the reference of the earlier figures. At 1, 4, 16 and 64 clients for
``--secs`` each, alternating so all see the same machine (the order of the columns
turning by one place each ``--reps`` repetition); then the load of 100k records.
Prints Markdown tables for BENCHMARKS.md: ops/s, ratios to the fair limit, and client
CPU µs per operation (pgbench: its process's CPU from RUSAGE_CHILDREN;
benchlib: the client processes' own getrusage over the step, the steps table's
client_cpu_s), and the client side's context switches per operation, voluntary (a wait
that slept) and involuntary (a preemption): pgbench's process from os.wait4, benchlib's
client processes each over the step (getrusage, the drivers table). pgbench runs with
``-j 2`` past one client (one process, 2 threads, each polling its share of the
connections); benchlib with ``run.processes: auto`` (one client process per core: 2 here),
each driving its share from one thread in C: the same 2 threads polling n/2 connections
each. pgbench's CPU and switches are less those of a run of one transaction per client.

    .venv/bin/python bench/bench_ycsb_pg.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--secs 20] [--clients 1,4,16,64] [--mixes C,A] [--reps 3] [--no-python] [--table ycsb_bench]
        [--async-commit] [--same-table] [--chunk-cost]
"""
from __future__ import annotations

import argparse
import os
import random
import re
import string
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


def _conn_args(url: str) -> list[str]:
    u = urlsplit(url)
    return ["-h", u.hostname or "127.0.0.1", "-p", str(u.port or 5432), "-U", u.username or "postgres",
            u.path.lstrip("/") or "test"]


def run_counted(args: list[str], env: dict | None = None) -> tuple[str, float, int, int]:
    """Run a reference tool to its end: (output, its CPU seconds, voluntary and involuntary
    context switches of all its threads: os.wait4's rusage, the process alone)."""
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(0)
        text = out.read()
    if status:
        raise SystemExit(f"{args[0]} failed: {text[-500:]}")
    return text, ru.ru_utime + ru.ru_stime, ru.ru_nvcsw, ru.ru_nivcsw


def pgbench(url: str, clients: int, secs: int, scripts: list[str] | None = None) -> tuple[float, float, dict]:
    """pgbench -S (or the given script files, ``path@weight``, and ``-D name=value``
    variables among them): tps, its own CPU µs per transaction, and its context switches
    per transaction (the pgbench process alone, not the server), less those of a run of
    one transaction per client (its start-up: the connections, the prepared statements)."""
    mode = ["-S"] if not scripts else [x for f in scripts for x in ((f,) if f.startswith("-D") else ("-f", f))]
    args = ["pgbench", "-n", *mode, "-M", "prepared", "-c", str(clients), "-j", str(min(clients, 2)),
            *_conn_args(url)]
    _, cpu0, v0, i0 = run_counted(args[:1] + ["-t", "1"] + args[1:])
    out, cpu, v, i = run_counted(args[:1] + ["-T", str(secs)] + args[1:])
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    n = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
    return tps, max(cpu - cpu0, 0.0) / n * 1e6, {"vol_per_op": (v - v0) / n, "invol_per_op": (i - i0) / n}


def same_row_scripts(url: str, records: int, folder: Path, table: str = "ycsb_bench",
                     fields: int = 10, same_table: bool = False) -> dict[str, list[str]]:
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

    def script(name: str, first: int, statement: str) -> Path:
        """A pgbench script file: a uniform draw of :id from ``first``, one statement."""
        path = folder / name
        path.write_text(f"\\set id random({first}, {first + records - 1})\n{statement};\n")
        return path

    read = script("read.sql", 1, f"SELECT ycsb_key, {cols} FROM {copy} WHERE id = :id")
    update = script("update.sql", 1, f"UPDATE {copy} SET field0 = '{value}' WHERE id = :id")
    # the same update with YCSB's work on the wire: the 100 characters a parameter, sent
    # as text with each execution (-M prepared makes :value $1), as benchlib sends each
    # update's value; one value for the run (pgbench has no random strings), of YCSB's
    # alphabet (generators.ValuePool's: letters and digits)
    text = script("update_text.sql", 1, f"UPDATE {copy} SET field0 = :value WHERE id = :id")
    rng = random.Random(1)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(100))
    scripts = {"C": [str(read)], "A": [f"{read}@50", f"{update}@50"],
               "At": [f"{read}@50", f"{text}@50", f"-Dvalue={value}"]}
    if same_table:
        # pgbench doing YCSB A's statements on benchlib's own table, by its own text key:
        # the keys ordered (insertorder=ordered: 'user' and the key number, as YCSB makes
        # them), so pgbench can name a key ('user' || :id, one concatenation per statement)
        # and the server does the same work as for benchlib (the same index, the same rows)
        kread = script("read_key.sql", 0, f"SELECT ycsb_key, {cols} FROM {table} WHERE ycsb_key = 'user' || :id")
        kupdate = script("update_key.sql", 0, f"UPDATE {table} SET field0 = :value WHERE ycsb_key = 'user' || :id")
        scripts["Ak"] = [f"{kread}@50", f"{kupdate}@50", f"-Dvalue={value}"]
    return scripts


def benchlib_run(url: str, data_dir: Path, name: str, threads: int, secs: float | None,
                 load: bool, records: int, multiplex: bool | str = False, driver: str = "auto",
                 mix: str = "C", distribution: str = "zipfian", table: str = "ycsb_bench",
                 processes: int | str = "auto", ordered: bool = False) -> tuple[float, float, dict]:
    read = 1.0 if mix == "C" else 0.5
    exp = validate({
        "experiment": name, "workload": "ycsb",
        "properties": {"recordcount": records, "operationcount": 10**9, "readproportion": read,
                       "table": table,  # its own table: test suites may share the database
                       "updateproportion": 1.0 - read, "requestdistribution": distribution,
                       "insertorder": "ordered" if ordered else "hashed"},
        "targets": [{"name": "pg", "url": url}],
        # the load's loaders: the default (a loader process per core, load.processes auto)
        "load": {"skip": not load, "batch_size": 5000},
        "run": {"skip": secs is None, "threads": [threads], "processes": processes, "loops": 1, "loop_secs": secs or 1,
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
    row = steps.loc[step].to_dict()
    drivers = t["drivers"].query("step == @step")   # per client process, over the step
    row.update(vol_per_op=float(drivers["voluntary_switches"].sum()) / ops,
               invol_per_op=float(drivers["involuntary_switches"].sum()) / ops,
               client_processes=len(drivers))
    return ops / s, cpu / ops * 1e6, row


def _point(url: str, data: Path, n: int, mix: str, secs: int, records: int, scripts: dict, rep: int,
           python: bool = True, table: str = "ycsb_bench") -> dict:
    """One client count of one mix, alternating: pgbench's fair limit (for A also with the
    update's value a 100-character parameter, ``pgbt``, and on benchlib's own table,
    ``pgbk``), benchlib's C loop, benchlib's Python loop (multiplex auto, as a run gets by
    default); for C also -S. The order turns by one place each repetition, so that no
    column always runs first or last (after the others' updates, on a table they changed).
    Each column: (rate, client CPU µs/op, voluntary and involuntary switches per op)."""
    runs = []
    if mix == "C" and python:
        runs.append(("S", lambda: pgbench(url, n, secs)))
    runs.append(("pgb", lambda: pgbench(url, n, secs, scripts[mix])))
    if mix == "A":   # the same read+update, its 100 characters a parameter as benchlib's
        runs.append(("pgbt", lambda: pgbench(url, n, secs, scripts["At"])))
    if mix == "A" and "Ak" in scripts:   # and on benchlib's table by its own key
        runs.append(("pgbk", lambda: pgbench(url, n, secs, scripts["Ak"])))
    runs.append(("c", lambda: benchlib_run(url, data, f"{mix}c{n}-{rep}", n, secs, False, records, "auto", "c",
                                           mix, "uniform", table, ordered="Ak" in scripts)))
    if python:
        runs.append(("py", lambda: benchlib_run(url, data, f"{mix}p{n}-{rep}", n, secs, False, records, "auto",
                                                "python", mix, "uniform", table, ordered="Ak" in scripts)))
    turn = rep % len(runs)
    done = {k: f() for k, f in runs[turn:] + runs[:turn]}
    order = list(done)
    r = {k: (v[0], v[1], v[2]["vol_per_op"], v[2]["invol_per_op"]) for k, v in
         ((k, done[k]) for k, _ in runs)}     # the columns in their usual order again
    print(f"{mix} clients {n}: " + ", ".join(f"{k} {v[0]:,.0f}/s {v[1]:.1f} µs {v[2]:.2f}+{v[3]:.2f} sw"
                                             for k, v in r.items())
          + f"; run in the order {' '.join(order)}; load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return r


def _medians(reps: list[dict]) -> dict:
    """Per column, the median of the repetitions' figures, each median of its own (a
    shared machine: one slow repetition is not the driver's); the ratio to pgbench the
    median of the repetitions' ratios (each from one alternation)."""
    import statistics
    m = {k: tuple(statistics.median(r[k][i] for r in reps) for i in range(4)) for k in reps[0]}
    m["ratio"] = {k: statistics.median(r[k][0] / r["pgb"][0] for r in reps) for k in reps[0]}
    m["cpu"] = {k: statistics.median(r["c"][1] / r[k][1] for r in reps) for k in reps[0]}
    m["rate"] = {k: statistics.median(r["c"][0] / r[k][0] for r in reps) for k in reps[0]}
    return m


def _table(mix: str, points: dict) -> None:
    ref = "pgbench same row" if mix == "C" else "pgbench read+update"
    cols = [k for k in ("c", "py") if k in next(iter(points.values()))]
    name = {"c": "C loop", "py": "Python"}
    print(f"\nWorkload {mix}:\n\n| clients | {ref} (tps) | "
          + " | ".join(f"benchlib, {name[k]} (ops/s) | ratio" for k in cols)
          + f" | client CPU µs/op: pgbench / {' / '.join(name[k] for k in cols)} "
          f"| switches/op, voluntary + involuntary: pgbench / {' / '.join(name[k] for k in cols)} |")
    print("|---:|---:|" + "---:|---:|" * len(cols) + "---|---|")
    for n, r in points.items():
        print(f"| {n} | {r['pgb'][0]:,.0f} | "
              + " | ".join(f"{r[k][0]:,.0f} | {r['ratio'][k]:.2f}" for k in cols)
              + " | " + " / ".join(f"{r[k][1]:.1f}" for k in ["pgb", *cols])
              + " | " + " / ".join(f"{r[k][2]:.2f} + {r[k][3]:.2f}" for k in ["pgb", *cols]) + " |")
    if mix != "A":
        return
    print("\nWorkload A against pgbench's update of a 100-character parameter (the value "
          "on the wire as benchlib's) and against its integer-only read+update; client CPU "
          "ratio = median of each alternation's own:\n\n| clients | pgbench text (tps) | "
          "C loop (ops/s) | ratio | client CPU µs/op: pgbench int / pgbench text / C loop "
          "| CPU ratio C / pgbench int | CPU ratio C / pgbench text |")
    print("|---:|---:|---:|---:|---|---:|---:|")
    for n, r in points.items():
        print(f"| {n} | {r['pgbt'][0]:,.0f} | {r['c'][0]:,.0f} | {r['c'][0] / r['pgbt'][0]:.2f} | "
              f"{r['pgb'][1]:.1f} / {r['pgbt'][1]:.1f} / {r['c'][1]:.1f} | {r['cpu']['pgb']:.2f} "
              f"| {r['cpu']['pgbt']:.2f} |")
    if "pgbk" not in next(iter(points.values())):
        return
    print("\nWorkload A against pgbench running YCSB A's statements on benchlib's own table by "
          "its own text key (the update's value a parameter): the same server work; ratios = "
          "median of each alternation's own:\n\n| clients | pgbench same table (tps) | C loop (ops/s) "
          "| rate ratio C / pgbench | client CPU µs/op: pgbench / C loop | CPU ratio C / pgbench |")
    print("|---:|---:|---:|---:|---|---:|")
    for n, r in points.items():
        print(f"| {n} | {r['pgbk'][0]:,.0f} | {r['c'][0]:,.0f} | {r['rate']['pgbk']:.2f} | "
              f"{r['pgbk'][1]:.1f} / {r['c'][1]:.1f} | {r['cpu']['pgbk']:.2f} |")


def chunk_cost(mix: str, columns: bool, n: int = 20_000, reps: int = 20) -> float:
    """Client CPU µs per operation of making a run client's chunk and the C loop's plan
    of it, without a connection (YcsbRunClient.next_chunk as the driver calls it, then
    the binding's plan): ``columns`` the packed columns a C loop's client makes
    (ycsb/columns.py, Plan.columns), else the argument tuples (Plan)."""
    import numpy as np

    from benchlib.workloads._native import _pgloop
    from benchlib.workloads.generators import ValuePool
    from benchlib.workloads.ycsb.plan import CoreWorkloadPlan, field_length_generator
    from benchlib.workloads.ycsb.workload import RUN_OPS, YcsbRunClient, config_from
    read = 1.0 if mix == "C" else 0.5
    cfg = config_from({"recordcount": 100_000, "operationcount": 10**9, "readproportion": read,
                       "updateproportion": 1 - read, "requestdistribution": "uniform"})
    c = YcsbRunClient.__new__(YcsbRunClient)   # the chunk making alone: no binding opened
    c.cfg, c.core, c.remaining, c.chunk_cap, c.as_bytes = cfg, cfg.core, None, None, True
    c.plan, c.rng = CoreWorkloadPlan(cfg.core, 0, 1, 1, None), np.random.default_rng(1)
    c.pool, c.lengths = ValuePool(c.rng, 100, as_bytes=True), field_length_generator(cfg.core, c.rng)
    c.native = object() if columns else None
    kinds = bytes(_pgloop.KINDS[x] for x in RUN_OPS)
    t = time.process_time()
    for _ in range(reps):
        ch = c.next_chunk(n)
        _ = (_pgloop.Plan.columns(*ch.args.packed(kinds, 10)) if columns
             else _pgloop.Plan(ch.codes, ch.args, kinds, 10))
    return (time.process_time() - t) / reps / n * 1e6


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--clients", default="1,4,16,64")
    ap.add_argument("--table", default="ycsb_bench", help="the YCSB table (and <table>_int, its copy)")
    ap.add_argument("--mixes", default="C,A", help="YCSB workloads to run: C (reads), A (reads and updates)")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=1, help="repeat the whole alternation; medians")
    ap.add_argument("--no-python", action="store_true", help="pgbench same row and the C loop only")
    ap.add_argument("--async-commit", action="store_true",
                    help="every session (pgbench's, benchlib's) with synchronous_commit off (PGOPTIONS): "
                         "updates at the clients' pace, not the disk's flushes")
    ap.add_argument("--same-table", action="store_true",
                    help="also pgbench on benchlib's own table by its own key (loads the keys ordered)")
    ap.add_argument("--chunk-cost", action="store_true", help="only the client CPU per operation of making "
                    "the chunks and the C loop's plans (argument tuples, packed columns), no database")
    a = ap.parse_args()
    if a.chunk_cost:
        for mix in a.mixes.split(","):
            print(f"{mix}: chunk and plan per operation: tuples {chunk_cost(mix, False):.3f} µs, "
                  f"columns {chunk_cost(mix, True):.3f} µs")
        return 0
    if a.async_commit:   # libpq reads it: pgbench, psql and benchlib's client processes alike
        os.environ["PGOPTIONS"] = (os.environ.get("PGOPTIONS", "") + " -c synchronous_commit=off").strip()
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,50}", a.table):
        raise SystemExit(f"--table {a.table!r}: a lower-case SQL name expected")
    need({"pgbench": "apt-get install postgresql (or postgresql-client, as the release ships it)",
          "psql": "apt-get install postgresql-client"})
    if not a.no_python:   # pgbench -S's own tables (pgbench -i drops and makes them)
        subprocess.run(["pgbench", "-i", "-q", "-s", str(max(a.records // 100_000, 1)), *_conn_args(a.url)],
                       check=True, capture_output=True)
    data = Path(tempfile.mkdtemp(prefix="bench-ycsb-"))
    # the load first (it also makes the table the runs read, and its integer-keyed copy)
    print(f"start {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    load_rate, load_cpu, load_row = benchlib_run(a.url, data, "load", 1, None, True, a.records, table=a.table,
                                                 ordered=a.same_table)
    scripts = same_row_scripts(a.url, a.records, data, a.table, same_table=a.same_table)
    mixes = a.mixes.split(",")
    points: dict = {m: {} for m in mixes}
    counts = [int(x) for x in a.clients.split(",")]
    for rep in range(a.reps):
        for n in counts:
            for mix in mixes:
                points[mix].setdefault(n, []).append(_point(a.url, data, n, mix, a.secs, a.records, scripts, rep,
                                                          not a.no_python, a.table))
    points = {m: {n: _medians(reps) for n, reps in p.items()} for m, p in points.items()}
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"{a.records:,} records, uniform keys, {a.secs} s per point, medians of {a.reps}"
          f"{', synchronous_commit off' if a.async_commit else ''}; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    for mix in mixes:
        _table(mix, points[mix])
    print(f"\nLoad of {a.records:,} records ({load_row['processes']} loader processes, COPY batches of 5000): "
          f"{load_rate:,.0f} records/s (client CPU {load_cpu:.1f} µs/record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
