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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from . import measure
from .summaries import eff_op, eff_sec
from .summaries.metainfo import run_metas
from .summaries.response import BATCH_SUFFIX, op_latency, op_order
from .summaries.stepstats import step_sort_key, step_stats

DPI = 100
UNTHROTTLED = "unthrottled"
KEYS = ["experiment", "run_id"]


@dataclass(frozen=True)
class Value:
    label: str            # axis and colour-bar label, with the unit
    source: str           # steps | latency | eff.op | eff.sec
    column: str
    cmap: str = "rocket_r"  # dark = high; throughput uses viridis (bright = high)


VALUES = {
    "ops_per_s": Value("throughput (ops/s)", "steps", "rate", "viridis"),
    **{c: Value(f"{n} latency (µs)", "latency", c) for c, n in [
        ("mean_us", "mean"), ("p50_us", "p50"), ("p90_us", "p90"), ("p95_us", "p95"),
        ("p99_us", "p99"), ("p999_us", "p99.9"), ("max_us", "max")]},
    "cpu_per_op": Value("host CPU per operation (µs)", "eff.op", "cpupi"),
    "dbms_cpu_us_per_op": Value("DBMS CPU per operation (µs)", "eff.op", "dsecpq"),
    "client_cpu_us_per_op": Value("client CPU per operation (µs)", "eff.op", "csecpq"),
    "read_kb_per_op": Value("KB read per operation", "eff.op", "rkbpi"),
    "write_kb_per_op": Value("KB written per operation", "eff.op", "wkbpi"),
    "cs_per_op": Value("context switches per operation", "eff.op", "cspi"),
    "cpu_pct": Value("CPU utilization (% of all CPUs)", "eff.sec", "cpups", "viridis"),
    "dbms_rss_gb": Value("DBMS RSS at step end (GB)", "eff.sec", "rss"),
}
PARAM_LABELS = {
    "threads": "client threads", "processes": "client processes",
    "load_processes": "loader processes", "target_ops_per_s": "target (ops/s)",
    "load_target_ops_per_s": "load target (ops/s)", "batch_size": "load batch size (rows)",
    "repetition": "repetition", "config": "configuration", "experiment": "experiment",
}


def value_spec(value: str) -> Value:
    """The :class:`Value` of a name of :data:`VALUES` or of an eff.op/eff.sec column."""
    if value in VALUES:
        return VALUES[value]
    for kind, cols in (("eff.op", _EFF_OP_COLS), ("eff.sec", _EFF_SEC_COLS)):
        if value in cols:
            return Value(value, kind, value)
    raise ValueError(f"unknown value {value!r} (known: {', '.join(VALUES)}, or an eff.op/"
                     f"eff.sec column: {', '.join(_EFF_OP_COLS + _EFF_SEC_COLS)})")


_EFF_OP_COLS = ["rpi", "rkbpi", "wkbpi", "cspi", "cpupi", "csecpq", "dsecpq", "csec", "dsec", "dbgb"]
_EFF_SEC_COLS = ["rps", "rmbps", "wmbps", "csps", "cpups", "cutil", "dutil", "vsz", "rss"]


# ---------------------------------------------------------------- tables → points

def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def run_parameters(results: dict) -> pd.DataFrame:
    """One row per run: ``experiment run_id`` and every parameter (see the module doc)."""
    rows = []
    for m in run_metas(results):
        row = {k: v for k, v in m.items() if v is None or isinstance(v, (str, int, float, bool))}
        if isinstance(m.get("dbms"), dict):
            row["dbms"] = m["dbms"].get("name")
        if isinstance(m.get("host"), dict):
            row["cores"] = m["host"].get("cores")
        params = m.get("parameters") if isinstance(m.get("parameters"), dict) else {}
        short: dict[str, list] = {}
        for sect in ("load", "index", "run"):
            for k, v in (params.get(sect) or {}).items():
                if isinstance(v, (str, int, float, bool)):
                    row[f"{sect}.{k}"] = v
                    short.setdefault(k, []).append(v)
        for k, vs in short.items():
            if len(vs) == 1:
                row.setdefault(k, vs[0])
        props = {**(params.get("properties") or {}), **(m.get("workload_properties") or {})}
        for k, v in props.items():
            row.setdefault(k, _num(v))
            if k.endswith("proportion") and isinstance(_num(v), float):
                row.setdefault(f"pct_{k.removesuffix('proportion')}", _num(v) * 100)
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in KEYS:
        if k not in df:
            df[k] = None
    return df.drop_duplicates(KEYS).reset_index(drop=True)


