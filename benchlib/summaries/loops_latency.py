"""A run's latency percentile over its run loops: one rule for every page and command
(the headline, the heatmaps, ``summary --kind points``, ``compare``, against-base).

The rule: **the percentile of the run's loops merged** — their HdrHistograms added
(exact) and the percentile read from the sum, i.e. the p99 of every operation the run
measured, as YCSB prints it over a whole run. A point's figure is then the mean of its
runs' (its repetitions'), with the one interval rule of :mod:`.uncertainty`.

Why not the worst loop: a maximum over loops grows with the number of loops (a run of
24 loops shows a worse "p99" than the same server measured in 2), so two experiments of
different lengths would not compare; and it answers another question (how bad was the
worst stretch), which the time series and the per-step lines show loop by loop. The
merged p99 weighs each loop by its operations, so a short unlucky loop does not become
the point's figure.

Loops without histograms (an import of a tool that printed only percentiles) cannot be
merged: there the figure is the worst loop's (never an average of percentiles), and
:func:`loops_percentile` says so (``exact=False``); one loop is its own figure either way.
"""
from __future__ import annotations

import functools
import math

import pandas as pd

from .. import measure

RULE = "loops merged per run"   # said beside a p99 in the headline, heatmaps, compare
LEGEND = (f"p99: {RULE} (their histograms added: all its operations), a point's the mean of "
          "its runs'")
PACED = "a paced run's from the intended start"


def loops_percentile(rows: pd.DataFrame, column: str = "p99_us") -> tuple[float, bool]:
    """(the figure ``column`` of the loops in ``rows`` — one op's latency rows of one run —,
    whether it is the merged histograms' (exact) rather than the worst loop's)."""
    vals = pd.to_numeric(rows[column], errors="coerce") if column in rows else pd.Series(dtype="float64")
    if len(rows) <= 1:
        return (float(vals.iloc[0]) if len(vals) else math.nan), True
    hdrs = rows["hdr"].astype("object").tolist() if "hdr" in rows else []
    if hdrs and all(isinstance(h, str) and h for h in hdrs):
        return _merged(tuple(hdrs), column), True
    return float(vals.max()), False


@functools.lru_cache(maxsize=512)   # a compare page of ~50 runs × ops × steps; copies of the strings
def _merged(hdrs: tuple[str, ...], column: str) -> float:
    """``column`` of the histograms ``hdrs`` (encoded) added: kept, since every page and
    summary of a run asks it again of the same loops (a step's figure, its run's, each
    configuration against the base), and decoding them is the most of its cost."""
    merged = measure.merge(hdrs)
    if column in measure.PERCENTILES and merged.get_total_count():   # as summarize reads it, quicker
        p = measure.PERCENTILES[column]
        return float(merged.get_percentile_to_value_dict([p])[p])
    return float(measure.summarize(merged)[column])
