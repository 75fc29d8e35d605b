"""benchlib's driver on MariaDB against a C client fetching the same rows, in one session.

YCSB workload C (100% read, zipfian; 100k records) for ``--secs`` at 1, 4, 16 and 64
clients, through benchlib's C loop over libmariadb (``run.driver: c``,
workloads/_native/_myloop.c; one thread per client process driving its connections,
``run.multiplex: true``, and a thread per connection, ``multiplex: false``, what ``auto``
takes on MariaDB; ``run.processes: auto``, one client process per core) and its Python loop on each client library (mysqlclient, C; PyMySQL, pure Python), next to
the reference: sysbench (C, LuaJIT) running a script that sends the same statement —
``SELECT * FROM <table> WHERE YCSB_KEY = '<key>'`` over the text protocol, the row
fetched whole (mysql_store_result) — with keys drawn as benchlib draws them: YCSB's
scrambled zipfian, written again in the script's LuaJIT and checked against benchlib's
generator before the runs (check_keys), thread per connection. (Until 2026-11-24 the
script drew from a file of 200k keys sampled once: a smaller working set than a
generator's, which over a 128 MB buffer pool and a 170 MB table read 5x fewer pages
from disk, and made the reference ~25% faster at 4 clients.) The five alternate at each
client count, so all see the same machine. Prints a Markdown table
for BENCHMARKS.md: ops/s, the ratio to the reference, and client CPU per operation in
µs and context switches per operation, voluntary (a wait that slept) and involuntary (a
preemption): sysbench's process from os.wait4, less those of a run of one event per
thread — its start-up; benchlib's client processes each over the step (getrusage, the
drivers table). With ``--reps``, medians of the alternations.

    .venv/bin/python bench/bench_ycsb_mysql.py [--url mysql://root@127.0.0.1:3306/test] [--secs 20]
        [--clients 1,4,16,64] [--reps 3] [--table ycsb_bench] [--no-python]
        (--no-python: the C loops and sysbench only)

Needs sysbench (``apt-get install sysbench``) and mysqlclient (``make install``).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench_ycsb_pg import benchlib_run, run_counted   # the same YCSB C run, loaded the same way
from reference_tools import need

import numpy as np

from benchlib.workloads.generators import ScrambledZipfian, build_key_names, fnvhash64

LUA = """
-- YCSB's key chooser for workload C, as benchlib draws it (workloads/generators.py):
-- ScrambledZipfianGenerator(0, records - 1), keys "user" .. fnvhash64(keynum)
local ffi = require("ffi")
local FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325ULL, 1099511628211ULL
local function fnvhash64(v)          -- Utils.fnvhash64: FNV-1a over 8 bytes, Math.abs
  local x, h = ffi.cast("uint64_t", v), FNV_OFFSET
  for _ = 1, 8 do
    h = bit.bxor(h, bit.band(x, 0xFFULL)) * FNV_PRIME
    x = bit.rshift(x, 8)
  end
  local s = ffi.cast("int64_t", h)
  if s < 0 then s = -s end
  return s
end
local THETA, ZETAN, ITEMS = 0.99, 26.46902820178302, 10000000001
local ALPHA, HALF = 1 / (1 - THETA), 0.5 ^ THETA
local ETA = (1 - (2 / ITEMS) ^ (1 - THETA)) / (1 - (1 + HALF) / ZETAN)
local RECORDS = tonumber(os.getenv("RECORDS"))
local function key(u)
  local uz, z = u * ZETAN, nil
  if uz < 1 then z = 0LL elseif uz < 1 + HALF then z = 1LL
  else z = ffi.cast("int64_t", ITEMS * (ETA * u - ETA + 1) ^ ALPHA) end
  return tostring(fnvhash64(fnvhash64(z) % RECORDS)):sub(1, -3)   -- "123LL" -> "123"
end
function thread_init()
  con = sysbench.sql.driver():connect()
  sql = "SELECT * FROM " .. os.getenv("TABLE") .. " WHERE YCSB_KEY = 'user"
end
function event()
  -- sysbench's own generator, seeded per thread (LuaJIT's math.random draws the same
  -- sequence in every thread: the threads would fetch the same keys together)
  con:query(sql .. key(sysbench.rand.uniform_double()) .. "'")
end
function thread_done() con:disconnect() end
sysbench.cmdline.commands = {keys = {function()    -- the keys of some u, for check_keys
  for u in string.gmatch(os.getenv("US"), "[^,]+") do print("user" .. key(tonumber(u))) end
end}}
"""


def check_keys(script: Path, records: int) -> None:
    """The Lua key chooser gives the keys benchlib's generator gives for the same u."""
    us = [0.001, 0.01, 0.04, 0.2, 0.5, 0.77, 0.9, 0.999999]
    g = ScrambledZipfian(0, records - 1, np.random.default_rng(0))
    nums = np.fmod(fnvhash64(g.gen._draw(np.array(us), g.gen.items, g.gen.zetan, g.gen.eta)), records)
    want = build_key_names(nums, True, 1)
    out = subprocess.run(["sysbench", str(script), "keys"], capture_output=True, text=True, check=True,
                         env={**os.environ, "RECORDS": str(records), "US": ",".join(map(str, us))})
    got = [x for x in out.stdout.split() if x.startswith("user")]
    if got != want:
        raise SystemExit(f"the sysbench script draws other keys than benchlib: {got} != {want}")


