"""A killed run keeps its completed intervals, says failed, and the next run resumes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from conftest import paced, small_experiment

from benchlib import load_results

# a paced loop (200 ops/s over its threads): the kills below need a loop at work whose
# seconds are logged, not clients driving the database flat out while the test waits
PACE = paced(200)


def start_run(tmp_path, exp: dict):
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump(exp))
    return subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                             str(tmp_path / "data"), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True), p


def wait_for_seconds(tmp_path, name, n=3, timeout=180, proc=None):
    """The run folder once its first run loop has ``n`` seconds of intervals. A loaded
    machine starts a server and loads slowly: the wait is long, and ends at once if the
    run ended (its stderr said why)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        logs = list((tmp_path / "data" / name).glob("*/intervals.jsonl"))
        if logs and len([l for l in logs[0].read_text().splitlines() if '"r.L1"' in l]) >= n:
            return logs[0].parent
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {proc.returncode}) before its intervals: "
                                 f"{proc.stderr.read()[-2000:]}")
        time.sleep(0.1)
    raise AssertionError(f"the run produced no intervals in {timeout} s")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_killed_driver_keeps_intervals_and_resumes(tmp_path, sig):
    # operationcount 0: the loop runs its 30 s (3,000 operations ended it within the 3 s
    # waited for on an idle machine, and the Ctrl-C then met a run that had finished);
    # paced (PACE): the kill needs a loop at work with seconds of operations logged, not
    # one driving SQLite flat out for the seconds waited
    exp = small_experiment("kill", "sqlite", run={"loop_secs": 30, **PACE})
    exp["properties"]["operationcount"] = 0
    proc, path = start_run(tmp_path, exp)
    run_dir = wait_for_seconds(tmp_path, "kill", proc=proc)
    if sig == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)   # Ctrl-C goes to the whole process group
    else:
        proc.kill()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    if sig == signal.SIGINT:
        assert "Traceback" not in err and "interrupted" in err
    t = load_results(run_dir)   # recovers a kill -9 run on read
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] in ("failed", "interrupted")
    iv = t["intervals"]
    assert len(iv[iv.step == "r.L1"]) >= 3 and iv["ops"].sum() > 0
    # the next run of the experiment reruns the failed run (and keeps the old attempt)
    exp["run"]["loop_secs"] = 1
    path.write_text(yaml.safe_dump(exp))
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(path), "--data-dir",
                        str(tmp_path / "data"), "--no-progress"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "ok"
    assert list((tmp_path / "data" / "kill" / ".attempts").iterdir())


@pytest.mark.slow
@pytest.mark.embedded
def test_killed_dbms_marks_run_failed_and_keeps_intervals(tmp_path):
    exp = small_experiment("dbkill", "embedded-postgres", run={"loop_secs": 40, **PACE})
    exp["properties"]["operationcount"] = 0   # the loop runs its 40 s, whatever the speed
    proc, _ = start_run(tmp_path, exp)
    run_dir = wait_for_seconds(tmp_path, "dbkill", proc=proc)
    pidfile = tmp_path / "data" / ".embedded-postgres" / "dbkill" / "postmaster.pid"
    os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    assert "Traceback" not in err
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "failed" and meta["error"]
    iv = load_results(run_dir)["intervals"]
    assert len(iv[iv.step == "r.L1"]) >= 3


# a program that runs an experiment through the API and, once its first loop has logged
# seconds, gets SystemExit in its main thread (what a caller's timeout raises, pytest-
# timeout's included: neither KeyboardInterrupt nor an Exception)
CALLER = """
import json, signal, sys, threading, time, _thread
from pathlib import Path
from benchlib.params import validate
from benchlib import run_experiment
exp, data = json.loads(sys.argv[1]), Path(sys.argv[2])
def alarm(*_):
    raise SystemExit("the caller's timeout")
signal.signal(signal.SIGALRM, alarm)
def watch():
    while True:
        logs = list((data / exp["experiment"]).glob("*/intervals.jsonl"))
        if logs and logs[0].read_text().count('"r.L1"') >= 2:
            _thread.interrupt_main(signal.SIGALRM)
            return
        time.sleep(0.1)
threading.Thread(target=watch, daemon=True).start()
run_experiment(validate(exp, exp["experiment"]), data, progress=False)
"""


@pytest.mark.slow
def test_a_caller_exit_mid_loop_stops_the_clients_and_is_not_ok(tmp_path):
    """SystemExit in the controller's loop: before, the run was written ``ok``, its
    clients ran on unread to the loop's end and then never exited (their queue's pipe
    full, SIGTERM ignored), and the program hung at exit joining them."""
    exp = small_experiment("callerexit", "sqlite", run={"loop_secs": 300, **PACE})
    exp["properties"]["operationcount"] = 0
    p = subprocess.Popen([sys.executable, "-c", CALLER, json.dumps(exp), str(tmp_path / "data")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=240)   # the loop's 300 s would end it otherwise, or never
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raise AssertionError("the program did not exit after SystemExit in its run loop") from None
    assert p.returncode == 1 and "the caller's timeout" in err, err[-2000:]
    [meta] = (tmp_path / "data" / "callerexit").glob("*/meta.json")
    m = json.loads(meta.read_text())
    assert m["status"] == "interrupted" and "SystemExit" in m["error"], m
    # nothing of the run is left: its forkserver and resource tracker end once the program
    # has, each on its own time, so the session is waited for until it is empty
    deadline = time.monotonic() + 60
    while (left := subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True,
                                  text=True).stdout.split()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, subprocess.run(["ps", "-o", "pid,etime,args", "-p", ",".join(left)],
                                    capture_output=True, text=True).stdout
