"""RocksDB, embedded, as a target: YCSB and kv run on it from `benchlib run` with counts
the test knows (records loaded, ops by kind, the keys stored, counted in the database),
its settings and statistics reach the run folder, a directory benchlib did not make is
refused before anything is written, and the workloads without a binding for it refuse
it in one line. Each test works in its own tmp directory."""
from __future__ import annotations

import json
import struct

import pytest
import yaml

from benchlib import cli, load_results

pytestmark = pytest.mark.requires("rocksdict")


def _write(tmp_path, workload: str, props: dict, targets: list[dict], **over) -> str:
    exp = {"experiment": "rx", "workload": workload, "properties": props, "targets": targets,
           "load": {"threads": 2, "batch_size": 500}, "run": {"threads": [2], "loops": 1},
           "seed": 7, **over}
    path = tmp_path / "rx.yaml"
    path.write_text(yaml.safe_dump(exp))
    return str(path)


def _run(path: str, tmp_path) -> int:
    return cli.main(["run", path, "--data-dir", str(tmp_path / "d"), "--no-progress"])


def _count(directory, table: str) -> int:
    """The keys of the column family ``table``, counted in the database itself."""
    import rocksdict
    opts = rocksdict.Options(raw_mode=True)
    db = rocksdict.Rdict(str(directory), opts, column_families={table: opts})
    try:
        cf = db.get_column_family(table)
        n = sum(1 for _ in cf.keys())
        del cf
        return n
    finally:
        db.close()


def test_ycsb_loads_and_runs_every_op_on_rocksdb(tmp_path):
    props = {"recordcount": 2000, "operationcount": 3000, "readproportion": 0.4,
             "updateproportion": 0.2, "insertproportion": 0.1, "scanproportion": 0.2,
             "readmodifywriteproportion": 0.1, "maxscanlength": 20, "fieldcount": 4,
             "fieldlength": 20}
    options = {"write_buffer_size": "1MiB", "compression": "none"}
    path = _write(tmp_path, "ycsb", props, [{"name": "rocks", "url": "rocksdb", "options": options}])
    assert _run(path, tmp_path) == 0
    res = load_results(tmp_path / "d" / "rx")
    lat = res["latency"].set_index(["step", "op"])
    assert lat.loc[("l.pre", "INSERT"), "count"] == 2000 and lat["errors"].sum() == 0
    run = res["latency"][res["latency"]["step"] == "r.L1"].set_index("op")["count"]
    outer = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"]
    rmw = run["READ-MODIFY-WRITE"]   # its read and update are timed as READ and UPDATE too
    assert sum(run[op] for op in outer) - 2 * rmw == 3000 and all(run[op] > 0 for op in outer)
    run_dir = res["runs"]["path"].iloc[0]
    assert _count(f"{run_dir}/rocksdb", "usertable") == 2000 + run["INSERT"]
    steps = res["steps"].set_index("step")
    assert steps.loc["r.L1", "processes"] == 1          # its threads share one process
    assert steps.loc["l.pre", "dbms_user_write_kb"] > 2000 * 4 * 20 / 1024   # RocksDB's statistics
    assert res["hw"]["db_size_gb"].max() > 0
    meta = json.loads((tmp_path / "d" / "rx" / run_dir.split("/")[-1] / "meta.json").read_text())
    assert meta["dbms"]["name"] == "RocksDB" and meta["dbms"]["version"]
    assert meta["dbms"]["settings"] == {"write_buffer_size": 1 << 20, "compression": "none"}


def test_kv_mix_on_rocksdb_keeps_the_keys_its_ops_imply(tmp_path, monkeypatch):
    props = {"a": 0.4, "b": 0.15, "c": 0.15, "d": 0.15, "e": 0.15, "key_count": 3000,
             "op_count": 4000, "prepare_remove_ratio": 0.2}
    path = _write(tmp_path, "kv", props, [{"name": "rocks", "url": "rocksdb:///rdb?sync=false"}])
    monkeypatch.chdir(tmp_path)   # a relative directory: under the working directory, as sqlite:///
    assert _run(path, tmp_path) == 0
    res = load_results(tmp_path / "d" / "rx")
    ret = res["returns"]
    ok = ret[ret["status"] == "OK"].groupby(["step", "op"])["count"].sum()
    assert ok[("l.pre", "INSERT")] == 3000 and ok[("l.pre", "DELETE")] == 600
    run = res["latency"][res["latency"]["step"] == "r.L1"].set_index("op")["count"]
    assert run.sum() == 4000 and set(run.index) == {"READ", "INSERT", "DELETE", "UPDATE", "SCAN"}
    assert _count(tmp_path / "rdb", "kv") == 2400 + ok[("r.L1", "INSERT")] - ok[("r.L1", "DELETE")]


def test_a_rocksdb_benchlib_did_not_make_is_refused_then_replaced_on_purpose(tmp_path, capsys):
    import rocksdict
    theirs = tmp_path / "theirs"
    db = rocksdict.Rdict(str(theirs), rocksdict.Options(raw_mode=True))
    db[b"their key"] = b"their value"
    db.close()
    props = {"key_count": 500, "op_count": 10}
    path = _write(tmp_path, "kv", props, [{"name": "rocks", "url": f"rocksdb:///{theirs}"}],
                  run={"skip": True})
    assert _run(path, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert f"the RocksDB in {theirs} exists and benchlib did not make it" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "d" / "rx").exists()
    path = _write(tmp_path, "kv", props, [{"name": "rocks", "url": f"rocksdb:///{theirs}"}],
                  run={"skip": True}, load={"threads": 1, "replace": True})
    assert _run(path, tmp_path) == 0
    assert _count(theirs, "kv") == 500
    db = rocksdict.Rdict(str(theirs), rocksdict.Options(raw_mode=True))
    assert db[b"their key"] == b"their value"   # the rest of their database left alone
    db.close()


@pytest.mark.parametrize("workload, props", [
    ("linkbench", {}), ("ybio", {}),
])
def test_workloads_without_a_rocksdb_binding_refuse_it_in_one_line(workload, props, tmp_path, capsys):
    path = _write(tmp_path, workload, props, [{"name": "rocks", "url": "rocksdb"}])
    assert _run(path, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert f"workload {workload} does not run on target 'rocks' (rocksdb)" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("target, over, says", [
    ({"url": "rocksdb", "options": {"write_bufer_size": 1}}, {}, "did you mean write_buffer_size?"),
    ({"url": "rocksdb:///x?compression=brotli"}, {}, "compression: 'brotli' is not one of"),
    ({"url": "rocksdb", "options": {"block_cache_size": "lots"}}, {}, "block_cache_size: 'lots' is not a size"),
    ({"url": "rocksdb"}, {"run": {"threads": [2], "processes": 2}}, "run.processes: 2: target rocks"),
])
def test_bad_rocksdb_input_is_one_line(target, over, says, tmp_path, capsys):
    path = _write(tmp_path, "kv", {"op_count": 10}, [{"name": "rocks", **target}], **over)
    assert _run(path, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_a_record_is_laid_out_as_ycsbs_rocksdb_binding_lays_it_out():
    from benchlib.workloads.ycsb.bindings.rocksdb import decode_record, encode_record
    names = [struct.pack(">I", 6) + b"field0", struct.pack(">I", 6) + b"field1"]
    data = encode_record(names, [b"ab", b""])
    assert data == b"\0\0\0\x06field0\0\0\0\x02ab\0\0\0\x06field1\0\0\0\0"
    assert decode_record(data) == {b"field0": b"ab", b"field1": b""}
    assert decode_record(data, b"field1") == {b"field1": b""}
