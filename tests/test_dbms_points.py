"""A point names its DBMS configuration, a run's throughput is its operations over its
duration, a paced run is compared on its intended latency, one interval rule, imported
buckets kept as buckets (issue 35 items 1, 2, 6 and the LinkBench buckets)."""
from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from quietly import run_quietly

from benchlib import cli, load_results
from benchlib.importers import import_output
from benchlib.plots.heatmap import _panels
from benchlib.plots.values import points, value_spec
from benchlib.reports.display import headline
from benchlib.summaries import pairing, run_lines
from benchlib.summaries import samples as sm
from benchlib.summaries import uncertainty as u

YCSB = Path(__file__).parent / "data" / "ycsb"          # the real YCSB runs of shared/samples
LINKBENCH = Path(__file__).parent / "data" / "linkbench"


def _two_targets(tmp_path: Path, name: str, pg_url: str) -> Path:
    exp = {"experiment": name, "workload": "ycsb",
           "properties": {"recordcount": 1000, "operationcount": 10**9, "readproportion": 0.95,
                          "insertproportion": 0.05, "updateproportion": 0,
                          "requestdistribution": "latest", "table": f"dbms_points_{os.getpid()}"},
           "targets": [{"name": "lite", "url": f"sqlite:///{tmp_path / (name + '.sqlite')}"},
                       {"name": "pg", "url": pg_url}],
           "load": {"threads": 2}, "run": {"threads": [2], "loops": 1, "loop_secs": 1}, "seed": 5}
    run_quietly(exp, tmp_path / "d")   # what each step would print: not asked (_paced's is)
    return tmp_path / "d" / name


@pytest.mark.slow
def test_two_targets_are_two_points_two_series_and_pair_by_configuration(pg_own_db, tmp_path, capsys):
    x, y = _two_targets(tmp_path, "x", pg_own_db), _two_targets(tmp_path, "y", pg_own_db)
    res = load_results(x)
    pts = sm.point_summary(res)
    assert len(pts) == 2 and (pts["runs"] == 1).all()
    targets = sorted(pts["target"])
    assert targets[0].startswith("lite (SQLite ") and targets[1].startswith("pg (PostgreSQL "), targets
    capsys.readouterr()
    assert cli.main(["summary", str(x), "--kind", "points"]) == 0
    out = capsys.readouterr().out
    assert "lite (SQLite" in out and "pg (PostgreSQL" in out
    # the report's heatmap: a panel (a series) per target, never one cell of both
    _, groups = _panels(points(res, "ops_per_s"), value_spec("ops_per_s"), "threads", "target_ops_per_s", None)
    assert sorted(k[0] if isinstance(k, tuple) else k for k, _ in groups) == ["lite", "pg"]
    # two experiments of the same two targets: each paired with itself
    df = pairing.compare(res, load_results(y))
    assert (df["target"] == df["target_b"]).all() and set(df["target"]) == set(targets)
    # one target against the other: refused in one line, unless told
    a, b = (next(x.glob(f"{t}-*")) for t in ("pg", "lite"))
    assert cli.main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--pair pg=lite" in err, err
    assert cli.main(["compare", str(a), str(b), "--pair", "pg=lite"]) == 0
    assert "pg (PostgreSQL" in capsys.readouterr().out
    # a pair that names a target B lacks: one line
    assert cli.main(["compare", str(x), str(y), "--pair", "pg=pg16"]) == 2
    assert "B has no target 'pg16'" in capsys.readouterr().err


def _check_throughput(res: dict) -> pd.DataFrame:
    s = sm.run_samples(res)
    st = res["steps"][res["steps"]["phase"] == "run"].groupby("run_id")[["ops", "secs"]].sum()
    expect = (st["ops"] / st["secs"]).reindex(s["run_id"]).to_numpy()
    assert len(s) and (abs(s["ops_per_s"].to_numpy() / expect - 1) < 1e-3).all()
    return s


