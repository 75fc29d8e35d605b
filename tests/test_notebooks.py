"""The notebooks: committed stripped, thin, parameterized; run top to bottom with their
defaults (``pytest --nbval-lax``) and through papermill on ``parameters/smoke.yaml``.

``make test`` (``python -m pytest -q``, testpaths = tests) covers them: the nbval run
is a subprocess over a copy of notebooks/ beside a copy of data/samples/, so the
notebooks' relative defaults resolve exactly as in the checkout and running them
writes nothing into it. By hand, on the checkout itself:
``.venv/bin/python -m pytest --nbval-lax notebooks/ -p no:cacheprovider``
(experiment.ipynb then writes ``data/notebook/``, which git ignores).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest
import yaml

from benchlib import Experiment, reports

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ANALYSIS = ("summary", "heatmaps", "timeseries", "compare", "kv")
ALL = ("experiment", *ANALYSIS, "ybio", "explore")  # ybio.ipynb: the ybio workload's report page
PARAMETER_FILES = sorted((ROOT / "parameters").glob("*.yaml"))

pytestmark = pytest.mark.slow


def _read(name: str):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_every_notebook_is_there():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(ALL)


@pytest.mark.parametrize("name", ALL)
def test_committed_stripped_thin_parameterized(name):
    nb = _read(name)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{name}.ipynb: outputs in cell {cell.get('id')}"
            assert cell.execution_count is None, f"{name}.ipynb: execution count in cell {cell.get('id')}"
        assert "execution" not in cell.metadata
    assert len(nb.cells) <= 15, f"{name}.ipynb has {len(nb.cells)} cells: notebooks stay thin"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{name}.ipynb needs exactly one cell tagged parameters"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "papermill" not in code, "benchlib drives papermill; notebooks never do"


@pytest.mark.parametrize("yaml_file", PARAMETER_FILES, ids=lambda p: p.name)
def test_yaml_keys_are_experiment_notebook_parameters(yaml_file):
    declared = papermill.inspect_notebook(str(NOTEBOOKS / "experiment.ipynb"))
    keys = set(yaml.safe_load(yaml_file.read_text()))
    assert keys <= set(declared), f"{yaml_file.name}: not parameters of experiment.ipynb: {keys - set(declared)}"


def test_experiment_notebook_takes_every_experiment_key_and_paths():
    declared = papermill.inspect_notebook(str(NOTEBOOKS / "experiment.ipynb"))
    assert set(Experiment.model_fields) <= set(declared)
    assert "data_dir" in declared
    for name in ("summary", "heatmaps", "timeseries"):
        assert "experiment_dir" in papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb"))
    assert "experiment_dirs" in papermill.inspect_notebook(str(NOTEBOOKS / "compare.ipynb"))


@pytest.mark.timeout(300)
def test_nbval_lax_with_defaults(tmp_path):
    """Every notebook runs top to bottom with its defaults (on the committed sample)."""
    shutil.copytree(NOTEBOOKS, tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "data" / "samples", tmp_path / "data" / "samples")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider",
                           "-q", "-W", "ignore::DeprecationWarning", "notebooks"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=280, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    # experiment.ipynb ran its tiny default into ../data
    assert list((tmp_path / "data" / "notebook").glob("*/steps.parquet"))


# ---------------------------------------------------------------- papermill on smoke.yaml

@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    """experiment.ipynb executed on parameters/smoke.yaml as ``papermill -f`` would."""
    data = tmp_path_factory.mktemp("data")
    params = yaml.safe_load((ROOT / "parameters" / "smoke.yaml").read_text())
    out = data / "smoke-experiment.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / "experiment.ipynb"), str(out),
                               parameters={**params, "data_dir": str(data)},
                               kernel_name="python3", progress_bar=False, cwd=str(NOTEBOOKS))
    return out


def _outputs(nb) -> str:
    parts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            parts.append(o.get("text", ""))
            parts.append(str(o.get("data", {}).get("text/plain", "")))
            parts.append(str(o.get("data", {}).get("text/html", "")))
            parts.append(str(o.get("data", {}).get("text/markdown", "")))
    return "\n".join(parts)


def _errors(nb) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for c in nb.cells for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def test_experiment_notebook_on_smoke_yaml(smoke_run):
    data = smoke_run.parent
    nb = nbformat.read(smoke_run, as_version=4)
    assert not _errors(nb)
    run = data / "smoke" / "sqlite-t1-p1-l1-tgt0-r1"
    for f in ("meta.json", "steps.parquet", "latency.parquet", "intervals.parquet", "hw.parquet",
              "ycsb-load.txt", "ycsb-r.L1.txt", "ycsb-r.L2.txt"):
        assert (run / f).is_file(), f
    text = _outputs(nb)
    for caption in ("r.L1.eff.op", "r.L2.eff.sec", "l.pre.rt", "r.L1.run", "### Execution"):
        assert caption in text
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "loop_secs" in injected[0].source


def test_run_experiment_notebook_keeps_the_log(smoke_run, tmp_path):
    """benchlib's own -f layering: later files win; the log lands in the experiment folder."""
    data = smoke_run.parent
    over = tmp_path / "over.yaml"
    over.write_text("description: smoke, with an override file\n")
    log = reports.run_experiment_notebook(ROOT / "parameters" / "smoke.yaml", over, data_dir=data,
                                          progress=False)
    assert log == data / "smoke" / "experiment.ipynb"
    nb = nbformat.read(log, as_version=4)
    assert not _errors(nb)
    assert "finished before" in _outputs(nb)           # the same runs: resumed, not rerun
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiment: smoke\nthreads: 3\n")
    with pytest.raises(benchlib_parameter_error(), match="no parameter threads"):
        reports.run_experiment_notebook(ROOT / "parameters" / "smoke.yaml", bad, data_dir=data)


