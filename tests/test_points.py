"""Points of the matrix everywhere a point is made (issue 30): a workload's own matrix is
axes of its points, intervals of positive quantities stay positive, a batched workload's
headline names its call, an imported run is a point like ours, many configurations
against one base, a misspelled section is refused."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import small_experiment
from quietly import run_quietly

from benchlib import cli, load_results
from benchlib.reports.display import headline
from benchlib.summaries import against_base as ab
from benchlib.summaries import pairing
from benchlib.summaries import samples as u
from benchlib.summaries import uncertainty

SAMPLES = Path(__file__).parent / "data" / "ycsb"   # the real YCSB run of shared/samples
YBIO_POINTS = {f"batch_size={b},pct_update={p}" for b in (10, 100) for p in (0, 50)}


def _ybio(tmp_path: Path, name: str, **props) -> Path:
    exp = {"experiment": name, "workload": "ybio",
           "properties": {"tab_prefix": f"points_{name}_{os.getpid()}_", "tab_rows": 2000,
                          "batch_size": [10, 100], "pct_update": [0, 50], "run_duration": 0.4,
                          **props},
           "targets": [{"name": "lite", "url": f"sqlite:///{tmp_path / (name + '.sqlite')}"}],
           "load": {"threads": 1, "batch_size": 1000},
           "run": {"threads": [1], "processes": 1, "loops": 1}, "repetitions": 2, "seed": 3}
    run_quietly(exp, tmp_path / "d")   # 24 runs: no step prints its lines
    return tmp_path / "d" / name


@pytest.fixture(scope="module")
def ybio3(tmp_path_factory):
    """Three ybio experiments of a 2 × 2 matrix with two repetitions: a base, one with
    unprepared statements, one like the base."""
    tmp = tmp_path_factory.mktemp("ybio3")
    return _ybio(tmp, "base"), _ybio(tmp, "unprepared", prepared=False), _ybio(tmp, "again")


@pytest.mark.slow
def test_a_workload_matrix_with_repetitions_is_four_points_of_two(ybio3, capsys):
    base = load_results(ybio3[0])
    pts = u.point_summary(base)
    assert set(pts["point"]) == YBIO_POINTS and len(pts) == 4
    assert (pts["runs"] == 2).all() and (pts["ops_per_s_n"] == 2).all()
    # every interval of a positive quantity stays above zero
    lows = [c for c in pts if c.endswith("_low")]
    assert lows and all((pts[c].dropna() > 0).all() for c in lows)
    assert cli.main(["summary", str(ybio3[0]), "--kind", "points"]) == 0
    out = capsys.readouterr().out
    assert all(p in out for p in YBIO_POINTS)


@pytest.mark.slow
def test_batched_headline_is_rows_per_s_with_the_call_p99(ybio3):
    line = headline(load_results(ybio3[0]))
    assert "rows/s" in line and "p99 READ-BATCH" in line, line
    assert "(mean of 2 runs)" in line and "READ " not in line.split("p99", 1)[1], line


@pytest.mark.slow
def test_two_ybio_experiments_compare_point_by_point(ybio3, capsys):
    df = pairing.compare(load_results(ybio3[0]), load_results(ybio3[1]))
    assert set(df["point"]) == YBIO_POINTS and (df["point"] == df["point_b"]).all()
    assert {"ops_per_s", "READ-BATCH_p99_us"} <= set(df["metric"])
    assert "READ_p99_us" not in set(df["metric"])      # a row inside a call is no latency
    assert cli.main(["compare", str(ybio3[0]), str(ybio3[1])]) == 0
    assert "batch_size=100,pct_update=50" in capsys.readouterr().out


@pytest.mark.slow
def test_three_experiments_against_a_base(ybio3, capsys):
    base, b, c = ybio3
    assert cli.main(["compare", str(base), str(b), str(c)]) == 0
    out = capsys.readouterr().out
    assert "base = base" in out and "unprepared" in out and "again" in out
    df = ab.against_base(load_results(base), [("unprepared", load_results(b)), ("again", load_results(c))])
    assert set(df["config"]) == {"unprepared", "again"} and set(df["point"]) == YBIO_POINTS
    assert {"ops_per_s", "cpu_us_per_op", "io_kb_per_op", "READ-BATCH_p99_us"} <= set(df["metric"])
    t = ab.table(df)
    assert list(t.columns) == ["unprepared", "again"] and len(t) == len(df) // 2


def _results(runs: dict[str, list[float]]) -> dict:
    """Results of one point per configuration: each run's ops over 1 s."""
    rows, steps = [], []
    for config, values in runs.items():
        for i, v in enumerate(values):
            rid = f"{config}-r{i}"
            rows.append({"run_id": rid, "experiment": config, "config": config, "threads": 4,
                         "target_ops_per_s": None, "point": "", "repetition": i + 1, "meta": {}})
            steps.append({"run_id": rid, "step": "r.L1", "phase": "run", "secs": 1.0, "ops": v})
    return {"runs": pd.DataFrame(rows), "steps": pd.DataFrame(steps)}


