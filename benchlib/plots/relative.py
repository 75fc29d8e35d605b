"""A heatmap of each configuration against a base: configuration × client count, a
panel per experiment (side by side), each cell the ratio of the configuration's mean to
the base's (:mod:`..summaries.configs`: the runs' loops together, the figure
``compare`` prints) with its 95% interval; coloured by how much better or worse (log2 of
the ratio, green better, red worse, deepest at 2× either way), uncoloured where the
interval spans 1 (``~``, not significant). The base is a row of its own, 1 everywhere.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..summaries.against_base import score
from ..summaries.configs import configs_frame, relative_grid
from ..summaries.loops_latency import RULE
from .style import _figure, _grid, note

SCALE = 1.0   # |log2 ratio| at which a cell's colour is deepest: 2× better or worse
WHAT = {"ops_per_s": "throughput"}


def relative_cells(results: dict, base: str | None = None, metric: str = "ops_per_s",
                   frame: pd.DataFrame | None = None) -> tuple[list[tuple[str, dict]], str]:
    """[(panel title — the experiment —, cells)] and the base's label; cells: ``x``
    (client counts, and the target rate or matrix point where they vary), ``y``
    (configurations, the base's first), ``z`` (the colour score), ``text`` (the ratio
    and its interval). ``frame``: a :func:`..summaries.configs.configs_frame` made already."""
    df = configs_frame(results, base) if frame is None else frame
    base_label = df.attrs.get("base", base or "")
    grid = relative_grid(df, metric)
    if not len(grid):
        return [], base_label
    grid = grid.assign(col=[_column(r) for _, r in grid.iterrows()],
                       z=[score({**r, "metric": metric}) for _, r in grid.iterrows()])
    cols = list(dict.fromkeys(grid.sort_values(["threads", "target_ops_per_s", "point"])["col"]))
    base_exp = base_label.split("/", 1)[0] if "/" in base_label else None
    exps = list(dict.fromkeys([*([base_exp] if base_exp else []), *grid["experiment"]]))
    panels = []
    for exp in exps:
        g = grid[grid["experiment"] == exp]
        mine = base_exp in (None, exp)   # the base's own panel shows it, a row of 1
        ys = ([base_label] if mine else []) + list(dict.fromkeys(g["config"]))
        z = np.full((len(ys), len(cols)), np.nan)
        text = np.full(z.shape, "", dtype=object)
        for _, r in g.iterrows():
            i, j = ys.index(r["config"]), cols.index(r["col"])
            z[i, j], text[i, j] = r["z"], r["cell"]
        if mine:
            z[0, :], text[0, :] = 0.0, "1 (base)"
        panels.append((str(exp), {"x": cols, "y": ys, "z": z, "text": text}))
    return panels, base_label


def _column(r) -> str:
    """A cell's column: its client count, its target rate and matrix point where set."""
    out = f"{int(r['threads'])}"
    if r["target_ops_per_s"]:
        out += f" @{r['target_ops_per_s']:,.0f}/s"
    return out + (f" {r['point']}" if r["point"] else "")


def heading(metric: str, base_label: str, step_note: str = "") -> tuple[str, str]:
    what = WHAT.get(metric, metric)
    return (f"Relative {what}: each configuration / {base_label}",
            f"ratio of means [95% interval]; ~ not significant; the runs' loops together{step_note}"
            + ("" if metric == "ops_per_s" else f" · {RULE}"))


def relative_heatmap(results: dict, base: str | None = None, metric: str = "ops_per_s", *,
                     ncols: int = 3, frame: pd.DataFrame | None = None) -> Figure:
    """The heatmap of relative ``metric`` (module doc): a panel per experiment."""
    import seaborn as sns
    panels, base_label = relative_cells(results, base, metric, frame)
    n = max(1, len(panels))
    cols = max(1, min(ncols, n))
    fig = _figure(max(6.4, 5.2 * cols), 0.9 + max(2.6, 0.55 * max((len(c["y"]) for _, c in panels), default=1))
                  * int(np.ceil(n / cols)))
    axes = _grid(fig, n, cols)
    if not panels:
        note(axes[0], "no point of another configuration matches one of the base's")
    for ax, (name, c) in zip(axes, panels):
        sns.heatmap(pd.DataFrame(c["z"], index=c["y"], columns=c["x"]), ax=ax, annot=c["text"], fmt="",
                    cmap="RdYlGn", vmin=-SCALE, vmax=SCALE, center=0, cbar=False, linewidths=0.5,
                    linecolor="white", annot_kws={"fontsize": 9})
        ax.set_title(name)
        ax.set_xlabel("client threads")
        ax.set_ylabel("")
        ax.tick_params(axis="y", rotation=0)
    top, sub = heading(metric, base_label)
    fig.suptitle(f"{top}\n{sub}", fontsize=12)
    return fig
