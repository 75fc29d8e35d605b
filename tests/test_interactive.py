"""Interactive plots (benchlib.plots.interactive): what each figure holds, decimation,
the report page carrying plotly.js once, and — in headless Chromium driven over its
DevTools protocol — a user's hover, legend click and zoom on the time series page,
with no request leaving the page."""
from __future__ import annotations

import contextlib
import re
import shutil
import time
from pathlib import Path

import browser
import numpy as np
import pandas as pd
import pytest

import benchlib
from benchlib import plots
from benchlib.plots import interactive
from benchlib.plots.interactive.figure import MIME
from benchlib.reports import Nav, render_html
from benchlib.reports.execute import execute

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"


@pytest.fixture(scope="module")
def sample() -> dict:
    return benchlib.load_results(SAMPLES / "sample")


def _long_run(loops: int = 24, secs: int = 300) -> dict:
    """A run of ``loops`` loops of ``secs`` seconds, two ops, hw each second (tables as
    load_results gives them)."""
    rng = np.random.default_rng(1)
    t0 = pd.Timestamp("2026-01-01", tz="UTC")
    steps = pd.DataFrame({"run_id": "long", "step": [f"r.L{i + 1}" for i in range(loops)], "phase": "run",
                          "loop": range(1, loops + 1), "secs": float(secs), "ops": 1000 * secs,
                          "started": [t0 + pd.Timedelta(seconds=i * (secs + 2)) for i in range(loops)],
                          "ended": [t0 + pd.Timedelta(seconds=i * (secs + 2) + secs) for i in range(loops)]})
    rows = [(s, k, op) for s in steps["step"] for k in range(secs) for op in ("READ", "UPDATE")]
    iv = pd.DataFrame(rows, columns=["step", "second", "op"]).assign(run_id="long")
    iv["ops"] = rng.integers(400, 600, len(iv))
    iv.loc[iv.index[min(1000, len(iv) - 1)], "ops"] = 5000   # one spike that decimation must keep
    iv["p99_us"] = rng.uniform(50, 500, len(iv))
    hw = pd.DataFrame([(s, k) for s in steps["step"] for k in range(secs)], columns=["step", "second"])
    hw = hw.assign(run_id="long", cpu_user=30.0, cpu_sys=10.0, cpu_iowait=1.0, disk_reads=5.0, disk_writes=50.0,
                   disk_read_kb=20.0, disk_write_kb=400.0)
    return {"runs": pd.DataFrame({"run_id": ["long"]}), "steps": steps, "intervals": iv, "hw": hw}


def test_decimate_keeps_extremes_and_real_rows():
    frame = pd.DataFrame({"t": np.arange(10_000.0), "v": np.sin(np.arange(10_000) / 50)})
    frame.loc[4321, "v"] = 99.0
    kept, cut = interactive.decimate(frame, "v", 3000)
    assert cut and len(kept) <= 3000
    assert 99.0 in kept["v"].to_numpy() and frame["v"].min() in kept["v"].to_numpy()
    assert kept["t"].is_monotonic_increasing
    assert (frame.loc[kept.index, "v"] == kept["v"]).all()          # rows as measured
    short, cut = interactive.decimate(frame.head(50), "v", 3000)
    assert not cut and len(short) == 50


def test_long_run_is_decimated_and_says_so():
    plot = interactive.timeseries(_long_run())
    fig = plot.figure
    assert all(len(t.y) <= interactive.MAX_POINTS + 24 for t in fig.data)   # + a break between steps
    read = next(t for t in fig.data if t.name == "READ")
    assert np.nanmax(read.y) == 5000                                          # the spike kept
    assert "decimated" in fig.layout.title.text
    assert {t.name for t in fig.data} >= {"all operations", "READ", "UPDATE", "READ p99", "CPU user",
                                          "disk write"}
    assert fig.layout.yaxis4.title.text == "disk (MB/s)" and fig.layout.yaxis5.title.text == "memory, size (GB)"


