"""A SQL DBMS's knowledge lives once, in its dialect (issue 36, benchlib/targets/sql/):
the statements each dialect makes for the workloads are the ones the per-workload
bindings made before (their text pinned here, each name quoted); "what a write found"
is the driver's truth, asked of real drivers, and "unknown" where the driver cannot say
(rowcount −1); and a SQL DBMS with no binding file in any workload (DuckDB, an optional
extra) runs YCSB and kv through ``benchlib run``."""
from __future__ import annotations

import sqlite3

import pytest
import yaml

from benchlib import cli, load_results
from benchlib.targets.mysql import MysqlTarget
from benchlib.targets.postgres import PostgresTarget
from benchlib.targets.sqlite import SqliteTarget
from benchlib.workloads.kv.bindings import BINDINGS as KV
from benchlib.workloads.linkbench.bindings import binding as linkbench_binding
from benchlib.workloads.ybio.bindings import binding as ybio_binding
from benchlib.workloads.ybio.sql import statements as ybio_statements
from benchlib.workloads.ycsb.bindings import BINDINGS as YCSB

PG, MY, LITE = PostgresTarget.dialect, MysqlTarget.dialect, SqliteTarget.dialect


def test_the_tables_ddl_is_each_dbms_own():
    kv = {d.name: d.create_table("t", [("k", d.key_type(16)), ("v", d.long_text_type)], ("k",),
                                 clustered=True) for d in (PG, MY, LITE)}
    assert kv == {
        "postgres": 'CREATE TABLE "t" ("k" VARCHAR(16) COLLATE "C" PRIMARY KEY, "v" TEXT)',
        "mysql": "CREATE TABLE `t` (`k` VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin "
                 "PRIMARY KEY, `v` LONGTEXT)",
        "sqlite": 'CREATE TABLE "t" ("k" TEXT PRIMARY KEY, "v" TEXT) WITHOUT ROWID'}
    assert MY.create_table("t", [("a", "INT"), ("b", "INT")], ("a", "b"), engine="InnoDB") == \
        "CREATE TABLE `t` (`a` INT, `b` INT, PRIMARY KEY (`a`, `b`)) ENGINE=InnoDB"
    with pytest.raises(ValueError, match="not a plain SQL name"):
        PG.create_table("t; DROP TABLE x", [("k", "TEXT")], ("k",))
    assert MY.create_index("t_f_idx", "t", ["f"], text=["f"]) == \
        "CREATE INDEX IF NOT EXISTS `t_f_idx` ON `t` (`f`(32))"
    assert [d.analyze(["a", "b"]) for d in (PG, MY, LITE)] == [
        ['VACUUM ANALYZE "a"', 'VACUUM ANALYZE "b"'], ["ANALYZE TABLE `a`, `b`"],
        ['ANALYZE "a"', 'ANALYZE "b"']]


def test_each_workload_reaches_its_dialect_through_one_binding_or_its_own():
    # SQLite has no file in any workload: the generic SQL bindings serve it
    assert [KV.get(LITE).__name__, YCSB.get(LITE).__name__] == ["SqlKv", "SqlYcsb"]
    assert ybio_binding(LITE).__name__ == "SqlYbio"
    assert YCSB.get(MY).__name__ == "MysqlYcsb" and YCSB.get("postgres").__name__ == "PostgresYcsb"
    st = ybio_statements(ybio_binding(MY), MY, "`y`", "`y_i`", filler=300)
    assert st.create == "CREATE TABLE `y` (mykey BIGINT, scratch BIGINT, filler VARCHAR(300)) ENGINE=InnoDB"
    assert st.update == "UPDATE `y` SET scratch = scratch + 1 WHERE mykey BETWEEN %s AND %s"
    lite = ybio_statements(ybio_binding(LITE), LITE, '"y"', '"y_i"')
    assert lite.update.endswith("RETURNING scratch") == LITE.update_returning
    assert ybio_statements(ybio_binding(PG), PG, '"y"', '"y_i"').update.startswith("WITH u AS")

    class P:
        linktable, counttable, nodetable = "lt", "ct", "nt"
    lb = {d.name: linkbench_binding(d, P) for d in (PG, MY, LITE)}
    assert lb["mysql"].count_add.endswith("ON DUPLICATE KEY UPDATE count = `count` + %s, "
                                          "version = `version` + 1, time = %s")
    assert 'ON CONFLICT ("id", "link_type") DO UPDATE SET count = "ct"."count" + ?' in lb["sqlite"].count_add
    assert lb["sqlite"].create_tables()[2] == ('CREATE TABLE "nt" (id INTEGER PRIMARY KEY, type INTEGER '
                                               'NOT NULL, version INTEGER NOT NULL, time INTEGER '
                                               'NOT NULL, data BLOB NOT NULL)')
    assert lb["postgres"].after_load()[0].startswith(
        "SELECT setval(pg_get_serial_sequence('\"nt\"', 'id')")
    assert lb["mysql"].after_load() == ["ANALYZE TABLE `lt`, `ct`, `nt`"]


