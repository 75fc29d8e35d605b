"""The key-value mix (workload kv) on the machine's Redis and on SQLite: the measured
mix is the configured one, the store holds exactly the keys the run's inserts and
removes imply (counted on the server), scans come back ordered and of the asked
length, bad input is one line and exit 2. Each test uses a table (Redis: key prefix)
of its own and removes it."""
from __future__ import annotations

import sqlite3
import uuid

import numpy as np
import pytest
import yaml

from benchlib import cli, load_results
from benchlib.workloads.kv.summary import kv_compare, kv_lines, kv_table
from benchlib.targets.sqlite import SqliteTarget
from benchlib.workloads.kv.bindings import prepare_args
from benchlib.workloads.kv.bindings.redis import RedisKv
from benchlib.workloads.kv.bindings.sql import SqlKv
from benchlib.workloads.kv.plan import keys_after_prepare
from benchlib.workloads.kv.workload import KvWorkload

MIXES = {
    "mix1": {"a": 1.0},
    "mix2": {"a": 0.9, "b": 0.1},
    "mix3": {"a": 0.8, "b": 0.1, "c": 0.1},
    "mix4": {"a": 0.7, "b": 0.1, "c": 0.1, "d": 0.1},
    "mix5": {"a": 0.6, "b": 0.1, "c": 0.1, "d": 0.1, "e": 0.1},
}
OPS = {"a": "READ", "b": "INSERT", "c": "DELETE", "d": "UPDATE", "e": "SCAN"}


def _table() -> str:
    return "t" + uuid.uuid4().hex[:10]


def _write(tmp_path, props: dict, targets: list[dict], **over) -> str:
    exp = {"experiment": "kvt", "workload": "kv", "properties": props, "targets": targets,
           "load": {"threads": 1, "batch_size": 500}, "run": {"threads": [2], "loops": 1},
           "seed": 5, **over}
    path = tmp_path / "kv.yaml"
    path.write_text(yaml.safe_dump(exp))
    return str(path)


def _redis_drop(url: str, table: str) -> None:
    import redis
    r = redis.Redis.from_url(url)
    keys = list(r.scan_iter(match=f"{table}:*", count=5000))
    r.unlink(*keys, table)   # the table's keys and benchlib's mark
    r.close()


def _redis_count(url: str, table: str) -> tuple[int, int]:
    """(keys under the table's prefix, members of its index): counted on the server."""
    import redis
    r = redis.Redis.from_url(url)
    n = sum(1 for _ in r.scan_iter(match=f"{table}:*", count=5000)) - r.exists(f"{table}:index")
    z = r.zcard(f"{table}:index")
    r.close()
    return n, z


@pytest.mark.parametrize("mix", ["mix5", pytest.param("mix1", marks=pytest.mark.slow),
                                 pytest.param("mix2", marks=pytest.mark.slow),
                                 pytest.param("mix3", marks=pytest.mark.slow),
                                 pytest.param("mix4", marks=pytest.mark.slow)])
