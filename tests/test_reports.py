"""Rendered reports: papermill runs the analysis notebooks on an experiment, nbconvert
renders them without inputs, headless Chromium opens every page (no console message,
every figure an interactive plot drawn by the page's inline plotly.js, or with --static
an embedded PNG; the summary tables there); a failed notebook leaves its
error, the other pages and the index, then one line and exit 1.

Screenshots are kept in tests/artifacts/ (git-ignored) for a human to look at.
"""
from __future__ import annotations

import base64
import json
import re
import shutil
import stat
from pathlib import Path

import browser
import nbformat
import pytest

from benchlib import cli, reports

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"
IMG = re.compile(r'<img[^>]*src="data:image/png;base64,([^"]*)"')

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("data")
    shutil.copytree(SAMPLES / "sample", data / "sample")
    main = reports.report(data / "sample", progress=False)
    assert main == data / "sample" / "reports" / "summary.html"
    return data


def _pngs(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in IMG.findall(html)]


def test_report_files(rendered):
    out = rendered / "sample" / "reports"
    for name in reports.REPORT_NOTEBOOKS:
        assert (out / f"{name}.ipynb").is_file()
        html = (out / f"{name}.html").read_text()
        assert "import benchlib" not in html                  # inputs left out
        assert not re.search(r'<script[^>]+src="http', html)  # nothing from the network
        assert 'href="../../index.html"' in html                # the way back to the index
    info = json.loads((out / "report.json").read_text())
    assert info["errors"] == [] and info["runs"] == 8
    assert info["headline"].startswith("best sqlite-t") and "ops/s, p99 READ" in info["headline"]
    index = (rendered / "index.html").read_text()
    assert 'href="sample/reports/summary.html"' in index and info["headline"] in index
    # one rule: what a web server serves (the reports, report.json the index is made from,
    # the index) is readable by all; a run folder's files are its owner's (0600)
    served = [*out.iterdir(), rendered / "index.html"]
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in served if p.is_file()
            and stat.S_IMODE(p.stat().st_mode) != 0o644} == {}


PLOTS = re.compile(r'<div[^>]* id="benchlib-plot-\d+"')
SHARED_JS = re.compile(r'<script[^>]* src="(plotly-[\d.]+\.min\.js)"[^>]*>')


def test_figures_are_interactive_plots(rendered):
    out = rendered / "sample" / "reports"
    counts = {}
    for name in reports.REPORT_NOTEBOOKS:
        html = (out / f"{name}.html").read_text()
        assert not _pngs(html), name
        counts[name] = len(PLOTS.findall(html))
        # the folder's one plotly.js file, loaded by a page that has plots; none by one that has not
        assert html.count("Plotly.newPlot") >= counts[name] and "plotly.js v" not in html, name
        assert len(SHARED_JS.findall(html)) == (counts[name] > 0), name
    assert counts == {"summary": 0, "heatmaps": 3, "timeseries": 8}
    assert [p.name for p in out.glob("plotly*.js")] == SHARED_JS.findall((out / "timeseries.html").read_text())
    summary = (out / "summary.html").read_text()
    assert summary.count("<table") >= 5                  # side by side + the seed's sections
    for text in ("l.pre.eff.op", "r.L2.eff.sec", "r.L1.rt", "r.L2.run", "TEST passed"):
        assert text in summary


# what a page would load or link to over the network: any http(s) URL left once the
# inline plotly.js bundle (its own strings: licences, the cloud's default address), CSS
# comments (nbconvert's theme credits) and XML namespaces (names, never fetched) are gone
_BUNDLE = re.compile(r"<script[^>]*>\s*/\*\*?\s*\n?\s*\*?\s*plotly\.js v.*?</script>", re.S)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_XMLNS = re.compile(r'xmlns(:\w+)?="http[^"]*"')


def _network_references(html: str) -> list[str]:
    text = _XMLNS.sub("", _CSS_COMMENT.sub("", _BUNDLE.sub("", html)))
    return re.findall(r"https?://[^\s\"'<>)]*", text)


