"""LinkBench's request phase: benchlib against the maintained Java client (mdcallag/
linkbench), alternating on the same PostgreSQL database, tables and config.

The config is the Java repository's own ``config/LinkConfigPgsql.properties`` (with its
``FBWorkload.properties`` and ``Distribution.dat``), read as it is by both clients; only
``maxid1``, ``requesters`` and ``maxtime`` are set on the command line (``-p`` for
benchlib, ``-D`` for Java), and for Java ``host`` and ``port``: the client hard-codes
the database ``linkbench`` after ``host:port/``, so the port is given as
``5432/<db>?x`` to reach the bench's own database. The graph is loaded once by benchlib
(``benchlib run … -p run.skip=true``, the config's loaders) into schema ``linkdb0``
(the database's search_path), where LinkStorePgsql's statements name their tables
(``linkdb0.linktable`` …): the two clients then read and write the same tables.

For each requester count, ``--pairs`` pairs (Java first in odd pairs, benchlib first in
even ones), each client's request phase for ``--secs``:

- benchlib: ``benchlib run <config> -p load.skip=true``; requests/s = the step's ops /
  its seconds; CPU per request = the step's ``client_cpu_s`` (the sampler's, over the
  step: its requester processes) / ops, and the whole process tree's (``os.times`` of the
  reaped children: the CLI, its loaders and requesters, startup and reporting
  included) / ops.
- Java: ``java … LinkBenchDriver -c config/LinkConfigPgsql.properties -r``; requests/s
  = REQUEST PHASE COMPLETED's requests / the seconds from the first requester's start
  to the last one's end as its stdout says them; CPU per request = the JVM's CPU
  (``/proc/<pid>/stat``) over that span / requests, and its whole run's / requests.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_linkbench_java.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--db lbjava] [--maxid1 100001] [--secs 30] [--pairs 3] [--requesters 2,16]
        [--java-home DIR | --java-jar PATH] [--json out.json] [--keep]

Where the Java client cannot be had (no JDK, no checkout, a jar missing from
~/.m2), one line starting "Java absent" and exit 0.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linkbench_java_client as J  # noqa: E402

from benchlib.store.folders import load_results  # noqa: E402

CONFIG = "config/LinkConfigPgsql.properties"
SCHEMA = "linkdb0"   # LinkStorePgsql's dbid: dbprefix "linkdb" + 0


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def benchlib_cmd(home: Path, url: str, data: Path, props: dict) -> list[str]:
    cmd = [str(Path(sys.executable).with_name("benchlib")), "run", str(home / CONFIG),
           "--target", url, "--data-dir", str(data), "--no-progress"]
    for k, v in props.items():
        cmd += ["-p", f"{k}={v}"]
    return cmd


def benchlib_step(home: Path, url: str, props: dict, log: Path) -> dict:
    """One benchlib run of the config (its run folder removed after); its request step's figures."""
    data = Path(tempfile.mkdtemp(prefix="bench-lbjava-"))
    try:
        return _benchlib_step(home, url, props, log, data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def _benchlib_step(home: Path, url: str, props: dict, log: Path, data: Path) -> dict:
    cpu0, t0 = _children_cpu(), time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.run(benchlib_cmd(home, url, data, props), stdout=out,
                            stderr=subprocess.STDOUT).returncode
    total_cpu, wall = _children_cpu() - cpu0, time.perf_counter() - t0
    if rc:
        raise RuntimeError(f"benchlib exited {rc}: see {log}")
    runs = [p.parent for p in data.rglob("meta.json")]
    if len(runs) != 1:
        raise RuntimeError(f"benchlib: {len(runs)} run folders under {data}")
    t = load_results(runs[0])
    steps = t["steps"]
    req = steps[steps.step.str.startswith("r.")]
    if req.empty:
        return {"ops": 0.0, "secs": 0.0, "cpu_s": 0.0, "total_cpu_s": total_cpu, "wall_s": wall}
    ops, secs = float(req.ops.sum()), float(req.secs.sum())
    cpu = float(req.client_cpu_s.sum())
    return {"ops": ops, "secs": secs, "cpu_s": cpu, "total_cpu_s": total_cpu, "wall_s": wall,
            "errors": int(req.errors.sum()), "threads": int(req.threads.max()), "run": runs[0].name}


def java_step(home, jar, deps, db, props, log: Path) -> dict:
    over = {"host": "127.0.0.1", "port": f"5432/{db}?x", **props}
    fig = J.watch(J.command(jar, deps, CONFIG, over), home, log)
    return {"ops": float(fig["requests"]), "secs": fig["secs"], "cpu_s": fig["cpu_s"],
            "total_cpu_s": fig["total_cpu_s"], "wall_s": fig["wall_s"],
            "java_rps": fig["java_rps"], "threads": fig["requesters"]}


def per_request(f: dict) -> dict:
    ops = f["ops"] or float("nan")
    return {"rps": f["ops"] / f["secs"] if f["secs"] else float("nan"),
            "cpu_us": f["cpu_s"] / ops * 1e6, "total_cpu_us": f["total_cpu_s"] / ops * 1e6}


def table(rows: list[dict]) -> str:
    """The per-pair figures and ratios (benchlib / Java), then their medians."""
    out = ["| requesters | pair | load avg | Java req/s | benchlib req/s | ratio | "
           "CPU µs/req (request phase) Java / benchlib | ratio | CPU µs/req (whole run) Java / benchlib |",
           "|---:|---:|---|---:|---:|---:|---|---:|---|"]
    by_n: dict[int, list] = {}
    for r in rows:
        j, b = per_request(r["java"]), per_request(r["benchlib"])
        rr, cr = b["rps"] / j["rps"], b["cpu_us"] / j["cpu_us"]
        by_n.setdefault(r["requesters"], []).append((j, b, rr, cr))
        out.append(f"| {r['requesters']} | {r['pair']} ({r['first']} first) | {r['loadavg']} | "
                   f"{j['rps']:,.0f} | {b['rps']:,.0f} | {rr:.2f} | {j['cpu_us']:.0f} / {b['cpu_us']:.0f} | "
                   f"{cr:.2f} | {j['total_cpu_us']:.0f} / {b['total_cpu_us']:.0f} |")
    for n, xs in by_n.items():
        med = lambda f: statistics.median(f(x) for x in xs)  # noqa: E731
        out.append(f"| {n} | **median** | | {med(lambda x: x[0]['rps']):,.0f} | "
                   f"{med(lambda x: x[1]['rps']):,.0f} | **{med(lambda x: x[2]):.2f}** | "
                   f"{med(lambda x: x[0]['cpu_us']):.0f} / {med(lambda x: x[1]['cpu_us']):.0f} | "
                   f"**{med(lambda x: x[3]):.2f}** | {med(lambda x: x[0]['total_cpu_us']):.0f} / "
                   f"{med(lambda x: x[1]['total_cpu_us']):.0f} |")
    return "\n".join(out)


def _loadavg(a: float, b: float) -> str:
    lo, hi = sorted((a, b))
    return f"{lo:.1f}–{hi:.1f}" if round(lo, 1) != round(hi, 1) else f"{lo:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--db", default="lbjava", help="the database it creates and drops")
    ap.add_argument("--maxid1", type=int, default=100_001)
    ap.add_argument("--secs", type=int, default=30, help="each request phase (maxtime)")
    ap.add_argument("--driver", default="c", choices=("c", "python", "auto"),
                    help="benchlib's run.driver (c: the C loop over libpq; python: psycopg)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--requesters", default="2,16")
    ap.add_argument("--java-home", help="a mdcallag/linkbench checkout (config/, src/)")
    ap.add_argument("--java-jar", help="the client's jar, built elsewhere")
    ap.add_argument("--json", help="write every run's figures there")
    ap.add_argument("--keep", action="store_true", help="leave the database (and logs) behind")
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", a.db):
        ap.error(f"--db {a.db!r}: a plain lower-case name (letters, digits, _)")
    try:
        counts = [int(x) for x in a.requesters.split(",")]
    except ValueError:
        ap.error(f"--requesters {a.requesters!r}: counts separated by commas (2,16)")
    if a.secs < 1 or a.pairs < 1 or a.maxid1 < 2 or min(counts) < 1:
        ap.error("--secs, --pairs, --requesters at least 1; --maxid1 at least 2")
    try:
        home = J.home(a.java_home)
        deps = J.dependencies()
        jar = Path(a.java_jar) if a.java_jar else J.build(home, deps)
        if not jar.is_file():
            raise J.JavaAbsent(f"Java absent: no jar at {jar}")
    except J.JavaAbsent as e:
        print(e)
        return 0
    logs = Path(tempfile.mkdtemp(prefix="bench-lbjava-logs-"))
    with psycopg.connect(a.url, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {a.db}")
    url = a.url.rsplit("/", 1)[0] + "/" + a.db
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {SCHEMA}")
        c.execute(f"ALTER DATABASE {a.db} SET search_path TO {SCHEMA}")
    rows = []
    try:
        t = time.perf_counter()
        load = benchlib_step(home, url, {"maxid1": a.maxid1, "run.skip": "true"}, logs / "load.log")
        print(f"load: {time.perf_counter() - t:.0f} s ({logs / 'load.log'})", file=sys.stderr)
        for n in counts:
            props = {"maxid1": a.maxid1, "requesters": n, "maxtime": a.secs}
            bl_props = {**props, "load.skip": "true", "run.driver": a.driver}
            for i in range(1, a.pairs + 1):
                first = "Java" if i % 2 else "benchlib"
                la0, got = os.getloadavg()[0], {}
                for who in ([first, "benchlib" if first == "Java" else "Java"]):
                    log = logs / f"{who}-t{n}-p{i}.log"
                    got[who] = (java_step(home, jar, deps, a.db, props, log) if who == "Java" else
                                benchlib_step(home, url, bl_props, log))
                row = {"requesters": n, "pair": i, "first": first, "java": got["Java"],
                       "benchlib": got["benchlib"], "loadavg": _loadavg(la0, os.getloadavg()[0])}
                rows.append(row)
                j, b = per_request(row["java"]), per_request(row["benchlib"])
                print(f"t{n} pair {i}: Java {j['rps']:,.0f} req/s {j['cpu_us']:.0f} µs/req, benchlib "
                      f"{b['rps']:,.0f} req/s {b['cpu_us']:.0f} µs/req (threads {row['benchlib'].get('threads')}"
                      f"/{row['java']['threads']}, load {row['loadavg']})", file=sys.stderr)
    finally:
        if not a.keep:
            with psycopg.connect(a.url, autocommit=True) as c:
                c.execute(f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE)")
    if a.json:
        Path(a.json).write_text(json.dumps({"load": load, "rows": rows}, indent=1))
    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"\nMachine: {cpu}, {os.cpu_count()} cores (shared); {time.strftime('%Y-%m-%d %H:%M')} UTC; "
          f"maxid1 {a.maxid1:,}, {CONFIG} of mdcallag/linkbench, {a.secs} s per request phase; "
          f"logs in {logs}\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