def test_intervals_of_their_own_length_are_rates_over_it():
    res = _long_run(loops=1, secs=4)
    iv = res["intervals"]
    res["intervals"] = iv.assign(start_s=iv["second"].astype(float), length_s=np.where(iv["second"] == 3, 0.25, 1.0))
    read = next(t for t in interactive.timeseries(res).figure.data if t.name == "READ")
    ops = iv[iv["op"] == "READ"]["ops"].to_numpy(dtype=float)
    assert list(read.y) == pytest.approx([*ops[:3], ops[3] / 0.25])
    assert read.x[-1] == pytest.approx(3.125)


def test_hover_texts_carry_unit_and_where(sample):
    fig = interactive.timeseries(sample, sorted(sample["runs"]["run_id"])[:2]).figure
    read = next(t for t in fig.data if t.name.endswith("· READ"))
    assert "ops/s" in read.hovertemplate and "customdata[1]" in read.hovertemplate
    assert len({t.legendgroup for t in fig.data}) == 2                       # a group per run
    hm = interactive.heatmap(sample, "p99_us").figure
    assert [t.name for t in hm.data] == ["READ", "UPDATE"]
    assert "µs" in hm.data[0].hovertemplate
    assert any("sqlite-t2-p2-l1-tgt0-r1" in str(c) for row in hm.data[0].customdata for c in row)


def test_per_op_and_ybio(sample):
    bars = interactive.per_op(sample).figure
    assert {tuple(t.x) for t in bars.data} == {("READ", "UPDATE")}            # no Intended- rows
    ybio = benchlib.load_results(SAMPLES / "ybio")
    own = plots.own("ybio", interactive=True)                                # ybio's, from its folder
    lines = own.riops_by_batch_size(ybio).figure
    assert len(lines.data) == 3 and list(lines.data[0].x) == [1, 10, 100, 1000, 10000]
    cells = own.riops_heatmap(ybio).figure.data[0]
    assert np.asarray(cells.z).shape == (3, 5) and "rows/s" in cells.hovertemplate
    empty = own.riops_heatmap(sample).figure
    assert "no RIOPS" in empty.layout.title.text or not empty.data


def test_mimebundle_for_jupyterlab_and_pages(sample):
    from benchlib.reports.html import PLOTLY_MIME
    assert PLOTLY_MIME == MIME   # the pages find their plots by it
    bundle = interactive.timeseries(sample)._repr_mimebundle_()
    assert set(bundle) == {MIME, "text/html", "text/plain"}
    assert "Plotly.newPlot" in bundle["text/html"] and "<script src" not in bundle["text/html"]


# ---------------------------------------------------------------- the rendered page

@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The sample's time series page, as the report renders it (interactive)."""
    data = tmp_path_factory.mktemp("data")
    shutil.copytree(SAMPLES / "sample", data / "sample")
    out = data / "sample" / "reports"
    err = execute("timeseries", out / "timeseries.ipynb",
                  {"experiment_dir": str(data / "sample"), "interactive": True}, progress=False)
    assert err is None, err
    return render_html(out / "timeseries.ipynb", out / "timeseries.html", Nav("sample", "timeseries"))


@pytest.mark.slow
def test_page_carries_plotly_once_and_nothing_from_the_network(page):
    html = page.read_text()
    js = re.findall(r'<script[^>]+src="([^"]*)"', html)
    assert len(js) == 1 and re.fullmatch(r"plotly-[\d.]+\.min\.js", js[0]) and (page.parent / js[0]).is_file()
    assert (page.parent / js[0]).read_text().count("plotly.js v") >= 1 and "plotly.js v" not in html
    assert html.count('class="plotly-graph-div"') == 8 and "cdn.plot.ly" not in html
    assert "<img" not in html


needs_chromium = pytest.mark.skipif(browser.chromium() is None,
                                    reason="no chromium (apt-get install -y chromium; .ci/run installs it)")

