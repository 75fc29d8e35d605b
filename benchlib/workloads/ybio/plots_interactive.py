"""ybio's own plots, interactive (``YbioWorkload.interactive_plots``:
``plots.own("ybio", interactive=True)``): the same names and arguments as
:mod:`.plots`' RIOPS against batch_size and over batch_size × pct_update; hover a point
or cell for its RIOPS and the runs behind it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...plots.interactive.figure import COLORS, Interactive, fmt_number, hover, new_figure, note, title
from ...plots.interactive.heatmap import heat_panels
from ...plots.interactive.ops import _runs_text
from ...plots.style import _cap, _experiments
from .plots import RIOPS_LABEL, _hue_label, _panels
from .summary import benchruns


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
