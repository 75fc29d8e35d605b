"""LinkBench requesters' gaps between consecutive requests, with the next chunk made
ahead (run/chunk_ahead.py) and without (as before issue 40), alternating on the same
loaded PostgreSQL database.

Each run is ``benchlib run <config> -p load.skip=true -p requesters=N -p maxtime=S``; a
``sitecustomize`` put on the client processes' PYTHONPATH (this bench's, in a temporary
folder; benchlib itself records no per-request times) notes each request's completion
(perf_counter_ns) and each ``next_chunk``'s start, end and thread, and writes them per
requester when its counters are collected; "without" sets
``RequestClient.chunks_ahead = False``, the driver's path before. Per run: requests/s
(the step's ops / secs), each requester's longest gap, the gap at each chunk boundary
(request 20,000, 40,000 …) and the longest in the 300 requests from it (the next chunk
being made meanwhile), and the load average before and after.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_chunk_stall.py --url postgresql://postgres@127.0.0.1:5432/lbstall
        [--config tests/data/linkbench/config/LinkConfigPgsql.properties] [--maxid1 100001]
        [--requesters 2] [--secs 30] [--pairs 3]

The database must hold the graph (``benchlib run <config> -p maxid1=… -p run.skip=true``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HOOK = '''
import json, os, threading, time
if os.environ.get("GAPS_DIR"):
    from benchlib.workloads.linkbench import requests as R
    if os.environ.get("GAPS_AHEAD") == "0":
        R.RequestClient.chunks_ahead = False
    _counted, _next, _counters = R.RequestClient._counted, R.RequestClient.next_chunk, R.RequestClient.counters

    def counted(self, fn, op):
        f, ts, clock = _counted(self, fn, op), self.__dict__.setdefault("_t1", []), time.perf_counter_ns
        def request(*a):
            try:
                return f(*a)
            finally:
                ts.append(clock())
        return request

    def next_chunk(self, max_ops):
        t0 = time.perf_counter_ns()
        c = _next(self, max_ops)
        self.__dict__.setdefault("_chunks", []).append((t0, time.perf_counter_ns(), threading.current_thread().name))
        return c

    def counters(self):
        with open(os.path.join(os.environ["GAPS_DIR"], f"{os.getpid()}-{self.stats.thread}.json"), "w") as f:
            json.dump({"t1": self.__dict__.get("_t1", []), "chunks": self.__dict__.get("_chunks", [])}, f)
        return _counters(self)
    R.RequestClient._counted, R.RequestClient.next_chunk, R.RequestClient.counters = counted, next_chunk, counters
'''
CHUNK = 20_000


def one_run(a, tmp: Path, label: str, ahead: bool) -> dict:
    gaps = tmp / f"gaps-{label}"
    gaps.mkdir()
    env = {**os.environ, "GAPS_DIR": str(gaps), "GAPS_AHEAD": "1" if ahead else "0",
           "PYTHONPATH": os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", "")])}
    cmd = [str(Path(sys.executable).with_name("benchlib")), "run", a.config, "--target", a.url,
           "--data-dir", str(tmp / f"data-{label}"), "--no-progress"]
    for kv in (f"maxid1={a.maxid1}", "load.skip=true", f"requesters={a.requesters}",
               f"maxtime={a.secs}", "displayfreq=1", "progressfreq=1"):
        cmd += ["-p", kv]
    la0 = os.getloadavg()[0]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    la1 = os.getloadavg()[0]
    m = re.search(r"^r\.L1 .*?: (\d+) ops in ([\d.]+) s", out.stdout, re.M)
    if out.returncode or not m:
        raise SystemExit(f"benchlib exited {out.returncode}: {(out.stdout + out.stderr)[-400:]}")
    row = {"run": label, "ahead": ahead, "rps": int(m.group(1)) / float(m.group(2)),
           "load": (la0, la1), "max_gap_ms": [], "boundary_ms": [], "after_boundary_ms": []}
    for f in sorted(gaps.glob("*.json")):
        t = np.asarray(json.loads(f.read_text())["t1"], dtype=np.int64)
        g = np.diff(t) / 1e6
        row["max_gap_ms"].append(round(float(g.max()), 1))
        for k in range(CHUNK, len(t), CHUNK):
            row["boundary_ms"].append(round(float(g[k - 1]), 1))
            row["after_boundary_ms"].append(round(float(g[k - 1:k + 300].max()), 1))
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--config", default="tests/data/linkbench/config/LinkConfigPgsql.properties")
    ap.add_argument("--maxid1", type=int, default=100_001)
    ap.add_argument("--requesters", type=int, default=2)
    ap.add_argument("--secs", type=int, default=30)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-chunk-stall-") as d:
        tmp = Path(d)
        (tmp / "sitecustomize.py").write_text(HOOK)
        print("| run | chunks | req/s | load avg before/after | longest gap per requester (ms) | "
              "gap at each chunk boundary (ms) | longest in the 300 requests from it (ms) |\n"
              "|---|---|---:|---|---|---|---|")
        for i in range(1, a.pairs + 1):
            for ahead in (False, True):
                r = one_run(a, tmp, f"{'a' if ahead else 'b'}{i}", ahead)
                print(f"| {r['run']} | {'ahead' if ahead else 'when needed'} | {r['rps']:,.0f} | "
                      f"{r['load'][0]:.1f} / {r['load'][1]:.1f} | {r['max_gap_ms']} | "
                      f"{r['boundary_ms']} | {r['after_boundary_ms']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
