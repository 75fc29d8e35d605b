"""ybio through benchlib's driver against the same statements in a bare psycopg loop and
in the server itself (the seed's style: a PL/pgSQL loop), one session, on the
machine's PostgreSQL, in one session of this script.

A table of ``--rows`` rows (benchlib's load: random order, index on mykey) is read at
batch_size 1, 100 and 10,000 (pct_update 0) for ``--secs`` each way, alternating so
all three see the same machine:

- benchlib, C loop: ``benchlib run`` of the ybio workload with ``run.driver: c`` (one
  client process, one session, each chunk of calls run in C over libpq:
  bindings/postgres_native.py), RIOPS = the run loop's rows / secs;
- benchlib, Python loop: the same with ``run.driver: python`` (the prepared statement
  through psycopg's ``pgconn.exec_prepared``, the driver's Python hot loop);
- bare psycopg: ``pgconn.exec_prepared`` of the same statement in a Python loop over
  pre-drawn ranges — what a minimal hand-written client does;
- server-side: a ``DO`` block looping the same SELECT over random ranges in
  PL/pgSQL for the same time (the seed's runit(): no client round trip at all).

Client CPU per call is each side's own process CPU (getrusage: benchlib's client
process over the step, the bare loop's process_time) over its calls. Prints a Markdown
table for BENCHMARKS.md.

    .venv/bin/python bench/bench_ybio_pg.py [--url postgresql://postgres@127.0.0.1:5432/test] [--secs 10]
        [--prefix ybiobench] [--drivers c,python]
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

READ = "SELECT count(*), sum(scratch) FROM {t} WHERE mykey BETWEEN $1 AND $2"


def benchlib_riops(url: str, data: Path, name: str, prefix: str, rows: int, batch: int | None,
                   secs: float, driver: str = "auto") -> tuple[float, float]:
    """A benchlib run: the load alone (batch None) or one run loop of ``secs``; its
    RIOPS and the client process's CPU µs per call (its own getrusage over the step)."""
    exp = validate({
        "experiment": name, "workload": "ybio",
        "properties": {"tab_prefix": prefix, "tab_rows": rows, "batch_size": batch or 1,
                       "run_duration": secs, "recreate": batch is None, "status_every_s": 0},
        "targets": [{"name": "pg", "url": url}],
        "load": {"skip": batch is not None, "threads": 2, "batch_size": 10_000},
        "run": {"skip": batch is None, "threads": [1], "processes": 1, "status_interval_s": 3600,
                "driver": driver},
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
    cpu = float(res["drivers"].loc[res["drivers"].step == step, "cpu_s"].sum())
    return float(steps.loc[step, "ops_per_s"]), cpu / calls * 1e6


def bare_riops(url: str, table: str, rows: int, batch: int, secs: float) -> tuple[float, float]:
    """The same prepared statement in a plain loop; ranges drawn beforehand."""
    with psycopg.connect(url, autocommit=True) as conn:
        pg = conn.pgconn
        pg.prepare(b"r", READ.format(t=table).encode())
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


def server_riops(url: str, table: str, rows: int, batch: int, secs: float) -> float:
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
                  t=sql.Identifier(table))
    got: list[int] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: got.append(int(d.message_primary.split()[-1])))
        t0 = time.perf_counter()
        conn.execute(block)
        wall = time.perf_counter() - t0
    return got[0] / wall


def sides(a, data: Path, batch: int, r: int) -> dict:
    """One round at one batch size, alternating: benchlib per driver and bare, in an
    order turned by one each round (none always first), then the server's loop."""
    got = {}
    sides = a.drivers.split(",") + ["bare"]
    for side in sides[r % len(sides):] + sides[:r % len(sides)]:
        got[side] = bare_riops(a.url, a.table, a.rows, batch, a.secs) if side == "bare" else \
            benchlib_riops(a.url, data, f"b{batch}-{side}-{r}", a.prefix, a.rows, batch, a.secs, side)
    got["server"] = (server_riops(a.url, a.table, a.rows, batch, a.secs), float("nan"))
    print(f"batch_size {batch} round {r + 1}: " + ", ".join(
        f"{k} {v[0]:,.0f} rows/s {v[1]:.1f} µs/call" for k, v in got.items()), file=sys.stderr)
    return got


def table(a, results: dict) -> None:
    """The Markdown table: medians of the rounds, ratios as the median of the rounds' own."""
    drivers = a.drivers.split(",")
    med = lambda xs: float(np.median(xs))  # noqa: E731
    span = lambda xs: f"{med(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"  # noqa: E731
    head = ["batch_size"] + [f"benchlib {d} (RIOPS)" for d in drivers] + ["bare psycopg (RIOPS)"]
    head += [f"{d} ÷ bare RIOPS, median (min–max)" for d in drivers]
    head += ["client CPU µs per call: " + " / ".join(drivers + ["bare"])]
    head += [f"CPU per call {d} ÷ bare (min–max)" for d in drivers] + ["PL/pgSQL in the server (RIOPS)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * (1 + len(drivers) + 1) + "---|" * (len(drivers) + 1 + len(drivers)) + "---:|")
    for batch, rounds in results.items():
        riops = {k: [g[k][0] for g in rounds] for k in rounds[0]}
        cpu = {k: [g[k][1] for g in rounds] for k in rounds[0]}
        cells = [f"{batch:,}"] + [f"{med(riops[d]):,.0f}" for d in drivers + ["bare"]]
        cells += [span([x / y for x, y in zip(riops[d], riops["bare"])]) for d in drivers]
        cells += [" / ".join(f"{med(cpu[k]):.1f}" for k in drivers + ["bare"])]
        cells += [span([x / y for x, y in zip(cpu[d], cpu["bare"])]) for d in drivers]
        cells += [f"{med(riops['server']):,.0f}"]
        print("| " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batches", default="1,100,10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prefix", default="ybiobench", help="the table's prefix (table <prefix>0001)")
    ap.add_argument("--drivers", default="c,python", help="benchlib's run.driver values to measure")
    a = ap.parse_args()
    a.table = f"{a.prefix}0001"
    data = Path(tempfile.mkdtemp(prefix="bench-ybio-"))
    t0, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()[0]
    load, _ = benchlib_riops(a.url, data, "load", a.prefix, a.rows, None, a.secs)
    results = {}
    for batch in (int(x) for x in a.batches.split(",")):
        results[batch] = [sides(a, data, batch, r) for r in range(a.rounds)]
    with psycopg.connect(a.url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(a.table)))
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores (shared); {t0} – "
          f"{time.strftime('%H:%M UTC', time.gmtime())}, load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end; {a.rows:,} rows, one session, pct_update 0, "
          f"{a.secs:g} s per point, medians of {a.rounds} alternating rounds\n")
    table(a, results)
    print(f"\nLoad of {a.rows:,} rows (2 loaders, COPY batches of 10,000 in random order): "
          f"{load:,.0f} rows/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