@pytest.mark.parametrize("name", ["pg-runa-t4-hdr", "pg-runa-t4-hist", "pg-runa-t4-ts"])
def test_a_runs_throughput_is_ycsbs_own(name, tmp_path, capsys):
    """A run's ops/s in points and compare is its operations over its duration: YCSB's
    own Throughput(ops/sec), within 0.1 % — not a mean of its per-second batch means."""
    imp = tmp_path / "d" / name / "run1"
    import_output("ycsb", [YCSB / f"{name}.out", YCSB / f"{name}.err"], into=imp)
    text = (YCSB / f"{name}.out").read_text()
    ycsb = float(re.search(r"\[OVERALL\], Throughput\(ops/sec\), ([\d.]+)", text).group(1))
    res = load_results(imp.parent)
    s = _check_throughput(res)
    assert abs(s["ops_per_s"].iloc[0] / ycsb - 1) < 1e-3
    pts = sm.point_summary(res)
    assert abs(pts["ops_per_s"].iloc[0] / ycsb - 1) < 1e-3
    batches = s["ops_per_s_batches"].iloc[0]
    assert len(batches) >= 2 and "batch means (one run)" in pts["interval"].iloc[0]
    assert pts["ops_per_s_low"].iloc[0] < pts["ops_per_s"].iloc[0] < pts["ops_per_s_high"].iloc[0]
    df = pairing.compare(res, res)
    thr = df[df["metric"] == "ops_per_s"].iloc[0]
    assert abs(thr["a"] / ycsb - 1) < 1e-3 and thr["ratio"] == pytest.approx(1.0)


