"""A run that is mostly errors fails: the step stops past run.max_error_ratio of failed
operations (or LinkBench's max_failed_requests) naming why, and ops, ops/s and RIOPS
count only what ran, the failed operations beside them."""
from __future__ import annotations

import pytest
from conftest import driver_url
from killing import RUN_STATEMENT, kill_clients_later

from benchlib.run.step import too_many_failed
from benchlib.workloads.base import StepSpec


def test_the_limit_counts_failed_calls_against_all_the_calls():
    step = StepSpec("r.L1", "run", 1, max_error_ratio=0.01)
    assert too_many_failed(step, 0, 1000) is None
    assert too_many_failed(step, 10, 1000) is None                  # 1 %: at the limit
    why = too_many_failed(step, 11, 1000)
    assert "11 of 1,000 operations failed" in why and "run.max_error_ratio 0.01" in why
    assert too_many_failed(StepSpec("r.L1", "run", 1, max_error_ratio=1.0), 1000, 1000) is None
    capped = StepSpec("r.L1", "run", 1, max_error_ratio=1.0, max_failed=5)
    assert "max_failed_requests 5" in too_many_failed(capped, 6, 10**6)


def test_max_error_ratio_is_validated():
    from benchlib.params import ParameterError, validate
    from conftest import small_experiment
    for bad in (-0.1, 1.5, "x"):
        with pytest.raises(ParameterError, match="max_error_ratio"):
            validate(small_experiment("m", "sqlite", run={"max_error_ratio": bad}), "t")


def workload_experiment(workload: str, url: str) -> dict:
    if workload == "kv":
        props, run = {"read": 1.0, "key_count": 2000}, {"threads": [1], "loop_secs": 6}
    else:
        props = {"tab_rows": 2000, "batch_size": 10, "run_duration": 6}
        run = {"threads": [1], "processes": 1}
    return {"experiment": f"kill-{workload}", "workload": workload, "properties": props,
            "targets": [{"name": "m", "url": url}], "load": {"threads": 1},
            "run": {**run, "status_interval_s": 1}, "seed": 1}


@pytest.mark.mysql
@pytest.mark.slow
@pytest.mark.parametrize("workload", ["kv", "ybio"])
@pytest.mark.parametrize("library", ["c", "python"])
def test_a_killed_mariadb_connection_never_makes_an_ok_run_of_failures(mysql_own_db, tmp_path,
                                                                        workload, library):
    """KILL CONNECTION of every client mid-loop, through mysqlclient and PyMySQL: the run
    reconnects within 2 failed operations, or fails naming why — never ok with a figure
    made of failures."""
    from benchlib import load_results, run_experiment
    from benchlib.params import validate
    from benchlib.targets import mysql_driver
    if library == "c" and mysql_driver.c_client_error():
        pytest.skip(mysql_driver.c_client_error())
    db = mysql_own_db.rsplit("/", 1)[1]
    exp = validate(workload_experiment(workload, driver_url(mysql_own_db, library)), "t")
    # the client, once it runs the loop's statements
    killer, killed = kill_clients_later(db, pattern=RUN_STATEMENT[workload], min_conns=1, settle_s=1.0,
                                        poll_s=0.005)
    res = run_experiment(exp, tmp_path / "d", progress=False)
    killer.join(60)
    assert killed, "nothing was killed"
    t = load_results(tmp_path / "d" / f"kill-{workload}")
    loop = t["steps"].set_index("step").loc["r.L1"]
    status = list(res.runs.values())[0]
    if status == "ok":
        assert loop["failed"] <= 2, loop
    else:
        assert status == "failed" and loop["status"] == "failed"
        assert "operations failed" in t["runs"]["meta"].iloc[0]["error"]
    # what ran, never the failures: the loop's figure is its completed operations per second
    assert loop["ops_per_s"] == pytest.approx(loop["ops"] / loop["secs"])
    if workload == "ybio":
        bench = t["benchruns"].iloc[0]
        assert bench["riops"] == pytest.approx(bench["num_rows"] / bench["duration_s"])
        assert bench["num_rows"] == loop["ops"]
