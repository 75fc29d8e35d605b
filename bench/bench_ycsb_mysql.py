"""benchlib's driver on MariaDB against a C client fetching the same rows, in one session.

YCSB workload C (100% read, zipfian; 100k records) for ``--secs`` at 1, 4 and 16
clients, through each client library (mysqlclient, C; PyMySQL, pure Python), next to
the reference: sysbench (C, LuaJIT) running a script that sends the same statement —
``SELECT * FROM <table> WHERE YCSB_KEY = '<key>'`` over the text protocol, the row
fetched whole (mysql_store_result) — with keys drawn from the same zipfian generator
benchlib uses (a file of 200k keys made by it), thread per connection. The three
alternate at each client count, so all see the same machine. Prints a Markdown table
for BENCHMARKS.md: ops/s, the ratio to the reference, and client CPU per operation in
µs (sysbench: its process's CPU from os.wait4, less that of a run of one event per
thread — its start-up; benchlib: the sampler's client_cpu_s during the step).

    .venv/bin/python bench/bench_ycsb_mysql.py [--url mysql://root@127.0.0.1:3306/test] [--secs 20]

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

from benchlib.workloads.ycsb.generators import build_key_names
from benchlib.workloads.ycsb.plan import CoreWorkloadPlan
from benchlib.workloads.ycsb.workload import config_from

TABLE = "ycsb_bench"   # bench_ycsb_pg's table, in MariaDB's database
PROPS = {"recordcount": 100_000, "operationcount": 10**9, "readproportion": 1.0,
         "updateproportion": 0, "requestdistribution": "zipfian", "table": TABLE}
LUA = """
local keys = {}
function thread_init()
  con = sysbench.sql.driver():connect()
  for line in io.lines(os.getenv("KEYFILE")) do keys[#keys + 1] = line end
  sql = "SELECT * FROM " .. os.getenv("TABLE") .. " WHERE YCSB_KEY = '"
  n = #keys
end
function event()
  con:query(sql .. keys[math.random(n)] .. "'")
end
function thread_done() con:disconnect() end
"""


def key_file(path: Path, records: int, n: int = 200_000) -> None:
    """n keys drawn as a workload C client draws them (zipfian over the records)."""
    cfg = config_from({**PROPS, "recordcount": records})
    plan = CoreWorkloadPlan(cfg.core, 0, 1, 1)
    keys = build_key_names(plan.next_chunk(n).keynum, cfg.core.insertorder == "hashed",
                           int(cfg.core.zeropadding))
    path.write_text("\n".join(keys) + "\n")


def sysbench(url: str, clients: int, script: Path, keys: Path, limit: list[str]) -> tuple[int, float, float]:
    """(events, seconds, CPU seconds of the sysbench process alone: os.wait4's rusage)."""
    u = urlsplit(url)
    args = ["sysbench", str(script), f"--mysql-host={u.hostname or '127.0.0.1'}",
            f"--mysql-port={u.port or 3306}", f"--mysql-user={u.username or 'root'}",
            f"--mysql-db={u.path.lstrip('/') or 'test'}", f"--threads={clients}", *limit, "run"]
    if u.password:
        args.insert(2, f"--mysql-password={u.password}")
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                             env={**os.environ, "KEYFILE": str(keys), "TABLE": TABLE})
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(0)
        text = out.read()
    if status:
        raise SystemExit(f"sysbench failed: {text[-500:]}")
    n = int(re.search(r"total number of events:\s+(\d+)", text).group(1))
    took = float(re.search(r"total time:\s+([\d.]+)s", text).group(1))
    return n, took, ru.ru_utime + ru.ru_stime


def reference(url: str, clients: int, secs: int, script: Path, keys: Path) -> tuple[float, float]:
    """sysbench's ops/s and client CPU µs/op, less its start-up (each thread reads the key
    file): measured by a run of one event per thread, subtracted."""
    _, _, init_cpu = sysbench(url, clients, script, keys, ["--time=0", f"--events={clients}"])
    n, took, cpu = sysbench(url, clients, script, keys, [f"--time={secs}"])
    return n / took, max(cpu - init_cpu, 0.0) / n * 1e6


def with_driver(url: str, driver: str) -> str:
    return f"mysql+{'mysqldb' if driver == 'c' else 'pymysql'}://" + url.split("://", 1)[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="mysql://root@127.0.0.1:3306/test")
    ap.add_argument("--secs", type=int, default=20)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--records", type=int, default=100_000)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-ycsb-my-"))
    (tmp / "point.lua").write_text(LUA)
    key_file(tmp / "keys.txt", a.records)
    benchlib_run(with_driver(a.url, "c"), tmp / "d", "load", 1, None, True, a.records)
    rows = []
    for n in [int(x) for x in a.clients.split(",")]:
        ref, ref_cpu = reference(a.url, n, a.secs, tmp / "point.lua", tmp / "keys.txt")
        c, c_cpu, _ = benchlib_run(with_driver(a.url, "c"), tmp / "d", f"c{n}", n, a.secs,
                                   False, a.records)
        p, p_cpu, _ = benchlib_run(with_driver(a.url, "python"), tmp / "d", f"p{n}", n, a.secs,
                                   False, a.records)
        rows.append((n, ref, c, p, ref_cpu, c_cpu, p_cpu))
        print(f"clients {n}: sysbench {ref:,.0f}, mysqlclient {c:,.0f}, PyMySQL {p:,.0f} ops/s",
              file=sys.stderr)
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"YCSB C, {a.records:,} records, {a.secs} s per point\n")
    print("| clients | sysbench, same SELECT (ops/s) | benchlib, mysqlclient (ops/s) | ratio "
          "| benchlib, PyMySQL (ops/s) | ratio | client CPU µs/op: sysbench / mysqlclient / PyMySQL |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for n, ref, c, p, rc, cc, pc in rows:
        print(f"| {n} | {ref:,.0f} | {c:,.0f} | {c / ref:.2f} | {p:,.0f} | {p / ref:.2f} "
              f"| {rc:.1f} / {cc:.1f} / {pc:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
