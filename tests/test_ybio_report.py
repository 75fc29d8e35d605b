"""ybio's report: the experiment's report runs the workload's own notebook
(``Workload.report_notebooks``) beside the common ones; its page shows RIOPS against
batch_size and the batch_size × pct_update heatmap as interactive plots (headless
Chromium too, when the machine has it). The committed sample is parameters/ybio.yaml's
sweep on SQLite."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import browser
import pytest

from benchlib import load_results, reports

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "samples" / "ybio"
IMG = re.compile(r'<img[^>]*src="data:image/png;base64,([^"]*)"')
PLOT = re.compile(r'<div[^>]* id="benchlib-plot-\d+"')

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("data")
    shutil.copytree(SAMPLE, data / "ybio")
    reports.report(data / "ybio", progress=False)
    return data / "ybio" / "reports"


def test_the_sample_is_the_sweep():
    b = load_results(SAMPLE)["benchruns"]
    assert sorted(set(b["batch_size"])) == [1, 10, 100, 1000, 10000]
    assert sorted(set(b["pct_update"])) == [0, 10, 50]
    assert (b["riops"] > 0).all() and (b["errors"] == 0).all()


def test_report_has_the_riops_plots(rendered):
    info = json.loads((rendered / "report.json").read_text())
    assert info["errors"] == [] and "ybio" in info["pages"]
    page = (rendered / "ybio.html").read_text()
    assert "RIOPS against batch_size" in page and "batch_size × pct_update" in page
    # interactive plots (the report's default; --static makes PNGs), the folder's plotly.js loaded once
    assert len(PLOT.findall(page)) == 2 and not IMG.findall(page) and page.count('src="plotly-') == 1
    assert "<table" in page and "coverage" in page          # the benchruns table
    assert 'href="ybio.html"' in (rendered / "summary.html").read_text()  # in the navigation


@pytest.mark.skipif(browser.chromium() is None, reason="no chromium (apt-get install -y chromium)")
def test_page_in_headless_chromium(rendered):
    page = browser.load(rendered / "ybio.html")
    assert page.console == [] and "</main>" in page.dom
    assert page.dom.count('class="main-svg"') >= 2        # drawn by the page's own plotly.js
    shot = browser.screenshot(rendered / "ybio.html", browser.ARTIFACTS / "report-ybio.png", height=4000)
    assert shot.is_file() and shot.stat().st_size > 20_000