def _select_steps(df: pd.DataFrame, step) -> pd.DataFrame:
    """Rows of the selected steps: ``step`` None = the run loops (all steps when none)."""
    if len(df) == 0:
        return df
    if step is None:
        runs = df[df["phase"].astype("object") == "run"]
        return runs if len(runs) else df
    wanted = {step} if isinstance(step, str) else set(step)
    return df[df["step"].astype("object").isin(wanted)]


def _latency_points(results: dict, column: str, step, keys: list[str]) -> pd.DataFrame:
    lat = op_latency(results)
    if len(lat) == 0:
        return pd.DataFrame(columns=[*keys, "op", "value"])
    if "phase" not in lat:
        lat = lat.assign(phase=["run" if str(s).startswith("r.") else "load" for s in lat["step"]])
    lat = _select_steps(lat, step)
    if "experiment" not in lat:
        lat = lat.assign(experiment=None)
    rows = []
    for key, g in lat.groupby([lat[k].astype("object") for k in (*keys, "op")],
                              sort=False, dropna=False):
        vals = pd.to_numeric(g[column], errors="coerce")
        hdrs = g["hdr"].astype("object").tolist() if "hdr" in g else []
        if len(g) > 1 and hdrs and all(isinstance(h, str) and h for h in hdrs):
            v = measure.summarize(measure.merge(hdrs))[column]   # exact: merged histograms
        else:
            v = vals.max()  # one step, or no histograms: the worst loop, never an average
        rows.append({**dict(zip((*keys, "op"), key)), "value": v})
    return pd.DataFrame(rows, columns=[*keys, "op", "value"])


def points(results: dict, value: str = "ops_per_s", *, step=None,
           per_step: bool = False) -> pd.DataFrame:
    """One row per run (and operation, for latency values; and step with ``per_step``)
    with ``value`` and the run's parameters. ``step``: None = the run loops, or a step
    name (``l.pre``) or a list of them."""
    spec = value_spec(value)
    keys = [*KEYS, "step"] if per_step else list(KEYS)
    if spec.source == "latency":
        vals = _latency_points(results, spec.column, step, keys)
    else:
        frame = step_stats(results) if spec.source == "steps" else \
            (eff_op if spec.source == "eff.op" else eff_sec)(results)
        frame = _select_steps(frame, step)
        by = [frame[k].astype("object") for k in keys]
        if spec.source == "steps":
            st = frame.assign(secs=pd.to_numeric(frame["secs"], errors="coerce"),
                              ops=pd.to_numeric(frame["ops"], errors="coerce"))
            g = st.groupby(by, sort=False, dropna=False)
            tot = g[["ops", "secs"]].sum(min_count=1)
            v = (tot["ops"] / tot["secs"].where(tot["secs"] > 0)).fillna(g["rate"].mean())
        else:
            col = pd.to_numeric(frame[spec.column], errors="coerce")
            v = col.groupby(by, sort=False, dropna=False).mean()
        vals = v.rename("value").reset_index()
        vals.columns = [*keys, "value"]
    params = run_parameters(results)
    for k in KEYS:
        vals[k] = vals[k].astype("object")
        params[k] = params[k].astype("object")
    out = vals.merge(params.drop(columns=[c for c in ("step",) if c in params]), on=KEYS,
                     how="left")
    if value == "cpu_per_op":  # cpupi × cores / 100 = host CPU µs per operation
        cores = pd.to_numeric(out.get("cores"), errors="coerce")
        out["value"] = pd.to_numeric(out["value"], errors="coerce") * cores / 100
    out["value"] = pd.to_numeric(out["value"], errors="coerce").astype("float64")
    return out


# ---------------------------------------------------------------- helpers

def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained", facecolor="white")