def test_against_base_marks_what_is_not_significant():
    base = _results({"v1": [1000, 1010, 990, 1005]})
    faster = _results({"v2": [2000, 2020, 1980, 2010]})
    same = _results({"v3": [1003, 995, 1012, 992]})
    df = ab.against_base(base, [("v2", faster), ("v3", same)], pairs=[("v1", "v2"), ("v1", "v3")])
    df = df.set_index("config")
    assert df.loc["v2", "significant"] and df.loc["v2", "ci_low"] > 1.9
    assert not df.loc["v3", "significant"]
    text = ab.format_against_base(df.reset_index(), "v1", ["v2", "v3"])
    assert "2 [" in text and f" {ab.NOT_SIGNIFICANT}" in text
    # the report's colours: better green, not significant none
    assert ab.score(df.loc["v2"]) > 0 and ab.score(df.loc["v3"]) == 0


def test_positive_quantity_near_zero_keeps_its_interval_above_zero():
    x = [0.001, 0.4, 0.002, 0.3, 0.001, 0.002]
    m, lo, hi, n = uncertainty.mean_ci(x)
    linear_low = m - 2.571 * np.std(x, ddof=1) / math.sqrt(n)
    assert linear_low < 0 < lo < m < hi and n == 6
    # a quantity that may be negative keeps Student's t
    assert uncertainty.mean_ci([-1.0, 1.0, 0.5, -0.5], positive=False)[1] < -0.5


def test_misspelled_section_is_one_line_exit_2(capsys):
    assert cli.main(["run", "parameters/quickstart.yaml", "-p", "runn.loop_secs=60"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "run.loop_secs" in err and "'runn'" in err


def test_a_binding_prefix_still_passes():
    from benchlib.params import apply_overrides
    data = apply_overrides({"workload": "ycsb"}, ["basicdb.verbose=true", "db.passwd=x"])
    assert data["properties"] == {"basicdb.verbose": True, "db.passwd": "x"}


@pytest.mark.slow
def test_imported_ycsb_a_matches_our_own_at_4_threads(pg_own_db, tmp_path, capsys):
    """The real YCSB A (-threads 4, 100,000 records on PostgreSQL) beside benchlib's own
    YCSB A at 4 threads on the same server: one point, compared."""
    imp = tmp_path / "d" / "imported" / "run1"
    assert cli.main(["import", "ycsb", str(SAMPLES / "pg-runa-t4-hdr.out"),
                     str(SAMPLES / "pg-runa-t4-hdr.err"), "--into", str(imp)]) == 0
    meta = load_results(imp)["runs"]["meta"].iloc[0]
    assert meta["threads"] == 4 and meta["workload"] == "ycsb"
    assert meta["workload_properties"]["recordcount"] == "100000"
    pts = u.point_summary(load_results(imp.parent))
    assert pts["threads"].tolist() == [4] and pts["ops_per_s_n"].iloc[0] > 1
    own = small_experiment("own", pg_own_db, workload_file=str(SAMPLES / "workloada"),
                           properties={"recordcount": 2000, "operationcount": 10**9,
                                       "table": f"points_usertable_{os.getpid()}"},
                           run={"threads": [4], "loop_secs": 3})
    run_quietly(own, tmp_path / "d")
    capsys.readouterr()
    # an import of another tool's run and benchlib's own: paired only when told
    df = pairing.compare(load_results(imp.parent), load_results(tmp_path / "d" / "own"), [("run1", "own")])
    assert len(df) and (df["threads"] == 4).all() and (df["threads_b"] == 4).all()
    assert {"ops_per_s", "READ_p99_us", "UPDATE_p99_us"} <= set(df["metric"])
    thr = df[df["metric"] == "ops_per_s"].iloc[0]
    assert 0 < thr.ci_low < thr.ratio < thr.ci_high                    # intervals where they exist
    assert cli.main(["compare", str(imp.parent), str(tmp_path / "d" / "own"), "--pair", "run1=own"]) == 0
    assert "no point" not in capsys.readouterr().out
