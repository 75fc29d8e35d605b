"""Where one benchlib LinkBench requester's CPU goes, per request: cProfile (timed by
this process's CPU clock, not the wall) over the driver's hot loop as
``ClientThread._ops_fast`` runs it (take the planned chunk, call, time with
perf_counter_ns, append) with the RequestClient of the Java repository's config, on an
already loaded LinkBench database (e.g. ``benchlib run …/LinkConfigPgsql.properties
-p run.skip=true``). First the same loop unprofiled, for the CPU per request the
profile's figures are shares of; then the top functions by their own time (tottime)
and by the time under them (cumtime), in µs per request, and the own time summed per
source file (its share times the unprofiled CPU: what that file costs without the
profiler, roughly, since the profiler's cost is per call). What it leaves out: the
controller's per-second merge of the latency lists into histograms (once a second per
process, not per request).

    PYTHONPATH=$PWD .venv/bin/python bench/profile_linkbench_requests.py --url postgresql://postgres@127.0.0.1:5432/lb
        --config ~/.cache/benchlib/linkbench-java/src/config/LinkConfigPgsql.properties [--maxid1 100001] [--requests 20000]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

from benchlib.targets.base import Endpoint
from benchlib.targets.postgres import PostgresTarget
from benchlib.workloads.linkbench import requests as R
from benchlib.workloads.linkbench.bindings import binding
from benchlib.workloads.linkbench.properties import from_properties, read_config


def hot_loop(client, n: int) -> int:
    """ClientThread._ops_fast's loop, without the per-second hand-over."""
    ns, fns, done = time.perf_counter_ns, client.fns, 0
    lists = [[] for _ in fns]
    append = [lst.append for lst in lists]
    while done < n:
        chunk = client.next_chunk(1000)
        for code, a in zip(chunk.codes, chunk.args):
            t0 = ns()
            try:
                fns[code](*a)
            except Exception:
                fns = client.fns
            append[code](ns() - t0)
        done += len(chunk.codes)
    return done


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="a loaded LinkBench database (its search_path)")
    ap.add_argument("--config", required=True, help="LinkConfigPgsql.properties")
    ap.add_argument("--maxid1", type=int, default=100_001)
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    props = {k: v for k, v in read_config(a.config).items()
             if k not in ("loaders", "requesters", "requests", "maxtime", "requestrate")}
    try:
        p = from_properties({**props, "maxid1": a.maxid1})
    except ValueError as e:
        print(f"{a.config}: {e}", file=sys.stderr)
        return 2
    st = binding(PostgresTarget.dialect, p)
    client = R.RequestClient(p, st, Endpoint("postgres", {"conninfo": a.url}), 7, None)
    c0 = time.process_time()
    n = hot_loop(client, a.requests)
    plain = (time.process_time() - c0) / n * 1e6
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    m = hot_loop(client, a.requests)
    prof.disable()
    client.close()
    s = pstats.Stats(prof)
    total = s.total_tt / m * 1e6
    print(f"{n:,} requests unprofiled: {plain:.0f} µs CPU per request; profiled: {total:.0f} µs "
          f"(the profiler's own cost included)\n")
    for key, label in (("tottime", "own time"), ("cumtime", "time under")):
        rows = sorted(s.stats.items(), key=lambda kv: kv[1][2 if key == "tottime" else 3], reverse=True)
        print(f"| function ({label}) | calls/request | µs/request | share |\n|---|---:|---:|---:|")
        for (file, line, fn), (cc, nc, tt, ct, _) in rows[:a.top]:
            v = (tt if key == "tottime" else ct) / m * 1e6
            where = f"{file.split('site-packages/')[-1].split('/benchlib/')[-1]}:{line}"
            print(f"| `{fn}` ({where}) | {nc / m:.2f} | {v:.1f} | {v / total:.0%} |")
        print()
    by_file: dict[str, list] = {}
    for (file, _line, fn), (_cc, nc, tt, _ct, _) in s.stats.items():
        where = "built-in (C calls)" if file == "~" else file.split("site-packages/")[-1].split("/benchlib/")[-1]
        acc = by_file.setdefault(where, [0.0, 0])
        acc[0] += tt
        acc[1] += nc
    print("| source file (own time of its functions) | calls/request | µs/request | share | "
          "≈ µs/request unprofiled |\n|---|---:|---:|---:|---:|")
    for where, (tt, nc) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:a.top]:
        v = tt / m * 1e6
        print(f"| {where} | {nc / m:.1f} | {v:.1f} | {v / total:.0%} | {v / total * plain:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
