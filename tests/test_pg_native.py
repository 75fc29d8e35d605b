"""The C loop over libpq (run.driver: c) against the Python loop (python) on the same
operations: the same outcomes, the same rows; errors counted as the Python path counts
them (a server that ends the connections: tests/faults/test_run_faults.py); the Python
path when the extension is missing."""
from __future__ import annotations

import pytest
from conftest import small_experiment
from loops import MIX, assert_paced, assert_same_outcomes, run_mix

from benchlib import load_results, run_experiment
from benchlib.params import ParameterError, validate
from benchlib.workloads.ycsb.bindings import postgres_native as pg_native

needs_c = pytest.mark.skipif(not pg_native.AVAILABLE, reason=pg_native.MISSING)


def _table_digest(url: str, table: str) -> tuple[int, str]:
    import psycopg
    with psycopg.connect(url) as c:
        return c.execute(f"SELECT count(*), md5(string_agg(t::text, '|' ORDER BY ycsb_key)) "
                         f"FROM {table} t").fetchone()


@needs_c
@pytest.mark.postgres
def test_the_c_loop_and_the_python_loop_give_the_same_outcomes_and_rows(pg_own_db, tmp_path):
    assert_same_outcomes(run_mix(pg_own_db, tmp_path, "c"), run_mix(pg_own_db, tmp_path, "python"), "c-libpq")
    # one thread: the same operations in the same order leave the same rows
    assert _table_digest(pg_own_db, "t_c") == _table_digest(pg_own_db, "t_python")


@needs_c
@pytest.mark.postgres
def test_the_c_loop_paced_records_intended_latencies(pg_own_db, tmp_path):
    assert_paced(run_mix(pg_own_db, tmp_path, "c", threads=[2], target_factors=[1.0], target_base=2000)[0])


@needs_c
@pytest.mark.postgres
def test_the_c_loop_multiplexed_runs_every_operation_once(pg_own_db, tmp_path):
    # 2 connections from one thread, each through more than one chunk (20,000 operations)
    props = {**MIX, "operationcount": 44_000, "readproportion": 0.95, "updateproportion": 0,
             "insertproportion": 0, "scanproportion": 0.05, "readmodifywriteproportion": 0,
             "table": "t_mux"}
    exp = validate(small_experiment("cmux", pg_own_db, properties=props, run={
        "threads": [2], "processes": 1, "driver": "c", "multiplex": True}), "t")
    assert run_experiment(exp, tmp_path, progress=False).ok
    t = load_results(tmp_path / "cmux")
    step = t["steps"].set_index("step").loc["r.L1"]
    assert step["ops"] == 44_000 and step["errors"] == 0
    lat = t["latency"][t["latency"].step == "r.L1"].set_index("op")["count"]
    iv = t["intervals"][t["intervals"].step == "r.L1"]
    assert iv.groupby("op")["ops"].sum().to_dict() == lat.to_dict()
    assert lat["READ"] + lat["SCAN"] == 44_000
    # the one client process counted its context switches over the step: it waited on
    # its sockets (poll) at least once in 44,000 round trips
    drivers = t["drivers"].query("step == 'r.L1'")
    assert len(drivers) == 1 and drivers["voluntary_switches"].iloc[0] > 0
    assert drivers["involuntary_switches"].iloc[0] >= 0


def _table(url: str):
    from benchlib.targets.postgres import PostgresTarget
    from benchlib.workloads.ycsb.workload import config_from
    cfg = config_from({"recordcount": 10, "table": "usertable"})
    from benchlib.workloads.ycsb.bindings.postgres import PostgresYcsb
    target = PostgresTarget("pg", url)
    PostgresYcsb.create_table(target, cfg)
    target.stop()
    return cfg


def _bindings(url: str):
    from benchlib.targets.postgres import PostgresTarget
    from benchlib.workloads.ycsb.bindings.postgres import PostgresYcsb
    cfg = _table(url)
    ep = PostgresTarget("pg", url).endpoint()
    return cfg, PostgresYcsb(ep, cfg), pg_native.PostgresYcsbNative(url, cfg)


@needs_c
@pytest.mark.postgres
def test_a_failing_statement_is_an_error_of_its_operation_on_both_paths(pg_own_db):
    import psycopg
    cfg, py, c = _bindings(pg_own_db)
    v = [b"x" * 10] * 10
    ops = [("insert", (b"k1", v)), ("insert", (b"k1", v)), ("read", (b"k1", -1)), ("read", (b"k2", 3)),
           ("update", (b"k1", 2, [b"y"])), ("update", (b"k9", -1, v)), ("scan", (b"k", 5, -1))]
    statuses = []
    with psycopg.connect(pg_own_db, autocommit=True) as conn:
        for b in (py, c):
            conn.execute("DELETE FROM usertable")
            statuses.append([getattr(b, name)(*a) for name, a in ops])
        conn.execute("ALTER TABLE usertable DROP COLUMN field4")   # the statements fail now
    broken = [[b.read(b"k1", 4), b.read(b"k1", 0)] for b in (py, c)]
    assert statuses[0] == statuses[1] == [0, 2, 0, 1, 0, 1, 0]   # duplicate key; not found
    assert broken[0] == broken[1] == [2, 0]        # an error; the connection goes on
    assert not c.conn.closed
    py.close()
    c.close()


def test_driver_values_are_checked(monkeypatch):
    with pytest.raises(ParameterError, match="run.driver"):
        validate(small_experiment("d", "sqlite", run={"driver": "fast"}), "t")
    with pytest.raises(ParameterError, match="run.driver: c: target d: ycsb has no C loop for dialect sqlite"):
        validate(small_experiment("d", "sqlite", run={"driver": "c"}), "t")
    monkeypatch.setattr(pg_native, "AVAILABLE", False)   # as where it could not be built
    with pytest.raises(ParameterError, match="not built"):
        validate(small_experiment("d", "postgresql://x@127.0.0.1/db", run={"driver": "c"}), "t")
    assert validate(small_experiment("d", "postgresql://x@127.0.0.1/db"), "t").run.driver == "auto"


@pytest.mark.postgres
def test_without_the_extension_auto_runs_the_python_binding(pg_own_db, monkeypatch):
    from benchlib.targets.base import TargetError
    from benchlib.targets.postgres import PostgresTarget
    from benchlib.workloads.ycsb.bindings import open_binding
    from benchlib.workloads.ycsb.bindings.postgres import PostgresYcsb
    cfg = _table(pg_own_db)   # no C binding: this test runs where the extension is not built
    monkeypatch.setattr(pg_native, "AVAILABLE", False)
    ep = PostgresTarget("pg", pg_own_db).endpoint()
    b = open_binding(ep, cfg, "auto")
    assert isinstance(b, PostgresYcsb)
    b.close()
    with pytest.raises(TargetError, match="not built"):
        open_binding(ep, cfg, "c")


@needs_c
def test_a_server_that_is_not_there_is_libpqs_first_line():
    from benchlib.workloads._native import _pgloop
    with pytest.raises(ConnectionError) as e:
        _pgloop.Conn("host=127.0.0.1 port=1 user=nobody dbname=none connect_timeout=2")
    msg = str(e.value)
    assert msg.startswith("cannot connect: ") and "port 1" in msg and "\n" not in msg and "%" not in msg
