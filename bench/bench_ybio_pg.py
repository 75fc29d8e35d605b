"""ybio through benchlib's driver against the same statements in a bare psycopg loop and
in the server itself (the seed's style: a PL/pgSQL loop), one session, on the
machine's PostgreSQL, in one session of this script.

A table of ``--rows`` rows (benchlib's load: random order, index on mykey) is read at
batch_size 1, 100 and 10,000 (pct_update 0) for ``--secs`` each way, alternating so
all three see the same machine:

- benchlib: ``benchlib run`` of the ybio workload (one client process, one session,
  prepared statement via libpq's exec_prepared), RIOPS = the run loop's rows / secs;
- bare psycopg: ``pgconn.exec_prepared`` of the same statement in a Python loop over
  pre-drawn ranges — what a minimal hand-written client does;
- server-side: a ``DO`` block looping the same SELECT over random ranges in
  PL/pgSQL for the same time (the seed's runit(): no client round trip at all).

Prints a Markdown table for BENCHMARKS.md.

    .venv/bin/python bench/bench_ybio_pg.py [--url postgresql://postgres@127.0.0.1:5432/test] [--secs 10]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psycopg
from psycopg import sql

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results

PREFIX = "ybiobench"
TABLE = f"{PREFIX}0001"
READ = "SELECT count(*), sum(scratch) FROM {t} WHERE mykey BETWEEN $1 AND $2"


def benchlib_riops(url: str, data: Path, name: str, rows: int, batch: int | None,
                   secs: float) -> tuple[float, float]:
    """A benchlib run: the load alone (batch None) or one run loop of ``secs``; its
    RIOPS and the client process's CPU µs per call (the sampler's client_cpu_s)."""
    exp = validate({
        "experiment": name, "workload": "ybio",
        "properties": {"tab_prefix": PREFIX, "tab_rows": rows, "batch_size": batch or 1,
                       "run_duration": secs, "recreate": batch is None, "status_every_s": 0},
        "targets": [{"name": "pg", "url": url}],
        "load": {"skip": batch is not None, "threads": 2, "batch_size": 10_000},
        "run": {"skip": batch is None, "threads": [1], "processes": 1, "status_interval_s": 3600},
        "seed": 1}, "bench")
    with open(os.devnull, "w") as devnull:
        res = run_experiment(exp, data, progress=False, out=devnull, force=True)
    assert res.ok, res.runs
    res = load_results(data / name)
    steps = res["steps"].set_index("step")
    step = "l.pre" if batch is None else "r.L1"
    if steps.loc[step, "errors"]:
        raise SystemExit(f"{name}: {steps.loc[step, 'errors']} errors")
    calls = float(steps.loc[step, "ops"]) / (batch or 10_000)
    cpu = float(res["hw"].loc[res["hw"].step == step, "client_cpu_s"].sum())
    return float(steps.loc[step, "ops_per_s"]), cpu / calls * 1e6


def bare_riops(url: str, rows: int, batch: int, secs: float) -> tuple[float, float]:
    """The same prepared statement in a plain loop; ranges drawn beforehand."""
    with psycopg.connect(url, autocommit=True) as conn:
        pg = conn.pgconn
        pg.prepare(b"r", READ.format(t=TABLE).encode())
        rng = np.random.default_rng(2)
        firsts = rng.integers(1, rows - batch + 2, 2_000_000).tolist()
        args = [(b"%d" % f, b"%d" % (f + batch - 1)) for f in firsts]
        run = pg.exec_prepared
        n, i = 0, 0
        c0 = time.process_time()
        t0 = time.perf_counter()
        end = t0 + secs
        while True:
            r = run(b"r", args[i])
            n += int(r.get_value(0, 0))
            i += 1
            if time.perf_counter() >= end:
                break
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return n / wall, cpu / i * 1e6


def server_riops(url: str, rows: int, batch: int, secs: float) -> float:
    """The seed's way: PL/pgSQL loops the SELECT inside the server for ``secs``."""
    block = sql.SQL("""DO $$
DECLARE n bigint := 0; c bigint; s numeric; f bigint;
        t_end timestamptz := clock_timestamp() + make_interval(secs => {secs});
BEGIN
  LOOP
    f := 1 + floor(random() * ({rows} - {batch} + 1))::bigint;
    SELECT count(*), sum(scratch) INTO c, s FROM {t} WHERE mykey BETWEEN f AND f + {batch} - 1;
    n := n + c;
    EXIT WHEN clock_timestamp() >= t_end;
  END LOOP;
  RAISE NOTICE 'rows %', n;
END $$""").format(secs=sql.Literal(secs), rows=sql.Literal(rows), batch=sql.Literal(batch),
                  t=sql.Identifier(TABLE))
    got: list[int] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: got.append(int(d.message_primary.split()[-1])))
        t0 = time.perf_counter()
        conn.execute(block)
        wall = time.perf_counter() - t0
    return got[0] / wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batches", default="1,100,10000")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-ybio-"))
    load, _ = benchlib_riops(a.url, data, "load", a.rows, None, a.secs)
    results = []
    for batch in (int(x) for x in a.batches.split(",")):
        bl, bare, srv, ratio = [], [], [], []
        for r in range(a.rounds):   # alternating: all three see the same machine
            bl.append(benchlib_riops(a.url, data, f"b{batch}-{r}", a.rows, batch, a.secs))
            bare.append(bare_riops(a.url, a.rows, batch, a.secs))
            srv.append(server_riops(a.url, a.rows, batch, a.secs))
            ratio.append(bl[-1][0] / bare[-1][0])
            print(f"batch_size {batch} round {r + 1}: benchlib {bl[-1][0]:,.0f}, bare {bare[-1][0]:,.0f}, "
                  f"server {srv[-1]:,.0f} rows/s", file=sys.stderr)
        med = lambda xs, k: float(np.median([x[k] for x in xs]))  # noqa: E731
        results.append((batch, med(bl, 0), med(bare, 0), float(np.median(srv)), float(np.median(ratio)),
                        min(ratio), max(ratio), med(bl, 1), med(bare, 1)))
    with psycopg.connect(a.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(TABLE)))
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores (shared); {time.strftime('%Y-%m-%d %H:%M')}; "
          f"{a.rows:,} rows, one session, pct_update 0, {a.secs:g} s per point, median of "
          f"{a.rounds} alternating rounds\n")
    print("| batch_size | benchlib (RIOPS) | bare psycopg loop (RIOPS) | benchlib ÷ bare, median of "
          "rounds (min–max) | client CPU µs per call: benchlib / bare | PL/pgSQL loop in the "
          "server (RIOPS) | benchlib ÷ server |")
    print("|---:|---:|---:|---|---|---:|---:|")
    for batch, bl, bare, srv, ratio, lo, hi, bl_cpu, bare_cpu in results:
        print(f"| {batch:,} | {bl:,.0f} | {bare:,.0f} | {ratio:.2f} ({lo:.2f}–{hi:.2f}) "
              f"| {bl_cpu:.0f} / {bare_cpu:.0f} | {srv:,.0f} | {bl / srv:.2f} |")
    print(f"\nLoad of {a.rows:,} rows (2 loaders, COPY batches of 10,000 in random order): "
          f"{load:,.0f} rows/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
