"""executor: dask — a step's client processes as tasks on a real Dask LocalCluster (2
worker processes, TCP on loopback), merged by the same controller as local processes."""
from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import small_experiment

from benchlib import load_results, measure
from benchlib.params import ParameterError, plan, validate
from benchlib.store.folders import INTERVAL_LOG, read_meta

distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (extra: dask)")
from benchlib.run.dask_executor import DaskExecutor  # noqa: E402
from benchlib.run.experiment import run_one  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ex = DaskExecutor.connect(None, workers=2)
    yield ex
    ex.close()


class Tap:
    """The executor, with every driver's raw per-second latencies kept as they arrive."""

    def __init__(self, ex):
        self.ex, self.raw = ex, {}

    def start_clients(self, tasks):
        clients = self.ex.start_clients(tasks)
        get = clients.get

        def tapped(timeout):
            msg = get(timeout)
            if msg[0] == "second":
                for op, part in msg[3].items():
                    self.raw.setdefault((msg[1], op), []).append(np.asarray(part[0]))
            return msg
        clients.get = tapped
        return clients


def _one_run(exp_dict, data_dir, executor):
    exp = validate(exp_dict, "test")
    (spec,) = plan(exp)
    exp_dir = data_dir / exp.experiment
    exp_dir.mkdir(parents=True, exist_ok=True)
    status = run_one(exp, spec, exp_dir, data_dir, executor=executor, out=open(os.devnull, "w"),
                     progress=False)
    return status, exp_dir / spec.run_id


def test_merged_p99_is_the_p99_of_both_drivers_raw_latencies(cluster, data_dir):
    exp = small_experiment("dk", "sqlite", executor="dask", run={"threads": [2], "processes": 2},
                           properties={"recordcount": 2000, "operationcount": 6000,
                                       "readproportion": 0.5, "updateproportion": 0.5})
    tap = Tap(cluster)
    cluster.sample_own_host = True     # a worker samples its host as a remote one would
    try:
        status, rd = _one_run(exp, data_dir, tap)
    finally:
        cluster.sample_own_host = False
    assert status == "ok"
    t = load_results(rd)
    lat = t["latency"].set_index(["step", "op"])
    for op in ("READ", "UPDATE"):
        parts = {p: np.concatenate(v) for (p, o), v in tap.raw.items() if o == op}
        assert sorted(parts) == [0, 1] and all(len(v) for v in parts.values())  # both drivers
        raw = np.concatenate(list(parts.values()))
        row = lat.loc[("r.L1", op)]
        assert row["count"] == len(raw)
        want = measure.percentile_of(raw, 99.0)
        assert abs(row["p99_us"] - want) <= max(1.0, want * 1e-3)   # HDR: 3 significant digits
        assert row["max_us"] == pytest.approx(raw.max(), rel=1e-3, abs=1)
    drivers = t["drivers"]
    run = drivers[drivers.step == "r.L1"].sort_values("client")
    assert list(run["executor"]) == ["dask", "dask"] and run["worker"].nunique() == 2
    assert list(run["threads"]) == [1, 1] and run["ops"].sum() == 6000
    assert (run["cpu_s"] > 0).all() and run["error"].isna().all()
    # beside the controller's sampler, the worker's: its drivers as clients, no DBMS there
    hw = t["hw"].query("step == 'r.L1'")
    assert len(hw) > hw["second"].nunique() and hw["host"].notna().all()
    assert hw["dbms_cpu_s"].isna().any() and (hw["client_cpu_s"] > 0).any()


def test_split_load_inserts_every_key_once(cluster, data_dir, pg_own_db):
    import psycopg
    exp = small_experiment("dl", pg_own_db, executor="dask", load={"threads": 4, "processes": [2]},
                           properties={"recordcount": 5000, "operationcount": 100})
    status, rd = _one_run(exp, data_dir, cluster)
    assert status == "ok"
    with psycopg.connect(pg_own_db) as c:
        n, distinct, lo, hi = c.execute(
            "SELECT count(*), count(DISTINCT ycsb_key), min(ycsb_key), max(ycsb_key) FROM usertable").fetchone()
    assert n == distinct == 5000
    load = load_results(rd)["drivers"].query("step == 'l.pre'")
    assert sorted(load["ops"]) == [2500, 2500] and load["worker"].nunique() == 2


