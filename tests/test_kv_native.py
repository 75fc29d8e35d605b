"""kv on Redis through its C loop over hiredis (``_redisloop``) against the Python path
(redis-py, :class:`RedisKv`): the same operations on two tables (key prefixes) of the
test's own, loaded alike, give the same statuses op by op and leave the same keys,
values and index; one thread driving several connections (``run_many``) gives what
each connection's operations give one after the other; and a whole run of the
workload with ``run.driver: c`` and ``python`` (one client thread, the same seed)
counts the same operations and returns and stores the same keys and values."""
from __future__ import annotations

import uuid

import numpy as np
import pytest
import redis
import yaml

from benchlib import cli, load_results
from benchlib.workloads.kv.bindings import redis_native
from benchlib.workloads.kv.bindings.redis import RedisKv

pytestmark = pytest.mark.skipif(not redis_native.AVAILABLE, reason=redis_native.MISSING)


def _table() -> str:
    return "hiredis_t" + uuid.uuid4().hex[:8]


def _ops(seed: int, n: int, keys: list[str]) -> tuple[list[int], list[tuple]]:
    """n operations of every kind on keys half of which are loaded: hits and misses,
    fresh and taken inserts, scans that find keys and scans past the last."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 5, n).tolist()
    args = []
    for c in codes:
        k = keys[int(rng.integers(len(keys)))]
        args.append((k,) if c in (0, 2) else (k, int(rng.integers(1, 6))) if c == 4
                    else (k, f"v{int(rng.integers(1 << 30))}-" + "x" * int(rng.integers(0, 40))))
    return codes, args


def _contents(r, table: str) -> tuple[dict, list]:
    """The table's keys (prefix taken off) and values, and its index's members."""
    keys = [k for k in r.scan_iter(match=f"{table}:*", count=5000) if k != f"{table}:index".encode()]
    vals = dict(zip((k.decode()[len(table) + 1:] for k in keys), r.mget(keys))) if keys else {}
    members = [m.decode()[len(table) + 1:] for m in r.zrange(f"{table}:index", 0, -1)]
    return vals, members


def _python(url: str, table: str, codes, args) -> list[int]:
    kv = RedisKv(redis.Redis.from_url(url), table)
    try:
        fns = [kv.read, kv.insert, kv.delete, kv.update, kv.scan]
        return [fns[c](*a) for c, a in zip(codes, kv.prepare(codes, args))]
    finally:
        kv.close()


def _prefixed(table: str, args: list[tuple]) -> list[tuple]:
    return [(f"{table}:{a[0]}", *a[1:]) for a in args]


@pytest.fixture
def two_tables(redis_url):
    r = redis.Redis.from_url(redis_url)
    tables = [_table(), _table()]
    keys = [f"k{i:03d}" for i in range(40)]
    for t in tables:
        kv = RedisKv(redis.Redis.from_url(redis_url), t)
        kv.load([(f"{t}:{k}", f"loaded-{k}") for k in keys[::2]])
        kv.close()
    yield r, tables, keys
    for t in tables:
        doomed = list(r.scan_iter(match=f"{t}:*", count=5000))
        r.unlink(*doomed, t)   # the table's keys and benchlib's mark
    r.close()


def test_one_connection_gives_what_redis_py_gives(two_tables, redis_url):
    r, (tp, tc), keys = two_tables
    codes, args = _ops(7, 600, keys)
    want = _python(redis_url, tp, codes, _prefixed(tp, args))
    kv = redis_native.RedisKvNative(redis_url, tc)
    try:
        ops = kv.native(redis_native.RUN_OPS)
        plan = ops.plan(type("C", (), {"codes": codes, "args": _prefixed(tc, args)}))
        i = 0
        while i < len(plan):   # each call returns at its first completion (next_tick 0)
            i, _, _ = ops.run(plan, i, 0, None)
        got = list(np.frombuffer(plan.results(0, len(plan))[1], np.int8))
    finally:
        kv.close()
    assert got == want
    assert {0, 2, 4} <= set(want)   # hits, a taken insert, misses: every status seen
    assert _contents(r, tc) == _contents(r, tp)


def test_one_thread_drives_several_connections(two_tables, redis_url):
    """Three connections on disjoint keys through run_many: each connection's statuses
    are those of its operations run one after the other in Python."""
    from benchlib.workloads._native import _redisloop
    r, (tp, tc), keys = two_tables
    work = [_ops(11 + j, 300, keys[j::3]) for j in range(3)]
    want = [_python(redis_url, tp, c, _prefixed(tp, a)) for c, a in work]
    kvs = [redis_native.RedisKvNative(redis_url, tc) for _ in work]
    try:
        conns = [kv.conn for kv in kvs]
        plans = [_redisloop.Plan(c, _prefixed(tc, a), f"{tc}:index".encode()) for c, a in work]
        for conn, plan in zip(conns, plans):
            conn.assign(plan)
        while True:
            flags, _, k = _redisloop.run_many(conns, 1 << 62, 0, 1)
            if flags & _redisloop.F_NEED:
                conns[k].assign(None)
            if flags & _redisloop.F_IDLE:
                break
        got = [list(np.frombuffer(p.results(0, len(p))[1], np.int8)) for p in plans]
    finally:
        for kv in kvs:
            kv.close()
    assert got == want
    assert _contents(r, tc) == _contents(r, tp)


def _run(tmp_path, redis_url: str, table: str, driver: str) -> dict:
    exp = {"experiment": f"kvn-{driver}", "workload": "kv", "seed": 5,
           "properties": {"a": 0.5, "b": 0.15, "c": 0.1, "d": 0.15, "e": 0.1, "key_count": 3000,
                          "prepare_insert_ratio": 0.1, "prepare_remove_ratio": 0.1,
                          "op_count": 6000, "key_size": 20, "table": table},
           # the fixture's keys were written by hand, not by a load: replaced on purpose
           "targets": [{"name": "redis", "url": redis_url}], "load": {"threads": 1, "replace": True},
           "run": {"threads": [1], "loops": 1, "driver": driver}}
    path = tmp_path / f"{driver}.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    return load_results(tmp_path / "d" / f"kvn-{driver}")


def test_a_run_in_c_counts_and_stores_what_the_python_run_does(two_tables, redis_url, tmp_path):
    r, (tp, tc), _ = two_tables
    res = {d: _run(tmp_path, redis_url, t, d) for d, t in (("python", tp), ("c", tc))}
    assert res["c"]["runs"]["meta"].iloc[0]["driver_path"] == "c-hiredis"
    assert res["python"]["runs"]["meta"].iloc[0]["driver_path"] == "python"
    cols = ["step", "op", "status", "count"]
    returns = {d: x["returns"][cols].sort_values(cols[:3]).reset_index(drop=True) for d, x in res.items()}
    assert returns["c"].equals(returns["python"])
    assert set(returns["c"]["status"]) >= {"OK", "EMPTY"}
    for x in res.values():   # each second's operations add up to the step's
        lat = x["latency"][x["latency"].step == "r.L1"].set_index("op")["count"].to_dict()
        iv = x["intervals"][x["intervals"].step == "r.L1"]
        assert iv.groupby("op")["ops"].sum().to_dict() == lat and sum(lat.values()) == 6000
    assert _contents(r, tc) == _contents(r, tp)


def test_a_paced_run_in_c_times_each_operation_from_its_intended_start(redis_url, tmp_path):
    """Two clients on a schedule of 2000/s: every operation has its intended-start
    latency, none is left out, and the step lasts as long as its schedule."""
    table = _table()
    exp = {"experiment": "kvn-paced", "workload": "kv", "seed": 5,
           "properties": {"a": 0.6, "b": 0.1, "c": 0.1, "d": 0.1, "e": 0.1, "key_count": 2000,
                          "op_count": 3000, "table": table},
           "targets": [{"name": "redis", "url": redis_url}], "load": {"threads": 1},
           "run": {"threads": [2], "loops": 1, "driver": "c", "target_base": 2000,
                   "target_factors": [1.0]}}
    path = tmp_path / "paced.yaml"
    path.write_text(yaml.safe_dump(exp))
    try:
        assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    finally:
        r = redis.Redis.from_url(redis_url)
        doomed = list(r.scan_iter(match=f"{table}:*", count=5000))
        r.unlink(*doomed, table)   # the table's keys and benchlib's mark
        r.close()
    t = load_results(tmp_path / "d" / "kvn-paced")
    assert t["runs"]["meta"].iloc[0]["driver_path"] == "c-hiredis"
    lat = t["latency"][t["latency"].step == "r.L1"].set_index("op")["count"]
    for op in ("READ", "INSERT", "DELETE", "UPDATE", "SCAN"):
        assert lat[f"Intended-{op}"] == lat[op]
    step = t["steps"].set_index("step").loc["r.L1"]
    assert step["ops"] == 3000 and step["secs"] >= 1.4   # 3000 on a schedule of 2000/s


def test_driver_c_where_kv_has_no_c_loop_is_one_line(tmp_path, capsys):
    exp = {"experiment": "kvn-bad", "workload": "kv", "properties": {"op_count": 10},
           "targets": [{"name": "lite", "url": "sqlite"}], "run": {"driver": "c"}}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(path), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "kv has no C loop for dialect sqlite" in err and "Traceback" not in err


def test_without_the_extension_auto_runs_redis_py_and_c_says_why(monkeypatch, redis_url):
    from benchlib.targets.base import TargetError, make_target
    from benchlib.workloads.kv.bindings import open_binding
    endpoint = make_target("r", redis_url).endpoint()
    c = open_binding(endpoint, _table(), "auto")
    assert isinstance(c, redis_native.RedisKvNative)
    c.close()
    monkeypatch.setattr(redis_native, "AVAILABLE", False)   # as where it was not built
    py = open_binding(endpoint, _table(), "auto")
    assert isinstance(py, RedisKv)
    py.close()
    with pytest.raises(TargetError, match="libhiredis-dev"):
        open_binding(endpoint, _table(), "c")