def benchlib_parameter_error():
    from benchlib import ParameterError
    return ParameterError


@pytest.mark.parametrize("name", ANALYSIS)
def test_analysis_notebook_on_smoke_output(name, smoke_run, tmp_path):
    exp_dir = smoke_run.parent / "smoke"
    params = ({"experiment_dirs": [str(exp_dir), str(ROOT / "data" / "samples" / "sample-configs")],
               "where": {}} if name == "compare" else {"experiment_dir": str(exp_dir)})
    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), parameters=params,
                               kernel_name="python3", progress_bar=False, cwd=str(NOTEBOOKS))
    nb = nbformat.read(out, as_version=4)
    assert not _errors(nb)
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    text = _outputs(nb)
    if name == "summary":
        assert not images
        for caption in ("l.pre.eff.op", "r.L2.eff.sec", "r.L1.rt", "r.L2.run", "TEST passed"):
            assert caption in text
        assert "<table" in text
    elif name == "compare":   # the relative and absolute heatmaps, the bars, a time series a run
        runs, _ = reports.compare_runs(reports.combined(params["experiment_dirs"]))
        assert len(runs) >= 2 and len(images) == 3 + len(runs)
        assert "(base)</td>" in text   # the against-base table, the base on its own line
    else:
        assert len(images) == {"heatmaps": 3, "timeseries": 1, "kv": 1}[name]


@pytest.mark.parametrize("name", ["heatmaps", "timeseries", "kv", "ybio"])
def test_analysis_notebook_interactive(name, smoke_run, tmp_path):
    """interactive=True (the report's default): plotly outputs, no PNG."""
    from benchlib.plots.interactive.figure import MIME
    exp_dir = ROOT / "data" / "samples" / "ybio" if name == "ybio" else smoke_run.parent / "smoke"
    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out),
                               parameters={"experiment_dir": str(exp_dir), "interactive": True},
                               kernel_name="python3", progress_bar=False, cwd=str(NOTEBOOKS))
    nb = nbformat.read(out, as_version=4)
    assert not _errors(nb)
    data = [o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])]
    assert not [d for d in data if "image/png" in d]
    plots = [d for d in data if MIME in d]
    assert len(plots) == {"heatmaps": 3, "timeseries": 1, "kv": 1, "ybio": 2}[name]
    assert all("text/html" in d for d in plots)


# ---------------------------------------------------------------- the papermill command line

PASSWORD = "Sw0rdf1sh-pm"   # trust auth takes any: it only has to travel


def test_papermill_command_as_the_docs_write_it_keeps_no_password(tmp_path, pg_own_db):
    """The docs' command (docs/reports.md) on a fresh experiment (its folder not there yet), a target URL
    with a password: it runs, and the password is in no file under the data folder; the
    executed notebook is the owner's (0600)."""
    shown = " ".join((ROOT / "docs" / "reports.md").read_text().replace("\\\n", " ").split())
    assert ("papermill --engine benchlib notebooks/experiment.ipynb data/ycsb-a/experiment.ipynb "
            "-f parameters/ycsb-a.yaml -p data_dir data") in shown   # the docs' command, as written
    url = pg_own_db.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    exp = {"experiment": "pm-secret", "workload": "ycsb", "targets": [{"name": "pg", "url": url}],
           "properties": {"recordcount": 200, "operationcount": 400, "readproportion": 0.5,
                          "updateproportion": 0.5},
           "load": {"threads": 1}, "run": {"threads": [1], "loops": 1, "loop_secs": 1}}
    (tmp_path / "pm.yaml").write_text(yaml.safe_dump(exp))
    papermill_cli = Path(sys.executable).parent / "papermill"
    done = subprocess.run([str(papermill_cli), "--engine", "benchlib", str(NOTEBOOKS / "experiment.ipynb"),
                           "data/pm-secret/experiment.ipynb", "-f", "pm.yaml", "-p", "data_dir", "data",
                           "--no-progress-bar"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert PASSWORD not in done.stdout + done.stderr
    log = tmp_path / "data" / "pm-secret" / "experiment.ipynb"
    nb = nbformat.read(log, as_version=4)
    assert not _errors(nb) and list((tmp_path / "data" / "pm-secret").glob("pg-*/steps.parquet"))
    assert "***" in next(c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    leaks = [p for p in (tmp_path / "data").rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]
    assert leaks == []
    assert oct(log.stat().st_mode & 0o777) == "0o600"
