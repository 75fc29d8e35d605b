"""The cost of length: a run of N minutes of loops (a minute each by default) at full
speed, its controller's and clients' resident memory sampled over time, and the run
folder's size per hour.

``benchlib run`` is started as a process of its own (the controller); every
``--every`` seconds the bench reads the controller's RSS, the RSS of its client
processes (its descendants: a step's clients are new processes each loop) and the
run folder's size. At the end it prints the samples, the controller's RSS growth after
the first minute (last minute's mean against the second minute's), the clients'
likewise, and the folder's growth: MB per hour while it runs (the interval log is
JSON then) and, for the finished folder, bytes per op-second (one interval row per
operation per second: the folder's bytes / (run seconds × operations in the mix)).

    .venv/bin/python bench/bench_soak.py [--workload ycsb|linkbench] [--minutes 30]
        [--url sqlite] [--every 5] [--loop-secs 60] [--status-interval 10] [--keep]

``--trace-steps`` runs the controller in this process instead (no samples of another
process): at each step's end, after its tables and summary lines, its RSS, its RSS
after ``malloc_trim`` (what the C allocator held but could give back: fragmentation),
the Python heap (tracemalloc), pyarrow's pool, how many objects the collector tracks,
and the lines of code whose allocations grew most since the previous step.

``--interval-log SECONDS`` measures instead what the controller's interval log holds in
memory after that many seconds of 10 operations (tracemalloc), in this process.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import yaml

MB = 2**20
PROPS = {
    "ycsb": {"recordcount": 20000, "operationcount": 10**12, "readproportion": 0.5,
             "updateproportion": 0.5, "requestdistribution": "zipfian", "table": "longruns_soak"},
    "linkbench": {"maxid1": 20001},
}


def experiment(workload: str, url: str, minutes: int, data: Path, loop_secs: int = 60,
               status_s: float | None = None) -> dict:
    # SQLite's database outside the run folder: the folder holds the results only
    target = {"name": "soak", "url": url, **({"options": {"path": str(data / "soak.sqlite")}}
                                             if url == "sqlite" else {})}
    return {"experiment": f"soak-{workload}", "workload": workload, "properties": PROPS[workload],
            "targets": [target], "load": {"threads": 2},
            "run": {"threads": [2], "processes": 1, "loops": max(1, minutes * 60 // loop_secs),
                    "loop_secs": loop_secs,
                    **({"status_interval_s": status_s} if status_s else {})}, "seed": 7}


def folder_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def rss(proc: psutil.Process) -> tuple[int, int, int]:
    """(the controller's RSS, its client processes' summed, how many clients)."""
    try:
        own = proc.memory_info().rss
        kids = proc.children(recursive=True)
    except psutil.Error:
        return 0, 0, 0
    total = 0
    for k in kids:
        try:
            total += k.memory_info().rss
        except psutil.Error:
            pass
    return own, total, len(kids)


def soak(workload: str, url: str, minutes: int, every: float, data: Path, loop_secs: int,
         status_s: float | None = None) -> list[dict]:
    exp_file = data / f"{workload}.yaml"
    exp_file.write_text(yaml.safe_dump(experiment(workload, url, minutes, data, loop_secs, status_s)))
    proc = subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(exp_file),
                             "--data-dir", str(data), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctl, samples, t_run = psutil.Process(proc.pid), [], None
    exp_dir = data / f"soak-{workload}"
    while proc.poll() is None:
        time.sleep(every)
        logs = list(exp_dir.glob("*/intervals.jsonl"))
        if t_run is None and logs and '"r.L1"' in logs[0].read_text()[:100_000]:
            t_run = time.monotonic()     # the run loops began: time counts from here
        if t_run is None:
            continue
        own, kids, n = rss(ctl)
        if not own:
            break       # it ended
        samples.append({"s": time.monotonic() - t_run, "ctl_mb": own / MB, "clients_mb": kids / MB,
                        "clients": n, "folder_mb": folder_bytes(exp_dir) / MB})
    if proc.returncode:
        raise SystemExit(f"the soak run failed (exit {proc.returncode})")
    return samples


def growth(samples: list[dict], key: str) -> float:
    """The last minute's mean against the second minute's, %, while loops run (its
    clients there: the finish's writing of the tables aside)."""
    samples = [s for s in samples if s["clients"]]
    end = samples[-1]["s"]
    second = [s[key] for s in samples if 60 <= s["s"] < 120 and s[key]]
    last = [s[key] for s in samples if s["s"] >= end - 60 and s[key]]
    if not second or not last:
        return float("nan")
    a, b = sum(second) / len(second), sum(last) / len(last)
    return 100 * (b - a) / a


def report(workload: str, samples: list[dict], data: Path) -> None:
    print(f"\n{workload}: {len(samples)} samples")
    print(f"{'t_s':>6} {'ctl_MB':>8} {'clients_MB':>10} {'folder_MB':>9}")
    step = max(1, len(samples) // 20)
    for s in samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else []):
        print(f"{s['s']:6.0f} {s['ctl_mb']:8.1f} {s['clients_mb']:10.1f} {s['folder_mb']:9.2f}")
    print(f"controller RSS after the first minute: {growth(samples, 'ctl_mb'):+.1f} %; "
          f"clients: {growth(samples, 'clients_mb'):+.1f} %")
    top = max(range(len(samples)), key=lambda i: samples[i]["folder_mb"])
    live = [s for s in samples[:top + 1] if s["s"] >= 60]   # before the log becomes a table
    if len(live) > 1:
        rate = (live[-1]["folder_mb"] - live[0]["folder_mb"]) / (live[-1]["s"] - live[0]["s"]) * 3600
        print(f"folder while running: {rate:.1f} MB per hour")
    from benchlib.store.folders import load_results
    t = load_results(data / f"soak-{workload}")
    steps = t["steps"][t["steps"]["phase"] == "run"]
    iv = t["intervals"][t["intervals"]["step"].isin(set(steps["step"]))]
    secs, ops = float(steps["secs"].sum()), iv["op"].nunique()
    size = folder_bytes(data / f"soak-{workload}")
    print(f"finished folder: {size / MB:.2f} MB for {secs:.0f} run seconds x {ops} ops "
          f"= {size / (secs * ops):.0f} B per op-second ({size / secs * 3600 / MB:.1f} MB per hour); "
          f"{int(steps['ops'].sum()):,} operations, load average {os.getloadavg()[0]:.1f}")


def interval_log_memory(seconds: int, ops: int = 10) -> None:
    import tracemalloc

    from benchlib.run.interval_log import IntervalLog
    log = IntervalLog(Path(tempfile.mkdtemp(prefix="benchlib-soak-")), "r1")
    log.step = "r.L1"
    row = {"ops": 1234, "errors": 0, "mean_us": 101.5, "p99_us": 350.0, "max_us": 900.0,
           "min_us": 20.0, "intended_mean_us": 101.5, "intended_p99_us": 350.0,
           "intended_max_us": 900.0, "interval_s": 1.0}
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for s in range(seconds):
        log([{"second": s, "op": f"OP{i}", **row} for i in range(ops)])
    held = tracemalloc.get_traced_memory()[0] - base
    log.close()
    shutil.rmtree(log.path.parent, ignore_errors=True)
    print(f"interval log after {seconds} s x {ops} ops: {held / MB:.2f} MiB held, "
          f"{held / (seconds * ops):.0f} B per op-second")


def trace_steps(workload: str, url: str, minutes: int, data: Path, loop_secs: int,
                frames: int = 4, top: int = 8) -> None:
    """The controller's memory at each step's end, measured in this process."""
    import ctypes
    import gc
    import io
    import tracemalloc

    import pyarrow as pa

    from benchlib.params import load_experiment
    from benchlib.run.experiment import preflight, run_experiment
    from benchlib.summaries import step_lines
    exp_file = data / f"{workload}.yaml"
    exp_file.write_text(yaml.safe_dump(experiment(workload, url, minutes, data, loop_secs)))
    exp = load_experiment(exp_file)
    preflight(exp, data)
    libc, me, prev, rows = ctypes.CDLL("libc.so.6"), psutil.Process(), None, []
    if frames:      # slows the controller several times over: its loops run late
        tracemalloc.start(frames)

    def traced(results: dict, run_id: str, step: str) -> str:
        nonlocal prev
        text = step_lines(results, run_id, step)
        del results
        gc.collect()
        rss0 = me.memory_info().rss
        libc.malloc_trim(0)
        snap = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]) if frames else None
        row = {"step": step, "rss_mb": rss0 / MB, "trimmed_mb": me.memory_info().rss / MB,
               "py_mb": tracemalloc.get_traced_memory()[0] / MB,
               "arrow_mb": pa.total_allocated_bytes() / MB, "objects": len(gc.get_objects())}
        rows.append(row)
        print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
              flush=True)
        if prev is not None and snap is not None:
            for d in snap.compare_to(prev, "traceback")[:top]:
                if d.size_diff > 2048:
                    print(f"    {d.size_diff / 1024:+9.1f} KiB {d.count_diff:+6d} blocks  "
                          + " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in d.traceback))
        prev = snap
        return text
    run_experiment(exp, data, out=io.StringIO(), progress=False, step_lines=traced)
    tracemalloc.stop()
    print(f"pyarrow's pool: {pa.default_memory_pool().backend_name}")
    runs = [r for r in rows if r["step"].startswith("r.")]
    if len(runs) > 2:
        n = len(runs) - 2
        print("per step from the 2nd loop to the last: " + ", ".join(
            f"{k} {(runs[-1][k] - runs[1][k]) / n:+.3f}" for k in ("rss_mb", "trimmed_mb", "py_mb",
                                                                    "arrow_mb", "objects")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=sorted(PROPS), default="ycsb")
    ap.add_argument("--minutes", type=int, default=30)
    ap.add_argument("--url", default="sqlite")
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--loop-secs", type=int, default=60, help="each run loop's length (60)")
    ap.add_argument("--status-interval", type=float, metavar="SECONDS",
                    help="the run's status_interval_s (its default: 10)")
    ap.add_argument("--keep", action="store_true", help="keep the data folder (its path printed)")
    ap.add_argument("--interval-log", type=int, metavar="SECONDS")
    ap.add_argument("--trace-steps", action="store_true",
                    help="the controller in this process: its memory at each step's end")
    ap.add_argument("--frames", type=int, default=4,
                    help="with --trace-steps: tracemalloc's frames per allocation (0: no tracemalloc)")
    a = ap.parse_args()
    if a.interval_log:
        return interval_log_memory(a.interval_log)
    data = Path(tempfile.mkdtemp(prefix="benchlib-soak-"))
    if a.trace_steps:
        trace_steps(a.workload, a.url, a.minutes, data, a.loop_secs, a.frames)
        return shutil.rmtree(data, ignore_errors=True)
    print(f"soak: {a.workload}, {a.minutes} minutes of {a.loop_secs}-s loops on {a.url}, load "
          f"average {os.getloadavg()[0]:.1f}")
    report(a.workload, soak(a.workload, a.url, a.minutes, a.every, data, a.loop_secs,
                            a.status_interval), data)
    if a.keep:
        print(f"data: {data}")
    else:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