def sysbench(url: str, clients: int, script: Path, records: int, limit: list[str],
             table: str) -> tuple[int, float, float, int, int]:
    """(events, seconds, CPU seconds, voluntary and involuntary context switches of the
    sysbench process alone: os.wait4's rusage)."""
    u = urlsplit(url)
    args = ["sysbench", str(script), f"--mysql-host={u.hostname or '127.0.0.1'}",
            f"--mysql-port={u.port or 3306}", f"--mysql-user={u.username or 'root'}",
            f"--mysql-db={u.path.lstrip('/') or 'test'}", f"--threads={clients}", *limit, "run"]
    if u.password:
        args.insert(2, f"--mysql-password={u.password}")
    text, cpu, vol, invol = run_counted(args, {**os.environ, "RECORDS": str(records), "TABLE": table})
    n = int(re.search(r"total number of events:\s+(\d+)", text).group(1))
    took = float(re.search(r"total time:\s+([\d.]+)s", text).group(1))
    return n, took, cpu, vol, invol


def reference(url: str, clients: int, secs: int, script: Path, records: int,
              table: str) -> tuple[float, float, dict]:
    """sysbench's ops/s, client CPU µs/op and switches per op, less its start-up (LuaJIT,
    the connections): measured by a run of one event per thread, subtracted."""
    _, _, cpu0, v0, i0 = sysbench(url, clients, script, records, ["--time=0", f"--events={clients}"], table)
    n, took, cpu, v, i = sysbench(url, clients, script, records, [f"--time={secs}"], table)
    return n / took, max(cpu - cpu0, 0.0) / n * 1e6, {"vol_per_op": (v - v0) / n, "invol_per_op": (i - i0) / n}


def with_driver(url: str, driver: str) -> str:
    return f"mysql+{'mysqldb' if driver == 'c' else 'pymysql'}://" + url.split("://", 1)[1]


def _point(a, tmp: Path, n: int, rep: int) -> dict:
    """One client count, alternating: sysbench, the C loop multiplexed (one thread per
    process), the C loop with a thread per connection, the Python loops. Each column:
    (ops/s, client CPU µs/op, voluntary and involuntary switches per op)."""
    r = {"ref": reference(a.url, n, a.secs, tmp / "point.lua", a.records, a.table)}
    for key, mux in (("mux", True), ("tpc", False)):
        r[key] = benchlib_run(a.url, tmp / "d", f"{key}{n}-{rep}", n, a.secs, False, a.records,
                              multiplex=mux, driver="c", table=a.table)
    if not a.no_python:
        for key, drv in (("mysqlclient", "c"), ("PyMySQL", "python")):
            r[key] = benchlib_run(with_driver(a.url, drv), tmp / "d", f"{key}{n}-{rep}", n, a.secs, False,
                                  a.records, driver="python", table=a.table)
    r = {k: (v[0], v[1], v[2]["vol_per_op"], v[2]["invol_per_op"]) for k, v in r.items()}
    print(f"clients {n}: " + ", ".join(f"{k} {v[0]:,.0f}/s {v[1]:.1f} µs {v[2]:.2f}+{v[3]:.2f} sw"
                                       for k, v in r.items()) + f"; load average {os.getloadavg()[0]:.1f}",
          file=sys.stderr)
    return r


NAMES = {"ref": "sysbench", "mux": "C loop, multiplexed", "tpc": "C loop, thread per connection",
         "mysqlclient": "mysqlclient", "PyMySQL": "PyMySQL"}


def _table(points: dict) -> None:
    """Medians of the repetitions: rates, each alternation's ratio, CPU and switches per op."""
    import statistics as st
    cols = [k for k in NAMES if k != "ref" and k in next(iter(points.values()))[0]]
    print("| clients | sysbench, same SELECT (ops/s) | "
          + " | ".join(f"benchlib, {NAMES[k]} (ops/s) | ratio" for k in cols)
          + f" | client CPU µs/op: sysbench / {' / '.join(NAMES[k] for k in cols)} "
          f"| switches/op, voluntary + involuntary: sysbench / {' / '.join(NAMES[k] for k in cols)} |")
    print("|---:|---:|" + "---:|---:|" * len(cols) + "---|---|")
    for n, reps in points.items():
        med = {k: [st.median(r[k][i] for r in reps) for i in range(4)] for k in reps[0]}
        ratio = {k: st.median(r[k][0] / r["ref"][0] for r in reps) for k in cols}
        print(f"| {n} | {med['ref'][0]:,.0f} | " + " | ".join(f"{med[k][0]:,.0f} | {ratio[k]:.2f}" for k in cols)
              + " | " + " / ".join(f"{med[k][1]:.1f}" for k in ["ref", *cols])
              + " | " + " / ".join(f"{med[k][2]:.2f} + {med[k][3]:.2f}" for k in ["ref", *cols]) + " |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="mysql://root@127.0.0.1:3306/test")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--clients", default="1,4,16,64")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=1, help="repeat the whole alternation; medians")
    ap.add_argument("--table", default="ycsb_bench", help="the YCSB table in MariaDB's database")
    ap.add_argument("--no-python", action="store_true", help="the C loops and sysbench only")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,50}", a.table):
        raise SystemExit(f"--table {a.table!r}: a lower-case SQL name expected")
    need({"sysbench": "apt-get install sysbench"}, {"MySQLdb": "make install (mysqlclient)"})
    print(f"start {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ycsb-my-"))
    (tmp / "point.lua").write_text(LUA)
    check_keys(tmp / "point.lua", a.records)
    benchlib_run(with_driver(a.url, "c"), tmp / "d", "load", 1, None, True, a.records, table=a.table)
    points: dict = {}
    for rep in range(a.reps):
        for n in [int(x) for x in a.clients.split(",")]:
            points.setdefault(n, []).append(_point(a, tmp, n, rep))
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; YCSB C, "
          f"{a.records:,} records, {a.secs} s per point, medians of {a.reps}; load average "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    _table(points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
