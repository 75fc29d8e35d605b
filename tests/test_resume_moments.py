"""Resume at the moments that lost work before (issue 41, 4, 6, 7): YCSB D killed in a loop
resumes with no read of a key never inserted; a run killed in its final write-out keeps
every finished step; a run killed in a loop's first second resumes (the loop's allowance
is not 0). Each moment is waited for (a second logged, a file made, rows seen), never
slept to."""
from __future__ import annotations

import contextlib
import json
import os
import signal

import numpy as np
import pandas as pd
import pytest
import yaml
from resuming import (check_resumed, cli, kill_and_resume, line_reader, no_insert_failed,
                      wait_line, wait_until)
from test_resume import ycsb_experiment

from benchlib import load_results
from benchlib.run.unfinished import TAIL_S, counter_args, unfinished_ops
from benchlib.workloads.base import StepSpec
from benchlib.workloads.generators import build_key_names
from benchlib.workloads.ycsb.workload import MIXED_CHUNK_OPS

STEPS = [StepSpec("l.pre", "load"), StepSpec("r.L1", "run", 1), StepSpec("r.L2", "run", 2)]


def _log(run_dir, seconds: list[tuple[str, str, int]]) -> None:
    run_dir.mkdir(exist_ok=True)
    (run_dir / "intervals.jsonl").write_text("".join(
        json.dumps([{"step": st, "op": op, "ops": n, "second": i}]) + "\n"
        for i, (st, op, n) in enumerate(seconds)))


def test_an_unfinished_loops_allowance_is_never_0(tmp_path):
    """Killed before its first second: 10 s of the loop before it; a first second cut
    short counts as the loop before's; killed in the first loop: the run's busiest second."""
    _log(tmp_path, [("l.pre", "INSERT", 5000), ("r.L1", "INSERT", 300), ("r.L1", "INSERT", 400),
                    ("r.L1", "READ", 2000)])
    assert unfinished_ops(tmp_path, STEPS, "r.L2", ["INSERT", "READ"]) == {
        "INSERT": TAIL_S * 400, "READ": TAIL_S * 2000}
    _log(tmp_path, [("r.L1", "INSERT", 400), ("r.L2", "INSERT", 20)])
    assert unfinished_ops(tmp_path, STEPS, "r.L2", ["INSERT"]) == {"INSERT": 20 + TAIL_S * 400}
    _log(tmp_path, [("l.pre", "INSERT", 5000)])
    assert unfinished_ops(tmp_path, STEPS, "r.L1", ["INSERT", "READ"]) == {
        "INSERT": TAIL_S * 5000, "READ": TAIL_S * 5000}


def test_the_keys_a_rerun_skips_are_a_hole():
    assert counter_args(100, None) == (100, [])
    assert counter_args(100, {"next": 900, "holes": [[150, 160]], "skip": 50}) == (
        950, [[150, 160], [900, 950]])


def workload_d(name: str, url: str, loops: int = 3) -> dict:
    exp = ycsb_experiment(name, url, readproportion=0.95, updateproportion=0,
                          insertproportion=0.05, requestdistribution="latest")
    exp["run"]["loops"] = loops
    return exp


def not_found(run_dir, op: str) -> dict[str, int]:
    """Per loop, ``op``'s NOT_FOUND returns, as its YCSB text output counts them."""
    found = {}
    for txt in sorted(run_dir.glob("ycsb-r.L*.txt")):
        for line in txt.read_text().splitlines():
            if line.startswith(f"[{op}], Return=NOT_FOUND,"):
                found[txt.name] = int(line.rsplit(",", 1)[1])
    return found


def table_keynums(run_dir, url: str, table: str, below: int) -> tuple[set[int], int]:
    """The key numbers the table holds (the names of [0, ``below``) mapped back), and how
    many of its keys are none of them."""
    sql = f'SELECT ycsb_key FROM "{table}"'
    if url == "sqlite":
        import sqlite3
        with contextlib.closing(sqlite3.connect(run_dir / "db.sqlite")) as c:
            names = [r[0] for r in c.execute(sql)]
    else:
        import psycopg
        with psycopg.connect(url) as c:
            names = [r[0] for r in c.execute(sql)]
    number = {k: i for i, k in enumerate(build_key_names(np.arange(below), True, 1))}
    return {number[k] for k in names if k in number}, sum(k not in number for k in names)


def runs_of(keys: list[int]) -> list[tuple[int, int]]:
    """Sorted numbers as maximal [lo, hi) runs."""
    out: list[tuple[int, int]] = []
    for k in keys:
        if out and out[-1][1] == k:
            out[-1] = (out[-1][0], k + 1)
        else:
            out.append((k, k + 1))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("url", ["sqlite", "postgres"])
