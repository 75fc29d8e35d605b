"""Resume at the moments that lost work before (issue 41, 4, 6, 7): YCSB D killed in a loop
resumes with no read of a key never inserted; a run killed in its final write-out keeps
every finished step; a run killed in a loop's first second resumes (the loop's allowance
is not 0). Each moment is waited for (a second logged, a file made, rows seen), never
slept to."""
from __future__ import annotations

import json
import os
import signal

import pandas as pd
import pytest
import yaml
from resuming import (check_resumed, cli, kill_and_resume, line_reader, no_insert_failed,
                      wait_line, wait_until)
from test_resume import ycsb_experiment

from benchlib import load_results
from benchlib.run.unfinished import TAIL_S, counter_args, unfinished_ops
from benchlib.workloads.base import StepSpec

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


@pytest.mark.slow
@pytest.mark.parametrize("url", ["sqlite", "postgres"])
def test_ycsb_d_killed_in_a_loop_reads_no_key_never_inserted(tmp_path, url, request):
    """The keys the killed loop claimed (and those past them the rerun skips) are holes of
    the counter: the resumed loops' reads never ask for one (0 READ NOT_FOUND)."""
    url = url if url == "sqlite" else request.getfixturevalue("pg_own_db")
    run_dir, before, lat_before, out = kill_and_resume(tmp_path, workload_d("resd", url), at="r.L2")
    check_resumed(run_dir, before, lat_before, out, at="r.L2")
    no_insert_failed(run_dir)
    lat = load_results(run_dir)["latency"].set_index(["step", "op"])["count"]
    assert lat.loc[("r.L3", "READ")] > 0 and lat.loc[("r.L3", "INSERT")] > 0
    assert len(list(run_dir.glob("ycsb-r.L*.txt"))) == 3
    assert not_found(run_dir, "READ") == {}


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
    exp["run"]["loops"] = 2
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
    exp["run"]["loops"] = 3
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
