"""A load never drops what benchlib did not make (issue 41): a table of the name a load
would create that benchlib did not make survives ``benchlib run`` — refused in one line,
exit 2, before anything is written, its rows and columns as they were — on every target
kind and workload that creates tables; ``load.replace: true`` replaces it on purpose,
``load.skip: true`` runs against it when its columns are the workload's, and a table
benchlib made (its mark on it) is replaced by the next run as before."""
from __future__ import annotations

import os
import sqlite3
import uuid

import pytest
import yaml
from conftest import DATA

from benchlib import cli
from benchlib.params import validate
from benchlib.run.experiment import run_experiment as run_unchecked
from benchlib.targets.base import make_target
from benchlib.targets.ownership import MARK, REGISTRY

FIELDS = 3   # ycsb's fieldcount here: ycsb_key, field0 … field2


def _name(what: str) -> str:
    return f"{what}_{os.getpid()}_{uuid.uuid4().hex[:6]}"


def sql(url: str, *stmts: str) -> list[tuple]:
    """The statements on a connection of the target's own; the last one's rows."""
    conn = make_target("q", url).connect()
    try:
        cur = conn.cursor()
        rows = []
        for s in stmts:
            cur.execute(s)
            rows = list(cur.fetchall()) if cur.description else []
        return [tuple(r) for r in rows]
    finally:
        conn.close()


def table_state(url: str, table: str) -> tuple[list[tuple], tuple[str, ...]]:
    """Its rows (sorted) and its columns, as the DBMS says."""
    facts = make_target("q", url).table_facts(table)
    return sorted(sql(url, f"SELECT * FROM {table}")), facts.columns


def cli_run(tmp_path, capsys, exp: dict) -> tuple[int, list[str]]:
    """``benchlib run`` of ``exp`` in-process: its exit code and its stderr's lines."""
    path = tmp_path / f"{exp['experiment']}.yaml"
    path.write_text(yaml.safe_dump(exp))
    capsys.readouterr()
    rc = cli.main(["run", str(path), "--data-dir", str(tmp_path / "data"), "--no-progress"])
    return rc, capsys.readouterr().err.splitlines()


def ycsb(name: str, url: str, table: str, **over) -> dict:
    exp = {"experiment": name, "workload": "ycsb",
           "properties": {"recordcount": 300, "operationcount": 200, "fieldcount": FIELDS,
                          "fieldlength": 10, "readproportion": 1.0, "updateproportion": 0.0,
                          "insertorder": "ordered", "table": table},
           "targets": [{"name": "t", "url": url}], "load": {"threads": 1},
           "run": {"threads": [1], "processes": 1, "loops": 1}, "seed": 3}
    for k, v in over.items():
        exp[k] = {**exp[k], **v} if isinstance(exp.get(k), dict) else v
    return exp


