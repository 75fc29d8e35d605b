"""Kill a run with SIGKILL in a later loop and run its experiment again: what the resume
tests of every workload share (tests/test_resume.py, tests/test_resume_workloads.py)."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import yaml

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


def loop_at_work(exp_dir: Path, step: str, lead_s: float):
    """A probe of a run under ``exp_dir``: its folder once loop ``step`` is at work, else
    None. At work: the step before it saved (``.steps/<previous>.json``) ``lead_s`` ago, or
    the step's first completed second is in ``intervals.jsonl``, whichever comes first.

    Not the first completed second alone: the controller holds each second back until
    the next one is complete (only then is the step's last, partial second known), so a
    2-s loop's first line appears as the loop ends, and a kill that followed it raced the
    step's save (pairs of suites at load 10: four resume tests found the killed loop
    finished, a LinkBench kill test killed idle sessions)."""
    started: dict[Path, float] = {}

    def probe() -> Path | None:
        for meta in exp_dir.glob("*/meta.json"):
            run_dir = meta.parent
            try:
                planned = json.loads(meta.read_text()).get("planned") or []
            except ValueError:
                continue                      # being written
            if step not in planned or planned.index(step) == 0:
                continue
            previous = planned[planned.index(step) - 1]
            if run_dir not in started and (run_dir / ".steps" / f"{previous}.json").exists():
                started[run_dir] = time.monotonic()
            if run_dir not in started:
                continue
            log = run_dir / "intervals.jsonl"
            if (time.monotonic() - started[run_dir] >= lead_s
                    or (log.exists() and f'"{step}"' in log.read_text())):
                return run_dir
        return None
    return probe


def wait_inside_loop(exp_dir: Path, step: str, proc, loop_s: float, timeout=180) -> Path:
    """The run folder, once loop ``step`` (``loop_s`` long) is at work and well before its
    end: :func:`loop_at_work` with half the loop as the lead."""
    probe = loop_at_work(exp_dir, step, loop_s / 2)
    t0 = time.time()
    while time.time() - t0 < timeout:
        run_dir = probe()
        if run_dir is not None:
            return run_dir
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {proc.returncode}): {proc.stderr.read()[-2000:]}")
        time.sleep(0.02)
    raise AssertionError(f"loop {step} not at work in {timeout} s")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def kill_and_resume(tmp_path, exp: dict, before_kill=lambda: None, after_kill=lambda run_dir: None,
                    at: str = "r.L3", loop_s: float | None = None):
    """Run ``exp``, SIGKILL it inside loop ``at`` (:func:`wait_inside_loop`; ``loop_s``: how
    long a loop lasts, where the run's ``loop_secs`` does not say), then run it again
    (exit 0): (run folder, its steps and latency tables as the kill left them, the
    rerun's output)."""
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    data = tmp_path / "data"
    loop_s = loop_s or exp["run"]["loop_secs"]
    proc = cli("run", path, "--data-dir", data, "--no-progress", start_new_session=True)
    run_dir = wait_inside_loop(data / exp["experiment"], at, proc, loop_s)
    before_kill()
    proc.kill()                                  # SIGKILL: nothing of it runs after this
    proc.communicate(timeout=60)
    after_kill(run_dir)
    check_killed(run_dir, at)
    before = pd.read_parquet(run_dir / "steps.parquet")
    lat_before = pd.read_parquet(run_dir / "latency.parquet")
    again = cli("run", path, "--data-dir", data, "--no-progress")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    return run_dir, before, lat_before, out + err


def check_killed(run_dir: Path, at: str) -> None:
    """Before its rerun a killed run reads as interrupted in ``at``: its finished steps'
    rows and hw rows are there, and its summary says where it stopped."""
    summary = cli("summary", run_dir)
    out, err = summary.communicate(timeout=120)
    assert summary.returncode == 0 and "Traceback" not in err, err
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "interrupted" and f"during {at}" in meta["error"], meta["error"]
    assert f"{meta['run_id']}: interrupted (killed" in out, out
    t = load_results(run_dir)
    kept = meta["planned"][:meta["planned"].index(at)]
    assert list(t["steps"]["step"]) == kept and (t["steps"]["status"] == "ok").all()
    assert set(t["hw"]["step"]) >= {s for s in kept if s.startswith("r.")}


def check_resumed(run_dir: Path, before: pd.DataFrame, lat_before: pd.DataFrame, out: str,
                  at: str = "r.L3") -> dict:
    """The steps before ``at`` kept as they were (rows, timestamps, histograms), ``at`` and
    the rest run by the rerun's process, the run ok, its meta saying it was resumed."""
    assert "resume " in out and "keeps l.pre" in out, out
    t = load_results(run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "ok"
    assert len(meta["resumptions"]) == 1 and meta["resumptions"][0]["from"] == at
    steps = t["steps"].set_index("step")
    planned = meta["planned"]
    assert list(steps.index) == planned
    kept, rerun = planned[:planned.index(at)], planned[planned.index(at):]
    old = before.set_index("step").loc[kept]
    for col in ("started", "ended", "secs", "ops", "errors", "pid", "client_cpu_s"):
        assert steps.loc[kept, col].tolist() == old[col].tolist(), col
    assert (steps["status"] == "ok").all()
    # the loops run again by another process than the kept ones
    assert set(steps.loc[rerun, "pid"]) == {meta["pid"]} != set(old["pid"])
    lat = t["latency"][t["latency"].step.isin(kept)].set_index(["step", "op"]).sort_index()
    lat_old = lat_before[lat_before.step.isin(kept)].set_index(["step", "op"]).sort_index()
    assert lat["hdr"].tolist() == lat_old["hdr"].tolist() and len(lat)
    assert lat["count"].tolist() == lat_old["count"].tolist()
    iv = t["intervals"]
    loops = [s for s in planned if s.startswith("r.")]
    assert set(iv["step"]) >= {"l.pre", *loops}
    assert (iv.groupby("step")["ops"].sum().loc[loops] > 0).all()
    assert set(t["hw"]["step"]) >= {s for s in kept if s.startswith("r.")}
    assert not (run_dir / ".steps").exists() and not (run_dir / "intervals.jsonl").exists()
    return meta


def check_run_again(run_dir: Path, out: str, why: str) -> dict:
    """The rerun said in one line why it could not resume, and ran the whole run again
    (the killed attempt set aside in .attempts/)."""
    lines = [ln for ln in out.splitlines() if "not resumed" in ln]
    assert len(lines) == 1 and why in lines[0] and lines[0].endswith("the whole run again"), out
    assert "resume " not in out
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "ok" and not meta.get("resumptions")
    steps = load_results(run_dir)["steps"]
    assert list(steps["step"]) == meta["planned"] and set(steps["pid"]) == {meta["pid"]}
    assert len(list((run_dir.parent / ".attempts").iterdir())) == 1
    return meta


def no_insert_failed(run_dir: Path) -> None:
    """No step failed an operation: the resumed inserts found no key taken."""
    steps = pd.read_parquet(run_dir / "steps.parquet")
    assert (steps["failed"] == 0).all(), steps[["step", "failed"]]
    lat = pd.read_parquet(run_dir / "latency.parquet")
    assert (lat.loc[lat.op == "INSERT", "errors"] == 0).all()


def session_pids(sid: int) -> set[int]:
    """The processes of session ``sid`` (a run started with ``start_new_session``: the
    controller, its clients, its resource tracker), from /proc."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:       # it ended meanwhile
            continue
        fields = text.rsplit(")", 1)[1].split()   # after "pid (comm)": state ppid pgrp session
        if int(fields[3]) == sid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def shm_segments(pids, marks=("/dev/shm/psm_", "/dev/shm/benchlib_keys_")) -> set[str]:
    """The shared-memory files these processes map by name (by default the segments
    /dev/shm/psm_*, the insert counter's /dev/shm/benchlib_keys_*)."""
    names = set()
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue
        names |= {ln.split()[5] for ln in maps.splitlines()
                  if any(m in ln for m in marks) and not ln.endswith("(deleted)")}
    return names


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``."""
    kids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                kids.add(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    return kids


def wait_until(cond, timeout_s: float, poll_s: float = 0.05):
    """``cond()`` once it is true, polled for at most ``timeout_s``; else its last value."""
    end = time.monotonic() + timeout_s
    while True:
        got = cond()
        if got or time.monotonic() >= end:
            return got
        time.sleep(poll_s)


def line_reader(proc) -> queue.Queue:
    """The lines of a run's stdout as they come, in a queue (read by a thread)."""
    q: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            q.put(line)
    threading.Thread(target=pump, daemon=True).start()
    return q


def wait_line(q: queue.Queue, start: str, proc, timeout_s: float = 180) -> str:
    """The first line that starts with ``start`` (a step's line: ``r.L1 ``)."""
    while True:
        try:
            line = q.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no line starting {start!r} in {timeout_s} s "
                                 f"(exit {proc.poll()})") from None
        if line.startswith(start):
            return line
