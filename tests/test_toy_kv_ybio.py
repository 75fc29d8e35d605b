"""kv and ybio on the toy target (tests/toy: SQLite's file under the dialect ``toy``,
registered as a plugin would be), through ``benchlib run``: each runs through its
workload's generic SQL binding, no file of the toy's own (issue 36), and what the run
wrote is in the target's own file."""
from __future__ import annotations

import sqlite3

import toy  # noqa: F401  (registers the target: no binding of its own)
import yaml

from benchlib import cli, load_results


def run(tmp_path, name: str, workload: str, props: dict, db=None, **sections) -> dict:
    db = db or tmp_path / f"{name}.sqlite"
    exp = {"experiment": name, "workload": workload, "properties": props, "seed": 5,
           "targets": [{"name": "t", "url": "toy", "options": {"path": str(db)}}],
           "run": {"threads": [2], "processes": 1}, **sections}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d"), "--no-progress",
                     "--force"]) == 0
    return load_results(tmp_path / "d" / name)


def one(db, sql: str):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()


def test_kv_runs_on_the_toy_target(tmp_path):
    props = {"a": 0.4, "b": 0.3, "c": 0.3, "key_count": 2000, "op_count": 3000,
             "prepare_remove_ratio": 0.2, "table": "toykv"}
    res = run(tmp_path, "kvtoy", "kv", props)
    assert res["runs"]["meta"].iloc[0]["target"]["dialect"]["name"] == "toy"
    lat = res["latency"].set_index(["step", "op"])
    ok = lat["count"] - lat["errors"]
    assert ok[("l.pre", "INSERT")] == 2000 and ok[("l.pre", "DELETE")] == 400
    assert lat.loc[("r.L1", "DELETE"), "errors"] == 0
    expected = 1600 + ok[("r.L1", "INSERT")] - ok[("r.L1", "DELETE")]
    assert one(tmp_path / "kvtoy.sqlite", 'SELECT count(*) FROM "toykv"')[0] == expected


def test_ybio_runs_on_the_toy_target(tmp_path):
    rows, batch = 2000, 50
    props = {"tab_prefix": "toyb_", "tab_rows": rows, "batch_size": batch, "run_duration": 0.5,
             "pct_update": 50, "table_per_session": False}
    load = run(tmp_path, "ybload", "ybio", props, run={"skip": True, "threads": [1]})
    assert load["steps"].set_index("step").loc["l.pre", "ops"] == rows
    db = tmp_path / "ybload.sqlite"
    count0, sum0 = one(db, 'SELECT count(*), sum(scratch) FROM "toyb_0001"')
    assert count0 == rows
    res = run(tmp_path, "ybrun", "ybio", {**props, "recreate": False}, db=db, load={"skip": True})
    (b,) = res["benchruns"].to_dict("records")
    assert b["errors"] == 0 and b["num_rows"] == batch * b["num_batches"] > 0
    count1, sum1 = one(db, 'SELECT count(*), sum(scratch) FROM "toyb_0001"')
    assert count1 == rows and sum1 - sum0 == b["num_updated"] > 0


def test_ybio_refuses_a_target_it_has_no_binding_for(tmp_path, capsys):
    """ybio on Redis: one line naming the target and the dialects ybio runs on, exit 2,
    before anything runs (no run folder)."""
    exp = {"experiment": "ybredis", "workload": "ybio", "properties": {"tab_rows": 100, "batch_size": 10},
           "targets": [{"name": "kvstore", "url": "redis://127.0.0.1:6379/9"}]}
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "workload ybio does not run on target 'kvstore' (redis)" in err
    assert "postgres" in err and not (tmp_path / "d" / "ybredis").exists()
