"""Each configuration against a base (issue 37's table, issue 39's compare page):
``summary --kind configs`` prints the numbers ``compare`` prints for the same pair, a
relative throughput recomputed from the runs' steps tables by hand, the experiment's
``base:`` key and ``--base``, bad input in one line, the relative heatmap, and the
compare page rendered with its table and heatmaps and nothing from the network."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import paced, small_experiment
from test_reports import _network_references

from benchlib import cli, load_results, reports
from benchlib.plots import relative_heatmap
from benchlib.plots.relative import relative_cells
from benchlib.summaries.against_base import ALL_LOOPS
from benchlib.summaries.configs import configs_frame


def _experiment(tmp: Path, name: str, targets: list[dict], run: dict | None = None, **over) -> Path:
    # loops of 2 whole seconds: a run's throughput has batch means, so an interval. Paced:
    # the tests compare one table's figures with another's and with the steps' by hand,
    # never a rate with a rate the machine sets; flat out, these loops were most of the
    # file's CPU (the suite's costliest fixture)
    exp = small_experiment(name, "sqlite", targets=targets,
                           run={"threads": [1, 2], "loops": 2, "loop_secs": 2.1, **paced(1000), **(run or {})},
                           properties={"recordcount": 500, "operationcount": 10**9, "readproportion": 0.5,
                                       "updateproportion": 0.5, "requestdistribution": "zipfian"}, **over)
    p = tmp / f"{name}.yaml"
    p.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(p), "--data-dir", str(tmp / "d"), "--no-progress"]) == 0
    return tmp / "d" / name


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> tuple[Path, Path]:
    """cfga: two SQLite configurations (WAL; rollback journal, the base: by its key), 1
    and 2 threads, 2 loops; cfgb: the WAL one alone, 2 threads."""
    tmp = tmp_path_factory.mktemp("configs")
    wal = {"name": "wal", "url": f"sqlite:///{tmp / 'wal.sqlite'}"}
    rollback = {"name": "rollback", "url": f"sqlite:///{tmp / 'rollback.sqlite'}",
                "options": {"pragmas": {"journal_mode": "delete", "synchronous": "off"}}}
    a = _experiment(tmp, "cfga", [wal, rollback], base="rollback")
    b = _experiment(tmp, "cfgb", [{**wal, "url": f"sqlite:///{tmp / 'walb.sqlite'}"}],
                    run={"threads": [2]})
    return a, b


def _json(capsys, argv: list[str]) -> pd.DataFrame:
    assert cli.main(argv) == 0
    return pd.DataFrame(json.loads(capsys.readouterr().out))


def _same(c: pd.Series, m: pd.Series, ours: tuple, theirs: tuple) -> bool:
    """The figures ``ours`` of c equal ``theirs`` of m (no interval: NaN in one table, null in the other)."""
    def v(x):
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
    return [v(c[k]) for k in ours] == [v(m[k]) for k in theirs]


def _one(df: pd.DataFrame, **where) -> pd.Series:
    for k, v in where.items():
        df = df[df[k] == v]
    assert len(df) == 1, where
    return df.iloc[0]


@pytest.mark.slow
def test_configs_prints_what_compare_prints(two, capsys):
    a, b = two
    cfg = _json(capsys, ["summary", str(a), "--kind", "configs", "--format", "json"])
    assert set(cfg["base_config"]) == {"rollback"} and set(cfg["config"]) == {"wal"}   # base: rollback
    assert {"r.L1", "r.L2", ALL_LOOPS} <= set(cfg["step"]) and set(cfg["threads"]) == {1, 2}
    assert {"reads_per_op", "cs_per_op", "size_gb", "cpu_us_per_op"} <= set(cfg["metric"])
    # the runs' loops together: the pair compare prints
    cmp = _json(capsys, ["compare", str(a), "--config-a", "rollback", "--config-b", "wal", "--format", "json"])
    for threads in (1, 2):
        for metric in ("ops_per_s", "cpu_us_per_op", "READ_p99_us"):
            c = _one(cfg, step=ALL_LOOPS, threads=threads, metric=metric)
            m = _one(cmp, threads=threads, metric=metric)
            assert _same(c, m, ("base", "value", "ratio", "ci_low", "ci_high"), ("a", "b", "ratio", "ci_low", "ci_high"))
        assert not math.isnan(_one(cfg, step=ALL_LOOPS, threads=threads, metric="ops_per_s")["ci_low"])
    # loop by loop, across experiments: what `compare BASE B C` prints against cfgb's WAL
    both = _json(capsys, ["summary", str(a.parent), "--kind", "configs", "--base", "cfgb/wal", "--format", "json"])
    ab = _json(capsys, ["compare", str(b), str(a), str(b), "--format", "json"])
    for step in ("r.L1", "r.L2"):
        c = _one(both, config="cfga/wal", step=step, threads=2, metric="ops_per_s")
        m = _one(ab, config="cfga", step=step, threads=2, metric="ops_per_s")
        assert _same(c, m, ("ratio", "ci_low", "ci_high"), ("ratio", "ci_low", "ci_high")) and c["ci_low"] > 0


def _steps_rate(run_dir: Path, step: str | None = None) -> float:
    """ops / secs of a run's run loops, read from its steps table by hand."""
    st = pd.read_parquet(run_dir / "steps.parquet")
    st = st[st["step"].str.startswith("r.")] if step is None else st[st["step"] == step]
    return float(st["ops"].sum()) / float(st["secs"].sum())


