"""What the hw sampler costs: CPU of its own threads per second, as % of one core.

Runs a :class:`benchlib.hw.sampler.Sampler` for N seconds against this machine's
PostgreSQL postmaster tree (pid from /var/run/postgresql/*.pid, else the oldest
process named ``postgres``) while the main thread sleeps, and prints

- the sampler threads' CPU (``time.thread_time()`` inside them) per second, and
- the whole process's CPU per second over the same time (an upper bound: it adds
  the interpreter's own wake-ups),

both as a percentage of one core. The design budget is < 1% at 1 s.

    .venv/bin/python bench/bench_sampler.py [--seconds 30] [--interval 1]
        [--tree proc|psutil] [--db-size URL] [--connections N --url URL]

``--tree psutil`` lists the tree with psutil's ``children(recursive=True)`` (a scan of
every process) instead of /proc/<pid>/task/*/children, to compare.
``--db-size URL`` also queries pg_database_size every 5 s on a connection of its own.
``--connections N`` opens N idle connections first (N more backends in the tree).
"""
from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

import psutil

from benchlib.hw.processes import process_tree_pids
from benchlib.hw.sampler import Sampler


def postmaster_pid() -> int | None:
    for f in sorted(glob.glob("/var/run/postgresql/*.pid")):
        try:
            pid = int(Path(f).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        if psutil.pid_exists(pid):
            return pid
    procs = [p for p in psutil.process_iter(["name", "create_time"]) if p.info["name"] in ("postgres", "postmaster")]
    return min(procs, key=lambda p: p.info["create_time"]).pid if procs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--tree", choices=["proc", "psutil"], default="proc")
    ap.add_argument("--db-size", metavar="URL", help="e.g. postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--connections", type=int, default=0)
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test", help="for --connections")
    args = ap.parse_args()
    if args.connections:
        import psycopg
        idle = [psycopg.connect(args.url) for _ in range(args.connections)]  # noqa: F841 - kept open

    pm = postmaster_pid()
    if pm is None:
        print("no PostgreSQL postmaster on this machine", file=sys.stderr)
        return 1
    if args.tree == "proc":
        def pids():
            return process_tree_pids(pm)
    else:
        def pids():
            p = psutil.Process(pm)
            return [pm] + [c.pid for c in p.children(recursive=True)]
    size = None
    if args.db_size:
        import psycopg
        conn = psycopg.connect(args.db_size, autocommit=True)

        def size():
            return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]

    me = psutil.Process()
    s = Sampler(args.interval, dbms_pids=pids, db_size_bytes=size)
    c0, t0 = sum(me.cpu_times()[:2]), time.monotonic()
    s.start("bench", "sampler")
    time.sleep(args.seconds)
    df = s.stop()
    secs = time.monotonic() - t0
    proc_cpu = sum(me.cpu_times()[:2]) - c0

    n = len(pids() or [])
    print(f"postmaster {pm}: {n} processes; {len(df)} samples in {secs:.1f} s "
          f"at {args.interval:g} s, tree via {args.tree}, db size {'on' if size else 'off'}")
    print(f"sampler threads: {s.cost_cpu_s:.3f} CPU s = {100 * s.cost_cpu_s / secs:.3f}% of one core")
    print(f"whole process:   {proc_cpu:.3f} CPU s = {100 * proc_cpu / secs:.3f}% of one core (upper bound)")
    if s.errors:
        print("errors:", *s.errors, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
