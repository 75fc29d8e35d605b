"""Per operation side by side, interactive (the kv mix's ops, LinkBench's request types):
hover a bar for its value with its unit and the runs behind it.
"""
from __future__ import annotations

import pandas as pd

from ...schema import INTENDED_PREFIX
from ...summaries.response import op_order
from ..compare import _group_labels
from ..style import _experiments
from ..values import points, value_spec
from .figure import COLORS, Interactive, fmt_number, hover, new_figure, note, title

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
