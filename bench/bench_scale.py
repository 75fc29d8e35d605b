"""How a load's cost and memory grow with the data: YCSB's load on PostgreSQL at
100 k, 1 M (and 10 M) records × 1, 2 … load clients, beside a bare COPY of the same rows.

Each point runs benchlib's load (``load.threads`` = ``load.processes`` = clients,
COPY in batches of ``--batch``) in a process of its own, and watches that process
(the controller) and its spawned load processes from outside: their peak resident
size (``VmHWM`` in /proc, read every 50 ms; the peak a process reached before it
ended). Beside it, alternating, the reference: as many bare processes, each generating
its share of the same rows (YCSB's keys, ten 100-byte alphanumeric fields) a batch at a
time and COPYing it, nothing else: where PostgreSQL itself slows with the table's size,
the reference slows as much. Rates are rows/s over the load (benchlib: the step's
records over its seconds; bare: the first process's start to the last one's end).
Medians of ``--reps``; the load average beside each table.

    .venv/bin/python bench/bench_scale.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--records 100000,1000000] [--clients 2] [--reps 3] [--batch 5000] [--table bench_scale]
        [--workloads ycsb,ybio,kv]

``--workloads`` adds ybio's load and kv's prepare (on the same PostgreSQL) with their
peak RSS (no reference: their rows are not YCSB's).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


# ------------------------------------------------------------ the two loads (in a child)

def benchlib_load(url: str, workload: str, records: int, clients: int, batch: int, table: str,
                  data_dir: str) -> dict:
    """benchlib's load step alone; rows/s of the step."""
    from benchlib.params import validate
    from benchlib.run.experiment import run_experiment
    from benchlib.store.folders import load_results
    props = {"ycsb": {"recordcount": records, "operationcount": 1, "table": table},
             "ybio": {"tab_rows": records, "batch_size": 1, "tab_prefix": table},
             "kv": {"key_count": records, "op_count": 1, "table": table,
                    "prepare_remove_ratio": 0.1}}[workload]
    exp = validate({
        "experiment": "scale", "workload": workload, "properties": props,
        "targets": [{"name": "pg", "url": url}],
        "load": {"threads": clients, "processes": [clients], "batch_size": batch},
        "run": {"skip": True}, "seed": 1,
    }, "bench")
    with open(os.devnull, "w") as devnull:
        res = run_experiment(exp, Path(data_dir), progress=False, out=devnull)
    assert res.ok, res.runs
    steps = load_results(Path(data_dir) / "scale")["steps"].set_index("step")
    ops, secs = float(steps.loc["l.pre", "ops"]), float(steps.loc["l.pre", "secs"])
    return {"rate": ops / secs, "rows": ops}


def _bare_worker(url: str, table: str, lo: int, hi: int, batch: int, go, out) -> None:
    import numpy as np
    import psycopg

    from benchlib.workloads.generators import build_key_names
    rng = np.random.default_rng(lo)
    alnum = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", np.uint8)
    text = alnum[rng.integers(0, len(alnum), (1 << 18) + 100)].tobytes()
    cols = ", ".join(f"field{i}" for i in range(10))
    sql = f"COPY {table} (ycsb_key, {cols}) FROM STDIN"
    with psycopg.connect(url, autocommit=True) as conn:
        go.wait()
        t0 = time.perf_counter()
        for b0 in range(lo, hi, batch):
            n = min(batch, hi - b0)
            keys = build_key_names(np.arange(b0, b0 + n), True, 1)
            offs = rng.integers(0, 1 << 18, (n, 10)).tolist()
            data = b"".join(b"\t".join([k.encode(), *[text[o:o + 100] for o in row]]) + b"\n"
                            for k, row in zip(keys, offs))
            with conn.cursor() as cur, cur.copy(sql) as cp:
                cp.write(data)
        out.put((t0, time.perf_counter()))


