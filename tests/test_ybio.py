"""ybio (row I/O) on SQLite, the embedded PostgreSQL, the machine's PostgreSQL and MariaDB:
the load, a run that only reads (the table unchanged) and a run that updates half
of the rows (the sum of scratch grew by exactly the rows updated), checked in SQL;
benchruns' riops and coverage from the run's own numbers; bad input refused before
anything runs."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from conftest import driver_url

from benchlib import cli, load_results, run_experiment
from benchlib.params import ParameterError, load_experiment, plan, validate
from benchlib.targets.base import make_target
from benchlib.targets.mysql import MysqlTarget
from benchlib.targets.postgres import PostgresTarget
from benchlib.targets.sqlite import SqliteTarget
from benchlib.workloads.ybio.bindings.postgres import PostgresYbio
from benchlib.workloads.ybio.sql import statements

PG = PostgresTarget.dialect

TAB_ROWS, BATCH = 2000, 50


def experiment(name: str, url: str, **props) -> dict:
    return {"experiment": name, "workload": "ybio",
            "properties": {"tab_prefix": f"ybio_{name.replace('-', '_')}_{os.getpid()}_",
                           "tab_rows": TAB_ROWS, "batch_size": BATCH, "run_duration": 0.5,
                           "status_every_s": 0.2, **props},
            "targets": [{"name": "t", "url": url}], "load": {"threads": 1, "batch_size": 500},
            "run": {"threads": [1], "processes": 1}, "seed": 7}


def run(d: dict, data_dir, **top):
    exp = validate({**d, **top}, d["experiment"])
    res = run_experiment(exp, data_dir, progress=False, force=True)
    assert res.ok, res.runs
    (run_id,) = res.runs
    return load_results(data_dir / exp.experiment / run_id)


def sql_one(url: str, data_dir, sql: str):
    target = make_target("t", url, None, data_dir)
    target.start()
    try:
        conn = target.connect()
        cur = conn.cursor()
        cur.execute(sql)
        row = cur.fetchone()
        conn.close()
        return row
    finally:
        target.stop()


def check_target(url: str, data_dir, name: str, after_load=None, **props):
    d = experiment(name, url, **props)
    table = make_target("t", url, None, data_dir).dialect.quote_ident(d["properties"]["tab_prefix"] + "0001")
    sums = f"SELECT count(*), sum(scratch) FROM {table}"
    load = run(d, data_dir, run={"skip": True})
    assert load["steps"].set_index("step").loc["l.pre", "ops"] == TAB_ROWS
    rows0, sum0 = sql_one(url, data_dir, sums)
    assert rows0 == TAB_ROWS
    if after_load:
        after_load(table)
    reads = run({**d, "properties": {**d["properties"], "recreate": False}}, data_dir,
                load={"skip": True})
    assert tuple(sql_one(url, data_dir, sums)) == (rows0, sum0)   # reads change nothing
    b = check_benchruns(reads, 0)
    assert b["num_updated"] == 0
    upd = run({**d, "properties": {**d["properties"], "pct_update": 50, "recreate": False}},
              data_dir, load={"skip": True})
    b = check_benchruns(upd, 50)
    rows2, sum2 = sql_one(url, data_dir, sums)
    assert rows2 == TAB_ROWS and sum2 - sum0 == b["num_updated"] > 0
    # the seed's rule keeps the updated share at pct_update, to a batch
    assert abs(b["num_updated"] - b["num_rows"] / 2) <= BATCH
    return d, table


def check_benchruns(res: dict, pct_update: int) -> dict:
    (b,) = res["benchruns"].to_dict("records")
    lat = res["latency"].set_index("op")["count"]
    steps = res["steps"].set_index("step")
    assert b["pct_update"] == pct_update and b["errors"] == 0 and b["sessions"] == 1
    assert b["num_batches"] == lat.get("READ-BATCH", 0) + lat.get("UPDATE-BATCH", 0) > 0
    assert b["num_rows"] == BATCH * b["num_batches"] == steps.loc["r.L1", "ops"]
    assert b["num_updated"] == lat.get("UPDATE", 0)
    duration = (b["end_time"] - b["start_time"]).total_seconds()
    assert b["riops"] == pytest.approx(b["num_rows"] / duration, rel=1e-6)
    assert b["riops"] == pytest.approx(steps.loc["r.L1", "ops_per_s"])
    assert b["coverage_ratio"] == pytest.approx(b["num_rows"] / TAB_ROWS)
    expect = (f"x{b['num_rows'] / TAB_ROWS:.1f}" if b["num_rows"] > TAB_ROWS
              else f"{100 * b['num_rows'] // TAB_ROWS} %")
    assert b["coverage"] == expect
    return b


def test_sqlite(data_dir):
    check_target(f"sqlite:///{data_dir / 'ybio.sqlite'}", data_dir, "lite")


@pytest.mark.postgres
def test_postgres(pg_url, data_dir):
    def plans(table):
        # index_only reads the index alone: an Index Only Scan, on the table as the load
        # leaves it (VACUUM ANALYZE: a fresh visibility map; updates later dirty it)
        read = statements(PostgresYbio, PG, table, "x", index_only=True).read
        plan_text = explain(pg_url, data_dir, read)
        assert "Index Only Scan" in plan_text, plan_text
        plain = explain(pg_url, data_dir, statements(PostgresYbio, PG, table, "x").read)
        assert "Index Only Scan" not in plain and "Index" in plain, plain
    table = PG.quote_ident(experiment("pg", pg_url)["properties"]["tab_prefix"] + "0001")
    try:
        check_target(pg_url, data_dir, "pg", after_load=plans, index_only=True)
    finally:  # the machine's database is shared: leave it as found, pass or fail
        sql_one_exec(pg_url, data_dir, f"DROP TABLE IF EXISTS {table}")


@pytest.mark.mysql
def test_mariadb(mysql_url, mysql_driver, data_dir):
    url, name = driver_url(mysql_url, mysql_driver), f"maria-{mysql_driver}"
    table = MysqlTarget.dialect.quote_ident(experiment(name, url)["properties"]["tab_prefix"] + "0001")
    try:
        check_target(url, data_dir, name)
    finally:
        sql_one_exec(url, data_dir, f"DROP TABLE IF EXISTS {table}")


@pytest.mark.embedded
@pytest.mark.slow
def test_embedded_postgres(data_dir):
    check_target("embedded-postgres", data_dir, "emb")


def explain(url, data_dir, sql: str) -> str:
    target = make_target("t", url, None, data_dir)
    target.start()
    try:
        conn = target.connect()
        # a bitmap scan wins where the visibility map is not yet all-visible, as when
        # another session's long transaction in the shared database holds VACUUM back:
        # the question is which index scan the statement can have, not the planner's costs
        conn.execute("SET enable_bitmapscan = off")
        conn.execute("SET enable_seqscan = off")
        text = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN " + sql.replace("$1", "%s").replace("$2", "%s"), (1, BATCH)).fetchall())
        conn.close()
        return text
    finally:
        target.stop()


def sql_one_exec(url, data_dir, sql: str) -> None:
    target = make_target("t", url, None, data_dir)
    target.start()
    try:
        conn = target.connect()
        conn.cursor().execute(sql)
        conn.close()
    finally:
        target.stop()


def test_sessions_on_their_own_tables(data_dir):
    """Two sessions, each on its own table (table_per_session); the index as a step of
    its own (l.post) after the load."""
    url = f"sqlite:///{data_dir / 'two.sqlite'}"
    d = experiment("two", url, table_per_session=True, pct_update=50)
    res = run(d, data_dir, run={"threads": [2], "processes": 1}, index={"enabled": True},
              load={"threads": 2, "batch_size": 500})
    steps = res["steps"].set_index("step")
    assert list(steps.index) == ["l.pre", "l.post", "r.L1"]
    assert steps.loc["l.pre", "ops"] == 2 * TAB_ROWS
    (b,) = res["benchruns"].to_dict("records")
    prefix = d["properties"]["tab_prefix"]
    assert b["sessions"] == 2 and b["table_name"] == f"{prefix}0001..{prefix}0002"
    for t in ("0001", "0002"):
        n, _, idx = sql_one(url, data_dir, f"SELECT count(*), sum(scratch), (SELECT count(*) FROM "
                            f"sqlite_master WHERE type = 'index' AND tbl_name = '{prefix}{t}') "
                            f"FROM {SqliteTarget.dialect.quote_ident(prefix + t)}")
        assert n == TAB_ROWS and idx == 1
    assert b["num_updated"] > 0 and b["coverage_ratio"] == pytest.approx(b["num_rows"] / (2 * TAB_ROWS))


# ---------------------------------------------------------------- the matrix, the CLI

def test_lists_make_the_matrix(tmp_path):
    p = tmp_path / "y.yaml"
    p.write_text("experiment: y\nworkload: ybio\nproperties: {tab_rows: 100, batch_size: [1, 10],"
                 " pct_update: [0, 50]}\ntargets: [{name: a, url: sqlite}, {name: b, url: sqlite}]\n")
    runs = plan(load_experiment(p))
    assert len(runs) == 8 and [r.target.name for r in runs] == ["a"] * 4 + ["b"] * 4
    assert runs[1].run_id == "a-t1-p1-l1-tgt0-batch_size1-pct_update50-r1"
    assert runs[1].workload_point == {"batch_size": 1, "pct_update": 50}
    # -p overrides a property, a list of values included
    over = plan(load_experiment(p, ["batch_size=[5, 6, 7]", "pct_update=10", "tab_rows=1000",
                                    "run_duration=1 minutes"]))
    assert [r.workload_point for r in over[:3]] == [{"batch_size": v} for v in (5, 6, 7)]
    assert load_experiment(p, ["run_duration='2 minutes'"]).properties["run_duration"] == "2 minutes"


def test_show_benchruns(capsys):
    sample = Path(__file__).resolve().parents[1] / "data" / "samples" / "ybio"
    assert cli.main(["show", str(sample), "--table", "benchruns", "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("job_id,start_time,end_time,num_batches,num_rows,pct_update,")
    assert "riops" in out[0] and "coverage" in out[0] and len(out) == 1 + 15
    assert cli.main(["show", str(sample), "--table", "benchrun"]) == cli.EXIT_INPUT
    assert "benchruns" in capsys.readouterr().err


# ---------------------------------------------------------------- bad input

BAD = [
    ({"batch_size": 5000}, "batch_size: 5000 is more than tab_rows (2000)"),
    ({"pct_update": 101}, "pct_update: Input should be less than or equal to 100"),
    ({"pct_update": -1}, "pct_update: Input should be greater than or equal to 0"),
    ({"tab_num": 0}, "tab_num: Input should be greater than or equal to 1"),
    ({"tab_prefix": "x; drop table y"}, "tab_prefix: 'x; drop table y' is not a plain name"),
    ({"batchsize": 10}, "batchsize: unknown ybio parameter (did you mean batch_size?)"),
    ({"tab_rows": [10, 20]}, "tab_rows: one value (lists make a matrix of batch_size,"),
    ({"run_duration": "soon"}, "run_duration: 'soon' is not seconds or an interval"),
    ({"batch_size": [10, 5000]}, "batch_size: 5000 is more than tab_rows"),
]


@pytest.mark.parametrize("props,message", BAD, ids=[next(iter(p)) + str(i) for i, (p, _) in enumerate(BAD)])
def test_bad_input_is_one_line_and_drops_nothing(props, message, tmp_path, capsys):
    db = tmp_path / "keep.sqlite"
    with sqlite3.connect(db) as c:   # a table the run would drop if it got that far
        c.execute("CREATE TABLE bench0001 (mykey BIGINT)")
        c.execute("CREATE TABLE y (v INT)")
        c.executemany("INSERT INTO bench0001 VALUES (?)", [(i,) for i in range(10)])
    d = experiment("bad", f"sqlite:///{db}")
    d["properties"] = {"tab_rows": TAB_ROWS, **props}
    import yaml
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(d))
    assert cli.main(["run", str(p), "--data-dir", str(tmp_path / "data")]) == cli.EXIT_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "data" / "bad").exists()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM bench0001").fetchone()[0] == 10
        assert c.execute("SELECT count(*) FROM y").fetchone()[0] == 0


def test_parameter_error_type():
    with pytest.raises(ParameterError):
        validate(experiment("e", "sqlite", tab_num=0), "e")


@pytest.mark.slow
def test_no_progress_silences_the_clients_own_lines(tmp_path):
    """Issue 41: ``--no-progress`` prints none of ybio's own lines (the loaders' ``Table …
    Progress``, the sessions' ``rows/s on``), which a run without it prints."""
    import subprocess
    import sys

    import yaml
    exp = experiment("yq", "sqlite", status_every_s=0.2, run_duration=2)
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))

    def own_lines(*flags) -> list[str]:
        r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(tmp_path / "e.yaml"),
                            "--data-dir", str(tmp_path / f"d{len(flags)}"), *flags],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return [ln for ln in (r.stdout + r.stderr).splitlines() if "Progress:" in ln or "rows/s on" in ln]
    assert own_lines()                       # printed by default (a pipe: no bar, the lines)
    assert own_lines("--no-progress") == []
