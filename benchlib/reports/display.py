"""What the notebooks show, each in one call: a heading with the experiment's headline
(:func:`header`), the one-line summaries side by side (:func:`side_by_side`), the seed's
"Show Summary" as Markdown and tables (:func:`show_summary`).
"""
from __future__ import annotations

import html
import re

import pandas as pd

from ..points import point_values
from ..summaries.formatting import to_float
from .memo import once

INF = float("inf")   # sorts a configuration whose threads (repetition) are unknown last


def headline(res: dict) -> str:
    """One line: the best point of the matrix (mean throughput over its repetitions; a
    batched workload's in rows/s), the p99 of its main calls, and how many runs are ok
    (:mod:`..summaries.headline`)."""
    from ..summaries.headline import headline_text
    runs = res.get("runs", pd.DataFrame())
    ok = int((runs["status"] == "ok").sum()) if "status" in runs else 0
    tail = f"{ok}/{len(runs)} runs ok"
    return once("headline " + tail, res, lambda: headline_text(res, tail))


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
    from ..summaries import not_finished
    if note := not_finished(res):   # a killed or failed run: where it stopped
        lines.append("\n".join(f"- {html.escape(line)}" for line in note.splitlines()))
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
        col, key = _column(r, params.get((r["experiment"], r["run_id"]), {}), many, reps)
        order[col] = key
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


def _column(r, p: dict, many: bool, reps: bool) -> tuple[tuple[str, str], tuple]:
    """The (configuration, point) column of a summary row and the key that sorts the
    columns: configuration, threads, target ops/s (max last), the workload's matrix
    values (ybio's batch_size=100,pct_update=10: schema.POINT), repetition."""
    cfg = str(r["config"]) if isinstance(r["config"], str) else str(r["run_id"])
    tgt = to_float(p.get("target_ops_per_s"), 0.0)
    thr = to_float(p.get("threads"), INF)
    point = f"{f'{thr:g}' if thr != INF else '?'} thr, " + (f"{tgt:,.0f}/s" if tgt > 0 else "max")
    matrix = p.get("point") if isinstance(p.get("point"), str) else ""
    point += f", {matrix}" if matrix else ""
    if reps:
        point += f", rep {p.get('repetition')}"
    col = (f"{r['experiment']}/{cfg}" if many else cfg, point)
    order = tuple(to_float(v, v) for v in point_values(matrix).values())
    return col, (col[0], thr, tgt if tgt > 0 else INF, order, to_float(p.get("repetition"), INF))


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


def against_base(res: dict):
    """The experiment's configurations set against its first (the base), per point, run
    loop and metric (:mod:`..summaries.against_base`): a table coloured as a heatmap,
    green where a configuration is better than the base, red where worse (the deeper,
    the larger the ratio: log2, up to 2×), uncoloured and marked ``~`` where the
    difference is not significant. A line saying so when there is one configuration."""
    from IPython.display import Markdown

    from ..summaries import against_base as ab
    from ..summaries.pairing import only_config
    runs = res.get("runs", pd.DataFrame())
    order = runs.sort_values("started")["config"] if "started" in runs else runs.get("config", [])
    configs = [str(c) for c in dict.fromkeys(order) if pd.notna(c)]
    if len(configs) < 2:
        return Markdown("*One configuration: nothing to set against a base "
                        "(`benchlib compare BASE B C …` sets experiments against one).*")
    df = ab.against_base(only_config(res, configs[0]),   # each configuration's target with the base's
                         [(c, only_config(res, c)) for c in configs[1:]],
                         pairs=[(configs[0], c) for c in configs[1:]])
    if not len(df):
        return Markdown(f"*No point of {', '.join(configs[1:])} matches one of {configs[0]}.*")
    text = ab.table(df)
    scores = df.assign(score=[ab.score(r) for _, r in df.iterrows()]).pivot_table(
        index=list(text.index.names), columns="config", values="score", aggfunc="first",
        sort=False).reindex(index=text.index, columns=text.columns)
    return text.style.apply(lambda _: scores.map(score_colour), axis=None).set_caption(
        f"X / {configs[0]} (the base): ratio [95% interval]; {ab.NOT_SIGNIFICANT} not significant")


def score_colour(score: float) -> str:
    """A table cell's colour from its score (:func:`..summaries.against_base.score`):
    green better, red worse, the deeper the larger (up to 2×); none where not significant."""
    if pd.isna(score) or score == 0:
        return ""
    a = min(abs(score), 1.0) * 0.6 + 0.1
    rgb = "26, 152, 80" if score > 0 else "215, 48, 39"
    return f"background-color: rgba({rgb}, {a:.2f})"


def time_series_runs(res: dict, run_ids=None, max_runs: int = 8) -> tuple[list[str], str]:
    """The runs a time series page draws and a line saying which and what it left out:
    the headline's best run first, then the others by name; ``run_ids`` (ids or shell
    patterns such as ``*batch_size10000*``, ``benchlib report --runs``) keeps only those
    that match; at most ``max_runs``."""
    from fnmatch import fnmatchcase

    from ..summaries.headline import best_point
    runs = res.get("runs", pd.DataFrame())
    ids = sorted(dict.fromkeys(runs["run_id"].astype(str))) if len(runs) else []
    if run_ids:
        wanted = [run_ids] if isinstance(run_ids, str) else list(run_ids)
        ids = [r for r in ids if any(fnmatchcase(r, w) for w in wanted)]
    try:
        best = once("best point", res, lambda: best_point(res))
    except Exception:  # noqa: BLE001 - the page still draws the runs by name
        best = None
    first = str(best["name"]).rsplit("/", 1)[-1] if best else None
    if first in ids:
        ids = [first, *[r for r in ids if r != first]]
    shown, left = ids[:max_runs], ids[max_runs:]
    said = f"{len(shown)} run{'s' if len(shown) != 1 else ''}" + (f", the best ({first}) first" if first in shown else "")
    if run_ids:
        # in code spans: the page's markdown would read a pattern's * as emphasis
        said += f", of those matching {', '.join(f'`{w}`' for w in wanted)}"
    if left:
        said += f"; {len(left)} not drawn: {', '.join(left)} (run_ids, or `benchlib report --runs PATTERN`)"
    return shown, said