def test_ycsb_d_killed_in_a_loop_reads_no_key_never_inserted(tmp_path, url, request):
    """The keys the killed loop claimed (and those past them the rerun skips) are holes of
    the counter: no loop's read asks for a key never inserted (READ: no error in the
    latency table, no NOT_FOUND in the text outputs), and the table holds exactly the
    keys the counter says: below the skipped keys all but r.L1's holes, the resumed
    loops' inserts above them (a gap only where a loop ended on a block of claimed keys)."""
    url = url if url == "sqlite" else request.getfixturevalue("pg_own_db")
    exp = workload_d("resd", url)
    l1 = {}
    run_dir, before, lat_before, out = kill_and_resume(
        tmp_path, exp, at="r.L2",
        after_kill=lambda rd: l1.update(json.loads((rd / ".steps" / "r.L1.json").read_text())["keys"]))
    check_resumed(run_dir, before, lat_before, out, at="r.L2")
    no_insert_failed(run_dir)
    lat = load_results(run_dir)["latency"].set_index(["step", "op"])
    loops = ["r.L1", "r.L2", "r.L3"]
    for loop in loops:
        assert lat.loc[(loop, "READ"), "count"] > 0 and lat.loc[(loop, "INSERT"), "count"] > 0
        assert lat.loc[(loop, "READ"), "errors"] == 0, f"{loop}: READ not found"
    assert len(list(run_dir.glob("ycsb-r.L*.txt"))) == 3
    assert not_found(run_dir, "READ") == {}

    meta = json.loads((run_dir / "meta.json").read_text())
    lo, first = meta["resumptions"][0]["keys_skipped"]
    assert lo == l1["next"] and first > lo
    resumed = int(lat.loc[("r.L2", "INSERT"), "count"] + lat.loc[("r.L3", "INSERT"), "count"])
    threads, chunk = exp["run"]["threads"][0], MIXED_CHUNK_OPS
    held, stray = table_keynums(run_dir, url, exp["properties"]["table"], first + resumed + 2 * threads * chunk)
    assert stray == 0, "keys that are no key number the counter gave"
    l1_holes = {k for h_lo, h_hi in l1["holes"] for k in range(h_lo, h_hi)}
    assert set(range(lo)) - held == l1_holes           # below the skip: r.L1's holes, exactly
    mine = sorted(k for k in held if k >= first)
    assert len(mine) == resumed                        # the resumed loops' inserts, each once
    gaps = runs_of(sorted(set(range(first, mine[-1])) - set(mine)))
    # a claimed block a loop ended on, never inserted: at most a thread's each loop, a chunk's
    assert len(gaps) <= threads * 2 and all(hi - g_lo < chunk for g_lo, hi in gaps), gaps


def _run(tmp_path, exp: dict):
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    data = tmp_path / "data"
    proc = cli("run", path, "--data-dir", data, "--no-progress", start_new_session=True)
    return path, data, proc


def _rerun(path, data) -> str:
    again = cli("run", path, "--data-dir", data, "--no-progress")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    return out + err


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["last_step_saved", "intervals_table_made"])
def test_a_run_killed_in_its_final_write_out_keeps_every_step(tmp_path, moment):
    """Frozen (SIGSTOP) as the moment comes, then SIGKILLed: the rerun writes the tables
    from .steps/, every step as the killed run measured it, and runs nothing."""
    exp = ycsb_experiment("wout", "sqlite")
    exp["run"].update(loops=2, loop_secs=1)   # killed after its loops: their length is not asked
    path, data, proc = _run(tmp_path, exp)
    mark = ".steps/r.L2.json" if moment == "last_step_saved" else "intervals.parquet"
    marks = wait_until(lambda: list((data / "wout").glob(f"wout-*/{mark}")) or proc.poll() is not None,
                       180, 0.001)
    assert isinstance(marks, list), f"the run ended first: {proc.communicate()}"
    run_dir = marks[0].parent.parent if mark.startswith(".steps") else marks[0].parent
    os.kill(proc.pid, signal.SIGSTOP)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "running", "the write-out ended before the kill"
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    steps_before = pd.read_parquet(run_dir / "steps.parquet")
    out = _rerun(path, data)
    assert "writes the run's tables" in out and "not resumed" not in out, out
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "ok" and meta["resumptions"][0]["from"] is None
    t = load_results(run_dir)
    assert list(t["steps"]["step"]) == meta["planned"] == list(steps_before["step"])
    for col in ("started", "ops", "pid"):
        assert t["steps"][col].tolist() == steps_before[col].tolist(), col
    ops = t["intervals"].groupby("step")["ops"].sum()
    assert (ops.loc[["r.L1", "r.L2"]] > 0).all()
    assert (run_dir / "ycsb-r.L2.txt").exists() and not (run_dir / ".steps").exists()


@pytest.mark.slow
@pytest.mark.postgres
def test_a_run_killed_in_a_loops_first_second_resumes(tmp_path, pg_own_db):
    """Killed once the loop's inserts are in the table but before its first second is
    logged: the rerun grants the loop the busiest second of the loop before it (TAIL_S of
    them), keeps r.L1 and runs r.L2 on."""
    import psycopg
    exp = ycsb_experiment("first", pg_own_db, readproportion=0.4, updateproportion=0.4,
                          insertproportion=0.2, requestdistribution="latest")
    exp["run"]["loops"] = 2   # the loop killed in its first second is the last: what is asked of it
    path, data, proc = _run(tmp_path, exp)
    lines = line_reader(proc)
    table = exp["properties"]["table"]
    with psycopg.connect(pg_own_db, autocommit=True) as c:
        def rows():
            return c.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        wait_line(lines, "r.L1 ", proc)      # r.L1 ended: its inserts are all in
        after_l1 = rows()
        assert wait_until(lambda: rows() > after_l1, 120, 0.01), "r.L2 inserted nothing"
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    (run_dir,) = (data / "first").glob("first-*")
    assert '"r.L2"' not in (run_dir / "intervals.jsonl").read_text(), "killed after r.L2's first second"
    before = load_results(run_dir)
    out = _rerun(path, data)
    assert "not resumed" not in out, out
    check_resumed(run_dir, before["steps"], before["latency"], out, at="r.L2")
    no_insert_failed(run_dir)
