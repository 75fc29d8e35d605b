"""Two experiments of one matrix stay two (issue 39 item 3): their runs share run ids,
so every figure is keyed by (experiment, run) — the compare notebook's headline, the
points, the loops and the steady-state check — and a folder of several experiments is
offered as several in the explorer."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import benchlib
from benchlib import plots
from benchlib.reports.explore import experiments
from benchlib.summaries import settling, uncertainty
from benchlib.summaries.headline import best_point
from benchlib.summaries.samples import run_samples

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "sample"


@pytest.fixture(scope="module")
def two() -> dict:
    """The sample, and the same matrix as another experiment that did twice the operations."""
    a = benchlib.load_results(SAMPLE)
    b = {k: v.copy() for k, v in a.items()}
    for name in ("runs", "steps", "latency", "intervals", "hw"):
        b[name]["experiment"] = "sample-twice"
    b["steps"]["ops"] = b["steps"]["ops"] * 2
    return plots.combine([a, b])


def test_points_and_headline_keep_two_experiments_apart(two):
    s = run_samples(two)
    assert len(s) == 16 and s.groupby("experiment").size().to_dict() == {"sample": 8, "sample-twice": 8}
    one = s.set_index(["experiment", "run_id"])["ops_per_s"]
    rid = "sqlite-t2-p2-l1-tgt0-r1"
    assert one[("sample-twice", rid)] == pytest.approx(2 * one[("sample", rid)])
    best = best_point(two)   # the better experiment's point, never the mean of the two
    assert best["name"] == f"sample-twice/{rid}" and best["runs"] == 1
    assert best["ops_per_s"] == pytest.approx(one[("sample-twice", rid)])


def test_loops_and_steady_state_per_experiment(two):
    loops = settling.loops(two)
    assert len(loops) == 2 * len(settling.loops(benchlib.load_results(SAMPLE)))
    assert loops.groupby(["experiment", "run_id"]).size().max() == 2           # r.L1, r.L2 each
    assert "sample-twice/sqlite-t1-p1-l1-tgt0-r1" in settling.loops_text(two)
    st = uncertainty.steady_state(two)
    assert st.empty or set(st["experiment"]) <= {"sample", "sample-twice"}


def test_a_folder_of_experiments_is_offered_as_several(tmp_path):
    archive = tmp_path / "archive"
    for name in ("a", "b"):
        shutil.copytree(SAMPLE, archive / name)
    assert experiments(tmp_path) == ["archive/a", "archive/b"]
    assert experiments(archive / "a") == ["."]
    assert experiments(next((archive / "a").glob("sqlite-*"))) == []