def note(ax, text: str) -> None:
    """A panel that has nothing to show says why."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes,
            fontsize=10, color="0.35", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _fmt(v: float) -> str:
    if pd.isna(v):
        return ""
    a = abs(v)
    if a >= 100_000:
        return f"{v / 1000:,.0f}k"
    if a >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def _cap(text: str) -> str:
    """Capitalized, except a percentile (p99 stays p99)."""
    return text if text[:1] == "p" and text[1:2].isdigit() else text[:1].upper() + text[1:]


_THOUSANDS = FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}")


def _label(name: str) -> str:
    if name.startswith("pct_"):
        return f"{name[4:]} (%)"
    return PARAM_LABELS.get(name, PARAM_LABELS.get(name.rsplit(".", 1)[-1], name))


def _axis_values(s: pd.Series, name: str) -> pd.Series:
    """A parameter's values as sortable categories: numbers, unthrottled target last."""
    if name in ("target_ops_per_s", "load_target_ops_per_s"):
        return s.apply(lambda v: UNTHROTTLED if pd.isna(v) or _num(v) == 0 else _num(v))
    return s.apply(lambda v: "(none)" if v is None or (isinstance(v, float) and np.isnan(v))
                   else _num(v))


def _order(values) -> list:
    nums = sorted({v for v in values if isinstance(v, (int, float))})
    rest = sorted({str(v) for v in values if not isinstance(v, (int, float))})
    return [*nums, *rest]


def _tick(v) -> str:
    return f"{v:,g}" if isinstance(v, float) else str(v)


def _describe_steps(step) -> str:
    if step is None:
        return "run loops together"
    return f"step {step}" if isinstance(step, str) else f"steps {', '.join(step)}"


def _experiments(df: pd.DataFrame) -> str:
    """``experiment a`` or ``experiments a, b``."""
    names = sorted({str(e) for e in df.get("experiment", []) if isinstance(e, str)})
    return f"experiment{'s' if len(names) > 1 else ''} {', '.join(names) or '(unnamed)'}"


def _grid(fig: Figure, n: int, ncols: int):
    ncols = max(1, min(ncols, n))
    nrows = int(np.ceil(n / ncols))
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for ax in axes[n:]:
        ax.set_visible(False)
    return axes[:n]


def _main_ops(df: pd.DataFrame) -> list[str]:
    ops = [o for o in op_order(df[["op"]]) if not o.endswith(BATCH_SUFFIX)] if len(df) else []
    return ops or (op_order(df[["op"]]) if len(df) else [])


# ---------------------------------------------------------------- heatmap

def heatmap(results: dict, value: str = "ops_per_s", x: str = "threads",
            y: str = "target_ops_per_s", op: str | None = None, step=None,
            *, ncols: int = 3) -> Figure:
    """A heatmap of ``value`` over two parameters of the matrix (``x`` × ``y``).

    One panel per configuration (and per experiment) unless ``x`` or ``y`` is that
    parameter, and, for a latency value, one panel per operation (``op`` picks one).
    A cell is the mean over the runs that fall in it (repetitions, parameters not on
    the axes); the subtitle says how many. ``step``: None = the run loops (ops/s =
    Σ ops / Σ secs; latency from the merged histograms), or a step name or list.
    """
    import seaborn as sns

    spec = value_spec(value)
    pts = points(results, value, step=step)
    facets = [c for c in ("experiment", "config") if c in pts and c not in (x, y)
              and pts[c].astype("object").nunique() > 1]
    if spec.source == "latency":
        ops = [op] if op else _main_ops(pts)
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
    if spec.source == "latency" and len(groups) > 1:  # operations in the summaries' order
        groups.sort(key=lambda g: (g[0][:-1], ops.index(g[0][-1]) if g[0][-1] in ops else 99))
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
        part = part.assign(_x=_axis_values(part[x], x), _y=_axis_values(part[y], y))
        cell = part.groupby(["_y", "_x"])["value"]
        per_cell = max(per_cell, int(cell.count().max()))
        grid = cell.mean().unstack("_x")
        grid = grid.reindex(index=_order(grid.index)[::-1], columns=_order(grid.columns))
        annot = grid.map(_fmt).to_numpy()
        sns.heatmap(grid, ax=ax, annot=annot, fmt="", cmap=spec.cmap, linewidths=0.5,
                    linecolor="white", annot_kws={"fontsize": 9},
                    cbar_kws={"label": spec.label, "shrink": 0.9, "format": _THOUSANDS})
        ax.set_xticklabels([_tick(v) for v in grid.columns], rotation=0)
        ax.set_yticklabels([_tick(v) for v in grid.index], rotation=0)
        ax.set_xlabel(_label(x))
        ax.set_ylabel(_label(y) if i % cols == 0 else "")  # once per row of panels
        ax.set_title(title)
    sub = f"{_experiments(pts)} · {_describe_steps(step)}"
    if per_cell > 1:
        sub += f" · mean of up to {per_cell} runs per cell"
    fig.suptitle(f"{_cap(spec.label)}\n{sub}", fontsize=12)
    return fig


