"""Reports: the analysis notebooks run by papermill on an experiment, rendered to HTML
without their code, and an index page of the experiments of a data folder.

``report("data/<experiment>")`` writes

    data/<experiment>/reports/summary.ipynb     each notebook as executed by papermill
    data/<experiment>/reports/summary.html      (a failed one keeps its error there and
    data/<experiment>/reports/heatmaps.*         in its page), rendered without inputs
    data/<experiment>/reports/timeseries.*
    data/<experiment>/reports/report.json       headline, pages and errors, for the index
    data/index.html                             every experiment's reports and headline

and returns the summary page. The notebooks are read from ``$BENCHLIB_NOTEBOOKS`` if
set, else from ``notebooks/`` of the source checkout benchlib is installed from
(``Path(benchlib.__file__).parents[1] / "notebooks"``; the Makefile installs with
``pip install -e``). They are not package data on purpose: the reports run the very
notebooks a user opens and edits in Jupyter.

:func:`run_experiment_notebook` runs ``experiment.ipynb`` on experiment YAMLs (the
keys become notebook parameters, later files win, as papermill's ``-f``) and keeps the
executed notebook in the experiment folder as the experiment's log. The notebooks
show what they show through :func:`header`, :func:`side_by_side` and
:func:`show_summary`, so each stays a few calls.
"""
from __future__ import annotations

import ast
import html
import json
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from .. import __version__
from ..store import folders as results

REPORT_NOTEBOOKS = ("summary", "heatmaps", "timeseries")
TITLES = {"summary": "summary", "heatmaps": "heatmaps", "timeseries": "time series"}
KERNEL = "python3"
REPORTS_DIR = "reports"


class ReportError(Exception):
    """A report that could not be made in full; the message is one line."""


def notebooks_dir() -> Path:
    """Where the notebooks are: ``$BENCHLIB_NOTEBOOKS``, else the checkout's notebooks/."""
    env = os.environ.get("BENCHLIB_NOTEBOOKS")
    # reports/ is a package: the checkout is two folders up from this file
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "notebooks"
    if not (path / "summary.ipynb").is_file():
        raise ReportError(f"{path}: no benchlib notebooks there (install benchlib from its "
                          f"checkout with pip install -e, or set BENCHLIB_NOTEBOOKS)")
    return path


