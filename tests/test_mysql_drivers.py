"""MariaDB through either client library — mysqlclient (C) and PyMySQL — does the same:
the same operations leave the same rows and the same counts, the same errors come
back as the same codes (duplicate key, deadlock, lock wait, a server that is not
there), and the choice is checked before anything runs. Each test on a database of
its own (mysql_own_db)."""
from __future__ import annotations

import threading

import pytest
import yaml
from conftest import driver_url, mysql_rows

from benchlib import cli, load_results, run_experiment
from benchlib.params import ParameterError, validate
from benchlib.targets import mysql_driver
from benchlib.targets.base import TargetError, make_target

MIX = {"readproportion": 0.4, "updateproportion": 0.2, "insertproportion": 0.1,
       "scanproportion": 0.1, "readmodifywriteproportion": 0.2, "requestdistribution": "zipfian"}


def c_or_skip() -> None:
    if mysql_driver.c_client_error():
        pytest.skip(mysql_driver.c_client_error())


def experiment(name: str, url: str, workload: str, props: dict) -> dict:
    return {"experiment": name, "workload": workload, "properties": props,
            "targets": [{"name": "my", "url": url}], "load": {"threads": 1, "batch_size": 200},
            # the Python loop: the library's own (run.driver auto takes benchlib's C loop
            # for YCSB's runs: tests/test_mysql_native.py)
            "run": {"threads": [1], "processes": 1, "loops": 1, "driver": "python"}, "seed": 11}


def run(d: dict, data_dir):
    res = run_experiment(validate(d, d["experiment"]), data_dir, progress=False)
    assert res.ok, res.runs
    return load_results(data_dir / d["experiment"])


def counts(t) -> dict:
    lat = t["latency"][~t["latency"].op.str.startswith("Intended-")]
    return {(r.step, r.op): (int(r["count"]), int(r["errors"])) for _, r in lat.iterrows()}


def through_both(own_db: str, data_dir, workload: str, props: dict, select: str) -> dict:
    """{driver: (op counts, rows)}: the same experiment through each library, on a table
    of its own (``{t}`` in ``select``)."""
    c_or_skip()
    out = {}
    for drv in ("c", "python"):
        url = driver_url(own_db, drv)
        table = f"{workload}_{drv}"
        t = run(experiment(table, url, workload, {**props, "table": table}), data_dir)
        assert t["runs"].iloc[0]["meta"]["client_library"] == mysql_driver.OLD_NAMES[drv]
        out[drv] = counts(t), mysql_rows(url, select.format(t=table))
    return out


@pytest.mark.mysql
def test_ycsb_through_both_libraries_leaves_the_same_rows_and_counts(mysql_own_db, data_dir):
    """One client, one seed: the same operations in the same order on each library."""
    out = through_both(mysql_own_db, data_dir, "ycsb",
                       {"recordcount": 400, "operationcount": 1500, **MIX},
                       "SELECT * FROM {t} ORDER BY YCSB_KEY")
    assert out["c"][0] == out["python"][0]
    assert out["c"][0][("r.L1", "READ-MODIFY-WRITE")][0] > 0 and len(out["c"][1]) > 400
    assert out["c"][1] == out["python"][1]


@pytest.mark.mysql
def test_kv_through_both_libraries_leaves_the_same_keys(mysql_own_db, data_dir):
    out = through_both(mysql_own_db, data_dir, "kv",
                       {"a": 0.5, "b": 0.2, "c": 0.1, "d": 0.1, "e": 0.1, "key_count": 1000,
                        "op_count": 2000, "prepare_insert_ratio": 0.1},
                       "SELECT k, v FROM {t} ORDER BY k")
    c, stored = out["c"]
    ok = {op: n - e for (step, op), (n, e) in c.items() if step == "r.L1"}
    assert len(stored) == 900 + ok.get("INSERT", 0) - ok.get("DELETE", 0)
    assert out["c"] == out["python"]


def binding_pair(url: str, table: str):
    """Two connections through the URL's library, on a two-row table."""
    target = make_target("t", url)
    target.start()
    target._q(f"CREATE TABLE {table} (k INT PRIMARY KEY, v INT) ENGINE=InnoDB")
    target._q(f"INSERT INTO {table} VALUES (1, 0), (2, 0)")
    ep = target.endpoint()
    return target, ep.connect(), ep.connect()


def code_of(fn) -> tuple[str, int]:
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value).__name__, e.value.args[0]