_POINT = r"""
(() => {
  const gd = document.querySelector(".plotly-graph-div");
  gd.scrollIntoView();
  const k = gd.data.findIndex(t => t.name === %r);
  const cd = gd.calcdata[k], i = cd.findIndex((p, j) => j > 0 && p.y > 0);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, r = gd.getBoundingClientRect();
  return {x: r.left + xa._offset + xa.l2p(cd[i].x), y: r.top + ya._offset + ya.l2p(cd[i].y),
          range: xa.range.slice(), top: r.top + ya._offset, left: r.left + xa._offset, width: xa._length};
})()
"""
_TOOLTIP = '[...document.querySelectorAll(".hoverlayer .hovertext text tspan.line")].map(t => t.textContent)'


@contextlib.contextmanager
def _browser_on(page: Path):
    """Chromium with ``page`` open; a Chromium that cannot start here skips, saying why."""
    from devtools import Chromium, DevToolsError
    browser_ = Chromium()
    try:
        browser_.__enter__()
    except (DevToolsError, OSError) as e:
        pytest.skip(f"chromium cannot run here: {e}")
    try:
        browser_.open(page)
        yield browser_
    finally:
        browser_.__exit__(None, None, None)


def _poll(b, expression: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = b.evaluate(expression)
        if value:
            return value
        time.sleep(0.1)
    return b.evaluate(expression)


@needs_chromium
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_hover_reads_the_tables_figure_and_no_request_leaves(page, sample):
    with _browser_on(page) as b:
        assert _poll(b, 'document.querySelectorAll(".plotly-graph-div .main-svg").length') >= 8
        at = b.evaluate(_POINT % "READ")
        b.mouse("moved", at["x"], at["y"])
        lines = _poll(b, _TOOLTIP)
        assert lines, "no tooltip"
        op, value, run, where = lines[0], lines[1], lines[2], lines[3]
        step, second = re.fullmatch(r"step (\S+), second (\d+)", where).groups()
        iv = sample["intervals"]
        row = iv[(iv["run_id"] == run.removeprefix("run ")) & (iv["step"] == step)
                 & (iv["second"] == int(second)) & (iv["op"] == op)]
        assert len(row) == 1
        assert value == f"{int(row['ops'].iloc[0]):,} ops/s"            # a whole second: ops/s = ops
        b.screenshot(browser.ARTIFACTS / "interactive-hover.png")
        assert [u for u in b.requests() if not u.startswith(("file:", "data:"))] == []
        assert b.console() == []


@needs_chromium
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_legend_click_hides_and_drag_zooms(page):
    with _browser_on(page) as b:
        _poll(b, 'document.querySelectorAll(".plotly-graph-div .main-svg").length')
        item = b.evaluate("""(() => {const gd = document.querySelector(".plotly-graph-div");
            const t = [...gd.querySelectorAll(".legend .traces")].find(e => e.textContent === "UPDATE");
            const r = t.querySelector(".legendtoggle").getBoundingClientRect();
            return {x: r.left + 10, y: r.top + r.height / 2};})()""")
        b.mouse("pressed", item["x"], item["y"], "left")
        b.mouse("released", item["x"], item["y"], "left")
        assert _poll(b, """document.querySelector(".plotly-graph-div").data
                           .find(t => t.name === "UPDATE").visible === "legendonly" """)
        at = b.evaluate(_POINT % "READ")
        y = at["top"] + 20
        b.mouse("pressed", at["left"] + 0.3 * at["width"], y, "left")
        for f in (0.4, 0.5, 0.6):
            b.mouse("moved", at["left"] + f * at["width"], y, "left")
        b.mouse("released", at["left"] + 0.6 * at["width"], y, "left")
        zoomed = _poll(b, f"""(() => {{const r = document.querySelector(".plotly-graph-div")._fullLayout.xaxis.range;
                                        return r[1] - r[0] < {0.5 * (at["range"][1] - at["range"][0])} ? r : null;}})()""")
        assert zoomed, "dragging across the time axis did not zoom it"


def test_explorer_follows_its_widgets(tmp_path):
    from benchlib import reports
    from benchlib.reports.explore import experiments
    ui = reports.explorer(SAMPLES, "sample")
    assert experiments(SAMPLES) == ["sample", "sample-configs", "ybio"]
    assert ui.runs.value == ("sqlite-t1-p1-l1-tgt0-r1",) and (ui.x.value, ui.y.value) == ("threads", "target_ops_per_s")
    assert "READ" in ui.op.options
    ui.experiment.value = "ybio"
    assert all("batch_size" in r for r in ui.runs.options) and (ui.x.value, ui.y.value) == ("batch_size", "pct_update")
    ui.runs.value = ui.runs.options[:3]
    ui.op.value = "READ"
    ui.data.value = str(tmp_path)            # a folder without experiments: nothing to pick, no error
    assert ui.experiment.options == () and ui.runs.options == ()


def test_a_panel_without_figures_says_why():
    res = _long_run(loops=2, secs=5)
    res["hw"] = res["hw"].iloc[0:0]
    fig = interactive.timeseries(res).figure
    notes = [a.text for a in fig.layout.annotations]
    assert any(n.startswith("no hardware samples") for n in notes) and any(n.startswith("no disk") for n in notes)
    assert any(n.startswith("no DBMS memory") for n in notes)
    assert "r.L2" in notes and fig.layout.xaxis.range[1] >= 10
    empty = interactive.timeseries({"runs": pd.DataFrame(), "steps": pd.DataFrame()}).figure
    assert "no run" in empty.layout.title.text


_Y_SPANS = r"""
(() => {
  const gd = document.querySelector(".plotly-graph-div"), full = gd._fullLayout, out = {};
  const xa = full.xaxis, lo = xa.range[0], hi = xa.range[1];
  for (const cd of gd.calcdata) {
    const tr = cd[0].trace;
    if (tr.visible !== true) continue;
    const name = tr.yaxis.replace("y", "yaxis"), ya = full[name];
    const log = ya.type === "log", r = ya.range.map(v => log ? Math.pow(10, v) : v);
    const o = out[name] || (out[name] = {range: r, min: Infinity, max: -Infinity, all: -Infinity});
    for (const p of cd) {
      if (typeof p.y !== "number" || !isFinite(p.y)) continue;
      o.all = Math.max(o.all, p.y);
      if (p.x >= lo && p.x <= hi) { o.min = Math.min(o.min, p.y); o.max = Math.max(o.max, p.y); }
    }
  }
  return {x: [lo, hi], axes: out};
})()
"""


@needs_chromium
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_zoom_fits_each_y_axis_to_the_visible_data(page):
    """A drag-zoom into the second run loop: every panel's y axis spans the points drawn in
    the window (no more: the load step's and the other loop's highs are out of it)."""
    with _browser_on(page) as b:
        _poll(b, 'document.querySelectorAll(".plotly-graph-div .main-svg").length')
        at = b.evaluate(_POINT % "READ")
        before = b.evaluate(_Y_SPANS)
        y = at["top"] + 20
        b.mouse("pressed", at["left"] + 0.7 * at["width"], y, "left")
        for f in (0.75, 0.8, 0.85):
            b.mouse("moved", at["left"] + f * at["width"], y, "left")
        b.mouse("released", at["left"] + 0.85 * at["width"], y, "left")
        fitted = _poll(b, f"""(() => {{const s = {_Y_SPANS.strip()};
            return s.x[1] - s.x[0] < {0.5 * (at["range"][1] - at["range"][0])}
                   && s.axes.yaxis.range[1] !== {before["axes"]["yaxis"]["range"][1]} ? s : null;}})()""")
        assert fitted, "zooming the time axis left the y axes as they were"
        shown = {n: a for n, a in fitted["axes"].items() if a["max"] > float("-inf")}
        assert {"yaxis", "yaxis3", "yaxis4"} <= set(shown)   # throughput, CPU, disk have points there
        narrower = 0
        for name, a in shown.items():
            lo, hi = a["range"]
            assert lo <= a["min"] + 1e-9 and hi >= a["max"] - 1e-9, (name, a)   # every point in view
            tozero = 0 if lo <= 0 else a["min"]
            assert hi - lo <= 1.25 * (a["max"] - tozero) + 1e-6 * max(1.0, abs(hi)), (name, a)   # and no more
            narrower += a["max"] < a["all"]
        assert narrower, "no panel had a higher point outside the window: the test zoomed nowhere"
        assert b.console() == []   # the fitting script ran without an error