def test_nothing_leaves_the_machine(rendered):
    pages = sorted(rendered.rglob("*.html"))
    assert len(pages) == 1 + len(reports.REPORT_NOTEBOOKS)
    for page in pages:
        html = page.read_text()
        assert _network_references(html) == [], page.name
        assert str(rendered) not in html, f"{page.name}: an absolute local path"
        # every plot's config: no "Share chart…" (plotly.js's upload to its cloud)
        configs = re.findall(r"Plotly\.newPlot\(.*?(\{[^{}]*\"displaylogo\"[^{}]*\})\s*\)", html, re.S)
        assert len(configs) == html.count("Plotly.newPlot("), page.name
        for config in map(json.loads, configs):
            assert config["showSendToCloud"] is False and "sendChartToCloud" in config["modeBarButtonsToRemove"]
    assert str(rendered) not in (rendered / "sample" / "reports" / "report.json").read_text()


needs_chromium = pytest.mark.skipif(browser.chromium() is None,
                                    reason="no chromium (apt-get install -y chromium; .ci/run installs it)")


@needs_chromium
@pytest.mark.timeout(240)
def test_pages_in_headless_chromium(rendered):
    pages = {"index": rendered / "index.html",
             **{n: rendered / "sample" / "reports" / f"{n}.html" for n in reports.REPORT_NOTEBOOKS}}
    for name, path in pages.items():
        page = browser.load(path)
        assert page.console == [], f"{name}: console says {page.console}"
        assert "</main>" in page.dom, f"{name}: not rendered"
        if name in ("heatmaps", "timeseries"):   # each plot drawn by the page's own plotly.js
            assert page.dom.count('class="main-svg"') >= {"heatmaps": 3, "timeseries": 8}[name]
            assert 'class="modebar' in page.dom and 'data-title="Share chart' not in page.dom, name
        if name == "summary":
            assert "<table" in page.dom and "Configurations side by side" in page.dom
        shot = browser.screenshot(path, browser.ARTIFACTS / f"report-{name}.png",
                                  height=6000 if name != "index" else 900)
        assert shot.is_file() and shot.stat().st_size > 20_000, f"{name}: blank screenshot?"


def _broken_notebooks(tmp_path: Path) -> Path:
    """A copy of notebooks/ whose heatmaps.ipynb fails in its first cell after the parameters."""
    nbs = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", nbs)
    nb = nbformat.read(nbs / "heatmaps.ipynb", as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell('raise RuntimeError("broken on purpose")'))
    nbformat.write(nb, nbs / "heatmaps.ipynb")
    return nbs


