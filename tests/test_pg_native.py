"""The C loop over libpq (run.driver: c) against the Python loop (python) on the same
operations: the same outcomes, the same rows; errors counted as the Python path counts
them (a server that ends the connections: tests/faults/test_run_faults.py); the Python
path when the extension is missing."""
from __future__ import annotations

import re

import pytest
from conftest import small_experiment

from benchlib import load_results, run_experiment
from benchlib.params import ParameterError, validate
from benchlib.targets import pg_native

needs_c = pytest.mark.skipif(not pg_native.AVAILABLE, reason=pg_native.MISSING)

# every kind of operation YCSB's workloads A-F issue, in one mix
MIX = {"recordcount": 500, "operationcount": 3000, "readproportion": 0.3, "updateproportion": 0.2,
       "insertproportion": 0.1, "scanproportion": 0.2, "readmodifywriteproportion": 0.2,
       "maxscanlength": 20, "requestdistribution": "zipfian"}


def _run(url: str, tmp_path, driver: str, **run):
    exp = validate(small_experiment(f"n{driver}", url, properties={**MIX, "table": f"t_{driver}"},
                                    run={"threads": [1], "driver": driver, **run}), "t")
    assert run_experiment(exp, tmp_path / driver, progress=False).ok
    t = load_results(tmp_path / driver / f"n{driver}")
    text = next((tmp_path / driver / f"n{driver}").glob("*/ycsb-r.L1.txt")).read_text()
    returns = sorted(re.findall(r"^\[([A-Z-]+)\], Return=(\w+), (\d+)$", text, re.M))
    return t, returns


def _table_digest(url: str, table: str) -> tuple[int, str]:
    import psycopg
    with psycopg.connect(url) as c:
        return c.execute(f"SELECT count(*), md5(string_agg(t::text, '|' ORDER BY ycsb_key)) "
                         f"FROM {table} t").fetchone()


@needs_c
@pytest.mark.postgres
def test_the_c_loop_and_the_python_loop_give_the_same_outcomes_and_rows(pg_own_db, tmp_path):
    tc, rc = _run(pg_own_db, tmp_path, "c")
    tp, rp = _run(pg_own_db, tmp_path, "python")
    assert tc["runs"]["meta"].iloc[0]["driver_path"] == "c-libpq"
    assert tp["runs"]["meta"].iloc[0]["driver_path"] == "python"
    sc, sp = (x["steps"].set_index("step").loc["r.L1"] for x in (tc, tp))
    assert sc["ops"] == sp["ops"] == 3000 and sc["errors"] == sp["errors"] == 0
    lc, lp = ({r.op: (r["count"], r.errors) for _, r in x["latency"][x["latency"].step == "r.L1"].iterrows()}
              for x in (tc, tp))
    assert lc == lp and set(lc) == {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}
    assert rc == rp and ("READ-MODIFY-WRITE", "OK", str(lc["READ-MODIFY-WRITE"][0])) in rc
    for x in (tc, tp):   # each second's operations add up to the step's
        iv = x["intervals"][x["intervals"].step == "r.L1"]
        assert iv.groupby("op")["ops"].sum().to_dict() == {k: v[0] for k, v in lc.items()}
    # one thread: the same operations in the same order leave the same rows
    assert _table_digest(pg_own_db, "t_c") == _table_digest(pg_own_db, "t_python")


@needs_c
@pytest.mark.postgres
def test_the_c_loop_paced_records_intended_latencies(pg_own_db, tmp_path):
    t, _ = _run(pg_own_db, tmp_path, "c", threads=[2], target_factors=[1.0], target_base=2000)
    lat = t["latency"][t["latency"].step == "r.L1"].set_index("op")["count"]
    for op in ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"):
        # every operation has its intended-start latency; a read-modify-write's inner read
        # and update are timed under READ and UPDATE, not scheduled of their own
        inner = lat["READ-MODIFY-WRITE"] if op in ("READ", "UPDATE") else 0
        assert lat[f"Intended-{op}"] == lat[op] - inner
    step = t["steps"].set_index("step").loc["r.L1"]
    assert step["ops"] == 3000 and step["secs"] >= 1.4   # 3000 on a schedule of 2000/s


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


def _table(url: str):
    from benchlib.targets.postgres import PostgresTarget
    from benchlib.workloads.ycsb.workload import config_from
    cfg = config_from({"recordcount": 10, "table": "usertable"})
    target = PostgresTarget("pg", url)
    target.ycsb_create_table(cfg.table, cfg.field_names)
    target.stop()
    return cfg


def _bindings(url: str):
    from benchlib.targets.postgres import PostgresYcsb
    cfg = _table(url)
    return cfg, PostgresYcsb(url, cfg), pg_native.PostgresYcsbNative(url, cfg)


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
    with pytest.raises(ParameterError, match="run.driver: c: target d: target kind sqlite has no C loop"):
        validate(small_experiment("d", "sqlite", run={"driver": "c"}), "t")
    monkeypatch.setattr(pg_native, "AVAILABLE", False)   # as where it could not be built
    with pytest.raises(ParameterError, match="not built"):
        validate(small_experiment("d", "postgresql://x@127.0.0.1/db", run={"driver": "c"}), "t")
    assert validate(small_experiment("d", "postgresql://x@127.0.0.1/db"), "t").run.driver == "auto"


@pytest.mark.postgres
def test_without_the_extension_auto_runs_the_python_binding(pg_own_db, monkeypatch):
    from benchlib.targets.base import Endpoint, TargetError
    from benchlib.targets.postgres import PostgresYcsb
    cfg = _table(pg_own_db)   # no C binding: this test runs where the extension is not built
    monkeypatch.setattr(pg_native, "AVAILABLE", False)
    ep = Endpoint("postgres", {"conninfo": pg_own_db})
    b = ep.ycsb_binding(cfg, "auto")
    assert isinstance(b, PostgresYcsb)
    b.close()
    with pytest.raises(TargetError, match="not built"):
        ep.ycsb_binding(cfg, "c")
