"""Outcomes as the reference tools count them (issue 29): YCSB D reads only keys whose
insert returned, at any number of client threads and processes."""
from __future__ import annotations

import uuid

import pytest
from conftest import paced, small_experiment
from test_kv import _redis_drop

from benchlib import load_results, run_experiment
from benchlib.params import validate

WORKLOAD_D = {"recordcount": 1000, "operationcount": 4000, "readproportion": 0.95,
              "updateproportion": 0, "insertproportion": 0.05, "requestdistribution": "latest"}


def _run_d(name: str, url: str, data_dir, threads: list[int], processes: int, **run) -> dict:
    exp = validate(small_experiment(name, url, properties=WORKLOAD_D,
                                    run={"threads": threads, "processes": processes, "loops": 1,
                                         **run}), "test")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    return {rid: load_results(data_dir / name / rid) for rid in res.runs}


def _assert_no_read_misses(runs: dict) -> None:
    for rid, t in runs.items():
        lat = t["latency"]
        run_lat = lat[lat.step.str.startswith("r.") & lat.op.isin(["READ", "INSERT"])]
        assert (run_lat["errors"] == 0).all(), (rid, run_lat[["step", "op", "count", "errors"]])
        assert set(run_lat.op) == {"READ", "INSERT"}
        st = t["steps"]
        assert (st["errors"] == 0).all(), rid


@pytest.mark.parametrize("processes", [1, 2])
def test_ycsb_d_reads_only_acknowledged_inserts_sqlite(data_dir, processes):
    _assert_no_read_misses(_run_d(f"dsq{processes}", "sqlite", data_dir, [1, 2, 8], processes))


@pytest.mark.parametrize("processes", [1, 2])
def test_ycsb_d_reads_only_acknowledged_inserts_postgres(data_dir, pg_own_db, processes):
    _assert_no_read_misses(_run_d(f"dpg{processes}", pg_own_db, data_dir, [1, 2, 8], processes))


def test_ycsb_d_python_driver_postgres(data_dir, pg_own_db):
    _assert_no_read_misses(_run_d("dpy", pg_own_db, data_dir, [8], 2, driver="python", loops=2))


@pytest.mark.parametrize("processes", [1, 2])
def test_ycsb_d_reads_only_acknowledged_inserts_mariadb(data_dir, mysql_own_db, processes):
    _assert_no_read_misses(_run_d(f"dmy{processes}", mysql_own_db, data_dir, [1, 2, 8], processes))


def _kv(tmp_path, props: dict, targets: list[dict], threads: int = 2) -> dict:
    import yaml

    from benchlib import cli
    exp = {"experiment": "kvo", "workload": "kv", "properties": props, "targets": targets,
           "load": {"threads": 1, "batch_size": 500},
           "run": {"threads": [threads], "loops": 2, "processes": 2}, "seed": 7}
    path = tmp_path / "kv.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    return load_results(tmp_path / "d" / "kvo")


def _returns(res: dict) -> dict:
    r = res["returns"]
    r = r[r["step"].str.startswith("r.")]
    return r.groupby(["config", "op", "status"])["count"].sum().to_dict()


def test_kv_reads_only_inserted_keys_after_a_partial_prepare(tmp_path, redis_url):
    """prepare_insert_ratio leaves keys out for the run's inserts: a read-only run
    never asks for them (zero misses), on Redis and SQLite alike."""
    table = "o" + uuid.uuid4().hex[:10]
    props = {"a": 1.0, "key_count": 3000, "op_count": 6000, "prepare_insert_ratio": 0.1,
             "table": table, "request_distribution": "zipfian"}
    try:
        res = _kv(tmp_path, props, [{"name": "redis", "url": redis_url}, {"name": "lite", "url": "sqlite"}])
    finally:
        _redis_drop(redis_url, table)
    got = _returns(res)
    for cnf in ("redis", "lite"):
        assert got[(cnf, "READ", "OK")] == 12_000 and (cnf, "READ", "EMPTY") not in got


def test_kv_mix5_misses_are_outcomes_not_errors(tmp_path, redis_url):
    """Reads and updates of kv-mix5 miss only keys a remove took away: EMPTY, beside
    OK, and no error; the inserts of loop 1 are read in loop 2 (the counter goes on)."""
    table = "o" + uuid.uuid4().hex[:10]
    props = {"a": 0.6, "b": 0.1, "c": 0.1, "d": 0.1, "e": 0.1, "prepare_insert_ratio": 0.1,
             "key_count": 3000, "op_count": 8000, "table": table, "request_distribution": "latest"}
    try:
        res = _kv(tmp_path, props, [{"name": "redis", "url": redis_url}])
    finally:
        _redis_drop(redis_url, table)
    lat = res["latency"]
    run = lat[lat["step"].str.startswith("r.")]
    assert (run["errors"] == 0).all(), run[["step", "op", "count", "errors"]]
    got = _returns(res)
    assert got[("redis", "READ", "EMPTY")] > 0 and got[("redis", "READ", "OK")] > got[("redis", "READ", "EMPTY")]
    assert ("redis", "READ", "NOT_FOUND") not in got and ("redis", "READ", "ERROR") not in got


def test_intervals_have_their_length_and_status_brackets_cover_the_line(data_dir, capfd):
    """A loop's last interval is as long as it was (a sliver is not a second); a status
    line's brackets add up to the operations since the previous line, as YCSB's do."""
    import re
    exp = validate(small_experiment("ivl", "sqlite", properties=WORKLOAD_D,
                                    # paced (400 ops/s): the intervals' lengths and the
                                    # lines' brackets are the same at any rate
                                    run={"threads": [2], "loops": 2, "loop_secs": 2,
                                         "status_interval_s": 0.5, **paced(400)}), "test")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    (rid,) = res.runs
    t = load_results(data_dir / "ivl" / rid)
    iv = t["intervals"]
    assert iv["interval_s"].notna().all()
    secs = t["steps"].set_index("step")["secs"]
    for step, g in iv[iv.step.str.startswith("r.")].groupby("step"):
        last = g["second"].max()
        assert (g.loc[g.second < last, "interval_s"] == 1.0).all()
        assert g.loc[g.second == last, "interval_s"].iloc[0] == pytest.approx(secs[step] - last, abs=1e-3)
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if " sec: " in ln and "operations;" in ln]
    assert lines
    before = 0
    for ln in lines:
        total = int(re.search(r"sec: (\d+) operations", ln).group(1))
        counts = [int(c) for c in re.findall(r"Count=(\d+)", ln)]
        # the line's operations since the previous line of its step (a step's first
        # line: all of them; the text does not say where a step begins)
        assert sum(counts) in (total - before, total), ln
        before = total


def test_a_description_that_p_changed_says_so(tmp_path):
    import json

    import yaml

    from benchlib import cli
    exp = small_experiment("desc", "sqlite", description="2,000 records, 2 threads")
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "-p", "recordcount=500", "--data-dir", str(tmp_path / "d"),
                     "--no-progress"]) == 0
    (meta,) = (tmp_path / "d" / "desc").glob("*/meta.json")
    desc = json.loads(meta.read_text())["parameters"]["description"]
    assert desc == "2,000 records, 2 threads (as written for the file; -p changed recordcount)"
