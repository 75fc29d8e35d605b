"""The report's pages from their jinja2 templates, without running a notebook: the data
folder's index escapes whatever a report.json holds and skips one it cannot read; the
templates ship as package data."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import tomllib

from benchlib.reports import write_index
from benchlib.reports.html import TEMPLATES
from benchlib.summaries.formatting import to_float

ROOT = Path(__file__).resolve().parents[1]


def test_index_escapes_what_report_json_holds(tmp_path):
    exp = tmp_path / '<x onload=1>&"' / "reports"
    exp.mkdir(parents=True)
    (exp / "report.json").write_text(json.dumps({
        "headline": "<script>alert(1)</script>", "pages": {"summary": 'summary.html" onclick="x'},
        "errors": ['a "quoted" <err>'], "runs": "<i>", "rendered": "2026-01-01T00:00:00"}))
    broken = tmp_path / "broken" / "reports"
    broken.mkdir(parents=True)
    (broken / "report.json").write_text("{not json")
    for name, text in (("list", "[]"), ("pages-list", '{"pages": ["summary.html"]}')):
        (tmp_path / name / "reports").mkdir(parents=True)
        (tmp_path / name / "reports" / "report.json").write_text(text)
    page = write_index(tmp_path).read_text()
    assert "<script>" not in page and "<i>" not in page and 'onclick="' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'title="a &#34;quoted&#34; &lt;err&gt;">1 failed' in page
    assert page.count("<tr>") == 2 and "broken" not in page     # header row + the one readable
    assert "pages-list" not in page


def test_index_of_no_reports(tmp_path):
    assert "no reports yet" in write_index(tmp_path).read_text()


def test_templates_are_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    globs = data["benchlib.reports"]
    for name in ("report_page.html.j2", "data_index.html.j2"):
        assert (TEMPLATES / name).is_file()
        assert any(Path(name).match(Path(g).name) and Path(g).parent.name == TEMPLATES.name for g in globs)


def test_to_float_says_what_an_unknown_is():
    inf = float("inf")
    assert [to_float(v, 0.0) for v in (None, float("nan"), pd.NA, "x", "16", 2)] == [0.0, 0.0, 0.0, 0.0, 16.0, 2.0]
    assert to_float(None, inf) == inf and to_float("abc", "abc") == "abc"


def test_time_series_page_draws_the_best_first_and_says_what_it_left_out():
    import benchlib
    from benchlib.reports import time_series_runs
    ybio = benchlib.load_results(Path(__file__).resolve().parents[1] / "data" / "samples" / "ybio")
    best = "sqlite-t1-p1-l1-tgt0-batch_size10000-pct_update0-r1"          # the headline's
    shown, said = time_series_runs(ybio)
    assert len(shown) == 8 and shown[0] == best and "7 not drawn" in said and best in said
    shown, said = time_series_runs(ybio, ["*batch_size10000*"], max_runs=2)
    assert shown == [best, best.replace("update0", "update10")] and "1 not drawn" in said