# ---------------------------------------------------------------- timeseries

def _pick_run(results: dict, run_id: str | None) -> tuple[str | None, dict]:
    steps = results.get("steps")
    ids = [] if steps is None or len(steps) == 0 else list(dict.fromkeys(steps["run_id"].astype("object")))
    if run_id is None:
        run_id = min(ids) if ids else None
    elif run_id not in ids:
        raise ValueError(f"timeseries: no run {run_id!r} (runs: {', '.join(sorted(ids)) or 'none'})")
    one = {}
    for name, df in results.items():
        if isinstance(df, pd.DataFrame) and "run_id" in df:
            df = df[df["run_id"].astype("object") == run_id]
            if "experiment" in df and df["experiment"].notna().any():
                df = df[df["experiment"].astype("object") == df["experiment"].dropna().iloc[0]]
        one[name] = df.reset_index(drop=True) if isinstance(df, pd.DataFrame) else df
    return run_id, one


def step_offsets(steps: pd.DataFrame) -> pd.DataFrame:
    """Each step's start and end on the run's time axis (s since the first step began):
    from steps.started/ended, else the steps laid end to end by their secs."""
    st = steps.copy()
    st["_key"] = [step_sort_key(s, p) for s, p in zip(st["step"], st.get("phase", [None] * len(st)))]
    st = st.sort_values("_key", kind="stable").drop(columns="_key").reset_index(drop=True)
    secs = pd.to_numeric(st["secs"], errors="coerce").fillna(0.0).astype("float64")
    started = pd.to_datetime(st["started"], utc=True, errors="coerce") if "started" in st else None
    if started is not None and started.notna().all():
        t0 = started.min()
        st["t_start"] = (started - t0).dt.total_seconds()
        ended = pd.to_datetime(st["ended"], utc=True, errors="coerce")
        st["t_end"] = ((ended - t0).dt.total_seconds()).fillna(st["t_start"] + secs)
        st.attrs["t0"] = t0
    else:
        st["t_end"] = secs.cumsum()
        st["t_start"] = st["t_end"] - secs
    st["secs"] = secs
    return st


_LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.005, 1.0), "fontsize": 8, "frameon": False}


def _mark_steps(axes, st: pd.DataFrame) -> None:
    for _, r in st.iterrows():
        for ax in axes:  # steps shaded, the gaps between them (setup, start-up) white
            ax.axvspan(r["t_start"], r["t_end"], color="0.93", zorder=0, lw=0)
            ax.axvline(r["t_start"], color="0.55", lw=0.8, ls="--", zorder=1)
        axes[0].text((r["t_start"] + r["t_end"]) / 2, 1.02, str(r["step"]), ha="center",
                     va="bottom", fontsize=9, transform=axes[0].get_xaxis_transform())


def _hw_time(hw: pd.DataFrame, st: pd.DataFrame) -> pd.Series:
    t0 = st.attrs.get("t0")
    ts = pd.to_datetime(hw["ts"], utc=True, errors="coerce") if "ts" in hw else None
    if t0 is not None and ts is not None and ts.notna().all():
        return (ts - t0).dt.total_seconds()
    start = dict(zip(st["step"].astype("object"), st["t_start"]))
    return hw["step"].astype("object").map(start) + pd.to_numeric(hw["second"]) + 0.5


def _lines(ax, x, frame: pd.DataFrame, cols: dict[str, str], ylabel: str, missing: str) -> bool:
    shown = False
    for col, label in cols.items():
        if col not in frame:
            continue
        y = pd.to_numeric(frame[col], errors="coerce")
        ok = y.notna()
        if ok.any():
            ax.plot(x[ok], y[ok], marker=".", ms=4, lw=1.2, label=label)
            shown = True
    if not shown:
        note(ax, missing)
    ax.set_ylabel(ylabel)
    return shown