def test_lost_worker_fails_the_run_and_keeps_the_others_intervals(data_dir):
    ex = DaskExecutor.connect(None, workers=2)   # its own: a worker gets killed
    try:
        pids = ex.client.run(os.getpid)
        victim = pids[sorted(pids)[1]]          # client 1's worker (tasks go round-robin)
        exp = small_experiment("dx", "sqlite", executor="dask",
                               run={"threads": [2], "processes": 2, "loop_secs": 8},
                               properties={"recordcount": 1000, "operationcount": 10**9})
        killer = threading.Thread(target=_kill_after_run_seconds, daemon=True,
                                  args=(data_dir / "dx", victim, 2))
        killer.start()
        status, rd = _one_run(exp, data_dir, ex)
    finally:
        ex.close()
    assert status == "failed"
    meta = read_meta(rd)
    assert meta.status == "failed" and "driver 1" in meta.error, meta.error
    t = load_results(rd)
    iv = t["intervals"].query("step == 'r.L1'")
    assert iv["second"].nunique() >= 2 and iv["ops"].sum() > 0    # what was measured is kept
    drivers = t["drivers"].query("step == 'r.L1'").set_index("client")
    assert drivers.loc[0, "ops"] > 0 and pd_isna(drivers.loc[0, "error"])
    assert "driver 1" in drivers.loc[1, "error"]


def pd_isna(v) -> bool:
    import pandas as pd
    return bool(pd.isna(v))


def _kill_after_run_seconds(exp_dir, pid: int, seconds: int) -> None:
    """SIGKILL ``pid`` once the run loop has emitted ``seconds`` seconds."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for log in exp_dir.glob(f"*/{INTERVAL_LOG}"):
            rows = [r for line in log.read_text().splitlines() if line for r in json.loads(line)]
            if sum(1 for r in rows if r["step"] == "r.L1" and r["ops"]) >= seconds:
                os.kill(pid, signal.SIGKILL)
                return
        time.sleep(0.1)


def test_unreachable_scheduler_is_one_line():
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"dask.scheduler tcp://127.0.0.1:1: cannot connect"):
        DaskExecutor.connect("tcp://127.0.0.1:1", workers=2, timeout_s=1)
    assert time.monotonic() - t0 < 30


def test_a_refused_scheduler_address_is_said_at_once():
    """Nobody listens there: said before the client's connect timeout (its retries of a
    refused connection would take all of it), the address named."""
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"dask.scheduler tcp://127.0.0.1:1: cannot connect "
                                             r"\(ConnectionRefusedError: nothing listens on 127.0.0.1:1"):
        DaskExecutor.connect("tcp://127.0.0.1:1", workers=2, timeout_s=60)
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("dask, msg", [
    ({"sheduler": "tcp://h:8786"}, "did you mean scheduler?"),
    ({"workers": 0}, "dask.workers"),
    ({"scheduler": "no address"}, "dask.scheduler"),
])
def test_dask_parameters_are_checked(dask, msg):
    with pytest.raises(ParameterError, match=msg):
        validate(small_experiment("dp", "sqlite", executor="dask", dask=dask), "test")


def test_more_processes_than_workers_fails_the_step_saying_so(cluster, data_dir):
    exp = small_experiment("dw", "sqlite", executor="dask", load={"threads": 3, "processes": [3]})
    status, rd = _one_run(exp, data_dir, cluster)
    assert status == "failed"
    assert "3 client processes but the Dask cluster has 2 workers" in read_meta(rd).error
    # the local cluster's workers run without the statistical profiler (GIL time)
    import dask
    assert not any(cluster.client.run(lambda: dask.config.get("distributed.worker.profile.enabled")).values())


def test_executor_dask_alone_runs_on_a_local_cluster(data_dir):
    """``-p executor=dask`` and nothing else: a local cluster of 2 workers for the
    experiment, run.processes auto = one per worker."""
    from benchlib import run_experiment
    exp = validate(small_experiment("da", "sqlite", executor="dask"), "test")
    res = run_experiment(exp, data_dir, progress=False, out=open(os.devnull, "w"))
    assert res.ok, res.runs
    (run_id,) = res.runs
    assert "-p2-" in run_id
    drivers = load_results(data_dir / "da")["drivers"]
    assert set(drivers["executor"]) == {"dask"} and drivers.query("step == 'r.L1'")["ops"].sum() == 3000


def _scheduler_address(sched_file, sched, wait_s: float = 60) -> str:
    """The address the scheduler wrote to its file, once the file is whole: it exists
    before its JSON is in it (a pair of suites read it empty)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            return json.loads(sched_file.read_text())["address"]
        except (FileNotFoundError, ValueError, KeyError):
            if sched.poll() is not None:
                raise AssertionError(f"the dask scheduler exited ({sched.returncode})") from None
            time.sleep(0.1)
    raise AssertionError(f"no scheduler address in {sched_file} in {wait_s} s")


