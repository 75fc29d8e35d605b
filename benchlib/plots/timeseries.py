"""The time series of a run: throughput, p99, CPU, disk and memory, steps marked."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, NullFormatter

from ..schema import BATCH_SUFFIX, INTENDED_PREFIX, TOTAL_OP, phase_of
from ..summaries.stepstats import step_sort_key
from .style import _THOUSANDS, _figure, _main_ops, note
from .values import work_unit

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


# a pause between two steps longer than this (and than a tenth of the steps' time) is
# drawn shortened to it: an imported load of yesterday and run of today stay readable
GAP_KEPT_S = 10.0


def step_offsets(steps: pd.DataFrame) -> pd.DataFrame:
    """Each step's start and end on the run's time axis (s since the first step began):
    from steps.started/ended, else the steps laid end to end by their secs.

    A long pause between two steps (more than :data:`GAP_KEPT_S` and a tenth of the
    steps' time) is shortened to that on the axis: ``shift_s`` is how much earlier a
    step is drawn than it ran, ``attrs["breaks"]`` the shortened pauses as (axis
    position, seconds the pause really lasted)."""
    st = steps.copy()
    st["_key"] = [step_sort_key(s, p) for s, p in zip(st["step"], st.get("phase", [None] * len(st)))]
    st = st.sort_values("_key", kind="stable").drop(columns="_key").reset_index(drop=True)
    secs = pd.to_numeric(st["secs"], errors="coerce").fillna(0.0).astype("float64")
    started = pd.to_datetime(st["started"], utc=True, errors="coerce") if "started" in st else None
    st["shift_s"] = 0.0
    st.attrs["breaks"] = []
    if started is not None and started.notna().all():
        t0 = started.min()
        start = (started - t0).dt.total_seconds()
        ended = pd.to_datetime(st["ended"], utc=True, errors="coerce")
        end = ((ended - t0).dt.total_seconds()).fillna(start + secs)
        kept = max(GAP_KEPT_S, 0.1 * float((end - start).sum()))
        shift, shifts = 0.0, []
        for i in range(len(st)):
            gap = start.iloc[i] - end.iloc[i - 1] if i else 0.0
            if gap > kept:
                shift += gap - kept
                st.attrs["breaks"].append((end.iloc[i - 1] - (shift - (gap - kept)) + kept / 2, gap))
            shifts.append(shift)
        st["shift_s"] = shifts
        st["t_start"] = start - st["shift_s"]
        st["t_end"] = end - st["shift_s"]
        st.attrs["t0"] = t0
    else:
        st["t_end"] = secs.cumsum()
        st["t_start"] = st["t_end"] - secs
    st["secs"] = secs
    return st


def _duration(secs: float) -> str:
    """A pause as a person says it: 45 s, 12 min, 3 h 05 min, 2 d 4 h."""
    m, h, d = secs / 60, secs / 3600, secs / 86400
    if m < 1:
        return f"{secs:.0f} s"
    if h < 1:
        return f"{m:.0f} min"
    if d < 1:
        return f"{int(h)} h {int(m % 60):02d} min"
    return f"{int(d)} d {int(h % 24)} h"


_LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.005, 1.0), "fontsize": 8, "frameon": False}


def _mark_steps(axes, st: pd.DataFrame) -> None:
    for _, r in st.iterrows():
        for ax in axes:  # steps shaded, the gaps between them (setup, start-up) white
            ax.axvspan(r["t_start"], r["t_end"], color="0.93", zorder=0, lw=0)
            ax.axvline(r["t_start"], color="0.55", lw=0.8, ls="--", zorder=1)
        axes[0].text((r["t_start"] + r["t_end"]) / 2, 1.02, str(r["step"]), ha="center",
                     va="bottom", fontsize=9, transform=axes[0].get_xaxis_transform())
    for x, gap in st.attrs.get("breaks", []):
        for ax in axes:   # a shortened pause: a break in the axis, and how long it was
            ax.axvline(x, color="0.35", lw=1.2, ls=(0, (1, 2)), zorder=1)
        axes[-1].text(x, 0.5, f"paused {_duration(gap)}", rotation=90, ha="center", va="center",
                      fontsize=8, color="0.3", transform=axes[-1].get_xaxis_transform(),
                      bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})


def _hw_time(hw: pd.DataFrame, st: pd.DataFrame) -> pd.Series:
    t0 = st.attrs.get("t0")
    ts = pd.to_datetime(hw["ts"], utc=True, errors="coerce") if "ts" in hw else None
    if t0 is not None and ts is not None and ts.notna().all():
        # moved with its step where a pause before it is drawn shortened
        shift = hw["step"].astype("object").map(dict(zip(st["step"].astype("object"), st["shift_s"]))) \
            if "step" in hw else 0.0
        return (ts - t0).dt.total_seconds() - pd.to_numeric(shift, errors="coerce").fillna(0.0)
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
    _rate_panels(axes[0], axes[1], _intervals_in_time(one.get("intervals", pd.DataFrame()), st), st, ops,
                 work_unit(one))
    _hw_panels(*axes[2:], one.get("hw", pd.DataFrame()), st)
    _mark_steps(axes, st)
    axes[-1].set_xlabel("time since the first step began (s)" if not st.attrs.get("breaks") else
                        "time since the first step began (s; long pauses between steps shortened)")
    axes[-1].set_xlim(st["t_start"].min(), st["t_end"].max())
    axes[-1].tick_params(labelbottom=True)
    fig.suptitle(f"Time series of run {run_id}\n{_run_facts(one.get('runs', pd.DataFrame()))}",
                 fontsize=12)
    return fig


MIN_RATE_S = 0.1     # an interval shorter than this has no rate worth drawing


def _intervals_in_time(iv: pd.DataFrame, st: pd.DataFrame) -> pd.DataFrame:
    """The per-second rows of real ops (no ``Intended-`` or batch rows) with their time
    ``t`` on the run's axis (the middle of the interval) and ``rate``: ops over the
    interval's real length (``interval_s``: a step's last interval is partial; a folder
    without it, over the step's ``secs``). An interval shorter than MIN_RATE_S (a
    sliver: the operations that ended just after the loop's end) is too short for a
    rate: left out of the rate lines rather than drawn as a fall or a spike."""
    if not len(iv):
        return iv
    ops = iv["op"].astype("object")
    iv = iv[~ops.str.startswith(INTENDED_PREFIX) & ~ops.str.endswith(BATCH_SUFFIX)].copy()
    if not len(iv):
        return iv
    start = dict(zip(st["step"].astype("object"), st["t_start"]))
    secs = dict(zip(st["step"].astype("object"), st["secs"]))
    sec = pd.to_numeric(iv["second"]).astype("float64")
    derived = (iv["step"].astype("object").map(secs) - sec).clip(upper=1.0)
    length = pd.to_numeric(iv["interval_s"], errors="coerce") if "interval_s" in iv else derived
    length = length.fillna(derived).fillna(1.0)
    iv["t"] = iv["step"].astype("object").map(start) + sec + length / 2
    iv["rate"] = (pd.to_numeric(iv["ops"], errors="coerce") / length).where(length >= MIN_RATE_S)
    # nor are the latencies of a sliver's few operations a second's percentiles
    iv.loc[length < MIN_RATE_S, [c for c in ("p99_us", "mean_us") if c in iv]] = float("nan")
    return iv


LOAD_AXIS_LABEL = "load, index (ops/s, right axis)"
LOAD_AXIS = "<load axis>"   # the label of the throughput panel's second axis (not a panel)


def own_scale_steps(st: pd.DataFrame, iv: pd.DataFrame | None = None) -> set[str]:
    """The steps whose throughput is drawn on its own axis (the right one): the load and
    index steps of a run that also has run loops. A load inserts at tens of thousands of
    ops/s; on one axis with it, run loops of a few hundred lie flat on the floor. Empty
    when the run has steps of one kind only (nothing to keep apart); with ``iv`` (rows
    with ``rate``, :func:`_intervals_in_time`), only the steps that have a rate count."""
    if iv is not None and len(st):
        rated = set(iv.loc[iv["rate"].notna(), "step"].astype("object")) if len(iv) else set()
        st = st[st["step"].astype("object").isin(rated)]
    if not len(st):
        return set()
    names = st["step"].astype("object")
    phase = st["phase"].astype("object") if "phase" in st else names.map(phase_of)
    phase = phase.where(phase.notna(), names.map(lambda s: phase_of(str(s))))
    run = phase == "run"
    return set(names[~run]) if run.any() and (~run).any() else set()


def _rate_panels(ax_tp, ax_lat, iv: pd.DataFrame, st: pd.DataFrame, ops: list[str] | None,
                 unit: str = "ops") -> None:
    """Throughput (all operations, each op, the target) and latency per op per second;
    load and index steps on their own axis (right) when the run has run loops too.
    ``unit``: what the run loops count (rows for a batched workload, as the headline)."""
    kinds = {"p99"}
    if len(iv):
        own = own_scale_steps(st, iv)
        ax_load = ax_tp.twinx(label=LOAD_AXIS) if own else None   # fig.axes[-1], named

        def axis_of(step):
            return ax_load if step in own else ax_tp
        _all_operations(axis_of, iv)
        chosen = ops or [o for o in _main_ops(iv) if o != TOTAL_OP]
        kinds = _op_lines(axis_of, ax_lat, iv, chosen)
        _targets(axis_of, st)
        _log_latency_axis(ax_lat)
        ax_tp.set_ylim(bottom=0)
        handles, labels = ax_tp.get_legend_handles_labels()
        if ax_load is not None:
            ax_load.set_ylim(bottom=0)
            ax_load.set_ylabel(LOAD_AXIS_LABEL, color="0.35")
            ax_load.yaxis.set_major_formatter(_THOUSANDS)
            more, more_labels = ax_load.get_legend_handles_labels()
            handles += [h for h, lab in zip(more, more_labels) if lab not in labels]
            labels += [lab for lab in more_labels if lab not in labels]
        ax_tp.legend(handles, labels, **{**_LEGEND, "bbox_to_anchor": (1.1 if own else 1.005, 1.0)})
        if any(len(line.get_xdata()) and pd.Series(line.get_ydata()).notna().any() for line in ax_lat.lines):
            ax_lat.legend(**_LEGEND)
        else:
            note(ax_lat, "no latency per second per operation in this run")
    else:
        note(ax_tp, "no per-second intervals in this run")
        note(ax_lat, "no per-second intervals in this run")
    ax_tp.set_ylabel(f"run loops ({unit}/s)" if len(iv) and own_scale_steps(st, iv) else f"throughput ({unit}/s)")
    ax_tp.yaxis.set_major_formatter(_THOUSANDS)
    ax_lat.set_ylabel("mean latency (µs)" if kinds == {"mean"} else
                      "p99 latency (µs)" if kinds <= {"p99"} else "p99, or mean (--), latency (µs)")


def all_operations(iv: pd.DataFrame) -> pd.DataFrame:
    """The throughput of all operations per interval (columns step, t, rate, ops): a
    tool's own count of them all (op TOTAL of an import) where a step has one, else the
    sum of the ops; never both added up. An interval with no rate (a sliver too short
    for one: :data:`MIN_RATE_S`) has none here either (NaN, left out of the line), never
    a sum of nothing (0: a fall that did not happen); a real stall (rows of 0 ops) is 0."""
    is_total = (iv["op"].astype("object") == TOTAL_OP).to_numpy()
    counted = set(iv.loc[is_total, "step"].astype("object"))
    in_step = iv["step"].astype("object").isin(counted).to_numpy()
    part = iv[is_total == in_step].assign(ops=lambda d: pd.to_numeric(d["ops"], errors="coerce"))
    by = part.groupby(["step", "t"], sort=False)
    return pd.DataFrame({"rate": by["rate"].sum(min_count=1), "ops": by["ops"].sum(min_count=1)}) \
        .reset_index().sort_values("t")


def _all_operations(axis_of, iv: pd.DataFrame) -> None:
    """The line of all operations (:func:`all_operations`), each step on its axis."""
    total = all_operations(iv)
    labelled = set()
    for stp, g in total.groupby("step", sort=False):
        g = g[g["rate"].notna()]
        ax = axis_of(stp)
        ax.plot(g["t"], g["rate"], color="black", marker=".", ms=4, lw=1.4,
                label="all operations" if id(ax) not in labelled else None)
        labelled.add(id(ax))


def _op_lines(axis_of, ax_lat, iv: pd.DataFrame, chosen: list[str]) -> set[str]:
    """Each op's throughput and its p99 per second — the mean where a run's source has
    none (YCSB's histogram and timeseries measurements print an average per interval
    only) — and the p99 from the intended start where there is one. Returns which
    latency was drawn ({"p99"}, {"mean"} or both)."""
    colors = dict(zip(chosen, [f"C{i}" for i in range(len(chosen))]))
    kinds = set()
    for op in chosen:
        g = iv[iv["op"] == op].sort_values("t")
        for k, (stp, gs) in enumerate(g.groupby("step", sort=False)):
            lab = op if k == 0 else None
            rated = gs[gs["rate"].notna()]   # a sliver has no rate: left out, not 0
            if len(rated):   # an op a tool counts only as a whole: no line
                ax = axis_of(stp)
                ax.plot(rated["t"], rated["rate"], color=colors[op], marker=".", ms=3, lw=0.9,
                        alpha=0.8, label=op if not any(h.get_label() == op for h in ax.lines) else None)
            p99 = pd.to_numeric(gs["p99_us"], errors="coerce")
            mean = pd.to_numeric(gs["mean_us"], errors="coerce") if "mean_us" in gs else p99
            if p99.isna().all() and mean.isna().all():
                continue   # counted only (a batch's records): no latency of its own
            if p99.notna().any() or "mean_us" not in gs:
                kinds.add("p99")
                ax_lat.plot(gs["t"], p99, color=colors[op], marker=".", ms=4, lw=1.2, label=lab)
            else:
                kinds.add("mean")
                ax_lat.plot(gs["t"], pd.to_numeric(gs["mean_us"], errors="coerce"), color=colors[op],
                            marker=".", ms=4, lw=1.2, ls="--", label=f"{op} (mean)" if k == 0 else None)
            ip99 = pd.to_numeric(gs["intended_p99_us"], errors="coerce") \
                if "intended_p99_us" in gs else pd.Series(dtype="float64")
            if ip99.notna().any():
                ax_lat.plot(gs["t"], ip99, color=colors[op], ls=":", lw=1.2,
                            label=f"{op} from intended start" if k == 0 else None)
    return kinds


def _targets(axis_of, st: pd.DataFrame) -> None:
    """Each throttled step's target ops/s, a dashed line over the step (on its axis)."""
    tgt = pd.to_numeric(st["target_ops_per_s"], errors="coerce") if "target_ops_per_s" in st else [None] * len(st)
    for (_, r), t in zip(st.iterrows(), tgt):
        ax_tp = axis_of(r["step"])
        if pd.notna(t) and t > 0:
            ax_tp.hlines(t, r["t_start"], r["t_end"], colors="C3", linestyles="--", lw=1,
                         label="target" if not any(h.get_label() == "target"
                                                   for h in ax_tp.collections) else None)


def _log_latency_axis(ax_lat) -> None:
    """A log axis with plain numbers (50, 100, 200 µs), not 5 × 10¹; 1-2-5 steps while
    they fit, decades beyond two decades."""
    ax_lat.set_yscale("log")
    lo, hi = ax_lat.get_ylim()
    subs = (1.0, 2.0, 5.0) if hi / max(lo, 1e-9) <= 300 else (1.0,)
    ax_lat.yaxis.set_major_locator(LogLocator(subs=subs))
    ax_lat.yaxis.set_major_formatter(_THOUSANDS)
    ax_lat.yaxis.set_minor_formatter(NullFormatter())


def _hw_panels(ax_cpu, ax_io, ax_mem, hw: pd.DataFrame | None, st: pd.DataFrame) -> None:
    """CPU (user/sys/iowait stacked), disk MB/s read and written, DBMS RSS and size."""
    if hw is None or len(hw) == 0:
        for ax in (ax_cpu, ax_io, ax_mem):
            note(ax, "no hardware samples for this run (e.g. imported without vmstat/iostat)")
        ax_cpu.set_ylabel("CPU (%)")
        ax_io.set_ylabel("disk (MB/s)")
        ax_mem.set_ylabel("memory (GB)")
        return
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


def _run_facts(runs: pd.DataFrame) -> str:
    """The title's second line: experiment · config · DBMS and version."""
    meta = runs.iloc[0].to_dict() if len(runs) else {}
    facts = [str(v) for v in (meta.get("experiment"), meta.get("config")) if isinstance(v, str)]
    if isinstance(meta.get("dbms"), str):
        facts.append(f"{meta['dbms']} {meta.get('dbms_version') or ''}".strip())
    return " · ".join(facts)
