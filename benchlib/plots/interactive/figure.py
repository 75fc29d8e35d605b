"""What every interactive plot shares: the figure as a notebook output and a page's
HTML, plotly's own JavaScript for a page, hover texts with units, and decimation.

A plot returns an :class:`Interactive`: in JupyterLab it is drawn by plotly's own
renderer (the ``application/vnd.plotly.v1+json`` output; the extension ships in the
plotly wheel); in a rendered report page it is its ``text/html`` output, a ``<div>``
and the call that draws it, while the page loads plotly.js from the file beside it
(:func:`plotly_js`, written once per report folder by ``reports.html``): no script comes
from the network.
"""
from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

# a trace of more points than this is decimated (:func:`decimate`): a 24-loop run of
# 300 s loops is 7,200 seconds per trace; the browser stays quick under a few thousand
MAX_POINTS = 3000
MIME = "application/vnd.plotly.v1+json"
# plotly.js offers "Share chart…" by default (showSendToCloud), a button that uploads the
# figure to a public cloud service: benchlib's figures are numbers users keep to
# themselves, so it is off in every figure's config, and removed from the mode bar
CONFIG = {"displaylogo": False, "responsive": True, "scrollZoom": False,
          "showSendToCloud": False,
          "modeBarButtonsToRemove": ["lasso2d", "select2d", "sendChartToCloud"]}
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf"]
FONT = {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 12}
_ids = itertools.count(1)


class Interactive:
    """A plotly figure as a notebook output: plotly's mimetype for JupyterLab, a
    ``<div>`` + script for a rendered page (plotly.js itself is the page's, once),
    and a line of text elsewhere. ``.figure`` is the plotly figure."""

    def __init__(self, figure, title: str = "", post_script: str | None = None):
        self.figure = figure
        self.title = title
        self.post_script = post_script   # JavaScript a page runs once drawn ({plot_id}: its div)

    def to_html(self) -> str:
        """The figure's ``<div>`` and the script that draws it (needs plotly.js on the page)."""
        div_id = f"benchlib-plot-{next(_ids)}"
        return self.figure.to_html(full_html=False, include_plotlyjs=False, config=CONFIG,
                                   div_id=div_id, default_width="100%", post_script=self.post_script)

    def to_page(self) -> str:
        """A whole HTML page of the figure alone, plotly.js inline (opens with no network)."""
        return self.figure.to_html(full_html=True, include_plotlyjs=True, config=CONFIG,
                                   default_width="100%", post_script=self.post_script)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        spec = json.loads(self.figure.to_json())
        spec["config"] = CONFIG
        return {MIME: spec, "text/html": self.to_html(),
                "text/plain": f"<interactive plot: {self.title}>"}

    def __repr__(self) -> str:
        return f"<interactive plot: {self.title}>"


def plotly_js() -> str:
    """plotly.js, minified, as the plotly package ships it (for a page's head)."""
    from plotly.offline import get_plotlyjs
    return get_plotlyjs()


def new_figure(rows: int = 1, *, titles=None, height: int = 420, shared_x: bool = True,
               right_axis: bool = False):
    """An empty figure of ``rows`` panels over one x axis, benchlib's look;
    ``right_axis``: the first panel has a second y axis, on the right."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    specs = [[{"secondary_y": right_axis and r == 0}] for r in range(rows)]
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=shared_x, vertical_spacing=0.06 if rows > 1 else 0.1,
                        subplot_titles=titles, specs=specs) if rows > 1 or titles or right_axis else go.Figure()
    fig.update_layout(template="plotly_white", height=height, font=FONT, hovermode="closest",
                      legend={"groupclick": "toggleitem", "font": {"size": 11}},
                      margin={"l": 70, "r": 20, "t": 80, "b": 50})
    return fig


def title(fig, text: str, sub: str = "") -> None:
    """The figure's title, and a smaller second line."""
    fig.update_layout(title={"text": f"{text}<br><sup>{sub}</sup>" if sub else text, "x": 0.01})


def note(fig, text: str) -> None:
    """A figure with nothing to show says why (never an empty frame, never a zero)."""
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False,
                       font={"size": 14, "color": "#666"})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)


def hover(what: str, value: str, *lines: str) -> str:
    """A hovertemplate: the series (``what``) in bold, the value with its unit, then
    ``lines`` (run, step, second …); ``%{customdata[i]}`` picks a point's own facts."""
    return "<br>".join([f"<b>{what}</b>", value, *lines]) + "<extra></extra>"


def decimate(frame: pd.DataFrame, y: str, max_points: int = MAX_POINTS) -> tuple[pd.DataFrame, bool]:
    """``frame`` (rows in time order) cut to at most ``max_points`` rows for one trace:
    split into ``max_points / 2`` runs of consecutive rows and keep, of each, the row of
    its least and of its greatest ``y`` (min–max decimation: a spike or a drop of one
    second still shows; every kept point is a second as measured, so hovering it reads
    the table's figure). Returns the rows kept and whether any was dropped."""
    n = len(frame)
    if n <= max_points:
        return frame, False
    buckets = max(1, max_points // 2)
    bucket = np.repeat(np.arange(buckets), np.diff(np.linspace(0, n, buckets + 1).astype(int)))
    vals = pd.Series(pd.to_numeric(frame[y], errors="coerce").to_numpy(dtype="float64"))
    by = vals.groupby(bucket)
    keep = np.unique(np.concatenate([by.idxmin().dropna().to_numpy(), by.idxmax().dropna().to_numpy()]))
    return frame.iloc[keep.astype(int)], True


def fmt_number(v) -> str:
    """A figure as the tables print it (thousands separated, 3 significant digits below 100)."""
    if v is None or pd.isna(v):
        return ""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
