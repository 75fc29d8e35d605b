"""How fast the YCSB importer reads a long run's output, next to ``wc -l``.

Generates a ~1M-line YCSB output from the real sample lines in tests/data/ycsb
(repeated, with the seconds renumbered and the figures perturbed): one status line
per second and, as a timeseries run prints at its end, one ``[OP], t_ms, avg`` row
per operation per second. ``--status hdr`` writes hdrhistogram status blocks
(``[READ: Count=…, Max=…, …]``, the longest lines YCSB prints) instead of the
timeseries run's ``AverageLatency`` ones; ``--status hdr-only`` a hdrhistogram run's
stderr alone (a million status lines, no timeseries rows: every line becomes three
interval rows, TOTAL, READ and UPDATE, and there is no summary). Then, in the same process, times
``wc -l`` and ``import_output`` over the same file and prints lines/s of both over
``--repeat`` runs: the median (the figure to quote: the machine is shared and
noisy), the best and the worst. ``--parts`` also times ``read_output`` alone
(parsing into tables, no Parquet), so the rest of ``import_output`` is the run
folder's writing. It says which scanner read the lines: the C one
(``benchlib.importers._linescan``) or, where it was not built, the regular
expressions.

    .venv/bin/python bench/bench_import.py [--lines 1000000] [--status avg|hdr|hdr-only] [--repeat 3] [--parts] [--rss]

``--rss`` imports in a fresh process each time and reports its peak RSS.
"""
from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib.importers import import_output, linescan, read_output

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "ycsb"
_NUM = re.compile(r"(?<=[=(])\d+(?:\.\d+)?|(?<=\)=)\d+(?:\.\d+)?")


def status_lines(kind: str) -> list[str]:
    src = DATA / ("pg-runa-t4-hdr.err" if kind.startswith("hdr") else "pg-runa-t4-ts.err")
    lines = [ln for ln in src.read_text().splitlines() if " sec: " in ln and "[READ" in ln]
    return lines[1:-1]   # the steady ones: no first partial second, no CLEANUP


def generate(path: Path, n_lines: int, kind: str, seed: int = 1) -> int:
    rng = random.Random(seed)
    tmpl = status_lines(kind)
    # a status line and two timeseries rows per second; "hdr-only": a hdrhistogram
    # run's stderr, status lines alone (three interval rows each: TOTAL, READ, UPDATE)
    seconds = n_lines if kind == "hdr-only" else n_lines // 3
    t0 = 1795315128.0

    def perturb(m):
        v = float(m.group(0)) * rng.uniform(0.8, 1.25)
        return str(int(v)) if "." not in m.group(0) else f"{v:.2f}"

    out, ops = [], 0
    for s in range(1, seconds + 1):
        line = tmpl[s % len(tmpl)]
        rest = line.split(" current ops/sec; ", 1)[1]
        blocks = rest[rest.index("["):] if "[" in rest else ""
        cur = rng.randint(5000, 9000)
        ops += cur
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t0 + s)) + f":{rng.randrange(1000):03d}"
        out.append(f"{stamp} {s} sec: {ops} operations; {cur} current ops/sec; "
                   f"est completion in 1 hour {_NUM.sub(perturb, blocks)}")
    if kind == "hdr-only":
        path.write_text("\n".join(out) + "\n")
        return len(out)
    out += [f"[OVERALL], RunTime(ms), {seconds * 1000}", f"[OVERALL], Throughput(ops/sec), {ops / seconds!r}"]
    for op in ("READ", "UPDATE"):
        out += [f"[{op}], Operations, {ops // 2}", f"[{op}], AverageLatency(us), 250.5",
                f"[{op}], MinLatency(us), 26", f"[{op}], MaxLatency(us), 36284", f"[{op}], Return=OK, {ops // 2}"]
        base = 250.0 if op == "READ" else 1000.0
        out += [f"[{op}], {s * 1000}, {base * rng.uniform(0.5, 2.0)!r}" for s in range(seconds)]
    path.write_text("\n".join(out) + "\n")
    return len(out)


# the child reads its own high-water mark (VmHWM): ru_maxrss of a child counts the
# parent's resident set at the fork (Linux carries it over the exec)
_CHILD = """
import os, sys, time
from benchlib.importers import import_output
secs = cpu = 0.0
if sys.argv[1]:
    c, t = os.times(), time.perf_counter()
    import_output("ycsb", [sys.argv[1]], sys.argv[2])
    secs, e = time.perf_counter() - t, os.times()
    cpu = e.user + e.system - c.user - c.system
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0].split()[1]
print(secs, int(hwm) * 1024, cpu)
"""


def _import_in_child(src: Path | None, into: Path | None) -> tuple[float, int, float]:
    """Import in a fresh Python process: (seconds of import_output, peak RSS bytes, its
    CPU seconds, user + system, all threads)."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(src or ""), str(into or "")],
                         capture_output=True, text=True, check=True).stdout
    secs, peak, cpu = out.split()[-3:]
    return float(secs), int(peak), float(cpu)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--status", choices=["avg", "hdr", "hdr-only"], default="avg")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--parts", action="store_true", help="also time read_output (no Parquet) alone")
    ap.add_argument("--rss", action="store_true",
                    help="import in a fresh process each time, and report its peak RSS (ru_maxrss)")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        src = tmp / "run.out"
        n = generate(src, a.lines, a.status)
        size = src.stat().st_size
        wc, imp, parse, rss, cpu = [], [], [], [], []
        for i in range(a.repeat):
            t = time.perf_counter()
            counted = int(subprocess.run(["wc", "-l", str(src)], capture_output=True, text=True,
                                         check=True).stdout.split()[0])
            wc.append(time.perf_counter() - t)
            if a.rss:
                secs, peak, used = _import_in_child(src, tmp / "exp" / f"run{i}")
                imp.append(secs)
                rss.append(peak)
                cpu.append(used)
            else:
                t = time.perf_counter()
                import_output("ycsb", [src], tmp / "exp" / f"run{i}")
                imp.append(time.perf_counter() - t)
            if a.parts:
                t = time.perf_counter()
                read_output("ycsb", [src])
                parse.append(time.perf_counter() - t)
        assert counted == n
        scanner = "C scanner" if linescan.AVAILABLE else "regular expressions (the C scanner is not built)"
        print(f"{n} lines, {size / 1e6:.0f} MB, status blocks: {a.status}; {a.repeat} runs; {scanner}")
        print(f"{'':14} {'median':>16} {'best':>16} {'worst':>16}   (lines/s)")

        def row(name, secs, note=""):
            med = statistics.median(secs)
            print(f"{name:14} {n / med:16,.0f} {n / min(secs):16,.0f} {n / max(secs):16,.0f}   "
                  f"median {med:.3f} s{note}")

        w = statistics.median(wc)
        row("wc -l", wc)
        row("import_output", imp, f", {statistics.median(imp) / w:.0f}x wc -l")
        if parse:
            row("  read_output", parse, " (parsing into tables, no Parquet)")
        if rss:
            base = _import_in_child(None, None)[1]
            print(f"peak RSS of the importing process: median {statistics.median(rss) / 1e6:.0f} MB, "
                  f"max {max(rss) / 1e6:.0f} MB (the same process importing nothing: {base / 1e6:.0f} MB)")
            print(f"CPU of import_output (user + system, all its threads): median {statistics.median(cpu):.2f} s, "
                  f"{n / statistics.median(cpu):,.0f} lines per CPU second")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
