"""ybio's heatmaps on its own axes and in its own units (issue 39 item 6): the matrix's
varying parameters (batch size × pct_update) are the default axes, one panel with one
colour scale, throughput in rows/s as the headline says it, the p99 of the calls a
client waits for (READ-BATCH) equal to the headline's; a host's RAM in GB and a small
database in MB in the summaries."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import benchlib
from benchlib import plots
from benchlib.plots import interactive
from benchlib.plots.values import heat_axes
from benchlib.summaries.formatting import gigabytes
from benchlib.summaries.headline import best_point
from benchlib.summaries.metainfo import connections

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"


@pytest.fixture(scope="module")
def ybio() -> dict:
    return benchlib.load_results(SAMPLES / "ybio")


def test_default_axes_are_the_matrix_own(ybio):
    assert heat_axes(ybio) == ("batch_size", "pct_update")
    assert heat_axes(benchlib.load_results(SAMPLES / "sample")) == ("threads", "target_ops_per_s")
    assert heat_axes(ybio, "threads", "batch_size") == ("threads", "batch_size")


def test_throughput_one_panel_rows_per_s(ybio):
    fig = interactive.heatmap(ybio, "ops_per_s").figure
    assert len(fig.data) == 1 and np.asarray(fig.data[0].z).shape == (3, 5)      # pct_update × batch size
    assert "rows/s" in fig.layout.title.text and fig.data[0].colorbar.title.text == "rows/s"
    static = plots.heatmap(ybio, "ops_per_s")
    assert "rows/s" in static._suptitle.get_text()
    assert len([ax for ax in static.axes if ax.get_label() == "<colorbar>"]) == 1


def test_p99_of_the_calls_equals_the_headline(ybio):
    best = best_point(ybio)
    fig = interactive.heatmap(ybio, "p99_us").figure
    assert [t.name for t in fig.data] == ["READ-BATCH", "UPDATE-BATCH"]
    read = fig.data[0]
    cell = np.asarray(read.z, dtype=float)[list(read.y).index("0"), list(read.x).index("10,000")]
    assert cell == pytest.approx(best["p99_us"]["READ-BATCH"])


def test_ram_in_gb_and_a_small_database_in_mb():
    meta = {"config": "c", "host": {"ram_bytes": 16 * 1024 ** 3}, "dbms": {"name": "x", "version": "1"}}
    assert connections([meta]).loc["c", "RAM"] == "16.0 GB"
    assert gigabytes(15 / 1024) == "15m" and gigabytes(3.0) == "3.0g" and gigabytes(0) == "0.0g"


def test_time_series_in_rows_per_s(ybio):
    fig = interactive.timeseries(ybio).figure
    assert fig.layout.yaxis.title.text.endswith("(rows/s)") and "rows/s" in fig.data[0].hovertemplate
    assert plots.timeseries(ybio).axes[0].get_ylabel().endswith("(rows/s)")