@pytest.fixture
def own_scheduler(tmp_path):
    """A real Dask scheduler and two workers of this test's own (``dask scheduler``,
    ``dask worker``), each in its own process group; killed after if still there."""
    import subprocess
    import sys
    dask_cli = [sys.executable, "-c", "from distributed.cli.dask_scheduler import main; main()"]
    sched_file = tmp_path / "scheduler.json"
    sched = subprocess.Popen([*dask_cli, "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                              "--scheduler-file", str(sched_file)], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = [sched]
    try:   # killed whatever happens, a setup that failed too (it left a scheduler running)
        address = _scheduler_address(sched_file, sched)
        workers = subprocess.Popen(
            [sys.executable, "-c", "from distributed.cli.dask_worker import main; main()", address,
             "--nworkers", "2", "--nthreads", "1", "--no-dashboard"], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(workers)
        ex = DaskExecutor.connect(address, workers=2)
        try:
            ex.client.wait_for_workers(2, timeout=60)
        finally:
            ex.close()
        yield address, sched, workers
    finally:
        for p in started:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(30)


@pytest.mark.slow
def test_a_killed_scheduler_is_the_runs_one_line_reason(own_scheduler, tmp_path):
    """Issue 41: the scheduler (and its workers) SIGKILLed mid-loop: the run fails with
    "the Dask scheduler … is gone (…)" in one line on the terminal and in meta.json —
    not a traceback, not the key counter's cleanup (``FileNotFoundError: '/psm_…'``)."""
    import subprocess
    import sys

    import yaml
    address, sched, workers = own_scheduler
    exp = small_experiment("dk", "sqlite", executor="dask", dask={"scheduler": address},
                           run={"threads": [2], "processes": 2, "loop_secs": 30},
                           properties={"recordcount": 1000, "operationcount": 10**9})
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))
    data = tmp_path / "d"
    run = subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(tmp_path / "e.yaml"),
                            "--data-dir", str(data), "--no-progress"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        killer = threading.Thread(target=_kill_after_run_seconds, daemon=True,
                                  args=(data / "dk", sched.pid, 1))
        killer.start()
        killer.join(90)
        os.killpg(workers.pid, signal.SIGKILL)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    reason = f"the Dask scheduler {address} is gone ("
    assert run.returncode == 1 and "Traceback" not in out + err, out + err
    assert any(reason in line and "[FAILED" in line for line in out.splitlines()), out
    meta = read_meta(next((data / "dk").glob("dk-*")))
    assert meta.status == "failed" and reason in meta.error and "psm_" not in meta.error


def test_a_cleanup_never_masks_the_error_in_flight():
    """The key counter's segment unlinked by another process (a dead client's resource
    tracker): closing it is no error; and a cleanup that fails while an error is being
    raised leaves that error to be told."""
    from multiprocessing import shared_memory

    from benchlib.run.cleanup import tidy
    from benchlib.workloads import keycounter
    counter = keycounter.create(0, 2)
    shared_memory.SharedMemory(name=counter.name).unlink()   # gone under it
    counter.close(unlink=True)

    def fails():
        raise FileNotFoundError("/psm_x")
    with pytest.raises(TimeoutError, match="Timed out trying to connect"):
        try:
            raise TimeoutError("Timed out trying to connect")
        finally:
            tidy(fails)
    with pytest.raises(FileNotFoundError):   # with nothing in flight it raises as usual
        tidy(fails)


@pytest.mark.slow
def test_an_unreachable_scheduler_leaves_nothing(tmp_path):
    """Issue 41: ``dask.scheduler`` nobody answers on: one line, exit 2, and no folder,
    experiment.json or .lock left (the scheduler is asked before anything is written)."""
    import subprocess
    import sys

    import yaml
    exp = small_experiment("du", "sqlite", executor="dask", dask={"scheduler": "tcp://127.0.0.1:1"})
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(tmp_path / "e.yaml"),
                        "--data-dir", str(tmp_path / "d"), "--no-progress"],
                       capture_output=True, text=True, timeout=120)
    err = r.stderr.strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "dask.scheduler tcp://127.0.0.1:1: cannot connect" in err
    assert not (tmp_path / "d").exists()
