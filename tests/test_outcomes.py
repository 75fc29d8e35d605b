"""Outcomes as the reference tools count them (issue 29): YCSB D reads only keys whose
insert returned, at any number of client threads and processes."""
from __future__ import annotations

import pytest
from conftest import small_experiment

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
