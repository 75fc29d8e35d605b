"""ybio's own plots (``YbioWorkload.plots``: ``plots.own("ybio")``), from its
``benchruns`` table: RIOPS against batch_size (the seed's
graph, log x) and the heatmap of RIOPS over batch_size × pct_update.

RIOPS is rows read or updated per second (the seed's ``num_rows / duration``); a
point is the mean over the runs (repetitions, run loops) with the same parameters.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ...plots.style import _THOUSANDS, _experiments, _figure, _fmt, _grid, note
from .summary import benchruns

RIOPS_LABEL = "RIOPS (rows read or updated / s)"


def _panels(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    keys = [c for c in ("experiment", "config") if c in df and df[c].astype("object").nunique() > 1]
    if not keys or not len(df):
        return [("", df)]
    return [(" · ".join(map(str, k if isinstance(k, tuple) else (k,))), g)
            for k, g in df.groupby([df[k].astype("object") for k in keys], sort=True)]


def _panel_axes(results: dict):
    """The benchruns rows, a figure, and (axes, (title, rows)) per panel; with no rows,
    the figure holds a note saying so."""
    df = benchruns(results)
    fig = _figure(9, 5)
    if not len(df):
        note(fig.add_subplot(), "no benchruns in these results (not a ybio experiment?)")
        return df, fig, []
    panels = _panels(df)
    return df, fig, list(zip(_grid(fig, len(panels), 2), panels))


def riops_by_batch_size(results: dict, hue: str = "pct_update") -> Figure:
    """RIOPS against batch_size (log x), a line per ``hue`` value (pct_update), a panel
    per configuration."""
    df, fig, panels = _panel_axes(results)
    if not len(df):
        return fig
    for ax, (title, part) in panels:
        mean = part.groupby([hue, "batch_size"])["riops"].mean().reset_index()
        for value, line in mean.groupby(hue, sort=True):
            line = line.sort_values("batch_size")
            ax.plot(line["batch_size"], line["riops"], marker="o", label=f"{_hue_label(hue, value)}")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.yaxis.set_major_formatter(_THOUSANDS)
        ax.set_xlabel("batch_size (rows per call)")
        ax.set_ylabel(RIOPS_LABEL)
        ax.set_ylim(bottom=0)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(title=hue, fontsize=9)
        ax.set_title(title)
    fig.suptitle(f"RIOPS against batch_size\n{_experiments(df)}", fontsize=12)
    return fig


def _hue_label(hue: str, value) -> str:
    return f"{value:g} %" if hue == "pct_update" else f"{value}"


def riops_heatmap(results: dict, x: str = "batch_size", y: str = "pct_update") -> Figure:
    """RIOPS over batch_size × pct_update, a panel per configuration."""
    import seaborn as sns
    df, fig, panels = _panel_axes(results)
    if not len(df):
        return fig
    for ax, (title, part) in panels:
        grid = part.groupby([y, x])["riops"].mean().unstack(x)
        grid = grid.sort_index(ascending=False).reindex(columns=sorted(grid.columns))
        annot = np.vectorize(_fmt)(grid.to_numpy(dtype=float))
        sns.heatmap(grid, ax=ax, annot=annot, fmt="", cmap="viridis", linewidths=0.5,
                    linecolor="white", annot_kws={"fontsize": 9},
                    cbar_kws={"label": RIOPS_LABEL, "format": _THOUSANDS})
        ax.set_xticklabels([f"{v:,.0f}" for v in grid.columns], rotation=0)
        ax.set_yticklabels([f"{v:g}" for v in grid.index], rotation=0)
        ax.set_xlabel("batch_size (rows per call)")
        ax.set_ylabel("pct_update (%)")
        ax.set_title(title)
    fig.suptitle(f"RIOPS over batch_size × pct_update\n{_experiments(df)}", fontsize=12)
    return fig