def bare_load(url: str, records: int, clients: int, batch: int, table: str) -> dict:
    """The reference: ``clients`` processes COPYing their contiguous shares of the rows."""
    import psycopg
    cols = ", ".join(f"field{i} TEXT" for i in range(10))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(f"CREATE TABLE {table} (ycsb_key VARCHAR(255) PRIMARY KEY, {cols})")
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    cuts = [records * i // clients for i in range(clients + 1)]
    procs = [ctx.Process(target=_bare_worker, args=(url, table, cuts[i], cuts[i + 1], batch, go, out))
             for i in range(clients)]
    for p in procs:
        p.start()
    time.sleep(1.0)   # connected and waiting
    go.set()
    spans = [out.get() for _ in procs]
    for p in procs:
        p.join()
    secs = max(e for _, e in spans) - min(s for s, _ in spans)
    return {"rate": records / secs, "rows": records}


# ------------------------------------------------------------ watching a child from outside

def _hwm_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def watched(args: list[str]) -> tuple[dict, int, list[int]]:
    """Run ``bench_scale.py --child …``; its result, the controller's peak RSS (KB) and
    each spawned worker's (its multiprocessing resource tracker left out)."""
    import psutil
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[1])}
    proc = subprocess.Popen([sys.executable, str(HERE), "--child", *args], env=env,
                            stdout=subprocess.PIPE, text=True)
    me, peaks, workers = psutil.Process(proc.pid), {}, set()
    while proc.poll() is None:
        try:
            kids = me.children(recursive=True)
        except psutil.Error:
            kids = []
        for p in [me, *kids]:
            kb = _hwm_kb(p.pid)
            if kb is not None:
                peaks[p.pid] = max(peaks.get(p.pid, 0), kb)
        for k in kids:
            try:
                cmd = " ".join(k.cmdline())
            except psutil.Error:
                continue
            if "spawn_main" in cmd and "resource_tracker" not in cmd:
                workers.add(k.pid)
        time.sleep(0.05)
    out = proc.stdout.read()
    if proc.returncode:
        raise SystemExit(f"child failed ({proc.returncode}): {' '.join(args)}")
    return json.loads(out.strip().splitlines()[-1]), peaks.get(proc.pid, 0), \
        sorted(peaks[w] for w in workers if w in peaks)


# ------------------------------------------------------------ the table

def _point(a, workload: str, records: int, clients: int, data: str) -> dict:
    spec = [a.url, workload, str(records), str(clients), str(a.batch), a.table, data]
    res, ctl, loaders = watched(["benchlib", *spec])
    r = {"rate": res["rate"], "ctl": ctl / 1024, "load": max(loaders, default=0) / 1024,
         "n_load": len(loaders)}
    if workload == "ycsb":
        bare, _, bare_procs = watched(["bare", a.url, str(records), str(clients), str(a.batch),
                                       a.table + "_bare"])
        r.update(bare=bare["rate"], bare_mb=max(bare_procs, default=0) / 1024)
    print(f"{workload} {records:,} × {clients}: " + ", ".join(f"{k} {v:,.1f}" for k, v in r.items())
          + f" (load average {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    return r


def _med(reps: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in reps)


def _print_table(workload: str, points: dict, reps: int, load0: float) -> None:
    print(f"\n{workload}: medians of {reps}; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    ycsb = workload == "ycsb"
    head = "| records | clients | benchlib rows/s | vs fewest records |"
    if ycsb:
        head += " bare COPY rows/s | vs fewest records | benchlib / bare | bare process peak MB |"
    print(head + " load process peak RSS MB (largest) | controller peak RSS MB |")
    print("|" + "---:|" * (head.count("|") + 1))
    first = {}
    for (records, clients), reps_ in points.items():
        rate = _med(reps_, "rate")
        f = first.setdefault(clients, reps_)
        row = f"| {records:,} | {clients} | {rate:,.0f} | {rate / _med(f, 'rate'):.2f} |"
        if ycsb:
            bare = _med(reps_, "bare")
            row += (f" {bare:,.0f} | {bare / _med(f, 'bare'):.2f} | {rate / bare:.2f} "
                    f"| {_med(reps_, 'bare_mb'):.0f} |")
        print(row + f" {_med(reps_, 'load'):.0f} | {_med(reps_, 'ctl'):.0f} |")


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        kind, rest = sys.argv[2], sys.argv[3:]
        if kind == "benchlib":
            url, wl, n, c, b, table, data = rest
            res = benchlib_load(url, wl, int(n), int(c), int(b), table, data)
        else:
            url, n, c, b, table = rest
            res = bare_load(url, int(n), int(c), int(b), table)
        print(json.dumps(res))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--records", default="100000,1000000")
    ap.add_argument("--clients", default="2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--table", default="bench_scale", help="tables of its own (and <table>_bare)")
    ap.add_argument("--workloads", default="ycsb")
    a = ap.parse_args()
    load0 = os.getloadavg()[0]
    for workload in a.workloads.split(","):
        points: dict = {}
        for rep in range(a.reps):
            for records in (int(x) for x in a.records.split(",")):
                for clients in (int(x) for x in a.clients.split(",")):
                    with tempfile.TemporaryDirectory(prefix="bench-scale-") as data:
                        points.setdefault((records, clients), []).append(
                            _point(a, workload, records, clients, data))
        _print_table(workload, points, a.reps, load0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
