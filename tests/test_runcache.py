"""store.runcache: a run's tables kept between loads only where the environment asks
(a report's kernel), and read again once a file of the run folder changed."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd

import benchlib
from benchlib.store import runcache

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "sample"


def test_kept_while_unchanged_and_read_again_after(tmp_path, monkeypatch):
    exp = tmp_path / "sample"
    shutil.copytree(SAMPLE, exp)
    monkeypatch.setenv(runcache.CACHE_ENV, "1")
    monkeypatch.setattr(runcache, "_kept", {})
    first = benchlib.load_results(exp)
    assert len(runcache._kept) == len(first["runs"]) > 0
    again = benchlib.load_results(exp)
    pd.testing.assert_frame_equal(first["steps"], again["steps"])
    assert again["steps"] is not first["steps"]   # a copy each load: one notebook's change stays its own
    run = Path(first["runs"]["path"].iloc[0])
    steps = pd.read_parquet(run / "steps.parquet")
    steps["ops"] = steps["ops"] * 2
    steps.to_parquet(run / "steps.parquet")
    os.utime(run / "steps.parquet", ns=(1, 1))   # a change in a second as well as in size
    changed = benchlib.load_results(exp)["steps"]
    rid = first["runs"]["run_id"].iloc[0]
    mine = first["steps"]["run_id"] == rid
    assert (changed.loc[changed["run_id"] == rid, "ops"].to_numpy() == 2 * first["steps"].loc[mine, "ops"].to_numpy()).all()


def test_nothing_kept_without_the_environment(monkeypatch):
    monkeypatch.delenv(runcache.CACHE_ENV, raising=False)
    monkeypatch.setattr(runcache, "_kept", {})
    benchlib.load_results(SAMPLE)
    assert runcache._kept == {}
