"""The workloads' own plots, interactive: per operation side by side (the kv mix's
ops, LinkBench's request types), ybio's RIOPS against batch_size and over batch_size ×
pct_update. Hover a bar or point for its value with its unit and the runs behind it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import INTENDED_PREFIX
from ...summaries.response import op_order
from ..compare import _group_labels
from ..style import _cap, _experiments
from ..values import points, value_spec
from ..ybio import RIOPS_LABEL, _hue_label, _panels, benchruns
from .figure import COLORS, Interactive, fmt_number, hover, new_figure, note, title
from .heatmap import heat_panels

RUN_IDS_SHOWN = 4


def _runs_text(ids) -> str:
    ids = sorted({str(i) for i in ids})
    more = f" and {len(ids) - RUN_IDS_SHOWN} more" if len(ids) > RUN_IDS_SHOWN else ""
    return f"{len(ids)} run{'s' if len(ids) > 1 else ''}: " + ", ".join(ids[:RUN_IDS_SHOWN]) + more


def _op_rates(results: dict, steps) -> pd.DataFrame:
    """Each run's ops/s per op over the selected steps: Σ its count ÷ Σ the steps' secs."""
    lat, st = results.get("latency"), results.get("steps")
    if lat is None or st is None or not len(lat) or not len(st):
        return pd.DataFrame(columns=["experiment", "run_id", "op", "value"])
    sel = st if steps is None else st[st["step"].astype("object").isin(list(steps))]
    if steps is None and "phase" in st:
        sel = st[st["phase"].astype("object") == "run"] if (st["phase"] == "run").any() else st
    keys = [k for k in ("experiment", "run_id") if k in sel and k in lat]
    secs = sel.assign(secs=pd.to_numeric(sel["secs"], errors="coerce")).groupby(keys)["secs"].sum()
    lat = lat.merge(sel[[*keys, "step"]], on=[*keys, "step"])
    count = lat.assign(count=pd.to_numeric(lat["count"], errors="coerce")).groupby([*keys, "op"])["count"].sum()
    out = (count / secs.reindex(count.index.droplevel("op")).to_numpy()).rename("value").reset_index()
    return out.assign(**{k: None for k in ("experiment", "run_id") if k not in out})


def per_op(results: dict, by: str = "config", metric=("ops_per_s", "mean_us", "p99_us"), *,
           steps=None) -> Interactive:
    """A panel per metric, the operations along x, a bar per ``by`` group (configuration,
    threads …): ops/s (Σ count ÷ Σ secs of the steps) or latency (merged histograms),
    each the mean of its runs. ``steps``: None = the run loops, or a list of step names."""
    import plotly.graph_objects as go
    metrics = [metric] if isinstance(metric, str) else list(metric)
    fig = new_figure(len(metrics), height=300 * len(metrics) + 120, shared_x=False)
    params = None
    for row, m in enumerate(metrics, start=1):
        if m == "ops_per_s":
            vals, label = _op_rates(results, steps), "throughput (ops/s)"
        else:
            vals, label = points(results, m, step=steps), value_spec(m).label
        if params is None:
            params = points(results, "ops_per_s", step=steps).drop(columns=["value"])
        if not len(vals):
            continue
        vals = vals.merge(params, on=["experiment", "run_id"], how="left", suffixes=("", "_p")) \
            if by not in vals else vals
        vals = vals.assign(_group=_group_labels(vals, by).to_numpy())
        ops = [o for o in op_order(vals[["op"]]) if not str(o).startswith(INTENDED_PREFIX)
               and vals.loc[vals["op"] == o, "value"].notna().any()]
        unit = label[label.rfind("(") + 1:-1]
        for k, (group, g) in enumerate(vals.groupby("_group", sort=True)):
            mean = g.groupby("op")["value"].mean().reindex(ops)
            runs = g.groupby("op")["run_id"].agg(_runs_text).reindex(ops).fillna("")
            fig.add_trace(go.Bar(x=ops, y=mean.to_numpy(dtype="float64"), name=str(group), legendgroup=str(group),
                                 showlegend=row == 1, marker_color=COLORS[k % len(COLORS)],
                                 text=[fmt_number(v) for v in mean], textposition="outside",
                                 customdata=runs.to_numpy(dtype="object"),
                                 hovertemplate=hover(f"{by} {group}", f"%{{x}}: %{{text}} {unit}",
                                                     "%{customdata}")), row=row, col=1)
        fig.update_yaxes(title_text=label, rangemode="tozero", row=row, col=1)
    fig.update_layout(barmode="group")
    if not len(fig.data):
        note(fig, "no operations in these results")
    st = results.get("steps", pd.DataFrame())
    title(fig, "Per operation", f"{_experiments(st) if len(st) else 'no runs'} · "
          f"{'run loops' if steps is None else ', '.join(steps)} · a bar per {by}, the mean of its runs")
    return Interactive(fig, "per operation")


def riops_by_batch_size(results: dict, hue: str = "pct_update") -> Interactive:
    """RIOPS against batch_size (log x), a line per ``hue`` value, a panel's lines per
    configuration; hover a point for its RIOPS and the runs behind it."""
    import plotly.graph_objects as go
    df = benchruns(results)
    fig = new_figure(1, height=480)
    if not len(df):
        note(fig, "no benchruns in these results (not a ybio experiment?)")
        title(fig, "RIOPS against batch_size")
        return Interactive(fig, "RIOPS against batch_size")
    k = 0
    for panel, part in _panels(df):
        for value, line in part.groupby(hue, sort=True):
            agg = line.groupby("batch_size").agg(riops=("riops", "mean"), runs=("run_id", _runs_text)) \
                if "run_id" in line else line.groupby("batch_size").agg(riops=("riops", "mean"))
            agg = agg.reset_index().sort_values("batch_size")
            name = (f"{panel} · " if panel else "") + f"{hue} {_hue_label(hue, value)}"
            fig.add_trace(go.Scatter(x=agg["batch_size"], y=agg["riops"], mode="lines+markers", name=name,
                                     line={"color": COLORS[k % len(COLORS)]},
                                     customdata=agg.get("runs", pd.Series([""] * len(agg))).to_numpy(dtype="object"),
                                     hovertemplate=hover(name, "%{y:,.0f} rows/s",
                                                         "batch_size %{x:,} rows per call", "%{customdata}")))
            k += 1
    fig.update_xaxes(type="log", title_text="batch_size (rows per call)")
    fig.update_yaxes(title_text=RIOPS_LABEL, rangemode="tozero")
    title(fig, "RIOPS against batch_size", _experiments(df) + " · log x · hover a point for its runs")
    return Interactive(fig, "RIOPS against batch_size")


def riops_heatmap(results: dict, x: str = "batch_size", y: str = "pct_update") -> Interactive:
    """RIOPS over batch_size × pct_update, a panel per configuration; a cell's hover
    names its runs."""
    df = benchruns(results)
    panels = []
    for name, part in (_panels(df) if len(df) else []):
        xs, ys = sorted(part[x].dropna().unique()), sorted(part[y].dropna().unique())
        z = np.full((len(ys), len(xs)), np.nan)
        text = np.full(z.shape, "", dtype=object)
        facts = np.full(z.shape, "", dtype=object)
        for (vy, vx), g in part.groupby([y, x]):
            i, j = ys.index(vy), xs.index(vx)
            z[i, j] = g["riops"].mean()
            text[i, j] = fmt_number(z[i, j])
            facts[i, j] = _runs_text(g["run_id"]) if "run_id" in g else f"{len(g)} loops"
        panels.append((name, {"x": [f"{v:,.0f}" for v in xs], "y": [f"{v:g}" for v in ys],
                              "z": z, "text": text, "facts": facts}))
    return heat_panels(panels, label=RIOPS_LABEL, unit="rows/s", xlabel="batch_size (rows per call)",
                       ylabel="pct_update (%)", scale="Viridis",
                       heading=(_cap("RIOPS over batch_size × pct_update"), _experiments(df)))
