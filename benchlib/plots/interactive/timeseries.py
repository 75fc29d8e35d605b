"""The time series of runs, interactive: per second throughput, p99 per operation (and
from the intended start, when paced), CPU, disk MB/s, the DBMS's memory and the
database's size, as the static page draws them: every step of a run on one time axis,
several runs overlaid (each from its own first step).

Hover a point: its value with its unit, the run, step, second of the step and op.
Drag to zoom the time axis (double-click: all of it): each panel's y axis then fits the
visible data (:mod:`.yfit`); a legend click hides a series.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import TOTAL_OP
from ..style import _main_ops
from ..timeseries import (LOAD_AXIS_LABEL, MIN_RATE_S, _hw_time, _intervals_in_time, _pick_run,
                          all_operations, own_scale_steps, step_offsets)
from ..values import work_unit
from .figure import COLORS, MAX_POINTS, Interactive, decimate, hover, new_figure, note, title
from .yfit import Y_FIT_ON_ZOOM

# an interval of its real length (start and length in s, from the step's start) is
# drawn at its middle and its rate is ops / length; else the row is a second
START_COLS, LENGTH_COLS = ("start_s", "interval_start_s"), ("length_s", "interval_s")
PANELS = ["throughput", "latency", "CPU", "disk I/O", "memory"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
_CPU = {"cpu_user": ("user", "#1f77b4"), "cpu_sys": ("sys", "#ff7f0e"), "cpu_iowait": ("iowait", "#d62728")}
# disk in MB/s as the static page draws it, the operations per second in the hover
_IO = {"disk_read_kb": ("read", "disk_reads", "reads/s", "#2ca02c"),
       "disk_write_kb": ("write", "disk_writes", "writes/s", "#9467bd")}
_MEM = {"dbms_rss_gb": ("DBMS RSS", "#8c564b"), "db_size_gb": ("database size", "#e377c2")}


def timeseries(results: dict, run_id=None, *, ops: list[str] | None = None,
               max_points: int = MAX_POINTS) -> Interactive:
    """One run (``run_id`` a str; default the first) or several (a list) on one time
    axis: s since each run's first step began. ``ops``: the operations drawn (default
    the main ones). A trace longer than ``max_points`` seconds is decimated (min and
    max of each bucket kept: :func:`.figure.decimate`); the subtitle says so."""
    ids = [run_id] if run_id is None or isinstance(run_id, str) else list(run_id)
    runs = [_pick_run(results, r) for r in ids]
    runs = [(rid, one) for rid, one in runs if rid is not None and len(one.get("steps", ()))]
    runs = [(rid, one, step_offsets(one["steps"])) for rid, one in runs]
    rates = [_rates(one.get("intervals", pd.DataFrame()), st) for _, one, st in runs]
    own = set().union(*(own_scale_steps(st, iv) for (_, _, st), iv in zip(runs, rates)))
    fig = new_figure(len(PANELS), height=1200, right_axis=bool(own))
    if not runs:
        note(fig, "no steps in these results")
        title(fig, "Time series: no run")
        return Interactive(fig, "time series: no run")
    many = len(runs) > 1
    state = {"decimated": False, "max_points": max_points, "own": own}
    end = 0.0
    for k, ((rid, one, st), iv) in enumerate(zip(runs, rates)):
        if k == 0:
            _mark_steps(fig, st)
        end = max(end, float(st["t_end"].max()))
        style = {"run": rid, "many": many, "color": COLORS[k % len(COLORS)], "unit": work_unit(one)}
        _rate_traces(fig, iv, ops, style, state)
        _hw_traces(fig, one.get("hw", pd.DataFrame()), st, style, state)
    _axes(fig, end, bool(own), work_unit(runs[0][1]))
    names = ", ".join(r for r, _, _ in runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
    sub = "hover a point for its value · drag to zoom the time axis, double-click for all · click a legend entry to hide it"
    if state["decimated"]:
        sub += f"<br>long traces decimated to ≤{max_points:,} points: each bucket's min and max second kept"
    title(fig, f"Time series of run{'s' if many else ''} {names}", sub)
    return Interactive(fig, f"time series of {names}", post_script=Y_FIT_ON_ZOOM)   # y fits a zoom


def _rates(iv: pd.DataFrame, st: pd.DataFrame) -> pd.DataFrame:
    """Each op's rows with ``t`` (the middle of its interval on the run's axis) and
    ``rate`` (ops/s): over the interval's own length where the table has one, else over
    the second (a step's last, partial second scaled to its true length)."""
    iv = _intervals_in_time(iv, st)
    start_col = next((c for c in START_COLS if c in iv), None)
    len_col = next((c for c in LENGTH_COLS if c in iv), None)
    if len(iv) and start_col and len_col:
        length = pd.to_numeric(iv[len_col], errors="coerce")
        start = pd.to_numeric(iv[start_col], errors="coerce")
        ok = length > 0
        step_start = iv["step"].astype("object").map(dict(zip(st["step"].astype("object"), st["t_start"])))
        iv["t"] = (step_start + start + length / 2).where(ok & start.notna(), iv["t"])
        # a sliver too short for a rate has none (left out), as on the static page
        rate = (pd.to_numeric(iv["ops"], errors="coerce") / length).where(length >= MIN_RATE_S)
        iv["rate"] = rate.where(ok, iv["rate"])
    return iv


def _name(style: dict, series: str) -> str:
    return f"{style['run']} · {series}" if style["many"] else series


def _add(fig, row: int, frame: pd.DataFrame, y: str, style: dict, state: dict, **trace) -> None:
    """One trace of ``frame`` (decimated past ``max_points``) in panel ``row``; in the
    throughput panel, the rows of load and index steps (``state["own"]``) are a trace of
    their own on the right axis (their rate would flatten the run loops' on one axis)."""
    if row == 1 and state["own"] and not trace.get("_own"):
        own = frame["step"].astype("object").isin(state["own"]).to_numpy()
        if own.any():
            _add(fig, row, frame[~own], y, style, state, **trace)
            _add(fig, row, frame[own], y, style, state, _own=True,
                 **{**trace, "name": f"{trace['name']} · {LOAD_AXIS_LABEL}"})
            return
    import plotly.graph_objects as go
    right = trace.pop("_own", False)
    frame = frame[pd.to_numeric(frame[y], errors="coerce").notna()]
    if not len(frame):
        return
    frame, cut = decimate(frame, y, state["max_points"])
    state["decimated"] |= cut
    frame = _broken_between_steps(frame[["t", y, "_run", "step", "_sec", "_extra"]], y)
    group = style["run"] if style["many"] else PANELS[row - 1]
    fig.add_trace(go.Scatter(x=frame["t"].to_numpy(dtype="float64"),
                             y=pd.to_numeric(frame[y]).to_numpy(dtype="float64"),
                             customdata=frame[["_run", "step", "_sec", "_extra"]].to_numpy(dtype="object"),
                             legendgroup=group, legendgrouptitle_text=group, connectgaps=False,
                             **trace), row=row, col=1, **({"secondary_y": right} if state["own"] and row == 1 else {}))


def _broken_between_steps(frame: pd.DataFrame, y: str) -> pd.DataFrame:
    """A blank row where the step changes, so a line does not join two steps across
    the set-up between them."""
    step = frame["step"].astype("object").to_numpy()
    cuts = np.flatnonzero(step[1:] != step[:-1]) + 1
    if not len(cuts):
        return frame
    t = frame["t"].to_numpy(dtype="float64")
    gaps = pd.DataFrame({"t": (t[cuts - 1] + t[cuts]) / 2, y: np.nan, "_at": cuts - 0.5})
    both = pd.concat([frame.assign(_at=np.arange(len(frame), dtype="float64")), gaps], ignore_index=True)
    return both.sort_values("_at", kind="stable").drop(columns="_at").reset_index(drop=True)


_WHERE = ["run %{customdata[0]}", "step %{customdata[1]}, second %{customdata[2]}",
          "t = %{x:,.1f} s"]


def _rate_traces(fig, iv: pd.DataFrame, ops, style: dict, state: dict) -> None:
    """Throughput (all operations, each op) and p99 (and intended p99) per op."""
    if not len(iv):
        return
    iv = iv.assign(_run=style["run"], _sec=iv["second"].astype("Int64").astype(str),
                   _extra=pd.to_numeric(iv["ops"], errors="coerce").map("{:,.0f} ops".format))
    total = _all_operations(iv)
    _add(fig, 1, total, "rate", style, state, name=_name(style, "all operations"), mode="lines",
         line={"color": "black" if not style["many"] else style["color"], "width": 2},
         hovertemplate=hover("all operations", f"%{{y:,.0f}} {style['unit']}/s", *_WHERE))
    chosen = ops or [o for o in _main_ops(iv) if o != TOTAL_OP]
    for i, op in enumerate(chosen):
        g = iv[iv["op"].astype("object") == op].sort_values("t")
        color = style["color"] if style["many"] else COLORS[i % len(COLORS)]
        dash = DASHES[i % len(DASHES)] if style["many"] else "solid"
        where = [*_WHERE, "%{customdata[3]}"]
        _add(fig, 1, g, "rate", style, state, name=_name(style, op), mode="lines+markers",
             marker={"size": 4}, line={"color": color, "width": 1, "dash": dash},
             hovertemplate=hover(op, f"%{{y:,.0f}} {style['unit']}/s", *where))
        lat = "p99_us" if pd.to_numeric(g["p99_us"], errors="coerce").notna().any() else "mean_us"
        _add(fig, 2, g, lat, style, state, name=_name(style, f"{op} {lat[:-3]}"), mode="lines+markers",
             marker={"size": 4}, line={"color": color, "width": 1.2, "dash": dash},
             hovertemplate=hover(f"{op} {lat[:-3]}", "%{y:,.0f} µs", *where))
        if "intended_p99_us" in g:
            _add(fig, 2, g, "intended_p99_us", style, state, name=_name(style, f"{op} p99 from intended start"),
                 mode="lines", line={"color": color, "width": 1.2, "dash": "dot"}, opacity=0.7,
                 hovertemplate=hover(f"{op} p99 from intended start", "%{y:,.0f} µs", *where))


def _all_operations(iv: pd.DataFrame) -> pd.DataFrame:
    """All operations' rate per interval (:func:`..timeseries.all_operations`: a sliver
    with no rate has none, a stall's rows of 0 ops are 0) with each its second."""
    sec = iv.groupby(["step", "t"], sort=False)["_sec"].first().rename("second").reset_index()
    tot = all_operations(iv).merge(sec, on=["step", "t"], how="left")
    return tot.assign(_run=iv["_run"].iloc[0], _sec=tot["second"],
                      _extra=pd.to_numeric(tot["ops"], errors="coerce").map("{:,.0f} ops".format)).sort_values("t")


def _hw_traces(fig, hw: pd.DataFrame, st: pd.DataFrame, style: dict, state: dict) -> None:
    """CPU user/sys/iowait (%), disk MB/s read and written (operations per second in the
    hover), the DBMS's resident memory and the database's size (GB; MB in the hover)."""
    if hw is None or not len(hw):
        return
    hw = hw.assign(t=_hw_time(hw, st), _run=style["run"],
                   _sec=hw["second"].astype("Int64").astype(str)).sort_values("t")
    for i, (col, (label, color)) in enumerate(_CPU.items()):
        if col in hw:
            _add(fig, 3, hw.assign(_extra=hw.get("host", "")), col, style, state,
                 name=_name(style, f"CPU {label}"), mode="lines",
                 line=_hw_line(style, color, i),
                 hovertemplate=hover(f"CPU {label}", "%{y:.1f} %", *_WHERE, "host %{customdata[3]}"))
    for i, (col, (label, ops, per_s, color)) in enumerate(_IO.items()):
        if col in hw:
            extra = pd.to_numeric(hw.get(ops), errors="coerce").map(lambda v: "" if pd.isna(v) else f"{v:,.0f} {per_s}")
            mb = hw.assign(_mb=pd.to_numeric(hw[col], errors="coerce") / 1024, _extra=extra)
            _add(fig, 4, mb, "_mb", style, state, name=_name(style, f"disk {label}"),
                 mode="lines", line=_hw_line(style, color, i),
                 hovertemplate=hover(f"disk {label}", "%{y:,.2f} MB/s", *_WHERE, "%{customdata[3]}"))
    for i, (col, (label, color)) in enumerate(_MEM.items()):
        if col in hw:
            gb = pd.to_numeric(hw[col], errors="coerce")
            extra = (gb * 1024).map(lambda v: "" if pd.isna(v) else f"{v:,.1f} MB")
            _add(fig, 5, hw.assign(_extra=extra), col, style, state, name=_name(style, label),
                 mode="lines", line=_hw_line(style, color, i),
                 hovertemplate=hover(label, "%{y:,.3f} GB", *_WHERE, "%{customdata[3]}"))


def _hw_line(style: dict, color: str, i: int) -> dict:
    """A sampled series' line: its own colour for one run; with several, the run's
    colour and a dash per series (user, sys, iowait; reads, writes)."""
    if style["many"]:
        return {"color": style["color"], "width": 1.2, "dash": DASHES[i % len(DASHES)]}
    return {"color": color, "width": 1.2}


def _mark_steps(fig, st: pd.DataFrame) -> None:
    """Each step shaded over all panels and named on top (the first run's steps)."""
    shapes = [{"type": "rect", "xref": "x", "yref": "paper", "x0": a, "x1": b, "y0": 0, "y1": 1,
               "fillcolor": "rgba(0,0,0,0.05)", "line": {"width": 0}, "layer": "below"}
              for a, b in zip(st["t_start"], st["t_end"])]
    names = [{"x": (a + b) / 2, "y": 1.0, "xref": "x", "yref": "paper", "text": str(s), "showarrow": False,
              "yanchor": "bottom", "font": {"size": 10}} for a, b, s in zip(st["t_start"], st["t_end"], st["step"])]
    fig.update_layout(shapes=shapes, annotations=[*fig.layout.annotations, *names])   # at once: quick


_EMPTY = ["no per-second intervals in this run", "no latency per second in this run",
          "no hardware samples for this run (e.g. imported without vmstat/iostat)",
          "no disk samples for this run (e.g. imported without iostat)",
          "no DBMS memory or size samples for this run (a remote server, an import?)"]


def _axes(fig, end: float, right: bool = False, unit: str = "ops") -> None:
    """Axis titles, one time range for all panels, and a note in a panel left empty;
    ``right``: the throughput panel's load steps are on its right axis."""
    import plotly.graph_objects as go
    used = {t.yaxis for t in fig.data}
    for row, text in enumerate(_EMPTY, start=1):
        panel = fig.get_subplot(row, 1)
        axis, xaxis = (a.plotly_name.replace("axis", "") for a in (panel.yaxis, panel.xaxis))
        if axis not in used:   # an invisible trace, so the panel and its axes are drawn
            fig.add_trace(go.Scatter(x=[0, end], y=[0, 1], mode="none", showlegend=False, hoverinfo="skip"),
                          row=row, col=1)
            fig.update_yaxes(showticklabels=False, showgrid=False, row=row, col=1)
            fig.add_annotation(text=text, showarrow=False, font={"color": "#666"}, x=0.5, y=0.5,
                               xref=f"{xaxis} domain", yref=f"{axis} domain")
    fig.update_xaxes(range=[0, end * 1.01 or 1])
    if right:
        fig.update_yaxes(title_text=f"run loops ({unit}/s)", rangemode="tozero", secondary_y=False, row=1, col=1)
        fig.update_yaxes(title_text=LOAD_AXIS_LABEL, rangemode="tozero", secondary_y=True, showgrid=False,
                         row=1, col=1)
    else:
        fig.update_yaxes(title_text=f"throughput ({unit}/s)", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="latency (µs, log)", type="log", row=2, col=1)
    fig.update_yaxes(title_text="CPU (% of all CPUs)", rangemode="tozero", row=3, col=1)
    fig.update_yaxes(title_text="disk (MB/s)", rangemode="tozero", row=4, col=1)
    fig.update_yaxes(title_text="memory, size (GB)", rangemode="tozero", row=5, col=1)
    fig.update_xaxes(title_text="time since the run's first step began (s)", row=len(PANELS), col=1)
    fig.update_xaxes(showspikes=True, spikemode="across", spikethickness=1, spikecolor="#999")