def _paced(tmp_path: Path, reps: int) -> Path:
    exp = {"experiment": "paced", "workload": "ycsb",
           "properties": {"recordcount": 1000, "operationcount": 10**9, "readproportion": 1.0,
                          "updateproportion": 0, "requestdistribution": "uniform"},
           "targets": [{"name": "lite", "url": f"sqlite:///{tmp_path / 'paced.sqlite'}"}],
           "load": {"threads": 2},
           "run": {"threads": [2], "loops": 1, "loop_secs": 2, "target_base": 800, "target_factors": [1]},
           "repetitions": reps, "seed": 2}
    p = tmp_path / "paced.yaml"
    p.write_text(yaml.safe_dump(exp))
    assert cli.main(["run", str(p), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    return tmp_path / "d" / "paced"


@pytest.mark.slow
def test_a_paced_run_is_compared_on_intended_latency_and_n2_has_a_t_interval(tmp_path, capsys):
    res = load_results(_paced(tmp_path, reps=2))
    printed = capsys.readouterr().out
    _check_throughput(res)
    lat = res["latency"][res["latency"]["step"] == "r.L1"].set_index(["run_id", "op"])["p99_us"]
    # the line printed as the step ended: the intended p99, the service time beside it
    for rid in res["runs"]["run_id"]:
        m = re.search(rf"^r\.L1\s+{re.escape(rid)}: .* READ p99=(\d+)us \(svc (\d+)us\)", printed, re.M)
        assert m, printed
        assert (int(m[1]), int(m[2])) == (round(lat[(rid, "Intended-READ")]), round(lat[(rid, "READ")]))
    s = sm.run_samples(res).set_index("run_id")
    for rid in s.index:
        assert s.loc[rid, "READ_p99_us"] == lat[(rid, "Intended-READ")]
        assert s.loc[rid, "READ_service_p99_us"] == lat[(rid, "READ")]
    df = pairing.compare(res, res)
    assert {"READ_p99_us", "READ_service_p99_us"} <= set(df["metric"])
    row = df[df["metric"] == "READ_p99_us"].iloc[0]
    assert row["a"] == pytest.approx(s["READ_p99_us"].mean())
    # the step line: the intended p99 in rd, the service time beside it in rd.s
    line = run_lines(res).query("phase == 'run'").set_index("run_id")
    for rid in s.index:
        assert line.loc[rid, "rd"] == pytest.approx(s.loc[rid, "READ_p99_us"] / 1000)
        assert line.loc[rid, "rd.s"] == pytest.approx(s.loc[rid, "READ_service_p99_us"] / 1000)
    # n = 2: points and compare use one rule, the t-interval on the log scale
    pts = sm.point_summary(res).iloc[0]
    m, lo, hi, n = u.mean_ci(s["ops_per_s"])
    assert n == 2 and (pts["ops_per_s_low"], pts["ops_per_s_high"]) == pytest.approx((lo, hi))
    assert pts["interval"] == "95% t, log scale, 2 runs"
    assert lo < s["ops_per_s"].min() and hi > s["ops_per_s"].max()   # wider than min–max
    # the headline: the intended p99, the service time beside it
    line = headline(res)
    assert "p99 from the intended start READ" in line and "(service " in line, line
    capsys.readouterr()
    assert cli.main(["compare", str(tmp_path / "d" / "paced")]) == 0
    out = capsys.readouterr().out
    assert "from the intended start" in out and "95% t, log scale, 2 runs" in out


def test_imported_linkbench_buckets_are_flagged_not_read_as_upper_bounds(tmp_path):
    imp = tmp_path / "java" / "pg"
    import_output("linkbench", [LINKBENCH / "pgsql_request.stdout.log"], into=imp)
    res = load_results(imp.parent)
    pts = sm.point_summary(res)
    buckets = [c for c in pts if c.endswith("_p99_us_bucket")]
    assert buckets and all(re.fullmatch(r"\[\d+, \d+\]", str(pts[c].iloc[0])) for c in buckets)
    df = pairing.compare(res, res)
    p99 = df[df["metric"].str.endswith("_p99_us")]
    assert len(p99) and (p99["bucket_a"] != "").all()
    # the ratio of a bucket against itself spans the bucket: lo/hi to hi/lo, not 1 exactly
    assert (p99["ci_low"] < 1).all() and (p99["ci_high"] > 1).all()
    text = pairing.format_compare(df, "a", "b")
    assert "(A: bucket [" in text and not math.isnan(p99["ratio"].iloc[0])


def _one_target(config: str, target: str, values: list[float]) -> dict:
    """Results of one point: each run's ops over 1 s, on the DBMS configuration ``target``."""
    runs = [{"run_id": f"{config}-r{i}", "experiment": config, "config": config, "target": target,
             "threads": 4, "target_ops_per_s": None, "point": "", "repetition": i + 1, "meta": {}}
            for i in range(len(values))]
    steps = [{"run_id": r["run_id"], "step": "r.L1", "phase": "run", "secs": 1.0, "ops": v}
             for r, v in zip(runs, values)]
    return {"runs": pd.DataFrame(runs), "steps": pd.DataFrame(steps)}


def test_against_base_pairs_only_the_same_configuration():
    from benchlib.summaries import against_base as ab
    base = _one_target("pg15", "pg (PostgreSQL 15.2)", [1000, 1010, 990])
    same = _one_target("again", "pg (PostgreSQL 15.2)", [1003, 995, 1012])
    other = _one_target("pg16", "pg (PostgreSQL 16.1)", [2000, 2020, 1980])
    df = ab.against_base(base, [("again", same), ("pg16", other)])
    assert set(df["config"]) == {"again"}                      # a version apart: not paired
    assert len(df.attrs["unpaired"]) == 1 and df.attrs["unpaired"][0].startswith("pg16: no target")
    text = ab.format_against_base(df, "pg15", ["again", "pg16"])
    assert "not compared: pg16: no target of B" in text
    told = ab.against_base(base, [("pg16", other)], pairs=[("pg15", "pg16")])
    thr = told[told["metric"] == "ops_per_s"].iloc[0]
    assert thr["target_other"] == "pg (PostgreSQL 16.1)" and thr["significant"] and thr["ratio"] == pytest.approx(2.0)


def _both(*parts: dict) -> dict:
    return {k: pd.concat([p[k] for p in parts], ignore_index=True) for k in ("runs", "steps")}


def test_a_named_pair_and_the_same_configuration_pair_together():
    a = _both(_one_target("pg", "pg (PostgreSQL 15.2)", [1000, 1010]), _one_target("lite", "lite (SQLite 3.40)", [50, 52]))
    b = _both(_one_target("pg16", "pg16 (PostgreSQL 16.1)", [2000, 2020]), _one_target("lite", "lite (SQLite 3.40)", [51, 50]))
    df = pairing.compare(a, b)   # lite pairs with lite; pg with nothing, said under the table
    assert set(df["target"]) == {"lite (SQLite 3.40)"}
    assert df.attrs["unpaired"] == ["pg (PostgreSQL 15.2): no point of B pairs with it (same configuration, or --pair)"]
    assert "not compared: pg (PostgreSQL 15.2)" in pairing.format_compare(df, "a", "b")
    df = pairing.compare(a, b, [("pg", "pg16")])
    pairs = set(zip(df["target"], df["target_b"]))
    assert pairs == {("pg (PostgreSQL 15.2)", "pg16 (PostgreSQL 16.1)"), ("lite (SQLite 3.40)", "lite (SQLite 3.40)")}
    assert "not compared" not in pairing.format_compare(df, "a", "b")
    with pytest.raises(u.CompareError, match="no target of B is a DBMS configuration of A"):
        pairing.compare(_one_target("pg", "pg (PostgreSQL 15.2)", [1000]), _one_target("lite", "lite (SQLite 3.40)", [50]))
