"""The load's default loader count follows the cores (``load.processes: auto``,
``load.threads: auto``; benchlib/loaders.py): resolved in the plan, capped (AUTO_MAX, the
target's writers and client processes, the load's or the workload's own threads), explicit
values kept as they were named, and the count that ran said in the run's name, meta,
steps, ``benchlib list`` and the summaries' planned-vs-actual check."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchlib import cli, load_results, loaders
from benchlib.params import plan, validate
from benchlib.summaries.checks import workflow
from benchlib.summaries.metainfo import workload_facts

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "tests" / "data" / "linkbench" / "Distribution_small.dat")
PG = "postgresql://postgres@127.0.0.1:5432/test"


def _exp(url: str = PG, workload: str = "ycsb", props: dict | None = None, **load) -> dict:
    d = {"experiment": "la", "workload": workload, "targets": [{"name": "t", "url": url}],
         "properties": props or {"recordcount": 400, "operationcount": 10, "table": "ycsbload_auto"},
         "run": {"skip": True}, "seed": 1}
    if load:
        d["load"] = load
    return d


def _load_step(d: dict):
    exp = validate(d, "la.yaml")
    (spec,) = plan(exp)
    step = exp.workload_class()(exp.workload_properties()).steps(exp, spec)[0]
    assert step.name == "l.pre"
    return spec, step


@pytest.mark.parametrize("cores, want", [(1, 1), (6, 6), (64, loaders.AUTO_MAX)])
def test_the_default_is_a_loader_per_core_capped(monkeypatch, cores, want):
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    spec, step = _load_step(_exp())
    assert spec.load_processes == want and spec.load_processes_auto == want
    assert f"-l{want}-" in spec.run_id
    assert (step.processes, step.threads) == (want, want)   # a connection per loader process


def test_explicit_values_are_kept(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    spec, step = _load_step(_exp(threads=4, processes=[1]))        # the old default, given
    assert "-l1-" in spec.run_id and spec.load_processes_auto is None
    assert (step.processes, step.threads) == (1, 4)
    spec, step = _load_step(_exp(processes=[3]))                    # threads auto: one each
    assert "-l3-" in spec.run_id and (step.processes, step.threads) == (3, 3)
    spec, step = _load_step(_exp(threads=2))                        # auto takes no more than 2
    assert "-l2-" in spec.run_id and (step.processes, step.threads) == (2, 2)
    spec, _ = _load_step(_exp(processes="auto"))                    # a lone value is a list of one
    assert "-l6-" in spec.run_id
    runs = plan(validate(_exp(processes=["auto", 1]), "la.yaml"))   # auto beside a count
    assert [r.run_id.split("-")[3] for r in runs] == ["l6", "l1"]


def test_targets_that_gain_nothing_from_more_loaders_get_one(monkeypatch, tmp_path):
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    spec, step = _load_step(_exp("sqlite"))           # one writer at a time
    assert spec.load_processes == 1 and (step.processes, step.threads) == (1, 1)
    pytest.importorskip("rocksdict")
    spec, _ = _load_step(_exp(f"rocksdb:///{tmp_path / 'r'}"))   # one process opens it
    assert spec.load_processes == 1


def test_a_workloads_own_load_threads_are_kept_and_cap_the_loaders(monkeypatch, tmp_path):
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    props = {"maxid1": 1501, "loaders": 2, "requesters": 1, "maxtime": 1, "data_file": SMALL}
    spec, step = _load_step(_exp(workload="linkbench", props=props))
    assert spec.load_processes == 3 and (step.processes, step.threads) == (3, 3)   # node + 2 link loaders
    props["loaders"] = 11
    spec, step = _load_step(_exp(workload="linkbench", props=props))
    assert spec.load_processes == 8 and (step.processes, step.threads) == (8, 12)


@pytest.mark.parametrize("override, words", [
    ("load.processes=atuo", ["load.processes", "'atuo'", "auto"]),
    ("load.processes=[0]", ["load.processes", "from 1 to 256"]),
    ("load.threads=0", ["load.threads", "from 1 to 4096", "auto"]),
    ("load.threads=many", ["load.threads", "'many'"]),
    ("load.proceses=[2]", ["load.proceses", "unknown key", "processes"]),
])
def test_bad_loader_counts_are_one_line_exit_2(tmp_path, override, words):
    p = tmp_path / "la.yaml"
    p.write_text(json.dumps(_exp()))
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(p), "-p", override, "--dry-run"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert all(w in r.stderr for w in words), r.stderr


def test_a_run_says_the_count_that_ran(monkeypatch, pg_own_db, tmp_path, capsys):
    """A real load on PostgreSQL with the defaults, the cores set to 2: two loader
    processes ran, and every place that names the run says 2."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    p, d = tmp_path / "la.yaml", tmp_path / "d"
    p.write_text(json.dumps(_exp(pg_own_db)))
    assert cli.main(["run", str(p), "--data-dir", str(d), "--no-progress"]) == 0
    (rd,) = [x for x in (d / "la").iterdir() if x.is_dir()]
    assert "-l2-" in rd.name
    meta = json.loads((rd / "meta.json").read_text())
    assert meta["load_processes"] == 2 and meta["load_processes_auto"] == 2
    assert meta["parameters"]["load"]["processes"] == ["auto"]
    res = load_results(d / "la")
    pre = res["steps"].set_index("step").loc["l.pre"]
    assert (pre["processes"], pre["threads"], pre["ops"]) == (2, 2, 400)
    assert len(res["drivers"].query("step == 'l.pre'")) == 2     # one row per loader process
    metas = [meta]
    wf = workflow(metas, res["steps"])
    assert wf.passed and "lp2" in wf.table["planned"].iloc[0], wf
    facts = {k: v for k, v, _ in workload_facts("la", metas)}
    assert facts["load_processes"] == "2 (auto)"
    assert facts["load_threads"] == "a thread per process, split into [2 (auto)]"
    capsys.readouterr()
    assert cli.main(["list", "--data-dir", str(d)]) == 0
    assert rd.name in capsys.readouterr().out
