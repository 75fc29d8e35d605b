"""Open-loop pacing: throughput on target, and a DBMS stall visible in the
intended-start latency but not in the service time (coordinated omission)."""
from __future__ import annotations

import os
import threading
import time

import psycopg
import pytest
from conftest import small_experiment

from benchlib import load_results, run_experiment
from benchlib.params import validate


@pytest.mark.slow
def test_target_throughput_within_1_percent(data_dir):
    exp = validate(small_experiment("pace", "sqlite", run={"threads": [2], "target_factors": [1],
                                                           "target_base": 300, "loop_secs": 6}),
                   "test")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    steps = load_results(data_dir / "pace")["steps"].set_index("step")
    achieved = steps.loc["r.L1", "ops"] / steps.loc["r.L1", "secs"]
    assert abs(achieved - 300) / 300 < 0.01, achieved
    lat = load_results(data_dir / "pace")["latency"]
    assert {"Intended-READ", "Intended-UPDATE"} <= set(lat[lat.step == "r.L1"].op)


@pytest.mark.slow
@pytest.mark.postgres
def test_stall_shows_in_intended_latency_not_service_time(pg_own_db, data_dir):
    props = {"recordcount": 2000, "operationcount": 10**9, "readproportion": 1.0,
             "updateproportion": 0.0, "requestdistribution": "uniform", "table": f"stalltable_{os.getpid()}"}
    load = validate(small_experiment("stall-load", pg_own_db, properties=props, run={"skip": True}), "t")
    assert run_experiment(load, data_dir, progress=False).ok
    exp = validate(small_experiment("stall", pg_own_db, properties=props, load={"skip": True},
                                    run={"threads": [4], "processes": 1, "target_factors": [1],
                                         "target_base": 400, "loop_secs": 9}), "t")
    stalled = threading.Event()

    def stall():
        # wait until the run has produced its first seconds, then hold a lock for 2 s
        log = None
        for _ in range(600):
            logs = list((data_dir / "stall").glob("*/intervals.jsonl"))
            if logs and len(logs[0].read_text().splitlines()) >= 3:
                log = logs[0]
                break
            time.sleep(0.05)
        assert log is not None
        with psycopg.connect(pg_own_db) as conn:
            conn.execute(f"LOCK TABLE {props['table']} IN ACCESS EXCLUSIVE MODE")
            stalled.set()
            time.sleep(2.0)
            conn.commit()

    th = threading.Thread(target=stall, daemon=True)
    th.start()
    res = run_experiment(exp, data_dir, progress=False)
    th.join(timeout=30)
    assert stalled.is_set() and res.ok, res.runs
    lat = load_results(data_dir / "stall")["latency"].set_index("op")
    service_p99 = lat.loc["READ", "p99_us"]
    intended_p99 = lat.loc["Intended-READ", "p99_us"]
    assert lat.loc["READ", "max_us"] > 1_500_000          # the blocked operations themselves
    assert intended_p99 > 1_000_000, intended_p99          # everything scheduled during the stall
    assert service_p99 < 200_000, service_p99              # 4 of ~3600 ops: not in the p99
