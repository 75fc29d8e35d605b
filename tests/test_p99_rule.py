"""One p99 rule for a point everywhere (issue 39): the headline, the heatmap cell,
``summary --kind points`` and ``benchlib compare`` give the same p99 for the same point
— each run's loops merged (summaries.loops_latency), a point's the mean of its runs' —
and each says which rule it is."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import benchlib
from benchlib import cli, measure
from benchlib.plots import interactive
from benchlib.summaries.headline import best_point, headline_text
from benchlib.summaries.loops_latency import RULE, loops_percentile
from benchlib.summaries.samples import run_samples

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "sample"


@pytest.fixture(scope="module")
def sample() -> dict:
    return benchlib.load_results(SAMPLE)


def test_the_rule_merges_loops_and_says_when_it_cannot(sample):
    lat = sample["latency"]
    run = lat[(lat["run_id"] == "sqlite-t2-p2-l1-tgt0-r1") & (lat["op"] == "UPDATE")
              & lat["step"].astype(str).str.startswith("r.")]
    assert len(run) == 2
    merged, exact = loops_percentile(run)
    assert exact and merged == measure.summarize(measure.merge(run["hdr"].tolist()))["p99_us"]
    worst, exact = loops_percentile(run.assign(hdr=""))          # an import: no histograms
    assert not exact and worst == run["p99_us"].max()
    assert loops_percentile(run.head(1)) == (float(run["p99_us"].iloc[0]), True)


def test_headline_heatmap_points_and_compare_agree(sample, capsys):
    best = best_point(sample)
    assert RULE in headline_text(sample, "tail")
    run = run_samples(sample).set_index("run_id").loc[best["name"]]
    threads, target = int(run["threads"]), float(run["target_ops_per_s"])
    # the heatmap's cells (threads × target rate; unthrottled is target 0), per op
    hm = interactive.heatmap(sample, "p99_us").figure
    assert RULE in hm.layout.title.text and "intended start" in hm.layout.title.text
    cells = {(t.name, y, x): v for t in hm.data for y, row in zip(t.y, t.z) for x, v in zip(t.x, row)}

    def cell(op, threads, target):
        return cells[(op, "unthrottled" if target == 0 else f"{target:,.0f}", str(threads))]

    pts = pd.DataFrame(json.loads(_out(capsys, ["summary", str(SAMPLE), "--kind", "points", "--format", "json"])))
    mine = pts[(pts["threads"] == threads) & (pts["target_ops_per_s"] == target)]
    every = pd.DataFrame(json.loads(_out(capsys, ["compare", str(SAMPLE), str(SAMPLE), "--format", "json"])))
    cmp = every[(every["threads"] == threads) & (every["target_ops_per_s"] == target)].set_index("metric")
    for op, p99 in best["p99_us"].items():   # the headline's point
        assert cell(op, threads, target) == pytest.approx(p99, rel=1e-12)
        assert mine[f"{op}_p99_us"].iloc[0] == pytest.approx(p99, rel=1e-12)
        assert cmp.loc[f"{op}_p99_us", "a"] == pytest.approx(p99, rel=1e-12)
    # every point, the paced ones too (from the intended start): compare's p99 is the cell's
    p99 = every[every["metric"].str.endswith("_p99_us") & ~every["metric"].str.endswith("service_p99_us")]
    assert len(p99) == 16
    for r in p99.itertuples():
        assert cell(r.metric.removesuffix("_p99_us"), r.threads, r.target_ops_per_s) == pytest.approx(r.a, rel=1e-12)
    assert RULE in _out(capsys, ["compare", str(SAMPLE), str(SAMPLE)])     # the text says which p99


def _out(capsys, argv: list[str]) -> str:
    assert cli.main(argv) == 0
    return capsys.readouterr().out