def test_rows_matched_is_the_drivers_truth_and_unknown_where_it_cannot_say():
    conn = sqlite3.connect(":memory:", isolation_level=None)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
    cur.execute("INSERT INTO t VALUES ('a', 'x')")
    cur.execute("UPDATE t SET v = 'x' WHERE k = 'a'")
    assert LITE.rows_matched(cur, update=True) == 1
    cur.execute("DELETE FROM t WHERE k = 'zz'")
    assert LITE.rows_matched(cur) == 0
    cur.execute("SELECT v FROM t")      # the driver says -1: it cannot tell
    assert cur.rowcount == -1 and LITE.rows_matched(cur) is None
    conn.close()


@pytest.mark.mysql
@pytest.mark.parametrize("library", ["mysqlclient", "pymysql"])
def test_mysql_matched_rows_are_asked_when_it_changed_none(mysql_own_db, library):
    from benchlib.targets import mysql_driver
    from benchlib.targets.mysql import connect_params
    if library == "mysqlclient" and mysql_driver.c_client_error():
        pytest.skip(mysql_driver.c_client_error())
    conn = mysql_driver.connect(connect_params(mysql_own_db), library)
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (k INT PRIMARY KEY, v INT)")
        cur.execute("INSERT INTO t VALUES (1, 1)")
        cur.execute("UPDATE t SET v = 1 WHERE k = 1")     # found, changed nothing
        assert cur.rowcount == 0 and MY.rows_matched(cur, update=True) == 1
        cur.execute("UPDATE t SET v = 1 WHERE k = 2")     # found nothing
        assert MY.rows_matched(cur, update=True) == 0
        cur.execute("DELETE FROM t WHERE k = 2")
        assert MY.rows_matched(cur) == 0
    finally:
        conn.close()


def _run(tmp_path, name: str, workload: str, props: dict, url: str) -> dict:
    exp = {"experiment": name, "workload": workload, "properties": props, "seed": 5,
           "targets": [{"name": "d", "url": url}], "run": {"threads": [1], "processes": 1}}
    if workload == "ycsb":
        exp["index"] = {"enabled": True}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "data"), "--no-progress"]) == 0
    return load_results(tmp_path / "data" / name)


def test_duckdb_runs_ycsb_and_kv_with_no_binding_of_its_own(tmp_path):
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (benchlib[duckdb])")
    from benchlib.targets.duckdb import DuckdbTarget
    assert not YCSB.supports("duckdb") or YCSB.get(DuckdbTarget.dialect).__name__ == "SqlYcsb"
    db = tmp_path / "own.duckdb"
    url = f"duckdb:///{db}"
    ycsb = _run(tmp_path, "duckycsb", "ycsb", {"recordcount": 300, "operationcount": 600,
                                               "readproportion": 0.4, "updateproportion": 0.3,
                                               "insertproportion": 0.3, "table": "duckt"}, url)
    steps = ycsb["steps"].set_index("step")
    assert steps.loc["l.pre", "ops"] == 300 and steps.loc["r.L1", "ops"] == 600
    assert ycsb["runs"]["meta"].iloc[0]["target"]["dialect"]["name"] == "duckdb"
    lat = ycsb["latency"].set_index(["step", "op"])
    assert lat.loc[("r.L1", "UPDATE"), "errors"] == 0
    kv = _run(tmp_path, "duckkv", "kv", {"a": 0.4, "b": 0.3, "c": 0.3, "key_count": 400,
                                         "op_count": 500, "prepare_remove_ratio": 0.2,
                                         "table": "duckkv"}, url)
    kv_lat = kv["latency"].set_index(["step", "op"])
    ok = kv_lat["count"] - kv_lat["errors"]
    assert ok[("l.pre", "INSERT")] == 400 and kv_lat.loc[("r.L1", "DELETE"), "errors"] == 0
    conn = duckdb.connect(str(db))
    try:
        # YCSB's records: the loaded ones and every insert of the run loop
        assert conn.execute('SELECT count(*) FROM "duckt"').fetchone()[0] == \
            300 + lat.loc[("r.L1", "INSERT"), "count"]
        # kv's: the prepare kept 80 % of its keys, then the run inserted and removed some
        assert conn.execute('SELECT count(*) FROM "duckkv"').fetchone()[0] == \
            400 - ok[("l.pre", "DELETE")] + ok[("r.L1", "INSERT")] - ok[("r.L1", "DELETE")]
        comments = dict(conn.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
        assert comments["duckt"] == comments["duckkv"] == "made by benchlib"
        assert conn.execute("SELECT count(*) FROM duckdb_indexes() WHERE table_name = 'duckt'"
                            ).fetchone()[0] == 1
    finally:
        conn.close()


def test_a_dialect_without_what_a_generic_binding_needs_is_refused_in_one_line(tmp_path, capsys):
    pytest.importorskip("duckdb", reason="duckdb is not installed (benchlib[duckdb])")
    path = tmp_path / "lb.yaml"     # LinkBench's nodes need an auto-numbered id
    path.write_text(yaml.safe_dump({"experiment": "lbduck", "workload": "linkbench",
                                    "properties": {"maxid1": 101},
                                    "targets": [{"name": "d", "url": "duckdb"}]}))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "data")]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "linkbench does not run on target 'd' (duckdb): its SQL lacks serial_keys" in err[0]
    assert not (tmp_path / "data" / "lbduck").exists()
