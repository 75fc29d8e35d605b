"""YCSB workloads A–F against every target: SQLite, the embedded PostgreSQL, the
machine's PostgreSQL and MariaDB — real servers, real rows."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import driver_url

from benchlib import load_results, run_experiment
from benchlib.hw import cgroup
from benchlib.params import load_experiment, validate
from benchlib.targets.base import make_target

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = "abcdef"
RECORDS, OPS = 1000, 2000


def table_for(name: str, letter: str) -> str:
    # a table of its own per test: suites running side by side share the database
    return f"ycsb_{name.replace('-', '_')}_{letter}_{os.getpid()}"


def count_rows(target, run_dir: Path, table: str) -> int:
    if target.kind == "sqlite":
        import sqlite3
        with sqlite3.connect(run_dir / "db.sqlite") as c:
            return c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    if target.kind == "postgres":
        target.start()
        try:
            return target.admin().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        finally:
            target.stop()
    target.start()
    try:
        return target._q(f"SELECT COUNT(*) FROM {table}")[0][0]
    finally:
        target.stop()


def run_workload(letter: str, url: str, data_dir: Path, name: str, driver: str = "auto"):
    exp = load_experiment(ROOT / "parameters" / f"ycsb-{letter}.yaml")
    d = exp.model_dump()
    d["properties"].update(recordcount=RECORDS, operationcount=OPS, table=table_for(name, letter))
    d["targets"] = [{"name": name, "url": url}]
    # workload D reads the latest inserts: one client, as the seed notes (it cannot scale out)
    d["run"] = {**d["run"], "threads": [1 if letter == "d" else 2], "processes": 1, "driver": driver}
    d["load"] = {**d["load"], "threads": 2}
    d["experiment"] = f"{name}-{letter}"
    d["seed"] = 3
    d.pop("source", None)
    exp = validate(d, f"ycsb-{letter}")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    (run_id,) = res.runs
    return exp, data_dir / exp.experiment / run_id


def check(letter, exp, run_dir, target):
    t = load_results(run_dir)
    steps = t["steps"].set_index("step")
    assert steps.loc["l.pre", "ops"] == RECORDS and steps.loc["l.pre", "errors"] == 0
    assert steps.loc["r.L1", "ops"] == OPS, steps
    assert steps.loc["r.L1", "errors"] == 0
    lat = t["latency"]
    run = lat[(lat.step == "r.L1") & ~lat.op.str.startswith("Intended-")].set_index("op")["count"]
    props = exp.properties
    expect = {"READ": props.get("readproportion", 0), "UPDATE": props.get("updateproportion", 0),
              "INSERT": props.get("insertproportion", 0), "SCAN": props.get("scanproportion", 0),
              "READ-MODIFY-WRITE": props.get("readmodifywriteproportion", 0)}
    for op, p in expect.items():
        n = run.get(op, 0)
        if op in ("READ", "UPDATE") and "READ-MODIFY-WRITE" in run:
            n -= run["READ-MODIFY-WRITE"]  # RMW's inner read/update are timed as READ/UPDATE too
        assert abs(n / OPS - p) < 0.06, (op, n, p)
    inserts = int(run.get("INSERT", 0))
    table = exp.properties["table"]
    assert count_rows(target, run_dir, table) == RECORDS + inserts
    if target.kind != "sqlite":  # leave the shared database as we found it
        target.start()
        try:
            (target.admin().execute if target.kind == "postgres" else target._q)(f"DROP TABLE {table}")
        finally:
            target.stop()


@pytest.mark.parametrize("letter", WORKLOADS)
def test_sqlite(letter, data_dir):
    exp, rd = run_workload(letter, "sqlite", data_dir, "sqlite")
    target = make_target("sqlite", "sqlite", {"path": rd / "db.sqlite"})
    check(letter, exp, rd, target)


@pytest.mark.postgres
@pytest.mark.parametrize("letter", WORKLOADS)
def test_postgres(letter, pg_url, data_dir):
    exp, rd = run_workload(letter, pg_url, data_dir, "pg")
    check(letter, exp, rd, make_target("pg", pg_url))
    assert load_results(rd)["runs"].iloc[0]["dbms"] == "PostgreSQL"
    # run.driver auto: the C loop where it is built (tests/test_pg_native.py compares the two)
    from benchlib.workloads.ycsb.bindings import postgres_native as pg_native
    assert load_results(rd)["runs"].iloc[0]["meta"]["driver_path"] == \
        ("c-libpq" if pg_native.AVAILABLE else "python")


@pytest.mark.mysql
@pytest.mark.parametrize("letter", WORKLOADS)
def test_mariadb(letter, mysql_url, mysql_driver, data_dir):
    # mysqlclient with the run loops in C (run.driver auto: benchlib's loop over libmariadb
    # where it is built); PyMySQL with the Python loop
    from benchlib.workloads.ycsb.bindings import mysql_native
    url = driver_url(mysql_url, mysql_driver)
    loop = "auto" if mysql_driver == "c" else "python"
    exp, rd = run_workload(letter, url, data_dir, f"mariadb-{mysql_driver}", loop)
    check(letter, exp, rd, make_target("mariadb", url))
    meta = load_results(rd)["runs"].iloc[0]["meta"]
    assert meta["client_library"] == {"c": "mysqlclient", "python": "pymysql"}[mysql_driver]
    assert meta["driver_path"] == ("c-libmariadb" if loop == "auto" and mysql_native.AVAILABLE
                                   else "python")


@pytest.mark.embedded
@pytest.mark.parametrize("letter", WORKLOADS)
def test_embedded_postgres(letter, data_dir):
    exp, rd = run_workload(letter, "embedded-postgres", data_dir, "emb")
    res = load_results(rd)
    meta = res["runs"].iloc[0]
    assert meta["dbms"] == "PostgreSQL (embedded)"
    # its CPU read from a cgroup of its own where the host lets benchlib make one
    probe = cgroup.make("probe")
    if probe is not None:
        probe.remove()
    assert set(res["steps"]["dbms_cpu_from"].dropna()) == {"cgroup" if probe is not None else "processes"}
    # the server is stopped after the run: count the rows in a fresh start of it
    target = make_target("emb", "embedded-postgres", None, data_dir)
    target.start()
    try:
        table = exp.properties["table"]
        assert target.admin().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] >= RECORDS
    finally:
        target.stop()


@pytest.mark.postgres
@pytest.mark.parametrize("letter", "af")
def test_postgres_multiplexed(letter, pg_url, data_dir):
    """One thread per process driving all its connections gives the same results."""
    exp = load_experiment(ROOT / "parameters" / f"ycsb-{letter}.yaml")
    d = exp.model_dump()
    d.pop("source", None)
    d["properties"].update(recordcount=RECORDS, operationcount=OPS, table=table_for("mux", letter))
    d.update(experiment=f"mux-{letter}", seed=5, targets=[{"name": "pg", "url": pg_url}])
    d["run"] = {**d["run"], "threads": [4], "processes": 1, "multiplex": True, "driver": "python"}
    exp = validate(d, "mux")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    (run_id,) = res.runs
    check(letter, exp, data_dir / exp.experiment / run_id, make_target("pg", pg_url))