def refused(rc: int, err: list[str], table: str) -> str:
    """The refusal's one line (exit 2, no traceback, naming the table and the keys)."""
    assert rc == cli.EXIT_INPUT, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert table in err[0] and "load.replace: true" in err[0], err[0]
    return err[0]


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def sql_url(request, tmp_path):
    """A database of this test's own on each SQL target kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'own.sqlite'}"
    return request.getfixturevalue("pg_own_db" if request.param == "postgres" else "mysql_own_db")


def test_ycsb_refuses_a_table_it_did_not_make_then_replaces_it_on_purpose(sql_url, tmp_path, capsys):
    victim = _name("victim")
    sql(sql_url, f"CREATE TABLE {victim} (x INT, y VARCHAR(10))",
        f"INSERT INTO {victim} (x, y) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    before = table_state(sql_url, victim)
    rc, err = cli_run(tmp_path, capsys, ycsb("own", sql_url, victim))
    line = refused(rc, err, victim)
    assert "(columns x, y)" in line and "benchlib did not make it" in line
    assert table_state(sql_url, victim) == before
    assert not (tmp_path / "data" / "own").exists()   # refused before any run folder
    # on purpose: replaced, benchlib's now
    rc, err = cli_run(tmp_path, capsys, ycsb("own", sql_url, victim, load={"replace": True}))
    assert rc == 0, err
    rows, cols = table_state(sql_url, victim)
    assert len(rows) == 300 and cols == ("ycsb_key", "field0", "field1", "field2")
    assert make_target("q", sql_url).table_facts(victim).marked
    # benchlib's own table: the next experiment's load replaces it without a word
    rc, err = cli_run(tmp_path, capsys, ycsb("own2", sql_url, victim, properties={
        "recordcount": 120}))
    assert rc == 0, err
    assert len(table_state(sql_url, victim)[0]) == 120


def test_skip_runs_against_a_matching_table_and_refuses_another(sql_url, tmp_path, capsys):
    """load.skip: a table of ycsb's columns that benchlib did not make is read as it
    is (rows unchanged, no mark added); one of other columns, or none, is refused."""
    theirs, other = _name("theirs"), _name("other")
    cols = ", ".join(f"field{i} TEXT" for i in range(FIELDS))
    keys = [f"user{i}" for i in range(300)]
    values = ", ".join(f"('{k}', 'a', 'b', 'c')" for k in keys)
    sql(sql_url, f"CREATE TABLE {theirs} (ycsb_key VARCHAR(255) PRIMARY KEY, {cols})",
        f"INSERT INTO {theirs} VALUES {values}", f"CREATE TABLE {other} (x INT)",
        f"INSERT INTO {other} VALUES (7)")
    before = table_state(sql_url, theirs)
    rc, err = cli_run(tmp_path, capsys, ycsb("skip", sql_url, theirs, load={"skip": True}))
    assert rc == 0, err
    assert table_state(sql_url, theirs) == before
    assert not make_target("q", sql_url).table_facts(theirs).marked
    # without load.skip a load would drop it: refused, naming load.skip as the way to reuse it
    rc, err = cli_run(tmp_path, capsys, ycsb("noskip", sql_url, theirs))
    assert "load.skip: true" in refused(rc, err, theirs)
    assert table_state(sql_url, theirs) == before
    rc, err = cli_run(tmp_path, capsys, ycsb("skip2", sql_url, other, load={"skip": True}))
    assert "is not the table this workload reads" in refused(rc, err, other)
    assert sql(sql_url, f"SELECT * FROM {other}") == [(7,)]
    rc, err = cli_run(tmp_path, capsys, ycsb("skip3", sql_url, _name("none"), load={"skip": True}))
    assert rc == cli.EXIT_INPUT and len(err) == 1 and "load it first" in err[0], err


def test_the_run_itself_refuses_where_preflight_did_not_look(tmp_path):
    """The runner checks again before a load's schema work (an embedded target, or a
    caller of run.experiment that skips preflight): the run fails with the line, the
    table is untouched."""
    url = f"sqlite:///{tmp_path / 'own.sqlite'}"
    victim = _name("victim")
    sql(url, f"CREATE TABLE {victim} (x INT)", f"INSERT INTO {victim} VALUES (5)")
    exp = validate(ycsb("direct", url, victim), "test")
    res = run_unchecked(exp, tmp_path / "data", progress=False)
    assert set(res.runs.values()) == {"failed"}
    (run_id,) = res.runs
    meta = yaml.safe_load((tmp_path / "data" / "direct" / run_id / "meta.json").read_text())
    assert victim in meta["error"] and "benchlib did not make it" in meta["error"]
    assert sql(url, f"SELECT * FROM {victim}") == [(5,)]


def test_sqlite_mark_is_the_table_benchlib_made(tmp_path):
    """SQLite's registry holds the CREATE statement it marked: a table of that name made
    again by someone else is not benchlib's."""
    url = f"sqlite:///{tmp_path / 'own.sqlite'}"
    target = make_target("q", url)
    sql(url, "CREATE TABLE t1 (a INT)")
    assert not target.table_facts("t1").marked
    target.mark_table("t1")
    assert target.table_facts("t1").marked and target.table_facts("T1").marked
    sql(url, "DROP TABLE t1", "CREATE TABLE t1 (a INT, b INT)")
    assert not target.table_facts("t1").marked
    assert sqlite3.connect(tmp_path / "own.sqlite").execute(
        f"SELECT count(*) FROM {REGISTRY}").fetchone() == (1,)