def _progress(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else bool(progress)


def execute(name: str, output: Path, parameters: dict, *, progress: bool | None = None) -> str | None:
    """Execute ``notebooks/<name>.ipynb`` into ``output``; None when it ran through, else
    one line naming the notebook and the failing cell (the output keeps the error)."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    output.parent.mkdir(parents=True, exist_ok=True)
    src = notebooks_dir() / f"{name}.ipynb"
    try:
        papermill.execute_notebook(str(src), str(output), parameters=parameters,
                                   kernel_name=KERNEL, progress_bar=_progress(progress),
                                   cwd=str(src.parent), log_output=False, start_timeout=120,
                                   # ipykernel 7 warns about TCP on every start: not news
                                   extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    except PapermillExecutionError as e:
        msg = (str(e.evalue).strip().splitlines() or [""])[0]
        return f"{name}.ipynb failed in cell In [{e.exec_count}]: {e.ename}: {msg}"
    except Exception as e:  # noqa: BLE001 - no kernel, a broken notebook: one line, work kept
        msg = (str(e).strip().splitlines() or [""])[0]
        return f"{name}.ipynb could not run: {type(e).__name__}: {msg}"
    return None


# ---------------------------------------------------------------- HTML

CSS = """
body { background: #fff; }
main { max-width: 1280px; margin: 0 auto; padding: 0 20px 48px; }
.benchlib-nav { font: 14px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif;
  max-width: 1280px; margin: 0 auto; padding: 10px 20px; border-bottom: 1px solid #d0d7de; }
.benchlib-nav a { color: #0969da; text-decoration: none; margin-right: 14px; }
.benchlib-nav b { margin-right: 14px; }
.benchlib-nav .meta { float: right; color: #57606a; }
.jp-Cell { padding: 2px 0; }
.jp-OutputArea-output { overflow-x: auto; }
.jp-RenderedText pre { white-space: pre; font-size: 12px; line-height: 1.35; }
.jp-RenderedHTMLCommon table { font-size: 12px; table-layout: auto; margin: 4px 0 12px; }
.jp-RenderedHTMLCommon thead th { white-space: normal; max-width: 12em; vertical-align: bottom; }
.jp-RenderedHTMLCommon thead th[colspan] { text-align: center; border-bottom: 1px solid #d0d7de; }
.jp-RenderedHTMLCommon tbody th, .jp-RenderedHTMLCommon td { white-space: nowrap; }
.jp-RenderedHTML pre.benchlib-text { white-space: pre-wrap; font-size: 12px; }
.jp-RenderedImage img, .jp-OutputArea-output img { max-width: 100%; height: auto; }
"""
_TEMPLATE = """{%- extends 'index.html.j2' -%}
{% block html_head_js %}{% endblock html_head_js %}
{% block html_head_js_mathjax %}{% endblock html_head_js_mathjax %}
{% block html_head_js_mermaidjs %}{% endblock html_head_js_mermaidjs %}
{% block extra_css %}<style type="text/css">{{ resources.benchlib_css }}</style>{% endblock extra_css %}
{% block body_header %}{{ super() }}{{ resources.benchlib_nav }}{% endblock body_header %}
"""


def _nav(experiment: str, current: str | None, pages: dict[str, str], note: str = "") -> str:
    links = ['<a href="../../index.html">all experiments</a>']
    for name, href in pages.items():
        title = html.escape(TITLES.get(name, name))
        links.append(f"<b>{title}</b>" if name == current else f'<a href="{href}">{title}</a>')
    meta = f'<span class="meta">{html.escape(experiment)}{" · " + html.escape(note) if note else ""}</span>'
    return f'<nav class="benchlib-nav">{meta}{"".join(links)}</nav>'


def render_html(notebook: Path, output: Path, nav: str = "") -> Path:
    """The executed notebook as a self-contained HTML page without input cells (no
    scripts from the network; figures are embedded PNGs; warnings on stderr are left
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
                            extra_loaders=[jinja2.DictLoader({"benchlib.html.j2": _TEMPLATE})])
    exporter.template_file = "benchlib.html.j2"
    body, _ = exporter.from_notebook_node(nb, resources={"benchlib_nav": nav, "benchlib_css": CSS})
    return _publish(output, body)


def _publish(path: Path, text: str) -> Path:
    """Write a page atomically, readable by all (a web server serves the data folder)."""
    results.write_text(path, text)
    path.chmod(0o644)
    return path


# ---------------------------------------------------------------- report

def report(experiment_dir, *, open_browser: bool = False, progress: bool | None = None) -> Path:
    """Execute the analysis notebooks on an experiment, render them, update the index.

    Returns ``<experiment_dir>/reports/summary.html``. A notebook that fails keeps its
    executed copy with the error (and its page shows it); the others are still made,
    the index is still written, and then :class:`ReportError` says which failed.
    """
    exp_dir = Path(experiment_dir).resolve()
    if not results.find_runs(exp_dir):  # ResultsError when the folder does not exist
        raise results.ResultsError(f"{experiment_dir}: no runs to report on")
    out = exp_dir / REPORTS_DIR
    notebooks = report_notebooks(exp_dir)
    pages = {name: f"{name}.html" for name in notebooks}
    errors: list[str] = []
    rendered = datetime.now(timezone.utc)
    failed = _execute_all(notebooks, out, {"experiment_dir": str(exp_dir)}, exp_dir.name, progress)
    for name in notebooks:
        ipynb, err = out / f"{name}.ipynb", failed.get(name)
        if err:
            errors.append(err)
        if ipynb.exists():
            note = f"rendered {rendered:%Y-%m-%d %H:%M} UTC" + (" · FAILED" if err else "")
            render_html(ipynb, out / pages[name], _nav(exp_dir.name, name, pages, note))
        else:
            pages.pop(name)
    res = results.load_results(exp_dir)
    try:
        line = headline(res)
    except Exception as e:  # noqa: BLE001 - the index must not be lost to one odd experiment
        line = f"(no headline: {type(e).__name__}: {e})"
    results.write_json(out / "report.json", {
        "experiment": exp_dir.name, "headline": line, "pages": pages, "errors": errors,
        "runs": len(res["runs"]), "rendered": rendered.isoformat(),
        "benchlib_version": __version__})
    index = write_index(exp_dir.parent)
    main = out / pages.get("summary", "summary.html")
    if open_browser:
        import webbrowser
        webbrowser.open(main.as_uri())
    if errors:
        raise ReportError(f"report of {exp_dir.name}: {len(errors)} of {len(notebooks)} "
                          f"notebooks failed: {'; '.join(errors)} (pages in {out}, index {index})")
    return main


def report_notebooks(exp_dir: Path) -> tuple[str, ...]:
    """The analysis notebooks of an experiment's report: the common ones, then those
    its workload adds (``Workload.report_notebooks``, e.g. ybio's RIOPS plot)."""
    names = list(REPORT_NOTEBOOKS)
    try:
        workload = json.loads((exp_dir / "experiment.json").read_text()).get("workload")
    except (OSError, ValueError):
        workload = None  # an imported run: no experiment.json
    if workload:
        from ..workloads.registry import workload_class
        try:
            names += [n for n in workload_class(workload).report_notebooks if n not in names]
        except ValueError:
            pass
    return tuple(names)


def _execute_all(notebooks: tuple[str, ...], out: Path, parameters: dict, label: str,
                 progress: bool | None) -> dict[str, str]:
    """Run the report notebooks side by side (each in its own kernel: most of a
    notebook's time is its kernel starting and importing, which overlaps well), with
    one progress bar over the notebooks. Returns {notebook: error line} of the failed."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from tqdm.auto import tqdm
    failed: dict[str, str] = {}
    bar = tqdm(total=len(notebooks), desc=f"report {label}", unit="notebook",
               disable=not _progress(progress))
    with bar, ThreadPoolExecutor(max_workers=min(len(notebooks), 4)) as pool:
        jobs = {pool.submit(execute, name, out / f"{name}.ipynb", parameters, progress=False): name
                for name in notebooks}
        for job in as_completed(jobs):
            err = job.result()
            if err:
                failed[jobs[job]] = err
                bar.write(f"report: {err}", file=sys.stderr)
            bar.update()
    return failed


def write_index(data_dir) -> Path:
    """``<data_dir>/index.html``: every experiment with reports, its headline and pages."""
    data_dir = Path(data_dir)
    rows = []
    for rj in sorted(data_dir.glob(f"*/{REPORTS_DIR}/report.json")):
        try:
            info = json.loads(rj.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        exp = rj.parent.parent.name
        base = f"{html.escape(exp)}/{REPORTS_DIR}"
        links = " · ".join(f'<a href="{base}/{html.escape(href)}">{html.escape(TITLES.get(n, n))}</a>'
                           for n, href in info.get("pages", {}).items())
        errs = info.get("errors") or []
        status = (f'<span class="bad" title="{html.escape("; ".join(errs))}">'
                  f'{len(errs)} failed</span>' if errs else '<span class="ok">ok</span>')
        first = next(iter(info.get("pages", {}).values()), "")
        rows.append(f'<tr><td class="nw"><a href="{base}/{html.escape(first)}"><b>{html.escape(exp)}</b></a></td>'
                    f'<td>{html.escape(str(info.get("headline", "")))}</td><td class="nw">{links}</td>'
                    f'<td class="nw">{info.get("runs", "")}</td><td class="nw">{status}</td>'
                    f'<td class="nw">{html.escape(str(info.get("rendered", ""))[:16].replace("T", " "))}</td></tr>')
    body = "\n".join(rows) or '<tr><td colspan="6">no reports yet</td></tr>'
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>benchlib reports: {html.escape(data_dir.resolve().name)}</title>
<style>
body {{ font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328; }}
main {{ max-width: 1280px; margin: 0 auto; padding: 16px 20px 48px; }}
h1 {{ font-size: 22px; margin: 8px 0 4px; }} p {{ color: #57606a; margin: 0 0 16px; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ text-align: left; padding: 7px 10px; border-bottom: 1px solid #d0d7de; vertical-align: top; }}
th {{ background: #f6f8fa; }} a {{ color: #0969da; text-decoration: none; }}
.ok {{ color: #1a7f37; }} .bad {{ color: #cf222e; font-weight: 600; }} .nw {{ white-space: nowrap; }}
</style></head>
<body><main><h1>benchlib reports</h1>
<p>{html.escape(str(data_dir.resolve()))} · benchlib {__version__} · {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC</p>
<table><thead><tr><th>experiment</th><th>headline</th><th>reports</th><th>runs</th><th>status</th><th>rendered (UTC)</th></tr></thead>
<tbody>
{body}
</tbody></table></main></body></html>
"""
    return _publish(data_dir / "index.html", page)


# ---------------------------------------------------------------- what the notebooks show

def headline(res: dict) -> str:
    """One line: the best run's throughput (Σ ops / Σ secs over its run loops) and p99 of
    each operation (merged histograms), and how many runs are ok."""
    from .. import plots
    tp = plots.points(res, "ops_per_s").dropna(subset=["value"])
    runs = res.get("runs", pd.DataFrame())
    ok = int((runs["status"] == "ok").sum()) if "status" in runs else 0
    tail = f"{ok}/{len(runs)} runs ok"
    if len(tp) == 0:
        return f"no measured steps · {tail}"
    best = tp.loc[tp["value"].idxmax()]
    lat = plots.points(res, "p99_us")
    lat = lat[(lat["run_id"] == best["run_id"]) & (lat["experiment"] == best["experiment"])]
    from ..summaries.response import BATCH_SUFFIX, op_order
    p99 = [f"{op} {_us(lat.loc[lat['op'] == op, 'value'].iloc[0])}"
           for op in op_order(lat) if not op.endswith(BATCH_SUFFIX)]
    many = tp["experiment"].astype("object").nunique() > 1
    name = f"{best['experiment']}/{best['run_id']}" if many else best["run_id"]
    return (f"best {name}: {best['value']:,.0f} ops/s"
            + (f", p99 {', '.join(p99)}" if p99 else "") + f" · {tail}")


def _us(v: float) -> str:
    if pd.isna(v):
        return "n/a"
    return f"{v / 1000:,.1f} ms" if v >= 10_000 else f"{v:,.0f} µs"


def header(res: dict, title: str):
    """A Markdown heading for a notebook: title, experiment(s) and what each is (its
    description), the headline."""
    from IPython.display import Markdown

    from ..summaries.metainfo import run_metas
    described: dict[str, str] = {}
    for m in run_metas(res):
        params = m.get("parameters") if isinstance(m.get("parameters"), dict) else {}
        exp = str(m.get("experiment") or "")
        if exp and (params.get("description") or exp not in described):
            described[exp] = params.get("description") or ""
    names = sorted(described)
    lines = [f"## {title}: experiment{'s' if len(names) > 1 else ''} {', '.join(names) or '(no runs)'}"]
    if len(names) == 1 and described[names[0]]:
        lines.append(f"*{described[names[0]]}*")
    elif len(names) > 1:
        lines.append("\n".join(f"- **{n}**" + (f": *{described[n]}*" if described[n] else "")
                               for n in names))
    lines.append(f"**{headline(res)}**")
    return Markdown("\n\n".join(lines))


def side_by_side(res: dict, kind: str = "run") -> pd.DataFrame:
    """The one-line summary ``kind`` turned on its side: one column per configuration
    and point of the matrix (threads, target), one row per step × figure, each figure
    formatted as the seed prints it (so the configurations read across)."""
    from .. import plots
    from ..summaries import summary_frame
    from ..summaries.formatting import ID_COLS, block_specs, format_value
    from ..summaries.stepstats import step_sort_key
    frame = summary_frame(res, kind)
    if len(frame) == 0:
        return pd.DataFrame()
    params = {(p["experiment"], p["run_id"]): p for p in plots.run_parameters(res).to_dict("records")}
    many = frame["experiment"].astype("object").nunique() > 1
    reps = any((p.get("repetition") or 1) > 1 for p in params.values())
    specs = {s[0]: s[3] for phase in ("run", "load") for s in block_specs(frame, kind, phase)}
    figures = [c for c in frame.columns if c not in (*ID_COLS, "cnf", "engine") and c in specs]
    cells: dict[tuple, dict] = {}
    names: dict[tuple, str] = {}
    order: dict[tuple, tuple] = {}
    for _, r in frame.iterrows():
        p = params.get((r["experiment"], r["run_id"]), {})
        cfg = str(r["config"]) if isinstance(r["config"], str) else str(r["run_id"])
        tgt = p.get("target_ops_per_s")
        tgt = float(tgt) if tgt is not None and pd.notna(tgt) and float(tgt) > 0 else None
        thr = _num(p.get("threads"))
        point = f"{f'{thr:g}' if thr != float('inf') and pd.notna(thr) else '?'} thr, " + \
            (f"{tgt:,.0f}/s" if tgt else "max")
        if reps:
            point += f", rep {p.get('repetition')}"
        col = (f"{r['experiment']}/{cfg}" if many else cfg, point)
        order[col] = (col[0], _num(p.get("threads")), tgt or float("inf"), _num(p.get("repetition")))
        phase = "run" if r["phase"] == "run" else "load"
        # the seed's load line has fewer figures, and names them per insert (ips, r/i …)
        shown = {s[0]: (s[2] if phase == "run" else s[1]) for s in block_specs(frame, kind, phase)}
        for fig in (f for f in figures if f in shown):
            text = format_value(r[fig], specs[fig])
            if text:
                cells.setdefault((r["step"], fig), {})[col] = text
                names[(r["step"], fig)] = shown[fig]
    keys = sorted(cells, key=lambda k: (step_sort_key(k[0]), figures.index(k[1])))
    cols = sorted(order, key=order.get)
    table = pd.DataFrame([[cells[k].get(c, "") for c in cols] for k in keys],
                         index=pd.MultiIndex.from_tuples([(k[0], names[k]) for k in keys],
                                                         names=["step", "figure"]),
                         columns=pd.MultiIndex.from_tuples(cols, names=["configuration", "point"]))
    return table


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("inf")


def show_summary(summary) -> None:
    """The seed's "Show Summary" (an :class:`~benchlib.summaries.ExperimentSummary`) as
    Markdown headings and tables, for a rendered report (blank, never NaN, where a
    figure is missing; two decimals as the seed prints them)."""
    from IPython.display import HTML, Markdown, display
    workload = _section_text(summary.text, "Workload")
    lines = [f"- {html.escape(line.strip())}" if line.startswith(" ") else
             f"\n**{html.escape(line)}**\n" for line in workload.splitlines() if line.strip()]
    display(Markdown("### Workload\n" + "\n".join(lines)))
    sections = [("connections", "Connections"), ("loading", "Loading"), ("execution", "Execution"),
                ("workflow", "Workflow"), ("ingestion_sut", "Ingestion - SUT"),
                ("ingestion_loader", "Ingestion - Loader"), ("execution_sut", "Execution - SUT"),
                ("execution_benchmarker", "Execution - Benchmarker")]
    for key, title in sections:
        df = summary.sections.get(key)
        if key == "workflow":
            parts = re.split(r"^#### (.*)$", _section_text(summary.text, "Workflow"), flags=re.MULTILINE)
            body = "".join(f"<p><b>{html.escape(head)}</b></p><pre class=\"benchlib-text\">"
                           f"{html.escape(text.strip())}</pre>" for head, text in zip(parts[1::2], parts[2::2]))
            display(Markdown(f"### {title}"), HTML(body))
        elif df is not None and len(df):
            display(Markdown(f"### {title}"), HTML(_table_html(df)))
    tests = [f"- {'✅' if ok else '❌'} TEST {'passed' if ok else 'failed'}: {html.escape(msg)}"
             for ok, msg in summary.tests]
    display(Markdown("### Tests\n\n" + "\n".join(tests)))


def _table_html(df: pd.DataFrame) -> str:
    """A section as an HTML table that fits the page: YCSB's long column names may break
    after a dot, before a parenthesis and between words; whole numbers print as such,
    other figures with the seed's two decimals; a missing figure is blank."""
    df = df.copy()
    for c in df.columns:
        numeric = df[c].dtype.kind in "fiu" or isinstance(df[c].dtype, pd.Int64Dtype)
        v = pd.to_numeric(df[c], errors="coerce").astype("float64") if numeric else None
        if v is not None and v.notna().any() and (v.dropna() % 1 == 0).all():
            df[c] = ["" if pd.isna(x) else f"{x:.0f}" for x in v]  # nullable ints print <NA>
    df.columns = [re.sub(r"(?<=[a-z])(?=[A-Z])", "\u200b",
                         str(c).replace(".", ".\u200b").replace("(", "\u200b(")) for c in df.columns]
    return df.to_html(na_rep="", float_format="{:.2f}".format, index_names=False)


def _section_text(text: str, title: str) -> str:
    """The lines of one ``### title`` section of the summary's text."""
    return text.split(f"### {title}", 1)[-1].split("\n### ", 1)[0].strip("\n")


# ---------------------------------------------------------------- experiment.ipynb

def run_experiment_notebook(*parameter_files, data_dir="data", parameters: dict | None = None,
                            progress: bool | None = None) -> Path:
    """Run ``experiment.ipynb`` on experiment YAMLs and keep the executed notebook as
    the experiment's log, ``<data_dir>/<experiment>/experiment.ipynb``.

    Each YAML's top-level keys become notebook parameters, later files (then
    ``parameters``) winning key by key — as ``papermill -f a.yaml -f b.yaml``. A key
    no file sets keeps the notebook's default. Returns the executed notebook's path;
    a bad parameter is a :class:`~benchlib.ParameterError` before anything runs, a
    failed run a :class:`ReportError` naming the cell (the notebook keeps the error).
    """
    import papermill
    import yaml

    from ..params import ParameterError, validate
    merged: dict = {}
    for f in parameter_files:
        try:
            data = yaml.safe_load(Path(f).read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ParameterError(f"{f}: {type(e).__name__}: {str(e).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise ParameterError(f"{f}: expected a mapping of keys")
        merged.update(data)
    merged.update(parameters or {})
    if parameter_files and not merged.get("source"):
        merged["source"] = str(Path(parameter_files[-1]).resolve())
    src = notebooks_dir() / "experiment.ipynb"
    declared = papermill.inspect_notebook(str(src))
    unknown = sorted(set(merged) - set(declared))
    if unknown:
        raise ParameterError(f"{', '.join(map(str, parameter_files)) or 'parameters'}: "
                             f"experiment.ipynb has no parameter {', '.join(unknown)}")
    full = {k: ast.literal_eval(v["default"]) for k, v in declared.items() if k != "data_dir"}
    full.update({k: v for k, v in merged.items() if k != "data_dir"})
    exp = validate({k: v for k, v in full.items() if v is not None}, merged.get("source") or str(src))
    data_dir = Path(merged.get("data_dir", data_dir)).resolve()
    out = data_dir / exp.experiment / "experiment.ipynb"
    err = execute("experiment", out, {**merged, "data_dir": str(data_dir)}, progress=progress)
    if err:
        raise ReportError(f"{err} (the executed notebook is {out})")
    return out


__all__ = ["ReportError", "execute", "header", "headline", "notebooks_dir", "render_html",
           "report", "run_experiment_notebook", "show_summary", "side_by_side", "write_index"]
