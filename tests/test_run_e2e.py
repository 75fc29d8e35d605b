"""End to end: experiments through the real driver into run folders."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import small_experiment

from benchlib import __version__, load_results, run_experiment, schema
from benchlib.params import validate
from benchlib.store.folders import read_meta


def run(exp_dict, data_dir, **kw):
    exp = validate(exp_dict, "test")
    return exp, run_experiment(exp, data_dir, progress=False, **kw)


def test_sqlite_run_folder_is_complete(data_dir):
    exp, res = run(small_experiment("sq", "sqlite"), data_dir)
    assert res.ok, res.runs
    (run_id,) = res.runs
    rd = data_dir / "sq" / run_id
    meta = json.loads((rd / "meta.json").read_text())
    assert meta["status"] == "ok" and meta["format_version"] == schema.FORMAT_VERSION
    assert meta["dbms"]["name"] == "SQLite" and meta["host"]["cores"] >= 1
    # the runner fills the versioned model, read back typed
    typed = read_meta(rd)
    assert (typed.run_id, typed.planned, typed.workload, typed.target["kind"]) == (
        run_id, ["l.pre", "r.L1"], "ycsb", "sqlite")
    assert typed.benchlib_version == __version__ and typed.pid and typed.ended
    t = load_results(rd)
    steps = t["steps"].set_index("step")
    assert list(steps.index) == ["l.pre", "r.L1"]
    assert steps.loc["l.pre", "ops"] == 2000
    assert steps.loc["r.L1", "ops"] == 3000 and steps.loc["r.L1", "errors"] == 0
    lat = t["latency"].set_index(["step", "op"])
    assert lat.loc[("r.L1", "READ"), "count"] + lat.loc[("r.L1", "UPDATE"), "count"] == 3000
    assert lat.loc[("l.pre", "INSERT"), "count"] == 2000
    assert lat.loc[("l.pre", "INSERT-BATCH"), "errors"] == 0
    assert (t["latency"]["errors"] == 0).all()
    r = lat.loc[("r.L1", "READ")]
    assert 0 < r["min_us"] <= r["p50_us"] <= r["p99_us"] <= r["max_us"]
    iv = t["intervals"]
    run_iv = iv[(iv.step == "r.L1") & iv.op.isin(["READ", "UPDATE"])]
    assert run_iv["ops"].sum() == 3000   # every operation is in exactly one second
    text = (rd / "ycsb-r.L1.txt").read_text()
    assert "[OVERALL], RunTime(ms)" in text and "[READ], Return=OK" in text
    assert "99thPercentileLatency(us)" in text


def test_rerun_skips_finished_and_force_reruns(data_dir):
    exp, res = run(small_experiment("rr", "sqlite"), data_dir)
    (run_id,) = res.runs
    started = json.loads((data_dir / "rr" / run_id / "meta.json").read_text())["started"]
    _, res2 = run(small_experiment("rr", "sqlite"), data_dir)
    assert res2.runs[run_id] == "skipped"
    _, res3 = run(small_experiment("rr", "sqlite"), data_dir, force=True)
    assert res3.runs[run_id] == "ok"
    assert json.loads((data_dir / "rr" / run_id / "meta.json").read_text())["started"] != started


def test_cli_show_and_list(data_dir):
    run(small_experiment("cl", "sqlite"), data_dir)
    out = subprocess.run([sys.executable, "-m", "benchlib.cli", "show", str(data_dir / "cl"),
                          "--table", "latency", "--format", "csv"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("run_id,step,op,count")
    lst = subprocess.run([sys.executable, "-m", "benchlib.cli", "list", "--data-dir", str(data_dir)],
                         capture_output=True, text=True)
    assert lst.returncode == 0 and "cl" in lst.stdout


def test_basic_verbose_prints_basicdb_lines(tmp_path):
    wl = tmp_path / "workloadc"
    wl.write_text("recordcount=50\noperationcount=20\nreadproportion=1\nupdateproportion=0\n"
                  "requestdistribution=uniform\nworkload=site.ycsb.workloads.CoreWorkload\n")
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(wl), "--target", "basic",
                        "-p", "basicdb.verbose=true", "--data-dir", str(tmp_path / "d"), "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    reads = [l for l in r.stdout.splitlines() if l.startswith("READ usertable user")]
    inserts = [l for l in r.stdout.splitlines() if l.startswith("INSERT usertable user")]
    assert len(reads) == 20 and len(inserts) == 50
    assert all(l.endswith(" [ <all fields>]") for l in reads)
    assert inserts[0].count("field") == 10


def test_unreachable_database_is_one_line_exit_2(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("experiment: un\ntargets: [{name: pg, url: 'postgresql://postgres@127.0.0.1:1/test'}]\n"
                 "properties: {recordcount: 10, operationcount: 10}\n")
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                        str(tmp_path / "d")], capture_output=True, text=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "cannot connect" in r.stderr
    assert not (tmp_path / "d" / "un").exists() or not any((tmp_path / "d" / "un").iterdir())
