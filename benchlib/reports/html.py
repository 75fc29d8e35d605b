"""The report's HTML pages, from the jinja2 templates in ``templates/``: an executed
notebook as a page without its code (``report_page.html.j2``, nbconvert's "lab" page
with benchlib's navigation bar), and the index of a data folder's experiments
(``data_index.html.j2``). Pages are self-contained: no scripts from the network;
static figures are embedded PNGs, interactive ones (plotly) are drawn by the plotly.js
the page carries inline, once, in its head.
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
TITLES = {"summary": "summary", "heatmaps": "heatmaps", "timeseries": "time series"}


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
    scripts from the network: figures are embedded PNGs or plotly with plotly.js inline; warnings on stderr are left
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
                       "benchlib_plotlyjs": _plotly_js_if_used(nb)})
    return publish(output, body)


def _plotly_js_if_used(nb) -> str | None:
    """plotly.js for the page's head when an output is an interactive plot, else None."""
    from ..plots.interactive.figure import MIME
    if not any(MIME in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])):
        return None
    from ..plots.interactive import plotly_js
    return plotly_js()


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
