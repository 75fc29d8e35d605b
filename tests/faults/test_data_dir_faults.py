"""Issue 41, 13: where results go, refused in one line (exit 2) and nothing left behind:
a --data-dir whose name is not UTF-8 or under /proc, a read-only data folder (run,
list --rebuild, report), a run folder replaced by a file, .lock made a folder; and a
run refused once its experiment's folder is made takes that folder away again."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import small_experiment
from test_input_faults import fails_with

from benchlib import cli
from benchlib.store import place
from benchlib.store.folders import ResultsError


@pytest.fixture
def exp_file(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text(yaml.safe_dump(small_experiment("place", "sqlite", run={"loop_secs": 0.5})))
    return p


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A data folder holding one finished run (SQLite, a second's loop)."""
    d = tmp_path_factory.mktemp("finished")
    f = d / "e.yaml"
    f.write_text(yaml.safe_dump(small_experiment("place", "sqlite", run={"loop_secs": 0.5})))
    assert cli.main(["run", str(f), "--data-dir", str(d / "data"), "--no-progress"]) == 0
    return f, d / "data"


def test_data_dir_names_that_cannot_hold_runs(exp_file, tmp_path, capsys):
    bad = Path(os.fsdecode(bytes(tmp_path) + b"/d\xff"))
    fails_with(capsys, ["run", exp_file, "--data-dir", bad], "not UTF-8", "\\xff")
    assert not bad.exists()
    fails_with(capsys, ["run", exp_file, "--data-dir", "/proc/self"], "/proc/self", "cannot write there")


def test_run_folder_replaced_by_a_file_and_lock_made_a_folder(finished, tmp_path, capsys):
    f, data = finished
    exp_dir = data / "place"
    run = next(p for p in exp_dir.iterdir() if p.is_dir())
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(data), str(copy)], check=True)
    (copy / "place" / run.name).rename(copy / "place" / "moved")
    (copy / "place" / run.name).write_text("x")
    for force in ([], ["--force"]):
        fails_with(capsys, ["run", f, "--data-dir", copy, "--no-progress", *force],
                   run.name, "a file where the run folder")
    assert (copy / "place" / run.name).read_text() == "x"
    (copy / "place" / run.name).unlink()
    (copy / "place" / "moved").rename(copy / "place" / run.name)
    (copy / "place" / ".lock").unlink()
    (copy / "place" / ".lock").mkdir()
    fails_with(capsys, ["run", f, "--data-dir", copy, "--no-progress", "--force"], ".lock", "remove it")
    assert json.loads((copy / "place" / run.name / "meta.json").read_text())["status"] == "ok"


@pytest.fixture
def read_only(finished, tmp_path):
    """A read-only bind mount of a copy of the finished data folder (root only)."""
    if os.geteuid() != 0:
        pytest.skip("a read-only mount needs root")
    src, mnt = tmp_path / "src", tmp_path / "ro"
    subprocess.run(["cp", "-a", str(finished[1]), str(src)], check=True)
    mnt.mkdir()
    r = subprocess.run(["mount", "--bind", "-o", "ro", str(src), str(mnt)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount read-only here: {r.stderr.strip()}")
    try:
        yield finished[0], mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_read_only_data_dir(read_only, capsys):
    f, ro = read_only
    fails_with(capsys, ["run", f, "--data-dir", ro, "--no-progress", "--force"], "Read-only")
    fails_with(capsys, ["list", "--rebuild", "--data-dir", ro], "Read-only", "catalog")
    fails_with(capsys, ["report", ro / "place", "--no-progress"], "Read-only", "report")
    assert cli.main(["list", "--data-dir", str(ro)]) == 0     # reading needs no write
    assert not list(ro.glob("catalog.sqlite.corrupt-*"))


def test_a_refused_run_takes_away_what_it_made(tmp_path):
    data = tmp_path / "data"
    with pytest.raises(ResultsError, match="refused"):
        with place.experiment_folder(data, "x") as exp_dir:
            (exp_dir / "experiment.json").write_text("{}")
            raise ResultsError("refused")
    assert not data.exists()
    exp_dir = data / "x"
    exp_dir.mkdir(parents=True)
    (exp_dir / "experiment.json").write_text('{"then": 1}')
    with pytest.raises(ResultsError):
        with place.experiment_folder(data, "x"):
            (exp_dir / "experiment.json").write_text('{"now": 2}')
            raise ResultsError("refused")
    assert (exp_dir / "experiment.json").read_text() == '{"then": 1}'   # put back as it was
    assert sorted(p.name for p in exp_dir.iterdir()) == ["experiment.json"]
    with pytest.raises(KeyboardInterrupt):   # a run folder made: everything is kept
        with place.experiment_folder(data, "x"):
            (exp_dir / "r1").mkdir()
            raise KeyboardInterrupt
    assert sorted(p.name for p in exp_dir.iterdir()) == [".lock", "experiment.json", "r1"]