@pytest.mark.mysql
def test_errors_come_back_as_the_same_codes(mysql_own_db, mysql_driver):
    """Duplicate key, lock wait timeout and deadlock: the same class name and code on
    both libraries; each leaves its connection open (an error, not a reconnect)."""
    url = driver_url(mysql_own_db, mysql_driver)
    target, a, b = binding_pair(url, "e")
    try:
        ca, cb = a.cursor(), b.cursor()
        assert code_of(lambda: ca.execute("INSERT INTO e VALUES (1, 1)")) == ("IntegrityError", 1062)
        cb.execute("SET SESSION innodb_lock_wait_timeout = 1")
        a.begin()
        ca.execute("UPDATE e SET v = 1 WHERE k = 1")
        assert code_of(lambda: cb.execute("UPDATE e SET v = 2 WHERE k = 1")) == ("OperationalError", 1205)
        b.begin()
        cb.execute("UPDATE e SET v = 2 WHERE k = 2")
        cb.execute("SET SESSION innodb_lock_wait_timeout = 20")
        # a wants b's row, b wants a's: whichever comes second closes the circle, and
        # InnoDB rolls one of them back
        errors = []
        crossed = [threading.Thread(target=_errors_into, args=(errors, c.execute, sql))
                   for c, sql in ((ca, "UPDATE e SET v = 1 WHERE k = 2"),
                                  (cb, "UPDATE e SET v = 2 WHERE k = 1"))]
        for t in crossed:
            t.start()
        for t in crossed:
            t.join()
        assert errors == [("OperationalError", 1213)]
        b.rollback()
        a.rollback()
        assert a.open and b.open
    finally:
        a.close(), b.close()
        target.stop()


def _errors_into(errors: list, fn, *args) -> None:
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - collected: the test asserts which
        errors.append((type(e).__name__, e.args[0]))


@pytest.mark.parametrize("drv", ["c", "python"])
def test_a_server_that_is_not_there_is_one_line(drv, tmp_path, capsys):
    if drv == "c":
        c_or_skip()
    url = driver_url("mysql://root@127.0.0.1:1/test", drv)
    with pytest.raises(TargetError) as e:
        make_target("gone", url).start()
    assert "cannot connect to mysql://root@127.0.0.1:1/test" in str(e.value)
    assert len(str(e.value).splitlines()) == 1
    path = tmp_path / "gone.yaml"
    path.write_text(yaml.safe_dump(experiment("gone", url, "ycsb", {"recordcount": 10})))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d"), "--no-progress"]) != 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("options, url, why", [
    ({"driver": "fast"}, "mysql://root@h/db", "driver: 'fast' is not one of auto, c, python"),
    ({"driver": "c"}, "mysql+pymysql://root@h/db", "driver: c contradicts the URL scheme"),
    ({"library": "c"}, "mysql://root@h/db", "library: 'c' is not one of auto, mysqlclient, pymysql"),
    ({"library": "mysqlclient"}, "mysql+pymysql://root@h/db", "library: mysqlclient contradicts"),
    ({"library": "pymysql", "driver": "python"}, "mysql://root@h/db", "both given; keep library"),
])
def test_a_bad_driver_is_one_line_before_anything_runs(options, url, why):
    d = experiment("bad", url, "ycsb", {"recordcount": 10})
    d["targets"][0]["options"] = options
    with pytest.raises(ParameterError) as e:
        validate(d, "bad.yaml")
    assert why in str(e.value) and len(str(e.value).splitlines()) == 1


def test_without_the_c_client_auto_takes_pymysql_and_c_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(mysql_driver, "c_client_error", lambda: mysql_driver.MISSING_C)
    assert mysql_driver.choose("mysql://root@h/db", {}) == "pymysql"
    assert mysql_driver.choose("mysql://root@h/db", {"driver": "python"}) == "pymysql"
    assert mysql_driver.choose("mysql://root@h/db", {"library": "pymysql"}) == "pymysql"
    with pytest.raises(ValueError, match="apt-get install libmariadb-dev pkg-config"):
        mysql_driver.choose("mysql://root@h/db", {"driver": "c"})
    with pytest.raises(ValueError, match="library: mysqlclient: mysqlclient is not installed"):
        mysql_driver.choose("mysql://root@h/db", {"library": "mysqlclient"})
    with pytest.raises(ValueError, match="mysqlclient is not installed"):
        mysql_driver.choose("mysql+mysqldb://root@h/db", {})
