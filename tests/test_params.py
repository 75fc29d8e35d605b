"""Experiment parameters: validation before anything runs, overrides, the matrix."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchlib.masking import mask_url
from benchlib.params import ParameterError, load_experiment, plan

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path, data, name="exp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return p


def base() -> dict:
    return {"experiment": "t", "properties": {"recordcount": 100, "operationcount": 100},
            "targets": [{"name": "s", "url": "sqlite"}]}


@pytest.mark.parametrize("yaml_file", sorted((ROOT / "parameters").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_parameter_files_validate(yaml_file):
    exp = load_experiment(yaml_file)
    assert plan(exp)


def test_unknown_key_names_file_key_and_allowed(tmp_path):
    d = base()
    d["run"] = {"thread": [1]}
    p = write(tmp_path, d)
    with pytest.raises(ParameterError) as e:
        load_experiment(p)
    msg = str(e.value)
    assert str(p) in msg and "run.thread" in msg and "threads" in msg and "\n" not in msg


def test_proportion_sum_not_one_is_rejected(tmp_path):
    d = base()
    d["properties"].update(readproportion=0.5, updateproportion=0.6)
    with pytest.raises(ParameterError) as e:
        load_experiment(write(tmp_path, d))
    assert "1.1" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("url", ["postgres//x", "oracle://u@h/db", "nonsense"])
def test_bad_url_is_rejected(tmp_path, url):
    d = base()
    d["targets"] = [{"name": "x", "url": url}]
    with pytest.raises(ParameterError) as e:
        load_experiment(write(tmp_path, d))
    assert "targets.0.url" in str(e.value)


def test_malformed_yaml_gives_line(tmp_path):
    p = write(tmp_path, "experiment: t\ntargets: [\n  - {name: a\n")
    with pytest.raises(ParameterError) as e:
        load_experiment(p)
    assert str(p) in str(e.value) and "not valid YAML" in str(e.value)


def test_overrides_path_and_property(tmp_path):
    exp = load_experiment(write(tmp_path, base()),
                          ["run.threads=[1,4]", "recordcount=500", "run.loops=3"])
    assert exp.run.threads == [1, 4] and exp.run.loops == 3
    assert exp.properties["recordcount"] == 500


def test_matrix_expansion(tmp_path):
    d = base()
    d["targets"].append({"name": "pg", "url": "postgresql://u:secret@127.0.0.1/test"})
    d["run"] = {"threads": [1, 4], "target_factors": [0, 1], "processes": 1}
    d["load"] = {"processes": [1, 2]}
    d["repetitions"] = 2
    runs = plan(load_experiment(write(tmp_path, d)))
    assert len(runs) == 2 * 2 * 2 * 2 * 2
    assert len({r.run_id for r in runs}) == len(runs)
    paced = [r for r in runs if r.target_ops_per_s]
    assert paced and all(r.target_ops_per_s == 16384 for r in paced)


def test_mask_url():
    assert mask_url("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert mask_url("mysql://root@h/db") == "mysql://root@h/db"


def test_cli_exit_2_one_line(tmp_path):
    d = base()
    d["bogus"] = 1
    p = write(tmp_path, d)
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                        str(tmp_path / "data")], capture_output=True, text=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "bogus" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "data" / "t").exists()


def test_recordcount_is_required(tmp_path):
    d = base()
    del d["properties"]["recordcount"]
    with pytest.raises(ParameterError) as e:
        load_experiment(write(tmp_path, d))
    assert "recordcount" in str(e.value)


def test_run_needs_a_bound(tmp_path):
    d = base()
    d["properties"]["operationcount"] = 0
    with pytest.raises(ParameterError) as e:
        load_experiment(write(tmp_path, d))
    assert "operationcount" in str(e.value)
    d["run"] = {"loop_secs": 2}
    assert load_experiment(write(tmp_path, d)).run.loop_secs == 2


def test_ycsb_property_file_runs_as_is(tmp_path):
    from benchlib.property_run import experiment_from_property_file
    exp = experiment_from_property_file(ROOT / "parameters" / "workloads" / "workloada", "sqlite", 4)
    assert exp.run.threads == [4] and exp.workload_properties()["requestdistribution"] == "zipfian"
    with pytest.raises(ParameterError):
        experiment_from_property_file(tmp_path / "missing", "sqlite", 1)