@pytest.mark.timeout(240)
def test_failed_notebook_keeps_the_rest(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BENCHLIB_NOTEBOOKS", str(_broken_notebooks(tmp_path)))
    exp = tmp_path / "data" / "sample-configs"
    shutil.copytree(SAMPLES / "sample-configs", exp)
    assert cli.main(["report", str(exp), "--static", "--no-progress"]) == cli.EXIT_FAILED
    err = capsys.readouterr().err.strip().splitlines()
    # two targets: the compare page too (each configuration against the base)
    assert err[-1].startswith("benchlib: report of sample-configs: 1 of 4 notebooks failed: "
                              "heatmaps.ipynb failed in cell In [")
    assert "RuntimeError: broken on purpose" in err[-1]
    out = exp / "reports"
    for name in ("summary", "timeseries", "compare"):
        assert (out / f"{name}.html").is_file()
    assert "sqlite-wal (base)" in (out / "compare.html").read_text()
    # --static: the figures are PNG images, and no page carries plotly
    pngs = _pngs((out / "timeseries.html").read_text())
    assert len(pngs) == 2 and all(p[:8] == b"\x89PNG\r\n\x1a\n" and len(p) > 10_000 for p in pngs)
    assert "plotly.js v" not in (out / "timeseries.html").read_text()
    assert not SHARED_JS.search((out / "timeseries.html").read_text())
    failed = nbformat.read(out / "heatmaps.ipynb", as_version=4)
    assert any(o.get("ename") == "RuntimeError" for c in failed.cells for o in c.get("outputs", []))
    assert "broken on purpose" in (out / "heatmaps.html").read_text()
    assert "1 failed" in (exp.parent / "index.html").read_text()


def test_report_of_nothing_is_bad_input(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nope")]) == cli.EXIT_INPUT
    assert capsys.readouterr().err.strip().count("\n") == 0


def _notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell('experiment_dir = ""', metadata={"tags": ["parameters"]}),
                *(nbformat.v4.new_code_cell(s) for s in sources)]
    nbformat.write(nb, path)


@pytest.mark.timeout(240)
def test_notebooks_share_a_kernel_as_if_each_had_its_own(tmp_path, monkeypatch):
    """One kernel runs a report's notebooks in turn: the next sees none of the names the one
    before left, its cells are numbered from 1, a failure names its own cell and the
    notebooks after it still run; the kernel keeps the run tables it read (runcache)."""
    from benchlib.reports.execute import execute_all
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    _notebook(nbs / "summary.ipynb", "left_behind = 1", "print('summary ran')")
    _notebook(nbs / "b.ipynb", "import os\nprint('left_behind' in dir(), os.environ.get('BENCHLIB_RUN_CACHE'))",
              'raise RuntimeError("broken on purpose")')
    _notebook(nbs / "c.ipynb", "print('c ran after the failure')")
    monkeypatch.setenv("BENCHLIB_NOTEBOOKS", str(nbs))
    out, ended = tmp_path / "out", []
    failed = execute_all(("summary", "b", "c"), out, {"experiment_dir": "x"}, "t", False,
                         on_done=lambda name, err: ended.append(name), kernels=1)
    assert ended == ["summary", "b", "c"]
    assert list(failed) == ["b"] and failed["b"].startswith("b.ipynb failed in cell In [4]: RuntimeError")

    def outputs(name):
        nb = nbformat.read(out / f"{name}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        text = "".join(o.get("text", "") for c in code for o in c.outputs)
        return [c.execution_count for c in code], text
    counts, text = outputs("b")
    assert counts[:4] == [1, 2, 3, 4] and "False 1" in text   # injected parameters, then its own
    assert outputs("c") == ([1, 2, 3], "c ran after the failure\n")


@pytest.mark.timeout(240)
def test_a_notebook_run_alone_gets_a_unix_socket_kernel_in_the_notebooks_folder(tmp_path, monkeypatch):
    """A notebook executed without a shared kernel (experiment.ipynb's log) gets one of its
    own, started as a report's are: on Unix sockets, never a TCP port that another
    kernel starting at that moment could draw too; in the notebooks' folder, without the
    tables' cache; its output written as it goes."""
    from benchlib.reports.execute import execute
    from benchlib.store.runcache import CACHE_ENV
    nbs, out = tmp_path / "nbs", tmp_path / "out" / "summary.ipynb"
    nbs.mkdir()
    _notebook(nbs / "summary.ipynb",   # the folder is known by its summary.ipynb
              "import os\nfrom ipykernel.connect import get_connection_info\n"
              f"print(get_connection_info(unpack=True)['transport'], os.getcwd(), os.environ.get({CACHE_ENV!r}))",
              f"print('saved' if 'ipc' in open({str(out)!r}).read() else 'unsaved')")
    monkeypatch.setenv("BENCHLIB_NOTEBOOKS", str(nbs))
    assert execute("summary", out, {}, progress=False) is None
    nb = nbformat.read(out, as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert text.split() == ["ipc", str(nbs), "None", "saved"], text


def test_two_kernels_leave_the_callers_folder_alone(tmp_path, monkeypatch):
    """papermill's ``cwd`` is an os.chdir of the whole process around each execution: two
    kernels' threads undid it in the wrong order and left the caller in notebooks/ (a
    later test found no parameters/quickstart.yaml). The caller's folder stays its own
    throughout, and each notebook still runs in the notebooks' folder."""
    import os
    import threading

    from benchlib.reports.execute import execute_all
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    names = ("summary", "b", "c", "d")
    for name in names:
        _notebook(nbs / f"{name}.ipynb", "import os, time\ntime.sleep(0.5)\nprint(os.getcwd())")
    monkeypatch.setenv("BENCHLIB_NOTEBOOKS", str(nbs))
    here, seen, done = os.getcwd(), set(), threading.Event()

    def watch():
        while not done.is_set():
            seen.add(os.getcwd())
            done.wait(0.002)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        failed = execute_all(names, tmp_path / "out", {"experiment_dir": "x"}, "t", False, kernels=2)
    finally:
        done.set()
        watcher.join()
    assert not failed and seen == {here} and os.getcwd() == here, seen
    for name in names:
        nb = nbformat.read(tmp_path / "out" / f"{name}.ipynb", as_version=4)
        text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        assert text.strip() == str(nbs), text
