"""LinkBench on the machine's PostgreSQL: benchlib's request phase beside a bare psycopg
loop issuing the same statements, and the load rate, in one session.

The graph is loaded once by benchlib (``loaders`` link/count loaders beside the node
loader, each its own process, COPY batches of 1024 rows as LinkBench's batch size):
the load's links/s is LinkBench's "Links/s" (links loaded / load seconds). Then,
alternating so that both see the same machine, ``--rounds`` times: the request
phase with 2 requesters through benchlib (a loop of ``--secs``), and the bare loop —
2 processes, each running the same planned operations (RequestClient's chunks, drawn
before the clock starts, as in benchlib) with the same statements and transactions —
LinkStoreSql's (mdcallag/linkbench): reads and node writes on an autocommit psycopg
connection, link writes on a second one, BEGIN pipelined with a transaction's first
statement — and nothing else: no timing, no histograms, no status codes. Client
CPU µs per request: benchlib from the sampler's client_cpu_s during the loop; the
bare loop from its processes' own CPU time over the loop.

    .venv/bin/python bench/bench_linkbench_pg.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--maxid1 100001] [--secs 15] [--rounds 2] [--db lbbench]

``--db`` names the database it creates and drops (its own: another on the same server
is left alone).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results
from benchlib.targets.base import Endpoint
from benchlib.workloads.linkbench import requests as R
from benchlib.workloads.linkbench.properties import from_properties
from benchlib.targets.postgres import PostgresTarget
from benchlib.workloads.linkbench.bindings import binding

DB = "lbbench"


def experiment(url: str, name: str, maxid1: int, load: bool, secs: float | None,
               driver: str = "python") -> dict:
    return {"experiment": name, "workload": "linkbench",
            "properties": {"maxid1": maxid1, "loaders": 2},
            "targets": [{"name": "my" if url.startswith("mysql") else "pg", "url": url}],
            "load": {"skip": not load, "processes": [3], "batch_size": 1024},
            "run": {"skip": secs is None, "threads": [2], "processes": 2, "loops": 1,
                    "loop_secs": secs or 1, "status_interval_s": 3600, "driver": driver}, "seed": 11}


def benchlib_step(url, data, name, maxid1, load, secs, driver="python") -> dict:
    exp = validate(experiment(url, name, maxid1, load, secs, driver), "bench")
    with open(os.devnull, "w") as devnull:
        res = run_experiment(exp, data, progress=False, out=devnull)
    assert res.ok, res.runs
    t = load_results(data / name)
    step = "l.pre" if load else "r.L1"
    row = t["steps"].set_index("step").loc[step]
    cpu = float(t["hw"].loc[t["hw"].step == step, "client_cpu_s"].sum())
    return {"ops": float(row["ops"]), "secs": float(row["secs"]), "errors": int(row["errors"]),
            "cpu_us": cpu / float(row["ops"]) * 1e6, "load1": os.getloadavg()[0]}


def drivers_rounds(url, data, a) -> None:
    """--drivers: benchlib's two request loops alternating, run.driver python (psycopg)
    and c (the C loop over libpq), each --secs, --rounds times; a Markdown table (also
    bench_linkbench_my.py's, on MariaDB: mysqlclient or PyMySQL, libmariadb)."""
    rows = []
    for r in range(a.rounds):
        for d in ("python", "c"):
            m = benchlib_step(url, data, f"req{d}{r}", a.maxid1, False, a.secs, d)
            rows.append((r + 1, d, m))
            print(f"round {r + 1} {d}: {m['ops'] / m['secs']:,.0f} req/s", file=sys.stderr)
    print(f"\nmaxid1 {a.maxid1:,}, FBWorkload mix, 2 requesters (2 processes), {a.secs:g} s per loop\n")
    print("| round | run.driver | req/s | client CPU µs/req | errors | load avg (1 min) |")
    print("|---:|---|---:|---:|---:|---:|")
    for r, d, m in rows:
        print(f"| {r} | {d} | {m['ops'] / m['secs']:,.0f} | {m['cpu_us']:.0f} | {m['errors']} | {m['load1']:.2f} |")


def _bare_ops(conn, wconn, st, p):
    """The ten requests with psycopg and nothing else (RequestClient's statements and
    transactions, written out plainly)."""
    ex, w = conn.execute, wconn.cursor()
    ms = lambda: int(time.time() * 1000)  # noqa: E731

    def first(sql, args):   # BEGIN goes in one round trip with the first statement
        with wconn.pipeline():
            w.execute("BEGIN")
            w.execute(sql, args)
        return w

    def insert(id1, t, id2, data):
        now = ms()
        try:
            first(st.insert_link, (id1, id2, t, 1, data, 0, now))
        except psycopg.errors.UniqueViolation:
            w.execute("ROLLBACK")
            return False
        w.execute(st.count_add, (id1, t, 1, now, 1, now))
        w.execute("COMMIT")
        return True

    def update(id1, t, id2, data):
        row = first(st.get_visibility, (id1, id2, t)).fetchall()
        if not row:
            w.execute("ROLLBACK")
            return False
        now = ms()
        w.execute(st.update_link, (1, data, 0, now, id1, id2, t))
        if row[0][0] != 1:
            w.execute(st.count_change, (1, now, id1, t))
        w.execute("COMMIT")
        return True

    def add(id1, t, id2, data):
        insert(id1, t, id2, data) or update(id1, t, id2, data)

    def upd(id1, t, id2, data):
        update(id1, t, id2, data) or insert(id1, t, id2, data)

    def delete(id1, t, id2):
        row = first(st.get_visibility, (id1, id2, t)).fetchall()
        if not row or row[0][0] != 1:
            w.execute("ROLLBACK")
            return
        w.execute(st.hide_link, (id1, id2, t))
        w.execute(st.count_change, (-1, ms(), id1, t))
        w.execute("COMMIT")

    def links_list(a, t, h):
        ex(st.get_links_list, (a, t, 0, R.MAX_TIME, p.range_limit, 0)).fetchall()

    return [add, delete, upd,
            lambda a, t: ex(st.count_links, (a, t)).fetchall(),
            lambda a, t, ids: ex(*st.multiget(a, t, ids)).fetchall(),
            links_list,
            lambda d: ex(st.add_node, (2048, 1, int(time.time()), d)).fetchall(),
            lambda a, d: ex(st.update_node, (2, int(time.time()), d, a, 2048)),
            lambda a: ex(st.delete_node, (a, 2048)),
            lambda a: ex(st.get_node, (a,)).fetchall()]


def bare_worker(conninfo, maxid1, seed, secs, start_at, out_q):
    p = from_properties({"maxid1": maxid1})
    st = binding(PostgresTarget.dialect, p)
    planner = R.RequestClient(p, st, Endpoint("postgres", {"conninfo": conninfo}), seed, None)
    chunks = [planner.next_chunk(1000) for _ in range(200)]   # drawn before the clock
    conn = psycopg.connect(conninfo, autocommit=True)
    wconn = psycopg.connect(conninfo, autocommit=True)
    fns = _bare_ops(conn, wconn, st, p)
    while time.time() < start_at:
        time.sleep(0.001)
    cpu0, t0, n, end = time.process_time(), time.perf_counter(), 0, time.perf_counter() + secs
    for ch in chunks:
        for code, a in zip(ch.codes, ch.args):
            fns[code](*a)
            n += 1
        if time.perf_counter() >= end:
            break
    out_q.put((n, time.perf_counter() - t0, time.process_time() - cpu0))


def bare_step(conninfo, maxid1, secs) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    start_at = time.time() + 8   # after both have planned their operations
    procs = [ctx.Process(target=bare_worker, args=(conninfo, maxid1, 100 + i, secs, start_at, q))
             for i in range(2)]
    for pr in procs:
        pr.start()
    res = [q.get() for _ in procs]
    for pr in procs:
        pr.join()
    ops = sum(r[0] for r in res)
    return {"ops": ops, "secs": max(r[1] for r in res), "cpu_us": sum(r[2] for r in res) / ops * 1e6}


def inproc_cpu(conninfo, maxid1, n: int, reps: int) -> list[tuple[float, float]]:
    """CPU µs per request in this one process: the same n planned operations through
    RequestClient's functions and through the bare ones, alternating (no runner: what
    the request code adds over the driver, without timing and recording)."""
    p = from_properties({"maxid1": maxid1})
    st = binding(PostgresTarget.dialect, p)
    client = R.RequestClient(p, st, Endpoint("postgres", {"conninfo": conninfo}), 5, None)
    ops = [(c, a) for ch in (client.next_chunk(1000) for _ in range(-(-n // 1000)))
           for c, a in zip(ch.codes, ch.args)][:n]
    conn = psycopg.connect(conninfo, autocommit=True)
    wconn = psycopg.connect(conninfo, autocommit=True)
    bare = _bare_ops(conn, wconn, st, p)
    out = []
    for _ in range(reps):
        per = []
        for fns in (client.fns, bare):
            cpu0 = time.process_time()
            for code, a in ops:
                fns[code](*a)
            per.append((time.process_time() - cpu0) / len(ops) * 1e6)
        out.append(tuple(per))
    client.close()
    conn.close()
    wconn.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--maxid1", type=int, default=100_001)
    ap.add_argument("--secs", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--db", default=DB, help="the database it creates and drops (default lbbench)")
    ap.add_argument("--inproc", type=int, default=0, help="also: N requests in one process, "
                    "RequestClient's functions against the bare ones (CPU µs/request)")
    ap.add_argument("--drivers", action="store_true", help="benchlib's python and c request "
                    "loops alternating (instead of benchlib against the bare loop)")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", a.db):
        ap.error(f"--db {a.db!r}: a plain lower-case name (letters, digits, _)")
    with psycopg.connect(a.url, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {a.db}")
    url = a.url.rsplit("/", 1)[0] + "/" + a.db
    data = Path(tempfile.mkdtemp(prefix="bench-linkbench-"))
    try:
        load = benchlib_step(url, data, "load", a.maxid1, True, None)
        with psycopg.connect(url) as c:
            links = c.execute("SELECT COUNT(*) FROM linktable").fetchone()[0]
        if a.drivers:
            drivers_rounds(url, data, a)
            return 0
        inproc = inproc_cpu(url, a.maxid1, a.inproc, 3) if a.inproc else []
        rows = []
        for r in range(a.rounds):
            bare = bare_step(url, a.maxid1, a.secs)
            bl = benchlib_step(url, data, f"req{r}", a.maxid1, False, a.secs)
            rows.append((bare, bl))
            print(f"round {r + 1}: bare {bare['ops'] / bare['secs']:,.0f} req/s, benchlib "
                  f"{bl['ops'] / bl['secs']:,.0f} req/s ({bl['errors']} errors)", file=sys.stderr)
    finally:
        with psycopg.connect(a.url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE)")
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores (shared); {time.strftime('%Y-%m-%d %H:%M')}; "
          f"maxid1 {a.maxid1:,}, FBWorkload mix, 2 requesters, {a.secs:g} s per loop\n")
    print("| round | bare psycopg (req/s) | benchlib (req/s) | ratio | client CPU µs/req: bare / benchlib |")
    print("|---:|---:|---:|---:|---|")
    for i, (b, m) in enumerate(rows, 1):
        rb, rm = b["ops"] / b["secs"], m["ops"] / m["secs"]
        print(f"| {i} | {rb:,.0f} | {rm:,.0f} | {rm / rb:.2f} | {b['cpu_us']:.0f} / {m['cpu_us']:.0f} |")
    for i, (m, b) in enumerate(inproc, 1):
        print(f"In one process, rep {i}: {a.inproc:,} requests, CPU µs/request: "
              f"RequestClient {m:.0f} / bare {b:.0f}")
    print(f"\nLoad (2 link/count loaders + the node loader, 3 processes, COPY batches of 1024): "
          f"{links:,} links in {load['secs']:.1f} s = **{links / load['secs']:,.0f} links/s** "
          f"({load['ops'] / load['secs']:,.0f} rows/s with nodes and counts; client CPU "
          f"{load['cpu_us']:.1f} µs/row)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
