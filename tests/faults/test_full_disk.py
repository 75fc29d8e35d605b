"""A full disk is a failure like any other: the data folder on a small tmpfs of the
test's own, filled by another writer while the run loop goes on. The run ends
``failed`` with one line naming the folder and its free space, the completed load's
tables are intact, and ``benchlib list`` still reads the catalog."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml


def _tmpfs(tmp_path, size: str):
    """A tmpfs of ``size`` mounted for this test (root only), unmounted after."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def small_disk(tmp_path):
    yield from _tmpfs(tmp_path, "4M")


@pytest.fixture
def disk_16m(tmp_path):
    yield from _tmpfs(tmp_path, "16M")


def fill_when(path: Path, ready, timeout_s: float = 120) -> threading.Thread:
    """Once ``ready()`` holds, write zeros into ``path`` until the device is full."""
    def body():
        end = time.monotonic() + timeout_s
        while not ready() and time.monotonic() < end:
            time.sleep(0.05)
        try:
            with open(path, "wb") as f:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
        except OSError:
            pass
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def run_cli(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "benchlib.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow
def test_a_disk_filled_mid_run_fails_the_run_in_one_line(small_disk, tmp_path):
    exp = tmp_path / "e.yaml"
    exp.write_text(yaml.safe_dump({
        "experiment": "full", "workload": "ycsb",
        "properties": {"recordcount": 2000, "operationcount": 10**9, "readproportion": 1.0,
                       "updateproportion": 0.0},
        # the database elsewhere: what fills is the results' disk
        "targets": [{"name": "s", "url": "sqlite", "options": {"path": str(tmp_path / "db.sqlite")}}],
        "load": {"threads": 1}, "run": {"threads": [1], "processes": 1, "loop_secs": 30,
                                         "status_interval_s": 1}, "seed": 1}))
    run_dir = small_disk / "full" / "s-t1-p1-l1-tgt0-r1"
    filler = fill_when(small_disk / "filler", lambda: (run_dir / "steps.parquet").exists())
    r = run_cli("run", exp, "--data-dir", small_disk, "--no-progress")
    filler.join(10)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "Traceback" not in out, out
    lines = [ln for ln in out.splitlines() if "no space left on the device of" in ln]
    assert lines and str(run_dir) in lines[0] and " free)" in lines[0], out
    meta = yaml.safe_load((run_dir / "meta.json").read_text())
    assert meta["status"] == "failed" and "no space left" in meta["error"]
    steps = pd.read_parquet(run_dir / "steps.parquet")
    assert steps.set_index("step").loc["l.pre", "status"] == "ok"       # the load's table intact
    listed = run_cli("list", "--data-dir", small_disk)
    assert listed.returncode == 0 and "s-t1-p1-l1-tgt0-r1" in listed.stdout, listed
    assert "failed" in listed.stdout
    (small_disk / "filler").unlink()
    assert not (run_dir / ".reserve").exists()


def test_a_warning_before_a_run_when_free_space_is_short(tmp_path, monkeypatch):
    from benchlib.store import space
    monkeypatch.setattr(space, "free_bytes", lambda p: 100 * 1024)
    line = space.warn_if_short(tmp_path, 2, 60)
    assert line.startswith("warning: ") and "100.0 KiB free" in line
    monkeypatch.setattr(space, "free_bytes", lambda p: 10 * 2**30)
    assert space.warn_if_short(tmp_path, 2, 60) is None


@pytest.mark.slow
def test_a_rerun_after_a_full_disk_has_the_space_the_failed_attempt_took(disk_16m, tmp_path):
    """Issue 41: a load that filled the disk is set aside in .attempts/ without its
    database (db.sqlite and its journals, 10 MB here), so once the user freed what else
    filled it, the rerun has the room again and ends ok."""
    exp = tmp_path / "e.yaml"
    exp.write_text(yaml.safe_dump({   # an 11 MB database in the run folder, on a 16 MB disk
        "experiment": "refill", "workload": "ycsb",
        "properties": {"recordcount": 8000, "operationcount": 100, "readproportion": 1.0,
                       "updateproportion": 0.0},
        "targets": [{"name": "s", "url": "sqlite"}],
        "load": {"threads": 1}, "run": {"threads": [1], "processes": 1, "loop_secs": 1}, "seed": 1}))
    filler = disk_16m / "filler"
    filler.write_bytes(b"\0" * (6 << 20))
    first = run_cli("run", exp, "--data-dir", disk_16m, "--no-progress")
    assert first.returncode == 1 and "no space left" in first.stdout + first.stderr, first
    filler.unlink()                    # what the user can free; the attempt is benchlib's
    again = run_cli("run", exp, "--data-dir", disk_16m, "--no-progress")
    assert again.returncode == 0 and "1/1 runs ok" in again.stdout, again.stdout + again.stderr
    attempts = list((disk_16m / "refill" / ".attempts").iterdir())
    assert len(attempts) == 1 and (attempts[0] / "meta.json").exists()   # the record kept
    assert not list(attempts[0].glob("db.sqlite*"))                       # its data not