@pytest.mark.slow
def test_relative_throughput_by_hand(two):
    a, _ = two
    df = configs_frame(load_results(a))
    [wal] = [p for p in a.iterdir() if p.name.startswith("wal-t2")]
    [rollback] = [p for p in a.iterdir() if p.name.startswith("rollback-t2")]
    for step in ("r.L2", None):
        by_hand = _steps_rate(wal, step) / _steps_rate(rollback, step)
        row = _one(df, step=step or ALL_LOOPS, threads=2, metric="ops_per_s")
        assert row["ratio"] == pytest.approx(by_hand, rel=1e-12)
    # the heatmap's cell is the same figure, the base a row of 1
    [(exp, cells)] = relative_cells(load_results(a))[0]
    assert exp == "cfga" and cells["y"] == ["rollback", "wal"] and cells["x"] == ["1 @1,000/s", "2 @1,000/s"]   # threads @ the pacing
    ratio = _one(df, step=ALL_LOOPS, threads=2, metric="ops_per_s")["ratio"]
    assert cells["text"][1][1].startswith(f"{ratio:.3g}") and set(cells["text"][0]) == {"1 (base)"}
    fig = relative_heatmap(load_results(a))
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()][:1] == ["cfga"]


@pytest.mark.slow
def test_base_and_bad_input(two, capsys):
    a, b = two
    assert cli.main(["summary", str(a), "--kind", "configs", "--base", "wal"]) == 0
    out = capsys.readouterr().out
    assert "the base, wal" in out and "wal (base)" in out and re.search(r"\brollback$", out, re.M)
    assert cli.main(["summary", str(a), "--kind", "configs", "--base", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no configuration of that name" in err and "wal, rollback" in err
    assert cli.main(["summary", str(b), "--kind", "configs"]) == 2            # one configuration
    assert "nothing to set against a base" in capsys.readouterr().err
    assert cli.main(["summary", str(a), "--kind", "eff.op", "--base", "wal"]) == 2
    assert "only --kind configs" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_compare_page(two):
    a, b = two
    page = reports.compare_report([a, b], progress=False)
    assert page == a.parent / "compare-cfga-cfgb" / "reports" / "compare.html"
    html = page.read_text()
    assert "import benchlib" not in html and "Traceback" not in html
    # the against-base table (the base: cfga's key), its cnf names; the heatmaps and time series
    assert "cfga/rollback (base)" in html and ">cfgb/wal<" in html and "Relative throughput" in html
    shown, _ = reports.compare_runs(reports.combined([a, b]))
    assert html.count("Plotly.newPlot") >= 3 and f"{len(shown)} runs: each configuration" in html
    assert shown[0].startswith("cfga/rollback-") and len(shown) >= 2   # the base's run first
    assert _network_references(html) == [] and str(a.parent) not in html
    for config in map(json.loads, re.findall(r"Plotly\.newPlot\(.*?(\{[^{}]*\"displaylogo\"[^{}]*\})\s*\)", html, re.S)):
        assert config["showSendToCloud"] is False
    index = (a.parent / "index.html").read_text()
    assert 'href="compare-cfga-cfgb/reports/compare.html"' in index


def test_a_base_that_is_no_target_is_refused(tmp_path, capsys):
    p = tmp_path / "nobase.yaml"
    p.write_text(yaml.safe_dump(small_experiment("nobase", "sqlite", base="pg")))
    assert cli.main(["run", str(p), "--data-dir", str(tmp_path / "d"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "base: 'pg' is no target (targets: nobase)" in err and err.count("\n") == 1


def test_a_changed_base_reruns_nothing():
    from benchlib.run.preflight import changed_keys
    # which target the others are set against is read by the summaries, not measured
    assert changed_keys({"base": "wal", "seed": 1}, {"base": "rollback", "seed": 1}) == []
    assert changed_keys({"seed": 1}, {"base": "rollback", "seed": 1}) == []   # a folder from before base:


@pytest.mark.slow
def test_another_workload_is_not_set_against_the_base():
    df = configs_frame(load_results(Path(__file__).resolve().parents[1] / "data" / "samples"))
    assert df.attrs["base"] == "sample/sqlite"
    assert "ybio/sqlite: ran ybio, the base ycsb" in df.attrs["unpaired"]
    assert set(df["config"]) == {"sample-configs/sqlite-wal", "sample-configs/sqlite-rollback"}
