"""Plots from the tidy tables: heatmaps over the matrix, the time series of a run, and
experiments or configurations side by side.

Every function takes the dict :func:`benchlib.load_results` returns (:func:`compare`
also a list of them) and returns a :class:`matplotlib.figure.Figure`. Figures are made
without pyplot: a notebook shows each once (the last expression of a cell), nothing
keeps them alive after their last reference, and ``fig.savefig(...)`` works anywhere.
What the tables cannot give — no hw samples (an import without them), a figure
nobody measured — becomes a panel with a note saying so, never an exception and
never a made-up zero.

Values (:data:`VALUES`; any other column of the seed's ``eff.op`` / ``eff.sec``
lines by its seed name, such as ``cpupi`` or ``wkbpi``, works too):

    ops_per_s      operations per second over the selected steps: Σ ops / Σ secs
    p50_us … max_us, mean_us
                   latency of one operation (µs); over several loops from the
                   merged HdrHistograms (exact), else the worst loop's figure
    cpu_per_op     host CPU per operation, µs = (us + sy)% / 100 × cores / ops/s × 10⁶
                   (the seed's cpupi × cores / 100: comparable between hosts)
    dbms_cpu_us_per_op, client_cpu_us_per_op   the seed's dsecpq, csecpq
    read_kb_per_op, write_kb_per_op, cs_per_op, cpu_pct, dbms_rss_gb

Parameters (heatmap axes, ``compare(by=...)``): the run's point of the matrix
(``threads processes load_processes target_ops_per_s load_target_ops_per_s
repetition config experiment dbms``), every scalar of the resolved experiment by its
dotted name and, when unambiguous, its own (``load.batch_size`` = ``batch_size``),
every workload property (``recordcount``, ``updateproportion``) and ``pct_<op>`` =
``<op>proportion`` × 100 (``pct_update``).

``relative_heatmap``: each configuration's throughput as a ratio to a base's,
configuration × client count, a panel per experiment (:mod:`.relative`).

Interactive (plotly) twins of ``timeseries``, ``heatmap`` and ``relative_heatmap``, and ``per_op`` bars,
are in :mod:`.interactive`; :func:`pick` chooses for a notebook.

A workload's own plots live in its folder, reached through :func:`own` (its
``Workload.plots`` / ``interactive_plots``): ybio's ``riops_by_batch_size`` (the seed's
graph, log x) and ``riops_heatmap`` (batch_size × pct_update).
"""
from __future__ import annotations

from .compare import combine, compare, select_runs
from .heatmap import heatmap
from .relative import relative_heatmap
from .style import note
from .timeseries import step_offsets, timeseries
from .values import VALUES, Value, points, run_parameters, value_spec



def own(workload: str, interactive: bool = False):
    """A workload's own plots, from its folder (``Workload.plots``, or
    ``interactive_plots``: the same names and arguments, plotly): ybio's
    ``riops_by_batch_size`` and ``riops_heatmap``; ValueError when it has none."""
    from ..registries.workloads import own_module
    return own_module(workload, "interactive_plots" if interactive else "plots")


def pick(interactive: bool):
    """The plots a notebook draws: :mod:`benchlib.plots.interactive` (plotly: hover, zoom,
    legend toggles) or this module's static ones (matplotlib); both take the same
    arguments for ``timeseries`` and ``heatmap``."""
    if interactive:
        from . import interactive as chosen
        return chosen
    import sys
    return sys.modules[__name__]


__all__ = ['VALUES', 'Value', 'combine', 'compare', 'heatmap', 'note', 'own', 'pick', 'points',
           'relative_heatmap', 'run_parameters', 'select_runs', 'step_offsets', 'timeseries', 'value_spec']