def timeseries(results: dict, run_id: str | None = None, *, ops: list[str] | None = None) -> Figure:
    """Per-second throughput, p99 per operation, CPU (user/sys/iowait), disk I/O and DBMS
    RSS of one run (default: the first by run_id) over all its steps — load, index, run
    loops on one time axis (s since the first step began), each step marked.

    Throughput of a step's last, partial second is scaled to its true length. A panel
    whose figures the run lacks (an import without hw) says so instead.
    """
    run_id, one = _pick_run(results, run_id)
    fig = _figure(12, 11.5)
    axes = fig.subplots(5, 1, sharex=True)
    steps = one.get("steps")
    if run_id is None or steps is None or len(steps) == 0:
        for ax in axes:
            note(ax, "no steps in these results")
        fig.suptitle("Time series: no run", fontsize=12)
        return fig
    st = step_offsets(steps)
    iv = one.get("intervals", pd.DataFrame())
    if len(iv):
        iv = iv[~iv["op"].astype("object").str.startswith("Intended-")
                & ~iv["op"].astype("object").str.endswith(BATCH_SUFFIX)].copy()
    ax_tp, ax_lat, ax_cpu, ax_io, ax_mem = axes
    if len(iv):
        start = dict(zip(st["step"].astype("object"), st["t_start"]))
        secs = dict(zip(st["step"].astype("object"), st["secs"]))
        sec = pd.to_numeric(iv["second"]).astype("float64")
        length = (iv["step"].astype("object").map(secs) - sec).clip(upper=1.0)
        length = length.where(length > 0.05, 1.0)  # never blow up a sliver
        iv["t"] = iv["step"].astype("object").map(start) + sec + length / 2
        iv["rate"] = pd.to_numeric(iv["ops"], errors="coerce") / length
        total = iv.groupby(["step", "t"], sort=False)["rate"].sum().reset_index().sort_values("t")
        for stp, g in total.groupby("step", sort=False):
            ax_tp.plot(g["t"], g["rate"], color="black", marker=".", ms=4, lw=1.4,
                       label="all operations" if stp == total["step"].iloc[0] else None)
        chosen = ops or _main_ops(iv)
        colors = dict(zip(chosen, [f"C{i}" for i in range(len(chosen))]))
        for op in chosen:
            g = iv[iv["op"] == op].sort_values("t")
            for k, (stp, gs) in enumerate(g.groupby("step", sort=False)):
                lab = op if k == 0 else None
                ax_tp.plot(gs["t"], gs["rate"], color=colors[op], marker=".", ms=3, lw=0.9,
                           alpha=0.8, label=lab)
                p99 = pd.to_numeric(gs["p99_us"], errors="coerce")
                ax_lat.plot(gs["t"], p99, color=colors[op], marker=".", ms=4, lw=1.2, label=lab)
                ip99 = pd.to_numeric(gs["intended_p99_us"], errors="coerce") \
                    if "intended_p99_us" in gs else pd.Series(dtype="float64")
                if ip99.notna().any():
                    ax_lat.plot(gs["t"], ip99, color=colors[op], ls=":", lw=1.2,
                                label=f"{op} from intended start" if k == 0 else None)
        tgt = pd.to_numeric(st.get("target_ops_per_s"), errors="coerce")
        for (_, r), t in zip(st.iterrows(), tgt):
            if pd.notna(t) and t > 0:
                ax_tp.hlines(t, r["t_start"], r["t_end"], colors="C3", linestyles="--", lw=1,
                             label="target" if not any(h.get_label() == "target"
                                                       for h in ax_tp.collections) else None)
        ax_lat.set_yscale("log")
        # plain numbers on the log axis (50, 100, 200 µs), not 5 × 10¹; 1-2-5 steps
        # while they fit, decades beyond two decades
        lo, hi = ax_lat.get_ylim()
        subs = (1.0, 2.0, 5.0) if hi / max(lo, 1e-9) <= 300 else (1.0,)
        ax_lat.yaxis.set_major_locator(LogLocator(subs=subs))
        ax_lat.yaxis.set_major_formatter(_THOUSANDS)
        ax_lat.yaxis.set_minor_formatter(NullFormatter())
        ax_tp.set_ylim(bottom=0)
        ax_tp.legend(**_LEGEND)
        ax_lat.legend(**_LEGEND)
    else:
        note(ax_tp, "no per-second intervals in this run")
        note(ax_lat, "no per-second intervals in this run")
    ax_tp.set_ylabel("throughput (ops/s)")
    ax_tp.yaxis.set_major_formatter(_THOUSANDS)
    ax_lat.set_ylabel("p99 latency (µs)")

    hw = one.get("hw", pd.DataFrame())
    if hw is None or len(hw) == 0:
        for ax in (ax_cpu, ax_io, ax_mem):
            note(ax, "no hardware samples for this run (e.g. imported without vmstat/iostat)")
        ax_cpu.set_ylabel("CPU (%)")
        ax_io.set_ylabel("disk (MB/s)")
        ax_mem.set_ylabel("memory (GB)")
    else:
        hw = hw.assign(t=_hw_time(hw, st)).sort_values("t")
        cpu = [c for c in ("cpu_user", "cpu_sys", "cpu_iowait") if pd.to_numeric(hw[c]).notna().any()]
        if cpu:
            vals = [pd.to_numeric(hw[c]).fillna(0).to_numpy() for c in cpu]
            ax_cpu.stackplot(hw["t"], *vals, labels=[c.removeprefix("cpu_") for c in cpu],
                             colors=["C0", "C1", "C3"][:len(cpu)], alpha=0.75)
            ax_cpu.set_ylim(0, 100)
            ax_cpu.legend(**_LEGEND)
        else:
            note(ax_cpu, "CPU not sampled in this run")
        ax_cpu.set_ylabel("CPU (% of all CPUs)")
        io = hw.assign(read=pd.to_numeric(hw["disk_read_kb"]) / 1024,
                       write=pd.to_numeric(hw["disk_write_kb"]) / 1024)
        if _lines(ax_io, io["t"], io, {"read": "read", "write": "write"}, "disk (MB/s)",
                  "disk I/O not sampled in this run"):
            ax_io.set_ylim(bottom=0)
            ax_io.legend(**_LEGEND)
        if _lines(ax_mem, hw["t"], hw, {"dbms_rss_gb": "DBMS RSS", "db_size_gb": "database size"},
                  "memory, size (GB)", "DBMS RSS not sampled (a remote server?)"):
            ax_mem.set_ylim(bottom=0)
            ax_mem.legend(**_LEGEND)
    _mark_steps(axes, st)
    axes[-1].set_xlabel("time since the first step began (s)")
    axes[-1].set_xlim(st["t_start"].min(), st["t_end"].max())
    axes[-1].tick_params(labelbottom=True)
    runs = one.get("runs", pd.DataFrame())
    meta = runs.iloc[0].to_dict() if len(runs) else {}
    facts = [str(v) for v in (meta.get("experiment"), meta.get("config")) if isinstance(v, str)]
    if isinstance(meta.get("dbms"), str):
        facts.append(f"{meta['dbms']} {meta.get('dbms_version') or ''}".strip())
    fig.suptitle(f"Time series of run {run_id}\n{' · '.join(facts)}", fontsize=12)
    return fig


