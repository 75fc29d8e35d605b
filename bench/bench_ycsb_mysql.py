"""benchlib's driver on MariaDB against a C client fetching the same rows, in one session.

YCSB workload C (100% read, zipfian; 100k records) for ``--secs`` at 1, 4 and 16
clients, through benchlib's C loop over libmariadb (``run.driver: c``,
workloads/ycsb/bindings/_myloop.c; one thread per client process driving its connections,
``run.multiplex: auto`` as a run gets by default, and a thread per connection,
``multiplex: false``) and its Python loop on each client library (mysqlclient, C; PyMySQL, pure Python), next to
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
µs (sysbench: its process's CPU from os.wait4, less that of a run of one event per
thread — its start-up; benchlib: the sampler's client_cpu_s during the step).

    .venv/bin/python bench/bench_ycsb_mysql.py [--url mysql://root@127.0.0.1:3306/test] [--secs 20]
        [--clients 1,4,16] [--no-python]   (--no-python: the C loops and sysbench only)

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

from bench_ycsb_pg import benchlib_run   # the same YCSB C run, loaded the same way
from reference_tools import need

import numpy as np

from benchlib.workloads.generators import ScrambledZipfian, build_key_names, fnvhash64

TABLE = "ycsb_bench"   # bench_ycsb_pg's table, in MariaDB's database
PROPS = {"recordcount": 100_000, "operationcount": 10**9, "readproportion": 1.0,
         "updateproportion": 0, "requestdistribution": "zipfian", "table": TABLE}
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


def sysbench(url: str, clients: int, script: Path, records: int, limit: list[str]) -> tuple[int, float, float]:
    """(events, seconds, CPU seconds of the sysbench process alone: os.wait4's rusage)."""
    u = urlsplit(url)
    args = ["sysbench", str(script), f"--mysql-host={u.hostname or '127.0.0.1'}",
            f"--mysql-port={u.port or 3306}", f"--mysql-user={u.username or 'root'}",
            f"--mysql-db={u.path.lstrip('/') or 'test'}", f"--threads={clients}", *limit, "run"]
    if u.password:
        args.insert(2, f"--mysql-password={u.password}")
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                             env={**os.environ, "RECORDS": str(records), "TABLE": TABLE})
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(0)
        text = out.read()
    if status:
        raise SystemExit(f"sysbench failed: {text[-500:]}")
    n = int(re.search(r"total number of events:\s+(\d+)", text).group(1))
    took = float(re.search(r"total time:\s+([\d.]+)s", text).group(1))
    return n, took, ru.ru_utime + ru.ru_stime


def reference(url: str, clients: int, secs: int, script: Path, records: int) -> tuple[float, float]:
    """sysbench's ops/s and client CPU µs/op, less its start-up (LuaJIT, the
    connections): measured by a run of one event per thread, subtracted."""
    _, _, init_cpu = sysbench(url, clients, script, records, ["--time=0", f"--events={clients}"])
    n, took, cpu = sysbench(url, clients, script, records, [f"--time={secs}"])
    return n / took, max(cpu - init_cpu, 0.0) / n * 1e6


def with_driver(url: str, driver: str) -> str:
    return f"mysql+{'mysqldb' if driver == 'c' else 'pymysql'}://" + url.split("://", 1)[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="mysql://root@127.0.0.1:3306/test")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--no-python", action="store_true", help="the C loops and sysbench only")
    a = ap.parse_args()
    need({"sysbench": "apt-get install sysbench"}, {"MySQLdb": "make install (mysqlclient)"})
    tmp = Path(tempfile.mkdtemp(prefix="bench-ycsb-my-"))
    (tmp / "point.lua").write_text(LUA)
    check_keys(tmp / "point.lua", a.records)
    benchlib_run(with_driver(a.url, "c"), tmp / "d", "load", 1, None, True, a.records)
    rows = []
    for n in [int(x) for x in a.clients.split(",")]:
        ref, ref_cpu = reference(a.url, n, a.secs, tmp / "point.lua", a.records)
        loop, loop_cpu, _ = benchlib_run(a.url, tmp / "d", f"l{n}", n, a.secs, False, a.records,
                                         multiplex="auto", driver="c")
        tl, tl_cpu, _ = benchlib_run(a.url, tmp / "d", f"t{n}", n, a.secs, False, a.records,
                                     multiplex=False, driver="c")
        c = c_cpu = p = p_cpu = float("nan")
        if not a.no_python:
            c, c_cpu, _ = benchlib_run(with_driver(a.url, "c"), tmp / "d", f"c{n}", n, a.secs,
                                       False, a.records, driver="python")
            p, p_cpu, _ = benchlib_run(with_driver(a.url, "python"), tmp / "d", f"p{n}", n, a.secs,
                                       False, a.records, driver="python")
        rows.append((n, ref, loop, tl, c, p, ref_cpu, loop_cpu, tl_cpu, c_cpu, p_cpu))
        print(f"clients {n}: sysbench {ref:,.0f}, C loop {loop:,.0f} (thread per connection "
              f"{tl:,.0f}), mysqlclient {c:,.0f}, PyMySQL {p:,.0f} ops/s; load average "
              f"{os.getloadavg()[0]:.1f}", file=sys.stderr)
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"YCSB C, {a.records:,} records, {a.secs} s per point\n")
    print("| clients | sysbench, same SELECT (ops/s) | benchlib, C loop (ops/s) | ratio "
          "| C loop, thread per connection (ops/s) | ratio "
          "| benchlib, mysqlclient (ops/s) | ratio | benchlib, PyMySQL (ops/s) | ratio "
          "| client CPU µs/op: sysbench / C loop / thread per connection / mysqlclient / PyMySQL |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, ref, loop, tl, c, p, rc, lc, tc, cc, pc in rows:
        print(f"| {n} | {ref:,.0f} | {loop:,.0f} | {loop / ref:.2f} | {tl:,.0f} | {tl / ref:.2f} "
              f"| {c:,.0f} | {c / ref:.2f} | {p:,.0f} | {p / ref:.2f} "
              f"| {rc:.1f} / {lc:.1f} / {tc:.1f} / {cc:.1f} / {pc:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