def kv(name: str, url: str, table: str, **over) -> dict:
    exp = {"experiment": name, "workload": "kv",
           "properties": {"table": table, "key_count": 200, "op_count": 100, "value_size": 16},
           "targets": [{"name": "t", "url": url}], "load": {"threads": 1},
           "run": {"threads": [1], "processes": 1, "loops": 1}, "seed": 3}
    for k, v in over.items():
        exp[k] = {**exp[k], **v} if isinstance(exp.get(k), dict) else v
    return exp


def test_kv_on_mariadb_refuses_then_replaces(mysql_own_db, tmp_path, capsys):
    url, victim = mysql_own_db, _name("kvvictim")
    sql(url, f"CREATE TABLE {victim} (k VARCHAR(10) PRIMARY KEY, v TEXT)",
        f"INSERT INTO {victim} VALUES ('mine', 'precious')")
    rc, err = cli_run(tmp_path, capsys, kv("kvm", url, victim))
    refused(rc, err, victim)
    assert table_state(url, victim) == ([("mine", "precious")], ("k", "v"))
    assert sql(url, f"SELECT table_comment FROM information_schema.tables WHERE "
                    f"table_schema = DATABASE() AND table_name = '{victim}'") == [("",)]
    rc, err = cli_run(tmp_path, capsys, kv("kvm", url, victim, load={"replace": True}))
    assert rc == 0, err
    assert sql(url, f"SELECT count(*) FROM {victim} WHERE k = 'mine'") == [(0,)]
    assert sql(url, f"SELECT table_comment FROM information_schema.tables WHERE "
                    f"table_schema = DATABASE() AND table_name = '{victim}'") == [(MARK,)]


@pytest.fixture
def redis_prefix(redis_url):
    """A key prefix of this test's own; its keys and its registry field removed after."""
    import redis
    prefix = _name("kvr")
    yield prefix
    r = redis.Redis.from_url(redis_url)
    keys = list(r.scan_iter(match=f"{prefix}:*", count=5000))
    if keys:
        r.unlink(*keys)
    r.delete(prefix)   # benchlib's mark
    r.close()


def test_kv_on_redis_refuses_keys_it_did_not_write(redis_url, redis_prefix, tmp_path, capsys):
    import redis
    r = redis.Redis.from_url(redis_url)
    r.set(f"{redis_prefix}:theirs", b"precious")
    rc, err = cli_run(tmp_path, capsys, kv("kvr", redis_url, redis_prefix))
    assert f"keys {redis_prefix}:*" in refused(rc, err, redis_prefix)
    assert list(r.scan_iter(match=f"{redis_prefix}:*")) == [f"{redis_prefix}:theirs".encode()]
    assert r.get(f"{redis_prefix}:theirs") == b"precious"
    rc, err = cli_run(tmp_path, capsys, kv("kvr", redis_url, redis_prefix, load={"replace": True}))
    assert rc == 0, err
    assert r.get(f"{redis_prefix}:theirs") is None and r.get(redis_prefix) == MARK.encode()
    rc, err = cli_run(tmp_path, capsys, kv("kvr2", redis_url, redis_prefix))   # its own now
    assert rc == 0, err
    r.set(redis_prefix, b"someone's")   # a key of the prefix's own name is someone's too
    rc, err = cli_run(tmp_path, capsys, kv("kvr3", redis_url, redis_prefix))
    assert f"key {redis_prefix}" in refused(rc, err, redis_prefix)
    assert r.get(redis_prefix) == b"someone's"
    r.close()