# ---------------------------------------------------------------- compare

def combine(results_list) -> dict:
    """One results dict from several (experiments, imports): tables concatenated."""
    if isinstance(results_list, dict):
        return results_list
    out = {}
    for name in ("runs", "steps", "latency", "intervals", "hw"):
        parts = [r[name] for r in results_list if isinstance(r.get(name), pd.DataFrame) and len(r[name])]
        out[name] = pd.concat(parts, ignore_index=True) if parts else \
            next((r[name] for r in results_list if name in r), pd.DataFrame())
    return out


def _group_labels(df: pd.DataFrame, by: str) -> pd.Series:
    if by not in df:
        raise ValueError(f"compare: no column {by!r} to group by")
    label = _axis_values(df[by], by).astype(str)
    if by == "config" and "experiment" in df:
        exp = df["experiment"].astype("object")
        clash = pd.Series(label.values, index=df.index).groupby(label.values).transform(
            lambda s: exp.loc[s.index].nunique() > 1)
        label = label.where(~clash, exp.astype(str) + "/" + label)
    return label


def select_runs(results: dict, where: dict | None = None) -> dict:
    """``results`` cut to the runs whose parameters (see the module doc) equal ``where``'s
    values; None matches an absent value (``target_ops_per_s=None``: unthrottled)."""
    if not where:
        return results
    params = run_parameters(results)
    keep = pd.Series(True, index=params.index)
    for k, want in where.items():
        col = params[k] if k in params else pd.Series(None, index=params.index, dtype="object")
        if want is None:
            keep &= col.isna() | (k in ("target_ops_per_s", "load_target_ops_per_s")) & (col == 0)
        else:
            keep &= col.apply(_num) == _num(want)
    wanted = set(zip(params.loc[keep, "experiment"].astype("object"),
                     params.loc[keep, "run_id"].astype("object")))
    out = {}
    for name, df in results.items():
        if isinstance(df, pd.DataFrame) and "run_id" in df:
            exp = df["experiment"].astype("object") if "experiment" in df else [None] * len(df)
            mask = [(e, r) in wanted for e, r in zip(exp, df["run_id"].astype("object"))]
            df = df[mask].reset_index(drop=True)
        out[name] = df
    return out