def test_a_mix_on_redis_and_sqlite(mix, redis_url, tmp_path):
    table = _table()
    props = {**MIXES[mix], "prepare_insert_ratio": 0.1, "key_count": 4000, "op_count": 20000,
             "table": table}
    path = _write(tmp_path, props, [{"name": "redis", "url": redis_url},
                                    {"name": "lite", "url": "sqlite"}])
    try:
        assert cli.main(["run", path, "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
        res = load_results(tmp_path / "d" / "kvt")
        held = keys_after_prepare(KvWorkload(props).p)
        for cnf in ("redis", "lite"):
            lat = res["latency"][(res["latency"]["config"] == cnf) & (res["latency"]["step"] == "r.L1")]
            counts = lat.set_index("op")["count"]
            assert counts.sum() == 20000
            for letter, share in MIXES[mix].items():
                assert abs(100 * counts.get(OPS[letter], 0) / counts.sum() - 100 * share) <= 1
            ok = _ok(res, cnf, "r.L1")
            expected = held + ok.get("INSERT", 0) - ok.get("DELETE", 0)
            assert _stored(cnf, res, redis_url, table) == expected
    finally:
        _redis_drop(redis_url, table)


def _ok(res: dict, cnf: str | None, step: str) -> dict:
    """Per op, the operations of a step that returned OK (a miss is EMPTY, not OK)."""
    r = res["returns"]
    r = r[(r["step"] == step) & (r["status"] == "OK") & ((r["config"] == cnf) if cnf else True)]
    return r.groupby("op")["count"].sum().to_dict()


def _stored(cnf: str, res: dict, redis_url: str, table: str) -> int:
    if cnf == "redis":
        keys, members = _redis_count(redis_url, table)
        assert keys == members  # the index kept in step with the keys
        return keys
    run_dir = res["runs"].set_index("config").loc[cnf, "path"]
    conn = sqlite3.connect(f"{run_dir}/db.sqlite")
    try:
        return conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    finally:
        conn.close()


def test_two_loops_keep_the_key_count_on_sqlite(tmp_path):
    """Loop 2 inserts keys loop 1 did not and removes keys that still exist."""
    props = {"a": 0.4, "b": 0.3, "c": 0.3, "key_count": 3000, "op_count": 4000,
             "prepare_remove_ratio": 0.2}
    path = _write(tmp_path, props, [{"name": "lite", "url": "sqlite"}],
                  run={"threads": [3], "loops": 2, "processes": 1})
    assert cli.main(["run", path, "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    res = load_results(tmp_path / "d" / "kvt")
    lat = res["latency"].set_index(["step", "op"])
    ok = {s: _ok(res, None, s) for s in ("l.pre", "r.L1", "r.L2")}
    assert ok["l.pre"]["INSERT"] == 3000 and ok["l.pre"]["DELETE"] == 600
    assert lat.loc[("r.L1", "DELETE"), "errors"] == 0 and lat.loc[("r.L2", "INSERT"), "errors"] == 0
    expected = 2400 + sum(ok[s]["INSERT"] - ok[s].get("DELETE", 0) for s in ("r.L1", "r.L2"))
    assert _stored("lite", res, "", "kv") == expected
    t = kv_table(res)
    assert set(t["op"].astype(str)) == {"READ", "INSERT", "DELETE", "ALL"}
    assert "op/s = " in kv_lines(res) and len(kv_compare(res))


def test_scan_returns_ordered_keys_of_the_asked_length(redis_url, tmp_path):
    import redis
    table = _table()
    p = f"{table}:"  # Redis keys under the table's prefix, as the workload makes them
    keys = [f"{p}k{i:04d}" for i in range(0, 200, 2)]
    r = RedisKv(redis.Redis.from_url(redis_url), table)
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    conn.execute(f'CREATE TABLE "{table}" (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID')
    s = SqlKv(conn, table, SqliteTarget.dialect)
    try:
        for b in (r, s):
            def do(code, *args):
                return b.fns[code](*prepare_args(b, [code], [args])[0])
            b.fns = [b.read, b.insert, b.delete, b.update, b.scan]
            b.load([(k, "v") for k in reversed(keys)])
            assert b.scan_keys(f"{p}k0051", 7) == keys[26:33]  # from the next key on, in order
            assert b.scan_keys(f"{p}k0190", 10) == keys[95:]   # fewer at the end
            assert do(2, f"{p}k0052") == 0 and do(2, f"{p}k0052") == 4   # EMPTY: a miss
            assert b.scan_keys(f"{p}k0051", 3) == [f"{p}k0054", f"{p}k0056", f"{p}k0058"]
            assert do(1, f"{p}k0053", "x") == 0
            assert b.scan_keys(f"{p}k0051", 2) == [f"{p}k0053", f"{p}k0054"]
            assert do(0, f"{p}k0052") == 4 and do(3, f"{p}k0052", "y") == 4
            assert do(0, f"{p}k0053") == 0 and do(3, f"{p}k0053", "z") == 0
            assert do(4, f"{p}k0001", 5) == 0 and b.count() == len(keys)
    finally:
        r.close()
        conn.close()
        _redis_drop(redis_url, table)


@pytest.mark.parametrize("props, key", [
    ({"a": 0.7, "b": 0.2, "c": 0.2}, "read (a) + insert (b)"),
    ({"c": -0.1}, "remove:"),
    ({"prepare_insert_ratio": -1}, "prepare_insert_ratio:"),
    ({"scan_lenght": 3}, "did you mean 'scan_length'"),
    ({"a": 0.5, "read": 0.5}, "read: given twice"),
])
def test_bad_properties_are_one_line(props, key, tmp_path, capsys):
    path = _write(tmp_path, {**props, "op_count": 10}, [{"name": "lite", "url": "sqlite"}])
    assert cli.main(["run", path, "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert key in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "d" / "kvt").exists()


def test_a_closed_redis_port_is_one_line(tmp_path, capsys):
    path = _write(tmp_path, {"op_count": 10}, [{"name": "r", "url": "redis://:pw@127.0.0.1:1/0"}])
    assert cli.main(["run", path, "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert "127.0.0.1:1" in err and len(err.splitlines()) == 1 and "pw" not in err


def test_ycsb_on_redis_is_refused_before_it_runs(tmp_path, capsys):
    path = tmp_path / "y.yaml"
    path.write_text(yaml.safe_dump({
        "experiment": "y", "workload": "ycsb", "properties": {"recordcount": 10, "operationcount": 10},
        "targets": [{"name": "r", "url": "redis://127.0.0.1:6379/0"}]}))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d")]) == 2
    assert "workload ycsb does not run on target 'r' (redis)" in capsys.readouterr().err


def test_the_basic_target_runs_the_mix(tmp_path):
    props = {"a": 0.5, "d": 0.5, "key_count": 1000, "op_count": 5000}
    path = _write(tmp_path, props, [{"name": "basic", "url": "basic"}])
    assert cli.main(["run", path, "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    lat = load_results(tmp_path / "d" / "kvt")["latency"]
    assert lat[lat["step"] == "r.L1"].set_index("op")["count"].to_dict() == {"READ": 2500, "UPDATE": 2500}


def test_the_redis_target_names_its_server(redis_url):
    from benchlib.targets.base import make_target
    t = make_target("r", redis_url)
    t.start()
    try:
        assert t.dbms_info()["name"] == "Redis" and t.dbms_info()["version"]
        assert t.db_size_bytes() > 0
        pids = t.dbms_pids()
        if pids:  # visible when the server runs on this host as a process we can see
            import psutil
            assert "redis" in psutil.Process(pids[0]).name()
        ep = t.endpoint()
        assert (ep.kind, ep.params) == ("redis", {"url": redis_url})
    finally:
        t.stop()


def _kill_when_running(data, server, timeout_s: float = 60) -> None:
    """Terminate ``server`` once the run loop has logged a second or two."""
    import time
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        logs = list(data.glob("kvt/*/intervals.jsonl"))
        if logs and logs[0].read_text().count('"r.L1"') >= 2:
            break
        time.sleep(0.2)
    server.terminate()


@pytest.mark.slow
def test_a_redis_that_dies_mid_run_fails_the_run_and_keeps_what_it_measured(tmp_path, capsys):
    """A redis-server of the test's own (a Unix socket in tmp_path), killed mid-loop."""
    import shutil
    import subprocess
    import threading
    import time
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    sock = tmp_path / "r.sock"
    server = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", str(sock),
                               "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                              stdout=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if sock.exists():
                break
            time.sleep(0.1)
        path = _write(tmp_path, {"a": 0.9, "b": 0.1, "key_count": 2000},
                      [{"name": "own", "url": f"unix://{sock}?db=0"}],
                      run={"threads": [1], "loops": 1, "loop_secs": 20})
        threading.Thread(target=_kill_when_running, args=(tmp_path / "d", server), daemon=True).start()
        assert cli.main(["run", path, "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 1
    finally:
        server.terminate()
        server.wait(10)
    res = load_results(tmp_path / "d" / "kvt")
    assert res["runs"]["status"].tolist() == ["failed"]
    steps = res["steps"].set_index("step")
    assert steps.loc["r.L1", "status"] == "failed" and steps.loc["r.L1", "ops"] > 0
    lat = res["latency"][res["latency"]["step"] == "r.L1"]
    # every call timed; the failed ones beside the step's ops, not in them
    assert lat["count"].sum() == steps.loc["r.L1", "ops"] + steps.loc["r.L1", "failed"]
    assert len(res["intervals"])
    out = capsys.readouterr()
    assert "FAILED" in out.out
    # the reconnection policy tried, and gave up saying why (workloads/reconnect.py)
    assert "connection lost and not reopened" in out.out + out.err


def test_a_client_removes_its_own_inserts_oldest_first_once_its_loaded_keys_run_out():
    """Past its loaded keys a client removes its own inserts of the loop, oldest first,
    each once, and then misses (its last key again); it keeps ranges, not the keys."""
    from benchlib.workloads import keycounter
    from benchlib.workloads.kv.plan import DELETE, INSERT, KeyStreams
    p = KvWorkload({"a": 0.5, "b": 0.25, "c": 0.25, "key_count": 40}).p
    streams = KeyStreams(p, 0, 2, 1, 1, keycounter.private(p.keys_loaded, 2))
    codes = np.array([INSERT, DELETE] * 30 + [DELETE] * 25, dtype=np.int64)
    removed, inserted, held = [], [], []
    for chunk in np.array_split(codes, 5):
        ins, dels = streams.plan(chunk)
        inserted.extend(ins.tolist())
        removed.extend(dels.tolist())
        held.append(len(streams.own))
    assert removed[:20] == list(range(0, 40, 2))         # its loaded keys (client 0 of 2)
    assert removed[20:50] == inserted                    # then its own, oldest first, once
    assert removed[50:] == [inserted[-1]] * 5            # then none left: misses
    assert max(held) <= 5 and held[-1] == 0              # a range per chunk, dropped when done
