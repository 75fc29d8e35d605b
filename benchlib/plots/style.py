"""What every plot shares: figures, notes for missing data, labels and number formats."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..schema import BATCH_SUFFIX, is_failed
from ..summaries.formatting import to_float
from ..summaries.response import op_order
from .values import DPI, PARAM_LABELS, UNTHROTTLED

# ---------------------------------------------------------------- helpers

def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained", facecolor="white")


def note(ax, text: str) -> None:
    """A panel that has nothing to show says why."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes,
            fontsize=10, color="0.35", wrap=True)
    if len(ax.get_shared_x_axes().get_siblings(ax)) == 1:   # a shared time axis keeps its ticks
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
        return s.apply(lambda v: UNTHROTTLED if pd.isna(v) or to_float(v, v) == 0 else to_float(v, v))
    return s.apply(lambda v: "(none)" if v is None or (isinstance(v, float) and np.isnan(v))
                   else to_float(v, v))


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
    ops = [o for o in op_order(df[["op"]]) if not o.endswith(BATCH_SUFFIX) and not is_failed(o)] if len(df) else []
    return ops or (op_order(df[["op"]]) if len(df) else [])


def _main_calls(df: pd.DataFrame) -> list[str]:
    """The ops whose latency a plot shows (:func:`_main_ops`), but where a workload
    counts units inside calls (ybio's rows of a ``READ-BATCH``), the call in their place:
    a latency a client waits for, as the headline and ``compare`` give it
    (:func:`..summaries.uncertainty.call_ops`)."""
    ops = _main_ops(df)
    has = df.groupby(df["op"].astype("object"))["value"].apply(lambda v: v.notna().any()) \
        if len(df) and "value" in df else pd.Series(dtype=bool)
    calls = [f"{o}{BATCH_SUFFIX}" if has.get(f"{o}{BATCH_SUFFIX}", False) else o for o in ops]
    return list(dict.fromkeys(calls))
