"""Experiments or configurations side by side: grouped bars per step."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..summaries.formatting import to_float
from ..summaries.stepstats import step_sort_key
from .style import (
    _THOUSANDS,
    _axis_values,
    _cap,
    _experiments,
    _figure,
    _fmt,
    _grid,
    _label,
    _main_calls,
    note,
)
from .values import points, run_parameters, value_spec

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
            keep &= col.apply(lambda v: to_float(v, v)) == to_float(want, want)
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
    panels = [p for m in metrics for p in _panels(res, m, wanted, by)]
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
        _bars(ax, df, spec, hue_order, palette)
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


def _panels(res: dict, metric: str, wanted: list[str], by: str) -> list[tuple]:
    """The panels of one metric: (value spec, op or None, phase title, its points with
    their ``group``), per operation for a latency metric and per phase group; one empty
    panel when the results have none of it."""
    spec = value_spec(metric)
    df = points(res, metric, step=wanted, per_step=True) if wanted else pd.DataFrame()
    if len(df) == 0 or df["value"].isna().all():
        return [(spec, None, "", pd.DataFrame())]
    df = df[df["value"].notna()]
    df = df.assign(group=_group_labels(df, by),
                   _phase=[_PHASE_OF.get(step_sort_key(s)[0], "run") for s in df["step"]])
    panels = []
    for op in (_main_calls(df) if spec.source == "latency" else [None]):
        part = df[df["op"] == op] if op else df
        for key, _, title in _PHASE_GROUPS:
            one = part[part["_phase"] == key]
            if len(one):
                panels.append((spec, op, title, one))
    return panels


def _bars(ax, df: pd.DataFrame, spec, hue_order: list[str], palette: dict) -> None:
    """One bar per group and step (the mean of its runs, whiskers min to max), labelled
    with its value while there are few enough bars to read them."""
    import seaborn as sns

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


def _all_steps(res: dict) -> list[str]:
    st = res.get("steps")
    if st is None or len(st) == 0:
        return []
    return sorted(set(st["step"].astype("object")), key=step_sort_key)


