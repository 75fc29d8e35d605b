"""Heatmaps over the matrix, interactive: a value over two run parameters, a panel per
configuration (and per op, for latency), each cell the mean of its runs. Hover a cell
for its mean with its unit, how many runs it holds and which they are.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ...summaries.uncertainty import label, mean_ci
from ..heatmap import _panels, _rule
from ..style import _axis_values, _cap, _describe_steps, _experiments, _label, _order, _tick
from ..values import heat_axes, label_for, points, value_spec
from .figure import Interactive, fmt_number, hover, new_figure, note, title

_SCALES = {"viridis": "Viridis", "rocket_r": "Inferno_r"}
RUNS_SHOWN = 6   # run ids a cell's hover names, then "and N more"


def heatmap(results: dict, value: str = "ops_per_s", x: str | None = None, y: str | None = None,
            op: str | None = None, step=None, *, ncols: int = 3) -> Interactive:
    """``value`` over ``x`` × ``y``, as :func:`benchlib.plots.heatmap`; a cell's hover
    gives its mean, its 95% t-interval on the log scale (2 runs or more; "one run"
    without), and its runs."""
    spec = replace(value_spec(value), label=label_for(value, results, step))   # rows/s where batched
    x, y = heat_axes(results, x, y)
    pts, groups = _panels(points(results, value, step=step), spec, x, y, op)
    groups = [(k if isinstance(k, tuple) else (k,), g) for k, g in groups]
    cells = [_grid(part, x, y) for _, part in groups]
    return heat_panels([(" · ".join(map(str, k)), c) for (k, _), c in zip(groups, cells)],
                       label=spec.label, unit=_unit(spec.label), xlabel=_label(x), ylabel=_label(y),
                       scale=_SCALES.get(spec.cmap, "Viridis"), ncols=ncols,
                       heading=(_cap(spec.label), f"{_experiments(pts)} · {_describe_steps(step)}" + _rule(spec, step, results)))


def _unit(label: str) -> str:
    return label[label.rfind("(") + 1:-1] if label.endswith(")") else ""


def _grid(part: pd.DataFrame, x: str, y: str) -> dict | None:
    """A panel's cells: mean, spread and runs per (y, x), axes in the static heatmap's order."""
    part = part[part["value"].notna()]
    if not len(part):
        return None
    part = part.assign(_x=_axis_values(part[x], x), _y=_axis_values(part[y], y))
    xs, ys = _order(part["_x"]), _order(part["_y"])
    z = np.full((len(ys), len(xs)), np.nan)
    text = np.full(z.shape, "", dtype=object)
    facts = np.full(z.shape, "", dtype=object)
    for (vy, vx), g in part.groupby(["_y", "_x"]):
        i, j = ys.index(vy), xs.index(vx)
        m, lo, hi, n = mean_ci(g["value"].to_numpy(dtype="float64"))
        z[i, j], text[i, j] = m, fmt_number(m)
        spread = f"{label(n)} {fmt_number(lo)}–{fmt_number(hi)}" if n >= 2 else label(n)
        ids = [str(r) for r in g["run_id"]]
        more = f" and {len(ids) - RUNS_SHOWN} more" if len(ids) > RUNS_SHOWN else ""
        facts[i, j] = f"{n} run{'s' if n > 1 else ''} · {spread}<br>" + "<br>".join(ids[:RUNS_SHOWN]) + more
    return {"x": [_tick(v) for v in xs], "y": [_tick(v) for v in ys], "z": z, "text": text, "facts": facts}


def heat_panels(panels: list[tuple[str, dict | None]], *, label: str, unit: str, xlabel: str, ylabel: str,
                scale: str, heading: tuple[str, str], ncols: int = 3) -> Interactive:
    """Panels of cells (``x y z text facts`` from :func:`_grid`) side by side, one colour
    scale each; a panel without cells says so."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    n = max(1, len(panels))
    cols = max(1, min(ncols, n))
    rows = int(np.ceil(n / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[t or " " for t, _ in panels] or None,
                        horizontal_spacing=0.16,   # many rows (a workload's own matrix): less each
                        vertical_spacing=min(0.18, 0.6 / (rows - 1)) if rows > 1 else 0.1)
    base = new_figure(1, height=max(380, 330 * rows + 90))
    fig.update_layout(base.layout)
    for k, (name, cells) in enumerate(panels):
        r, c = k // cols + 1, k % cols + 1
        if cells is None:
            fig.add_annotation(text=f"no {label} here", showarrow=False, font={"color": "#666"},
                               xref=f"x{k + 1 if k else ''} domain", yref=f"y{k + 1 if k else ''} domain",
                               x=0.5, y=0.5)
            continue
        bar_x = fig.layout[f"xaxis{k + 1 if k else ''}"].domain[1] + 0.01
        fig.add_trace(go.Heatmap(x=cells["x"], y=cells["y"], z=cells["z"], text=cells["text"],
                                 customdata=cells["facts"], texttemplate="%{text}", colorscale=scale,
                                 name=name or label, xgap=1, ygap=1,
                                 colorbar={"title": {"text": unit, "side": "right"}, "len": 0.9 / rows,
                                           "x": bar_x, "y": 1 - (r - 0.5) / rows, "thickness": 12},
                                 hovertemplate=hover(f"{name}" if name else _cap(label),
                                                     f"{_cap(label.split(' (')[0])}: %{{text}} {unit}",
                                                     f"{xlabel} %{{x}} · {ylabel} %{{y}}", "%{customdata}")),
                      row=r, col=c)
        fig.update_xaxes(title_text=xlabel, type="category", row=r, col=c)
        fig.update_yaxes(title_text=ylabel if c == 1 else "", type="category", row=r, col=c)
    if not panels:
        note(fig, f"no {label} in these results")
    title(fig, heading[0], heading[1] + " · hover a cell for its runs")
    return Interactive(fig, heading[0])
