"""How long ``benchlib report`` takes to render an experiment again, and where the time goes.

Copies an experiment (default the committed 15-run ybio sample, ``data/samples/ybio``)
into a temporary folder, renders it once (the first render writes the shared plotly.js),
then times ``--repeat`` re-renders of it, each ``benchlib report <copy> --no-progress``
in a fresh process as a user runs it. Per render it prints the wall time, the CPU
seconds of the command and everything it waited for (the kernel included), the load
average when it began, and the phases as the executed notebooks record them (papermill's
metadata): from the first notebook's start to the last one's end, with each notebook's
own time (side by side they overlap), and the rest of the wall time (the command's own
imports, a kernel's start, the last pages' HTML, the index).

    .venv/bin/python bench/bench_report_render.py [--experiment data/samples/ybio] [--repeat 3]

The machine is shared: quote the median with the load average beside it, and measure
before and after a change alternately in one sitting.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHLIB = Path(sys.executable).with_name("benchlib")


def render(exp: Path) -> dict:
    """One ``benchlib report`` of ``exp``: wall and CPU seconds, load, the notebooks' times."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([str(BENCHLIB), "report", str(exp), "--no-progress"], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    notebooks, spans = {}, []
    for nb in sorted((exp / "reports").glob("*.ipynb")):
        meta = json.loads(nb.read_text())["metadata"].get("papermill", {})
        notebooks[nb.stem] = float(meta.get("duration") or 0.0)
        spans.append((datetime.fromisoformat(meta["start_time"]), datetime.fromisoformat(meta["end_time"])))
    executing = (max(e for _, e in spans) - min(s for s, _ in spans)).total_seconds() if spans else 0.0
    return {"wall_s": wall, "cpu_s": cpu, "load": load, "notebooks": notebooks,
            "executing_s": executing, "rest_s": wall - executing}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", default=str(ROOT / "data" / "samples" / "ybio"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    src = Path(args.experiment)
    if not (src / "experiment.json").is_file() and not any(src.glob("*/meta.json")):
        print(f"{src}: not an experiment folder", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        exp = Path(tmp) / src.name
        shutil.copytree(src, exp, ignore=shutil.ignore_patterns("reports"))
        runs = len(list(exp.glob("*/meta.json")))
        first = render(exp)
        print(f"{src.name}: {runs} runs; first render {first['wall_s']:.1f} s")
        rows = []
        for k in range(args.repeat):
            r = render(exp)
            rows.append(r)
            phases = " ".join(f"{n} {s:.1f}" for n, s in r["notebooks"].items())
            print(f"re-render {k + 1}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, load {r['load']:.1f}"
                  f" | notebooks executing {r['executing_s']:.1f} s ({phases}) | the rest {r['rest_s']:.1f} s")
        print(f"median: {statistics.median(r['wall_s'] for r in rows):.1f} s wall, "
              f"{statistics.median(r['cpu_s'] for r in rows):.1f} s CPU, "
              f"load {statistics.median(r['load'] for r in rows):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
