"""A run killed during a loop resumes at that loop: the loops it finished are kept as they
are (rows, timestamps, histograms), the rest run, and no server of the killed run is left."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import small_experiment

from benchlib import load_results

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "benchlib.cli", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def wait_for_loop(exp_dir: Path, step: str, proc, timeout=180) -> Path:
    """The run folder, once its interval log has a second of ``step`` (the steps before
    it ended)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        for log in exp_dir.glob("*/intervals.jsonl"):
            if f'"{step}"' in log.read_text():
                return log.parent
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {proc.returncode}): {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    raise AssertionError(f"no second of {step} in {timeout} s")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_and_resume(tmp_path, url: str, name: str, before_kill=lambda: None, after_kill=lambda: None):
    exp = small_experiment(name, url, run={"loops": 6, "loop_secs": 2, "threads": [2]},
                           properties={"recordcount": 2000, "operationcount": 10**9,
                                       "readproportion": 0.5, "updateproportion": 0.5,
                                       "table": f"longruns_{name}"})
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    data = tmp_path / "data"
    proc = cli("run", path, "--data-dir", data, "--no-progress", start_new_session=True)
    run_dir = wait_for_loop(data / name, "r.L4", proc)
    before_kill()
    proc.kill()                                  # SIGKILL: nothing of it runs after this
    proc.communicate(timeout=60)
    after_kill()
    before = pd.read_parquet(run_dir / "steps.parquet")
    lat_before = pd.read_parquet(run_dir / "latency.parquet")
    again = cli("run", path, "--data-dir", data, "--no-progress")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    return run_dir, before, lat_before, out + err


def check_resumed(run_dir: Path, before: pd.DataFrame, lat_before: pd.DataFrame, out: str) -> dict:
    assert "resume " in out and "keeps l.pre" in out, out
    t = load_results(run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "ok"
    assert len(meta["resumptions"]) == 1 and meta["resumptions"][0]["from"] == "r.L4"
    steps = t["steps"].set_index("step")
    assert list(steps.index) == ["l.pre", "r.L1", "r.L2", "r.L3", "r.L4", "r.L5", "r.L6"]
    kept = ["l.pre", "r.L1", "r.L2", "r.L3"]
    old = before.set_index("step").loc[kept]
    for col in ("started", "ended", "secs", "ops", "errors", "pid", "client_cpu_s"):
        assert steps.loc[kept, col].tolist() == old[col].tolist(), col
    assert (steps["status"] == "ok").all()
    # the loops run again by another process than the kept ones
    assert set(steps.loc[["r.L4", "r.L5", "r.L6"], "pid"]) == {meta["pid"]} != set(old["pid"])
    lat = t["latency"].set_index(["step", "op"]).sort_index()
    lat_old = lat_before[lat_before.step.isin(kept)].set_index(["step", "op"]).sort_index()
    assert lat.loc[kept, "hdr"].tolist() == lat_old["hdr"].tolist()
    assert lat.loc[kept, "count"].tolist() == lat_old["count"].tolist()
    iv = t["intervals"]
    assert set(iv["step"]) == set(steps.index)
    assert (iv.groupby("step")["ops"].sum().loc[steps.index[1:]] > 0).all()
    assert set(t["hw"]["step"]) >= set(kept[1:])
    assert not (run_dir / ".steps").exists() and not (run_dir / "intervals.jsonl").exists()
    return meta


@pytest.mark.slow
def test_a_killed_sqlite_run_resumes_at_its_loop(tmp_path):
    run_dir, before, lat_before, out = kill_and_resume(tmp_path, "sqlite", "resq")
    check_resumed(run_dir, before, lat_before, out)


@pytest.mark.slow
@pytest.mark.embedded
def test_a_killed_embedded_postgres_run_resumes_and_leaves_no_server(tmp_path):
    pytest.importorskip("pgserver")
    pgdata = tmp_path / "data" / ".embedded-postgres" / "repg"
    killed = []

    def postmaster_stops():
        """The killed run's server goes by itself (its watchdog), before any rerun."""
        pid = killed[0]
        end = time.monotonic() + 60
        while _alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        assert not _alive(pid), "the killed run's PostgreSQL is still running"
    run_dir, before, lat_before, out = kill_and_resume(
        tmp_path, "embedded-postgres", "repg",
        lambda: killed.append(int((pgdata / "postmaster.pid").read_text().split()[0])),
        postmaster_stops)
    check_resumed(run_dir, before, lat_before, out)
    assert "left running by a killed run" not in out
    assert not (pgdata / "postmaster.pid").exists() and not _alive(killed[0])
