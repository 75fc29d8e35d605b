"""The heatmap of each configuration against a base, interactive (:mod:`..relative`):
configuration × client count, a panel per experiment side by side; hover a cell for its
ratio and interval."""
from __future__ import annotations

import pandas as pd

from ..relative import SCALE, heading, relative_cells
from .figure import Interactive
from .heatmap import heat_panels

# green better, red worse, white where the difference is not significant (score 0)
COLOURS = [[0.0, "#d73027"], [0.5, "#ffffff"], [1.0, "#1a9850"]]


def relative_heatmap(results: dict, base: str | None = None, metric: str = "ops_per_s", *,
                     ncols: int = 3, frame: pd.DataFrame | None = None) -> Interactive:
    """As :func:`benchlib.plots.relative_heatmap`, with plotly."""
    panels, base_label = relative_cells(results, base, metric, frame)
    cells = [(name, {**c, "text": c["text"], "facts": c["text"]}) for name, c in panels]
    top, sub = heading(metric, base_label)
    out = heat_panels(cells, label=f"{metric} / base", unit="× base", xlabel="client threads",
                      ylabel="configuration", scale=COLOURS, heading=(top, sub), ncols=ncols)
    # the colour is the score (log2 of the ratio; 0 where not significant), not the ratio
    out.figure.update_traces(zmin=-SCALE, zmax=SCALE, zmid=0, showscale=False,
                             hovertemplate="<b>%{y}</b> / " + base_label + "<br>%{x} threads: %{text}<extra></extra>")
    return out
