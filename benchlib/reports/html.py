"""The report's HTML pages, from the jinja2 templates in ``templates/``: an executed
notebook as a page without its code (``report_page.html.j2``, nbconvert's "lab" page
with benchlib's navigation bar), and the index of a data folder's experiments
(``data_index.html.j2``). No page loads anything from the network: static figures are
embedded PNGs, interactive ones (plotly) are drawn by the plotly.js file beside the pages
(:func:`shared_plotly_js`: one copy per report folder, which the pages reference by a
relative path).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..store import folders
from ..version import __version__

TEMPLATES = Path(__file__).parent / "templates"
REPORTS_DIR = "reports"
TITLES = {"summary": "summary", "heatmaps": "heatmaps", "timeseries": "time series", "compare": "compare"}
# an interactive plot's output type (plots.interactive.figure.MIME, plotly's): named here,
# as importing benchlib.plots for it would load matplotlib into the command (0.4 s a render)
PLOTLY_MIME = "application/vnd.plotly.v1+json"


@dataclass
class Nav:
    """The navigation bar of a report page: back to the index, the experiment's pages
    (``current`` in bold), the experiment's name and a note (when it was rendered)."""
    experiment: str
    current: str | None = None
    pages: dict[str, str] = field(default_factory=dict)   # notebook -> its page's file name
    note: str = ""
    titles: dict[str, str] = field(default_factory=lambda: dict(TITLES))


def render_html(notebook: Path, output: Path, nav: Nav | None = None) -> Path:
    """The executed notebook as a self-contained HTML page without input cells (no
    scripts from the network: figures are embedded PNGs or plotly with the folder's plotly.js; warnings on stderr are left
    out of the page, the executed notebook keeps them)."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", [])
                            if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
    exporter = HTMLExporter(template_name="lab", exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, exclude_anchor_links=True,
                            extra_loaders=[jinja2.FileSystemLoader(str(TEMPLATES))])
    exporter.template_file = "report_page.html.j2"
    body, _ = exporter.from_notebook_node(
        nb, resources={"benchlib_nav": asdict(nav) if nav else None,
                       "benchlib_plotlyjs": _plotly_js_if_used(nb, Path(output).parent)})
    return publish(output, body)


def _plotly_js_if_used(nb, folder: Path) -> str | None:
    """The name of the page folder's plotly.js file (written there once: the pages of a
    report share one copy, not 4.8 MB each) when an output is an interactive plot, else None."""
    if not any(PLOTLY_MIME in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])):
        return None
    return shared_plotly_js(folder).name


def shared_plotly_js(folder: Path) -> Path:
    """``<folder>/plotly-<version>.min.js``, the plotly.js its pages load (by a relative
    path: from the folder itself, never the network); written when absent. The version
    in its name: pages rendered by another plotly keep the file they were made with."""
    from plotly.offline import get_plotlyjs_version
    path = Path(folder) / f"plotly-{get_plotlyjs_version()}.min.js"
    if not path.is_file() or path.stat().st_size < 1_000_000:   # none yet, or cut short
        from ..plots.interactive import plotly_js   # (benchlib.plots loads matplotlib: only then)
        publish(path, plotly_js())
    return path


def write_index(data_dir) -> Path:
    """``<data_dir>/index.html``: every experiment with reports, its headline and pages."""
    import jinja2

    data_dir = Path(data_dir)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=True, keep_trailing_newline=True)
    page = env.get_template("data_index.html.j2").render(
        rows=_index_rows(data_dir),
        data_name=data_dir.resolve().name,   # never its absolute path: the index is published
        version=__version__, now=f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M}")
    return publish(data_dir / "index.html", page)


def _index_rows(data_dir: Path) -> list[dict]:
    """What the index shows of each experiment, from its ``report.json`` (one that
    cannot be read, or is not a report's, is left out)."""
    rows = []
    for rj in sorted(data_dir.glob(f"*/{REPORTS_DIR}/report.json")):
        try:
            info = json.loads(rj.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(info, dict) or not isinstance(info.get("pages") or {}, dict):
            continue   # not a report.json benchlib wrote
        exp, pages = rj.parent.parent.name, info.get("pages") or {}
        rows.append({"experiment": exp, "base": f"{exp}/{REPORTS_DIR}",
                     "first": next(iter(pages.values()), ""),
                     "links": [(TITLES.get(n, n), href) for n, href in pages.items()],
                     "headline": str(info.get("headline", "")), "runs": info.get("runs", ""),
                     "errors": [str(e) for e in info.get("errors") or []],
                     "rendered": str(info.get("rendered", ""))[:16].replace("T", " ")})
    return rows


def publish(path: Path, text: str) -> Path:
    """Write a page atomically, readable by all (a web server serves the data folder).

    File modes, one rule: what a web server serves — everything under ``reports/`` (the
    pages, the executed report notebooks, ``report.json``) and ``index.html`` — is 0644
    and made of masked values only; what the run and experiment folders hold (meta.json,
    experiment.json, the tables, logs, an executed experiment.ipynb) is the owner's, 0600,
    as it describes the targets (store/folders.py writes it so)."""
    folders.write_text(path, text)
    path.chmod(0o644)
    return path
