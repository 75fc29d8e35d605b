"""Heatmaps over the matrix: a value over two run parameters, a panel per configuration."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from matplotlib.figure import Figure

from ..points import point_without
from .style import (
    _THOUSANDS,
    _axis_values,
    _cap,
    _describe_steps,
    _experiments,
    _figure,
    _fmt,
    _grid,
    _label,
    _main_calls,
    _order,
    _tick,
    note,
)
from ..summaries.loops_latency import PACED, RULE
from ..summaries.response import op_latency
from ..summaries.uncertainty import mean_ci
from .values import PARAM_LABELS, heat_axes, label_for, points, value_spec

# ---------------------------------------------------------------- heatmap

def heatmap(results: dict, value: str = "ops_per_s", x: str | None = None,
            y: str | None = None, op: str | None = None, step=None,
            *, ncols: int = 3) -> Figure:
    """A heatmap of ``value`` over two parameters of the matrix (``x`` × ``y``; None: the
    parameters the matrix varies, :func:`.values.heat_axes` — threads × target rate,
    ybio's batch size × pct_update).

    One panel per configuration (and per experiment) unless ``x`` or ``y`` is that
    parameter, and, for a latency value, one panel per operation (``op`` picks one).
    A cell is the mean over the runs that fall in it (repetitions, parameters not on
    the axes), with its 95% confidence interval under it (low–high, on the log scale:
    :func:`..summaries.uncertainty.mean_ci`, Student's t at any n >= 2; nothing for
    one run); the subtitle says how many. ``step``: None = the run loops (ops/s =
    Σ ops / Σ secs; latency from the merged histograms), or a step name or list.
    """

    spec = replace(value_spec(value), label=label_for(value, results, step))   # rows/s where batched
    x, y = heat_axes(results, x, y)
    pts, groups = _panels(points(results, value, step=step), spec, x, y, op)
    n = len(groups)
    cols = max(1, min(ncols, n))
    fig = _figure(max(6.4, 4.8 * cols), 3.9 * int(np.ceil(n / cols)) + 0.7)
    axes = _grid(fig, n, cols)
    per_cell = 0
    fig.get_layout_engine().set(w_pad=0.12, wspace=0.06)
    for i, (ax, (key, part)) in enumerate(zip(axes, groups)):
        key = key if isinstance(key, tuple) else (key,)
        title = " · ".join(str(k) for k in key)
        if len(part) == 0 or part["value"].isna().all():
            note(ax, f"no {spec.label} in these results"
                 + (" (no hw samples?)" if spec.source.startswith("eff") else ""))
            ax.set_title(title)
            continue
        per_cell = max(per_cell, _cells(ax, part, spec, x, y))
        ax.set_xlabel(_label(x))
        ax.set_ylabel(_label(y) if i % cols == 0 else "")  # once per row of panels
        ax.set_title(title)
    sub = f"{_experiments(pts)} · {_describe_steps(step)}" + _rule(spec, step, results)
    if per_cell > 1:
        sub += f"\nmean of up to {per_cell} runs a cell, its 95% t-interval (log scale) under it"
    fig.suptitle(f"{_cap(spec.label)}\n{sub}", fontsize=12)
    return fig


def _rule(spec, step, results: dict) -> str:
    """A latency's rule (:mod:`..summaries.loops_latency`), said: over the run loops, and
    from the intended start where paced."""
    if spec.source != "latency":
        return ""
    paced = len(op_latency(results, intended=True)) > 0
    return (f" · {RULE}" if step is None else "") + (f" · {PACED}" if paced else "")


def _panels(pts, spec, x: str, y: str, op: str | None) -> tuple:
    """The points (a missing axis parameter of the known ones blank) and their panels,
    [(key, points)]: one per experiment and configuration unless an axis is that, and
    per operation (in the summaries' order) for a latency value."""
    facets = [c for c in ("experiment", "config") if c in pts and c not in (x, y)
              and pts[c].astype("object").nunique() > 1]
    if "point" in pts:   # the workload's matrix values not on an axis: a panel each
        pts = pts.assign(matrix=pts["point"].fillna("").map(lambda p: point_without(p, (x, y))))
        facets += ["matrix"] if pts["matrix"].nunique() > 1 else []
    ops: list[str] = []
    if spec.source == "latency":
        ops = [op] if op else _main_calls(pts)
        pts = pts[pts["op"].isin(ops)]
        facets.append("op")
    for name in (x, y):
        if name in pts:
            continue
        if name in PARAM_LABELS or not len(pts):  # e.g. an import whose meta has no threads
            pts = pts.assign(**{name: None})
        else:
            known = sorted(c for c in pts.columns if c not in ("value", "op", "path"))
            raise ValueError(f"heatmap: no parameter {name!r} (known: {', '.join(known)})")
    groups = list(pts.groupby([pts[f].astype("object") for f in facets], sort=True)) \
        if facets and len(pts) else [((), pts)]
    if spec.source == "latency" and len(groups) > 1:
        groups.sort(key=lambda g: (g[0][:-1], ops.index(g[0][-1]) if g[0][-1] in ops else 99))
    return pts, groups


def _cells(ax, part, spec, x: str, y: str) -> int:
    """One panel's heatmap: each cell the mean of its runs, annotated. Returns the most
    runs in one cell."""
    import seaborn as sns

    part = part.assign(_x=_axis_values(part[x], x), _y=_axis_values(part[y], y))
    cell = part.groupby(["_y", "_x"])["value"]
    grid = cell.mean().unstack("_x")
    grid = grid.reindex(index=_order(grid.index)[::-1], columns=_order(grid.columns))
    spread = cell.agg(lambda v: _spread(mean_ci(v.to_numpy()))).unstack("_x").reindex_like(grid)
    annot = grid.map(_fmt) + spread.fillna("")
    sns.heatmap(grid, ax=ax, annot=annot.to_numpy(), fmt="", cmap=spec.cmap,
                linewidths=0.5, linecolor="white", annot_kws={"fontsize": 9},
                cbar_kws={"label": spec.label, "shrink": 0.9, "format": _THOUSANDS})
    ax.set_xticklabels([_tick(v) for v in grid.columns], rotation=0)
    ax.set_yticklabels([_tick(v) for v in grid.index], rotation=0)
    return int(cell.count().max())


def _spread(ci: tuple) -> str:
    """Under a cell's mean: its 95% interval, low–high (2 runs or more; on the log scale,
    so not symmetric), nothing for one run."""
    m, lo, hi, n = ci
    if n >= 2:
        return f"\n{_fmt(lo)}–{_fmt(hi)}"
    return ""
