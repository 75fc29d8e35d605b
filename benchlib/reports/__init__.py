"""Reports: the analysis notebooks run by papermill on an experiment, rendered to HTML
without their code, and an index page of the experiments of a data folder.

``report("data/<experiment>")`` writes

    data/<experiment>/reports/summary.ipynb     each notebook as executed by papermill
    data/<experiment>/reports/summary.html      (a failed one keeps its error there and
    data/<experiment>/reports/heatmaps.*         in its page), rendered without inputs
    data/<experiment>/reports/timeseries.*
    data/<experiment>/reports/report.json       headline, pages and errors, for the index
    data/index.html                             every experiment's reports and headline

and returns the summary page. The modules: :mod:`.execute` (papermill: where the
notebooks are, running them, :func:`run_experiment_notebook`), :mod:`.kernel` (the
kernels a report's notebooks share), :mod:`.memo` (the headline once per content), :mod:`.html` (the pages,
from the jinja2 templates in ``templates/``), :mod:`.display` (what the notebooks
show: :func:`header`, :func:`side_by_side`, :func:`show_summary`, so each stays a few
calls), :mod:`.explore` (the widgets of ``explore.ipynb``: :func:`explorer`). This module is the report's orchestration and the public names.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from ..masking import mask_text
from ..store import folders as results
from ..store.place import writable_folder
from ..version import __version__
from .comparison import combined, compare_runs, configs_against_base, configs_table, experiments_in, runs_apart, time_series
from .display import against_base, header, headline, show_summary, side_by_side, time_series_runs
from .explore import explorer
from .execute import ReportError, execute_all, notebooks_dir, run_experiment_notebook, imports_before_threads
from .html import REPORTS_DIR, TITLES, Nav, publish, render_html, write_index

# reports.execute is the module (papermill), its function is reports.execute.execute

REPORT_NOTEBOOKS = ("summary", "heatmaps", "timeseries")
COMPARE = "compare"   # the compare page: an experiment of several configurations, or several experiments


def report(experiment_dir, *, open_browser: bool = False, progress: bool | None = None,
           static: bool = False, runs: list[str] | None = None, base: str | None = None) -> Path:
    """Execute the analysis notebooks on an experiment, render them, update the index.

    The plots are interactive (plotly: hover, zoom, legend toggles; one plotly.js file in
    the reports folder that the pages share, nothing from the network); ``static=True`` draws them as PNG images.
    ``runs``: the run ids (or shell patterns) the time series page draws; default every
    run, the headline's best first, at most 8.

    Returns ``<experiment_dir>/reports/summary.html``. A notebook that fails keeps its
    executed copy with the error (and its page shows it); the others are still made,
    the index is still written, and then :class:`ReportError` says which failed.
    """
    exp_dir = Path(experiment_dir).resolve()
    if not results.find_runs(exp_dir):  # ResultsError when the folder does not exist
        raise results.ResultsError(f"{experiment_dir}: no runs to report on")
    out = exp_dir / REPORTS_DIR
    for where in (exp_dir.parent, out if out.is_dir() else exp_dir):   # the index, the pages
        writable_folder(where, "the report is written there", make=False)
    notebooks = report_notebooks(exp_dir)
    pages = {name: f"{name}.html" for name in notebooks}
    errors: list[str] = []
    rendered = datetime.now(timezone.utc)
    params = {"experiment_dir": str(exp_dir), "experiment_dirs": [str(exp_dir)], "interactive": not static}
    if base:   # the compare page's base (else the experiment's base:, else its first)
        params["base"] = base
    if runs:   # the time series page's runs: ids or patterns (display.time_series_runs)
        params["run_ids"] = list(runs)
    note = f"rendered {rendered:%Y-%m-%d %H:%M} UTC"

    def page(name: str, err: str | None) -> None:   # as each notebook ends, while others run
        ipynb = out / f"{name}.ipynb"
        if ipynb.exists():
            ipynb.chmod(0o644)   # served beside its page (html.publish: the file modes' rule)
            render_html(ipynb, out / pages[name], Nav(exp_dir.name, name, pages, note + (" · FAILED" if err else "")))

    from concurrent.futures import ThreadPoolExecutor

    imports_before_threads()
    with ThreadPoolExecutor(max_workers=1) as side:   # the index's headline, beside the kernels
        line = side.submit(_headline_line, exp_dir)
        failed = execute_all(notebooks, out, params, exp_dir.name, progress, on_done=page)
    for name in notebooks:
        if failed.get(name):
            errors.append(failed[name])
        if not (out / f"{name}.ipynb").exists():
            pages.pop(name)
    _write_report_json(exp_dir, pages, errors, rendered, line.result())
    index = write_index(exp_dir.parent)
    main = out / pages.get("summary", "summary.html")
    if open_browser:
        import webbrowser
        webbrowser.open(main.as_uri())
    if errors:
        raise ReportError(f"report of {exp_dir.name}: {len(errors)} of {len(notebooks)} "
                          f"notebooks failed: {'; '.join(errors)} (pages in {out}, index {index})")
    return main


def compare_report(experiment_dirs, *, base: str | None = None, runs: list[str] | None = None,
                   static: bool = False, progress: bool | None = None, open_browser: bool = False) -> Path:
    """The compare page of two or more experiments (a data folder: its experiments),
    ``<data>/compare-<A>-<B>…/reports/compare.html`` beside them, listed in the data
    folder's index: each configuration against ``base`` (else the first experiment's
    ``base:``, else its first configuration), the heatmaps, the ``runs`` overlaid.
    :class:`ReportError` when the notebook fails (its page keeps the error)."""
    dirs = [e for d in experiment_dirs for e in experiments_in(Path(d).resolve())]
    dirs = list(dict.fromkeys(dirs))
    if len(dirs) < 2:
        raise results.ResultsError(f"{', '.join(map(str, experiment_dirs))}: one experiment; the "
                                   "compare page sets two or more side by side (its own report has "
                                   "one when it has several configurations)")
    data = dirs[0].parent
    out_dir = data / ("compare-" + "-".join(d.name for d in dirs))[:120]
    out = out_dir / REPORTS_DIR
    writable_folder(data, "the compare page is written there", make=False)
    params = {"experiment_dirs": [str(d) for d in dirs], "base": base, "interactive": not static}
    if runs:
        params["run_ids"] = list(runs)
    err = execute_all((COMPARE,), out, params, out_dir.name, progress).get(COMPARE)
    rendered = datetime.now(timezone.utc)
    pages = {COMPARE: f"{COMPARE}.html"}
    ipynb = out / f"{COMPARE}.ipynb"
    if ipynb.exists():
        ipynb.chmod(0o644)
        note = f"{' · '.join(d.name for d in dirs)} · rendered {rendered:%Y-%m-%d %H:%M} UTC" + (" · FAILED" if err else "")
        render_html(ipynb, out / pages[COMPARE], Nav(out_dir.name, COMPARE, pages, note))
    names = ", ".join(d.name for d in dirs)
    publish(out / "report.json", json.dumps({
        "experiment": out_dir.name, "headline": mask_text(f"compare {names}" + (f", base {base}" if base else "")),
        "pages": pages, "errors": [mask_text(err)] if err else [], "runs": "",
        "rendered": rendered.isoformat(), "benchlib_version": __version__, "compares": [d.name for d in dirs]},
        indent=2))
    write_index(data)
    if open_browser:
        import webbrowser
        webbrowser.open((out / pages[COMPARE]).as_uri())
    if err:
        raise ReportError(f"compare page of {names}: {err} (page in {out})")
    return out / pages[COMPARE]


def _headline_line(exp_dir: Path) -> tuple[str, int]:
    """The experiment's headline for the index, and its number of runs."""
    res = results.load_results(exp_dir)
    try:
        return headline(res), len(res["runs"])
    except Exception as e:  # noqa: BLE001 - the index must not be lost to one odd experiment
        return f"(no headline: {type(e).__name__}: {e})", len(res["runs"])


