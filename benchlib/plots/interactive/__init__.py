"""Interactive plots (plotly): the same names and arguments as :mod:`benchlib.plots`'
static ones, each returning an :class:`Interactive` instead of a matplotlib figure —
hover a point for its value with its unit and the run, step, second or op it is;
drag to zoom, double-click for the whole; click a legend entry to hide its series.

A notebook picks one or the other with one line (``P = interactive if interactive
else plots``). Imported on its own (``from benchlib.plots import interactive``), so a
static report never loads plotly.

    timeseries(results, run_id | [run_ids], ops=None)   per second, runs overlaid
    heatmap(results, value, x, y, op, step)              a cell's runs in its hover
    per_op(results, by, metric, steps)                   bars per op (kv's mix, LinkBench's request types)
    relative_heatmap(results, base, metric)              each configuration / the base, a panel per experiment

A workload's own plots are in its folder (``plots.own(workload, interactive=True)``).
"""
from __future__ import annotations

from .figure import MAX_POINTS, Interactive, decimate, plotly_js
from .heatmap import heatmap
from .timeseries import timeseries
from .ops import per_op
from .relative import relative_heatmap

__all__ = ["MAX_POINTS", "Interactive", "decimate", "heatmap", "per_op", "plotly_js", "relative_heatmap", "timeseries"]
