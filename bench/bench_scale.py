"""How a load's cost and memory grow with the data: YCSB's load on PostgreSQL at
100 k, 1 M (and 10 M) records × 1, 2 … load clients, beside a bare COPY of the same rows.

Each point runs benchlib's load (``load.threads`` = ``load.processes`` = clients, or
the defaults for ``auto``; COPY in batches of ``--batch``) in a process of its own, and watches that process
(the controller) and its spawned load processes from outside: their peak resident
size (``VmHWM`` in /proc, read every 50 ms; the peak a process reached before it
ended). Beside it, alternating, the reference: as many bare processes, each generating
its share of the same rows (YCSB's keys, ten 100-byte alphanumeric fields) a batch at a
time and COPYing it, nothing else, as many as benchlib's load had loader processes: where PostgreSQL itself slows with the table's size,
the reference slows as much. Rates are rows/s over the load (benchlib: the step's
records over its seconds; bare: the first process's start to the last one's end).
Client CPU per row beside each: the loader processes' own getrusage over the load
(benchlib: the step's ``client_cpu_s``; bare: each process from its start to its end).
Before each load a CHECKPOINT, and the two take turns going first (in every second
alternation the bare load does): the load after a big one does not pay for its pages.
Medians of ``--reps``; the load average beside each table.

    .venv/bin/python bench/bench_scale.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--records 100000,1000000] [--clients 2|1,2,auto] [--reps 3] [--batch 5000] [--table bench_scale]
        [--workloads ycsb,ybio,kv,linkbench] [--run-clients 1,16,64] [--run-secs 10] [--run-reps 3]

``--workloads`` adds ybio's load and kv's prepare (on the same PostgreSQL) with their
peak RSS (no reference: their rows are not YCSB's), and LinkBench's load (the maintained
client's config and graph, ``--records`` = maxid1, ``--clients`` = loaders; give it a
database of its own in ``--url``: its tables are named as LinkBench names them).

After each size's YCSB loads (in the last repetition), the loaded table is read: YCSB C
(uniform keys, benchlib's C loop) for ``--run-secs`` at each of ``--run-clients``,
alternating with pgbench fetching the same row from an integer-keyed copy of the table
(``bench_ycsb_pg.same_row_scripts``), ``--run-reps`` times; the run's client processes'
and controller's peak RSS as the load's. Its tables (``<table>``, ``_bare``, ``_int``)
are dropped at the end.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))   # its siblings: bench_ycsb_pg, reference_tools
from reference_tools import need  # noqa: E402
LINKBENCH_CONFIG = HERE.parents[1] / "tests/data/linkbench/config/LinkConfigPgsql.properties"


# ------------------------------------------------------------ the two loads (in a child)

def benchlib_load(url: str, workload: str, records: int, clients: int, batch: int, table: str,
                  data_dir: str) -> dict:
    """benchlib's load step alone; rows/s of the step, its loader processes' CPU per row
    (their getrusage over the step) and how many loaders ran. ``clients`` 0: the
    default loader count (``load.processes`` and ``load.threads`` left as they are)."""
    from benchlib.params import validate
    from benchlib.run.experiment import run_experiment
    from benchlib.store.folders import load_results
    props = {"ycsb": {"recordcount": records, "operationcount": 1, "table": table},
             "ybio": {"tab_rows": records, "batch_size": 1, "tab_prefix": table},
             "kv": {"key_count": records, "op_count": 1, "table": table,
                    "prepare_remove_ratio": 0.1},
             # the maintained client's config as it is (its 2017 graph), maxid1 = records
             "linkbench": {"maxid1": records, "loaders": clients or 1}}[workload]
    extra = {"workload_file": str(LINKBENCH_CONFIG)} if workload == "linkbench" else {}
    exp = validate({
        "experiment": "scale", "workload": workload, "properties": props, **extra,
        "targets": [{"name": "pg", "url": url}],
        "load": {**({"threads": clients, "processes": [clients]} if clients else {}), "batch_size": batch},
        "run": {"skip": True}, "seed": 1,
    }, "bench")
    with open(os.devnull, "w") as devnull:
        res = run_experiment(exp, Path(data_dir), progress=False, out=devnull)
    assert res.ok, res.runs
    steps = load_results(Path(data_dir) / "scale")["steps"].set_index("step")
    ops, secs = float(steps.loc["l.pre", "ops"]), float(steps.loc["l.pre", "secs"])
    cpu = float(steps.loc["l.pre", "client_cpu_s"])
    return {"rate": ops / secs, "rows": ops, "cpu_us": cpu / ops * 1e6,
            "loaders": int(steps.loc["l.pre", "processes"])}


def _bare_worker(url: str, table: str, lo: int, hi: int, batch: int, go, out) -> None:
    import resource

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
        t0, ru0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        for b0 in range(lo, hi, batch):
            n = min(batch, hi - b0)
            keys = build_key_names(np.arange(b0, b0 + n), True, 1)
            offs = rng.integers(0, 1 << 18, (n, 10)).tolist()
            data = b"".join(b"\t".join([k.encode(), *[text[o:o + 100] for o in row]]) + b"\n"
                            for k, row in zip(keys, offs))
            with conn.cursor() as cur, cur.copy(sql) as cp:
                cp.write(data)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        out.put((t0, time.perf_counter(), ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime))


def bare_load(url: str, records: int, clients: int, batch: int, table: str) -> dict:
    """The reference: ``clients`` processes COPYing their contiguous shares of the rows;
    rows/s from the first one's start to the last one's end, and their CPU per row
    (each one's getrusage from its start to its end)."""
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
    secs = max(e for _, e, _ in spans) - min(s for s, _, _ in spans)
    return {"rate": records / secs, "rows": records, "cpu_us": sum(c for _, _, c in spans) / records * 1e6}


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
    me, peaks, workers, pids, seen = psutil.Process(proc.pid), {}, set(), [proc.pid], set()
    tick = 0
    while proc.poll() is None:
        if tick % 10 == 0:   # the tree every 0.5 s: psutil reads all of /proc for it, and
            try:             # the run beside pgbench is on the same 2 cores
                kids = me.children(recursive=True)
            except psutil.Error:
                kids = []
            pids = [proc.pid, *(k.pid for k in kids)]
            for k in kids:
                if k.pid in seen:
                    continue
                seen.add(k.pid)
                try:
                    cmd = " ".join(k.cmdline())
                except psutil.Error:
                    continue
                if "spawn_main" in cmd and "resource_tracker" not in cmd:
                    workers.add(k.pid)
        for pid in pids:   # the high-water marks every 50 ms (one small /proc read each)
            kb = _hwm_kb(pid)
            if kb is not None:
                peaks[pid] = max(peaks.get(pid, 0), kb)
        tick += 1
        time.sleep(0.05)
    out = proc.stdout.read()
    if proc.returncode:
        raise SystemExit(f"child failed ({proc.returncode}): {' '.join(args)}")
    return json.loads(out.strip().splitlines()[-1]), peaks.get(proc.pid, 0), \
        sorted(peaks[w] for w in workers if w in peaks)


# ------------------------------------------------------------ the table

def _point(a, workload: str, records: int, clients: int, data: str, bare_first: bool = False) -> dict:
    """One alternation: benchlib's load and the bare one (YCSB), each after a CHECKPOINT
    (the previous load's dirty pages written before, not during, the next), in turn
    first (``bare_first``: the other order; the one after a big load is not always one)."""
    spec = [a.url, workload, str(records), str(clients), str(a.batch), a.table, data]

    def bare_load_(n: int) -> dict:
        _checkpoint(a.url)
        bare, _, bare_procs = watched(["bare", a.url, str(records), str(n), str(a.batch), a.table + "_bare"])
        _drop(a.url, a.table + "_bare")   # 13 GB at 10 M records: the disk holds one copy less
        return {"bare": bare["rate"], "bare_cpu_us": bare["cpu_us"], "bare_mb": max(bare_procs, default=0) / 1024}

    ycsb = workload == "ycsb"
    # as many bare COPYing processes as benchlib's loaders (auto: the cores, as the plan says)
    n_bare = clients or min(os.cpu_count() or 1, 32)
    first = bare_load_(n_bare) if ycsb and bare_first else {}
    _checkpoint(a.url)
    res, ctl, loaders = watched(["benchlib", *spec])
    r = {"rate": res["rate"], "cpu_us": res["cpu_us"], "loaders": res["loaders"], "ctl": ctl / 1024,
         "load": max(loaders, default=0) / 1024, "n_load": len(loaders)}
    if ycsb:
        assert res["loaders"] == n_bare, (res["loaders"], n_bare)
        r.update(first or bare_load_(n_bare))
        r["ratio"] = r["rate"] / r["bare"]
    print(f"{workload} {records:,} × {clients}: " + ", ".join(f"{k} {v:,.1f}" for k, v in r.items())
          + f" (load average {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    return r


def _checkpoint(url: str) -> None:
    """A CHECKPOINT (a superuser's or pg_checkpoint's); without the right, nothing."""
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute("CHECKPOINT")
        except psycopg.errors.InsufficientPrivilege:
            pass


def _drop(url: str, *tables: str) -> None:
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        for t in tables:
            conn.execute(f"DROP TABLE IF EXISTS {t}")   # checked in main: plain names


def benchlib_ycsb_c(url: str, records: int, clients: int, secs: int, table: str, data: str) -> dict:
    """YCSB C (all reads, uniform keys) through benchlib's C loop on the loaded table."""
    from bench_ycsb_pg import benchlib_run
    rate, cpu_us, _ = benchlib_run(url, Path(data), "run", clients, secs, False, records,
                                   "auto", "c", "C", "uniform", table)
    return {"rate": rate, "cpu_us": cpu_us}


def _pgbench(url: str, clients: int, secs: int, scripts: list[str], tries: int = 3) -> float:
    """pgbench's tps; tried again when it fails to connect (a server shared with other
    sessions can be out of connections for a moment at 64 clients)."""
    from bench_ycsb_pg import pgbench
    for t in range(tries):
        try:
            return pgbench(url, clients, secs, scripts)[0]
        except (subprocess.CalledProcessError, SystemExit) as e:   # bench_ycsb_pg.run_counted's
            text = e.stderr if isinstance(e, subprocess.CalledProcessError) else str(e.code)
            why = (text or "").strip().splitlines()[-1:] or ["no message"]
            print(f"pgbench at {clients} clients failed: {why[0]}" + (", again in 10 s" if t < tries - 1 else ""),
                  file=sys.stderr, flush=True)
            time.sleep(10)
    raise SystemExit(f"pgbench at {clients} clients failed {tries} times (see above)")


def same_key_script(folder: Path, table: str, records: int, fields: int = 10) -> str:
    """pgbench reading the loaded table itself by YCSB's own keys: ``user`` + FNV-1a of
    a uniform keynum (pgbench's hash_fnv1a with seed 0 is YCSB's fnvhash64 before its
    abs). The same table, index and cache as benchlib's reads, where the integer-keyed
    copy is a second table (at 10 M records the two are more than the page cache)."""
    cols = ", ".join(f"field{i}" for i in range(fields))
    f = folder / "same_key.sql"
    f.write_text(f"\\set k random(0, {records - 1})\n\\set h abs(hash_fnv1a(:k, 0))\n"
                 f"SELECT ycsb_key, {cols} FROM {table} WHERE ycsb_key = 'user' || :h;\n")
    return str(f)


def _runs(a, records: int, folder: str) -> dict:
    """At one size: YCSB C in benchlib's C loop against pgbench fetching the same row
    (``bench_ycsb_pg``'s integer-keyed copy), alternating at each client count, with the
    run's client processes' and controller's peak RSS."""
    from bench_ycsb_pg import same_row_scripts
    scripts = same_row_scripts(a.url, records, Path(folder), table=a.table)["C"]
    same_key = [same_key_script(Path(folder), a.table, records)]
    points: dict = {}
    for rep in range(a.run_reps):
        for n in (int(x) for x in a.run_clients.split(",")):
            tps = _pgbench(a.url, n, a.run_secs, scripts)
            tps_key = _pgbench(a.url, n, a.run_secs, same_key)
            for t in range(3):   # as pgbench: connections can run out for a moment
                try:
                    with tempfile.TemporaryDirectory(prefix="bench-scale-run-") as data:
                        res, ctl, kids = watched(["run", a.url, str(records), str(n),
                                                  str(a.run_secs), a.table, data])
                    break
                except SystemExit as e:
                    print(f"{e}; again in 10 s", file=sys.stderr, flush=True)
                    time.sleep(10)
            else:
                raise SystemExit(f"benchlib's run at {n} clients failed 3 times")
            r = {"ops": res["rate"], "pgb": tps, "ratio": res["rate"] / tps, "pgb_key": tps_key,
                 "ratio_key": res["rate"] / tps_key, "ctl": ctl / 1024,
                 "client": max(kids, default=0) / 1024}
            points.setdefault(n, []).append(r)
            print(f"run {records:,} × {n} clients: " + ", ".join(f"{k} {v:,.2f}" for k, v in r.items())
                  + f" (load average {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    return points


def _print_runs(runs: dict, a) -> None:
    print(f"\nYCSB C (uniform, benchlib's C loop) against pgbench fetching the same row, "
          f"{a.run_secs} s each, alternating, medians of {a.run_reps}; load average "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    print("| records | clients | benchlib ops/s | pgbench same row tps | ratio (median) | ratio range "
          "| pgbench same table, same key tps | ratio (median) "
          "| client process peak RSS MB (largest) | controller peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for records, points in runs.items():
        for n, reps in points.items():
            lo, hi = min(r["ratio"] for r in reps), max(r["ratio"] for r in reps)
            print(f"| {records:,} | {n} | {_med(reps, 'ops'):,.0f} | {_med(reps, 'pgb'):,.0f} "
                  f"| {_med(reps, 'ratio'):.2f} | {lo:.2f}–{hi:.2f} | {_med(reps, 'pgb_key'):,.0f} "
                  f"| {_med(reps, 'ratio_key'):.2f} | {_med(reps, 'client'):.0f} "
                  f"| {_med(reps, 'ctl'):.0f} |")


def _med(reps: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in reps)


def _print_table(workload: str, points: dict, reps: int, load0: float) -> None:
    print(f"\n{workload}: medians of {reps}; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    ycsb = workload == "ycsb"
    head = "| records | loaders | benchlib rows/s | vs fewest records | benchlib client CPU µs/row |"
    if ycsb:
        head += (" bare COPY rows/s | vs fewest records | bare client CPU µs/row | benchlib / bare "
                 "(median of each alternation's) | range | bare process peak MB |")
    head += " load process peak RSS MB (largest) | controller peak RSS MB |"
    print(head)
    print("|" + "---:|" * (head.count("|") - 1))
    first = {}
    for (records, clients), reps_ in points.items():
        rate = _med(reps_, "rate")
        f = first.setdefault(clients, reps_)
        n = sorted({r["loaders"] for r in reps_})
        who = "/".join(map(str, n)) + (" (default)" if clients == 0 else "")
        row = (f"| {records:,} | {who} | {rate:,.0f} | {rate / _med(f, 'rate'):.2f} "
               f"| {_med(reps_, 'cpu_us'):.1f} |")
        if ycsb:
            bare = _med(reps_, "bare")
            lo, hi = min(r["ratio"] for r in reps_), max(r["ratio"] for r in reps_)
            row += (f" {bare:,.0f} | {bare / _med(f, 'bare'):.2f} | {_med(reps_, 'bare_cpu_us'):.1f} "
                    f"| {_med(reps_, 'ratio'):.2f} | {lo:.2f}–{hi:.2f} | {_med(reps_, 'bare_mb'):.0f} |")
        print(row + f" {_med(reps_, 'load'):.0f} | {_med(reps_, 'ctl'):.0f} |")


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        kind, rest = sys.argv[2], sys.argv[3:]
        if kind == "benchlib":
            url, wl, n, c, b, table, data = rest
            res = benchlib_load(url, wl, int(n), int(c), int(b), table, data)
        elif kind == "run":
            url, n, c, secs, table, data = rest
            res = benchlib_ycsb_c(url, int(n), int(c), int(secs), table, data)
        else:
            url, n, c, b, table = rest
            res = bare_load(url, int(n), int(c), int(b), table)
        print(json.dumps(res))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--records", default="100000,1000000")
    ap.add_argument("--clients", default="2",
                    help="loaders: counts, or auto for benchlib's default (the bare reference: as many)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--table", default="bench_scale", help="tables of its own (and <table>_bare)")
    ap.add_argument("--workloads", default="ycsb", help="ycsb, ybio, kv, linkbench (records = maxid1)")
    ap.add_argument("--run-clients", default="1,16,64",
                    help="YCSB: after each size's loads, YCSB C at these clients beside pgbench ('' for none)")
    ap.add_argument("--run-secs", type=int, default=10)
    ap.add_argument("--run-reps", type=int, default=3)
    a = ap.parse_args()
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", a.table):
        ap.error(f"--table {a.table!r}: a plain lower-case SQL name")
    if not all(x == "auto" or (x.isdigit() and 0 < int(x) <= 256) for x in a.clients.split(",")):
        ap.error(f"--clients {a.clients!r}: counts from 1 to 256 or auto, by commas")
    runs_wanted = "ycsb" in a.workloads.split(",") and a.run_clients
    if runs_wanted:
        need({"pgbench": "apt-get install postgresql (or postgresql-client, as the release ships it)",
              "psql": "apt-get install postgresql-client"})
    load0 = os.getloadavg()[0]
    try:
        for workload in a.workloads.split(","):
            points: dict = {}
            runs: dict = {}
            for rep in range(a.reps):
                for records in (int(x) for x in a.records.split(",")):
                    for clients in (0 if x == "auto" else int(x) for x in a.clients.split(",")):
                        with tempfile.TemporaryDirectory(prefix="bench-scale-") as data:
                            points.setdefault((records, clients), []).append(
                                _point(a, workload, records, clients, data, bare_first=rep % 2 == 1))
                    if workload == "ycsb" and runs_wanted and rep == a.reps - 1:
                        with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
                            runs[records] = _runs(a, records, folder)
            _print_table(workload, points, a.reps, load0)
            if runs:
                _print_runs(runs, a)
    finally:
        if "ycsb" in a.workloads.split(","):
            _drop(a.url, a.table, a.table + "_bare", a.table + "_int")
    return 0


if __name__ == "__main__":
    sys.exit(main())