def _write_report_json(exp_dir: Path, pages: dict, errors: list[str], rendered: datetime,
                       headline_runs: tuple[str, int]) -> None:
    """``reports/report.json``: what the data folder's index shows of the experiment. Like
    the pages and the index made from it, it is published readable by all (0644: a web
    server serves the reports), so it holds nothing a run folder keeps private: figures,
    page names, and the notebooks' error lines with any URL in them masked."""
    line, runs = headline_runs
    publish(exp_dir / REPORTS_DIR / "report.json", json.dumps({
        "experiment": exp_dir.name, "headline": mask_text(line), "pages": pages,
        "errors": [mask_text(e) for e in errors], "runs": runs,
        "rendered": rendered.isoformat(), "benchlib_version": __version__}, indent=2))


def report_notebooks(exp_dir: Path) -> tuple[str, ...]:
    """The analysis notebooks of an experiment's report: the common ones, the compare
    page where it has several targets (configurations), then those its workload adds (``Workload.report_notebooks``, e.g. ybio's RIOPS plot)."""
    names = list(REPORT_NOTEBOOKS)
    try:
        spec = json.loads((exp_dir / "experiment.json").read_text())
        workload = spec.get("workload")
    except (OSError, ValueError, AttributeError):
        spec, workload = {}, None  # an imported run: no experiment.json
    if len(spec.get("targets") or []) > 1:   # configurations: each against the base, on a page
        names.append(COMPARE)
    if workload:
        from ..registries.workloads import workload_class
        try:
            names += [n for n in workload_class(workload).report_notebooks if n not in names]
        except ValueError:
            pass
    return tuple(names)


__all__ = ["COMPARE", "REPORT_NOTEBOOKS", "against_base", "combined", "compare_report", "compare_runs", "configs_against_base",
           "configs_table", "experiments_in", "runs_apart", "time_series", "REPORTS_DIR", "TITLES", "Nav", "ReportError", "execute_all", "explorer",
           "header", "headline", "notebooks_dir", "render_html", "report", "report_notebooks",
           "run_experiment_notebook", "show_summary", "side_by_side", "time_series_runs", "write_index"]