_PHASE_GROUPS = (("load", ("load", "index"), "load and index"), ("run", ("run",), "run loops"))


def compare(results, by: str = "config", metric=("ops_per_s", "p99_us"), *, steps=None,
            where: dict | None = None) -> Figure:
    """Two or more experiments or configurations side by side: bar charts per step, one
    bar per group (``by``: config, experiment, run_id or any parameter; a config name
    that two experiments share becomes ``experiment/config``).

    ``results`` is one results dict or a list of them (other experiments, imported
    runs); ``where`` keeps the runs with these parameters (:func:`select_runs`), so a
    group is not a mean over a whole matrix. One panel per metric (per operation for a
    latency metric) and phase — load/index and the run loops have their own scales. A
    bar is the mean over the group's runs; the whisker spans their min to max.
    """
    import seaborn as sns

    res = select_runs(combine(results), where)
    metrics = [metric] if isinstance(metric, str) else list(metric)
    wanted = [s for s in _all_steps(res) if steps is None or s in steps]
    panels = []
    for m in metrics:
        spec = value_spec(m)
        df = points(res, m, step=wanted, per_step=True) if wanted else pd.DataFrame()
        if len(df) == 0 or df["value"].isna().all():
            panels.append((spec, None, "", pd.DataFrame()))
            continue
        df = df[df["value"].notna()]
        df = df.assign(group=_group_labels(df, by),
                       _phase=[_PHASE_OF.get(step_sort_key(s)[0], "run") for s in df["step"]])
        for op in (_main_ops(df) if spec.source == "latency" else [None]):
            part = df[df["op"] == op] if op else df
            for key, _, title in _PHASE_GROUPS:
                one = part[part["_phase"] == key]
                if len(one):
                    panels.append((spec, op, title, one))
    fig = _figure(12, 3.0 * len(panels) + 1.0)
    axes = _grid(fig, len(panels), 1)
    hue_order = sorted({g for *_, df in panels if len(df) for g in df["group"]})
    palette = dict(zip(hue_order, sns.color_palette("deep", len(hue_order))))
    most = 1
    for ax, (spec, op, phase, df) in zip(axes, panels):
        ax.set_title(_cap(spec.label) + (f" of {op}" if op else "") + (f" — {phase}" if phase else ""),
                     loc="left", fontsize=11)
        if len(df) == 0:
            note(ax, f"no {spec.label} in these results")
            continue
        most = max(most, int(df.groupby(["group", "step"]).size().max()))
        order = sorted(df["step"].unique(), key=step_sort_key)
        sns.barplot(df, x="step", y="value", hue="group", order=order, hue_order=hue_order,
                    palette=palette, errorbar=("pi", 100), capsize=0.08,
                    err_kws={"linewidth": 1}, ax=ax, legend=False)
        if len(order) * len(hue_order) <= 30:
            for cont in ax.containers:
                ax.bar_label(cont, labels=[_fmt(b.get_height()) for b in cont], fontsize=8,
                             padding=2)
        ax.set_ylabel(spec.label)
        ax.set_xlabel("")
        ax.yaxis.set_major_formatter(_THOUSANDS)
        ax.margins(y=0.15)
    handles = [Patch(color=palette[g], label=g) for g in hue_order]
    if handles:
        fig.legend(handles=handles, title=_label(by), loc="outside right upper",
                   fontsize=9, title_fontsize=9, frameon=False)
    sub = f"{len(hue_order)} {_label(by)}s side by side"
    if most > 1:
        sub += f" · bars: mean of up to {most} runs, whiskers: min to max"
    fig.suptitle(f"{_cap(_experiments(res['steps']))}\n{sub}", fontsize=12)
    return fig


_PHASE_OF = {0: "load", 1: "load", 2: "run"}


def _all_steps(res: dict) -> list[str]:
    st = res.get("steps")
    if st is None or len(st) == 0:
        return []
    return sorted(set(st["step"].astype("object")), key=step_sort_key)


__all__ = ["VALUES", "combine", "compare", "heatmap", "note", "points", "run_parameters",
           "select_runs", "step_offsets", "timeseries", "value_spec"]
