"""YCSB's core workloads as an axis of the matrix (``mix: [a, c]``): each letter its own
runs with its file's proportions, one load serving them all, points kept apart."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import small_experiment

from benchlib import cli, load_results
from benchlib.params import load_experiment, plan
from benchlib.run import loaded_data
from benchlib.workloads.ycsb.mixes import MIXES, apply_mix

ROOT = Path(__file__).resolve().parents[1]


def _exp(tmp_path: Path, name: str, **props) -> Path:
    exp = small_experiment(name, f"sqlite:///{tmp_path / (name + '.sqlite')}",
                           run={"threads": [1], "processes": 1})
    exp["properties"] = {"recordcount": 500, "operationcount": 800, **props}
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(exp))
    return p


@pytest.fixture(scope="module")
def three_mixes(tmp_path_factory):
    """One experiment of YCSB A, C and D on two SQLite databases: a run per mix and target."""
    tmp = tmp_path_factory.mktemp("mixes")
    p = _exp(tmp, "mixes", mix=["a", "c", "d"])
    exp = yaml.safe_load(p.read_text())
    exp["targets"].append({"name": "other", "url": f"sqlite:///{tmp / 'other.sqlite'}"})
    p.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(p), "--data-dir", str(tmp / "d"), "--no-progress"]) == 0
    return {**load_results(tmp / "d" / "mixes"), "dir": tmp / "d" / "mixes"}


def _ops(res, mix: str) -> dict[str, int]:
    lat = res["latency"]
    rows = lat[lat["run_id"].str.startswith("mixes-") & lat["run_id"].str.contains(f"-mix{mix}-")
               & lat["step"].str.startswith("r.")]
    return {op: int(n) for op, n in rows.groupby("op")["count"].sum().items() if n > 0}


def test_each_mix_runs_its_own_proportions_on_one_load_each(three_mixes):
    runs = three_mixes["runs"]
    assert sorted(runs["run_id"]) == [f"{t}-t1-p1-l1-tgt0-mix{m}-r1" for t in ("mixes", "other") for m in "acd"]
    a, c, d = (_ops(three_mixes, m) for m in "acd")
    assert set(a) == {"READ", "UPDATE"} and 0.4 < a["READ"] / (a["READ"] + a["UPDATE"]) < 0.6
    assert set(c) == {"READ"} and c["READ"] == 800            # C: no UPDATE at all
    assert set(d) == {"READ", "INSERT"} and d["INSERT"] < d["READ"]   # D: inserts past the load
    steps = three_mixes["steps"]
    loads = steps[steps["phase"] == "load"].groupby("run_id").size()
    assert (loads == 1).all() and len(loads) == 6                 # one load step per run, as before


def test_summary_points_keep_the_mixes_apart(three_mixes, capsys):
    from benchlib.summaries import samples
    pts = samples.point_summary(three_mixes)
    assert set(pts["point"]) == {"mix=a", "mix=c", "mix=d"}
    assert (pts["runs"] == 1).all() and len(pts) == 6
    assert cli.main(["summary", str(three_mixes["dir"]), "--kind", "configs"]) == 0
    table = capsys.readouterr().out     # other against mixes, mix by mix
    assert all(f"mix={m}" in table for m in "acd"), table


def test_the_mixes_share_one_load_key(tmp_path):
    exp = load_experiment(_exp(tmp_path, "key", mix=["a", "c", "e"]))

    class KeepsData:   # a target that keeps loaded data (a provisioned server's two methods)
        def use_loaded(self, key):
            return False
    keys = {loaded_data.data_key(exp, spec, {**exp.workload_properties(), **spec.workload_point},
                                 KeepsData()) for spec in plan(exp)}
    assert len(keys) == 1 and None not in keys
    other = load_experiment(_exp(tmp_path, "key", mix="a", recordcount=600))
    assert loaded_data.data_key(other, plan(other)[0], other.workload_properties(), KeepsData()) not in keys


def test_a_letter_sets_the_files_keys_and_refuses_a_contradiction():
    assert apply_mix({"mix": "workloadC", "recordcount": 5}) == {"recordcount": 5, **MIXES["c"]}
    assert apply_mix({"mix": "a", "readproportion": "0.5"})["updateproportion"] == 0.5
    with pytest.raises(ValueError, match="readproportion: 0.9 contradicts mix c"):
        apply_mix({"mix": "c", "readproportion": 0.9})


@pytest.mark.parametrize("value, hint", [("workloda", "(did you mean a?)"), ("x", "a, b, c, d, e, f")])
def test_a_bad_letter_is_one_line(tmp_path, value, hint):
    p = _exp(tmp_path, "bad", mix=["a", value])
    res = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(p), "--dry-run"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2, res.stderr
    assert res.stderr.count("\n") == 1 and "mix: " in res.stderr and hint in res.stderr, res.stderr


def test_a_provisioned_server_loads_once_for_both_mixes(tmp_path):
    from benchlib.targets import postgres_binaries as pgbin
    try:
        pgbin.find(None)
    except ValueError as e:
        pytest.skip(str(e))
    exp = small_experiment("provmix", "postgres-provisioned", run={"threads": [1], "loops": 1, "loop_secs": 1},
                           load={"threads": 1})
    exp["properties"] = {"recordcount": 500, "operationcount": 10**6, "mix": ["a", "c"]}
    exp["targets"] = [{"name": "pg", "url": "postgres-provisioned"}]
    p = tmp_path / "provmix.yaml"
    p.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(p), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    a, c = (json.loads((tmp_path / "d" / "provmix" / f"pg-t1-p1-l1-tgt0-mix{m}-r1" / "meta.json").read_text())
            for m in "ac")
    assert a["planned"] == ["l.pre", "r.L1"] and c["planned"] == ["r.L1"]    # C ran on A's load
    assert c["dbms"]["data"]["from"] == "loaded" and c["dbms"]["data"]["loaded"] == a["data_copy"]["kept"]


def test_a_misspelled_mix_key_names_the_key(tmp_path):
    from benchlib.params import ParameterError
    with pytest.raises(ParameterError, match=r"mixx: unknown property \(did you mean mix\?\)"):
        load_experiment(_exp(tmp_path, "typo", mixx="c"))