def test_linkbench_refuses_a_nodetable_it_did_not_make(pg_own_db, tmp_path, capsys):
    """LinkBench's three tables are checked before any is dropped or created: a foreign
    nodetable stops the load, and the link and count tables are not made either."""
    url, names = pg_own_db, {t: _name(t) for t in ("linktable", "counttable", "nodetable")}
    node = names["nodetable"]
    sql(url, f"CREATE TABLE {node} (id BIGINT PRIMARY KEY, type INT, version BIGINT, "
             f"time INT, data BYTEA)", f"INSERT INTO {node} VALUES (1, 2, 3, 4, 'x')")
    before = table_state(url, node)
    exp = {"experiment": "lbo", "workload": "linkbench",
           "properties": {"maxid1": 501, "loaders": 1, "data_file": str(DATA / "linkbench" / "Distribution_small.dat"),
                          **names},
           "targets": [{"name": "t", "url": url}], "load": {"batch_size": 256},
           "run": {"skip": True}, "seed": 7}
    rc, err = cli_run(tmp_path, capsys, exp)
    line = refused(rc, err, node)
    assert "(nodetable)" in line and "load.skip: true" in line   # its columns are LinkBench's
    assert table_state(url, node) == before
    target = make_target("q", url)
    assert target.table_facts(names["linktable"]) is None and target.table_facts(names["counttable"]) is None
    rc, err = cli_run(tmp_path, capsys, {**exp, "load": {"batch_size": 256, "replace": True}})
    assert rc == 0, err
    assert target.table_facts(node).marked and sql(url, f"SELECT count(*) FROM {node} WHERE data = 'x'") == [(0,)]


def ybio(name: str, url: str, prefix: str, **props) -> dict:
    return {"experiment": name, "workload": "ybio",
            "properties": {"tab_prefix": prefix, "tab_rows": 500, "batch_size": 50,
                           "run_duration": 0.3, "status_every_s": 0, **props},
            "targets": [{"name": "t", "url": url}], "load": {"threads": 1, "batch_size": 250},
            "run": {"threads": [1], "processes": 1}, "seed": 7}


@pytest.mark.parametrize("recreate", [True, False])
def test_ybio_recreates_only_its_own_tables(pg_own_db, tmp_path, capsys, recreate):
    """recreate: true drops, and recreate: false loads into, only a table benchlib made;
    a foreign one is refused either way (load.replace, with recreate: true, replaces it)."""
    url, prefix = pg_own_db, _name("yb")
    table = f"{prefix}0001"
    sql(url, f"CREATE TABLE {table} (mykey BIGINT, scratch BIGINT, filler CHAR(1))",
        f"INSERT INTO {table} VALUES (1, 1, 'a')")
    before = table_state(url, table)
    rc, err = cli_run(tmp_path, capsys, ybio("yb", url, prefix, recreate=recreate))
    assert "(tab_prefix)" in refused(rc, err, table)
    assert table_state(url, table) == before
    over = {"load": {"threads": 1, "batch_size": 250, "replace": True}}
    rc, err = cli_run(tmp_path, capsys, {**ybio("yb", url, prefix, recreate=recreate), **over})
    if not recreate:   # keeping and replacing at once: one line, before anything
        assert rc == cli.EXIT_INPUT and len(err) == 1 and "choose one" in err[0], err
        assert table_state(url, table) == before
        return
    assert rc == 0, err
    assert len(table_state(url, table)[0]) == 500
    # benchlib's own now: kept (recreate: false) or made again (true) without a word
    for again in (False, True):
        rc, err = cli_run(tmp_path, capsys, ybio(f"yb{again}", url, prefix, recreate=again))
        assert rc == 0, err


def test_a_run_of_the_experiment_now_is_named_before_its_tables(tmp_path, capsys):
    """While another process runs the experiment (its lock held), a second run is refused
    naming that run, not the tables the first is making (preflight asks the lock first)."""
    from benchlib.store.lock import ExperimentLock
    url = f"sqlite:///{tmp_path / 'own.sqlite'}"
    victim = _name("half")
    sql(url, f"CREATE TABLE {victim} (x INT)")   # as the first run's table between create and mark
    with ExperimentLock(tmp_path / "data" / "busy"):
        rc, err = cli_run(tmp_path, capsys, ycsb("busy", url, victim))
    assert rc == cli.EXIT_INPUT and len(err) == 1 and "another benchlib run" in err[0], err
