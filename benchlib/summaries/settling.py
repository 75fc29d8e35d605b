"""Loop by loop: whether and when a run's figures stop moving (``summary --kind loops``).

The LinkBench seed runs "for 24 hours in 1-hour loops" because "results become stable
after a few hours", and prints a line per hour. This is those lines with the verdict:
per run loop its operations per second, the p99 of each main operation, CPU and I/O
per operation, and for each figure the loop from which it has **settled**.

The rule: the *final third* of the loops (the last ``ceil(n/3)``, at least 2) gives the
figure's settled level, its mean ``m``, and its noise, the standard deviation ``s``;
the 95 % prediction band of one more loop is ``m ± t(k-1)·s·sqrt(1 + 1/k)`` (Student's
t, ``k`` loops in the final third), never narrower than ±1 % of ``m`` (loops that agree
to the digit are not unsettled for a 0.2 % wiggle). A figure has settled from the first
loop after which every loop lies inside that band; the run has settled from the latest
of its figures' settling loops. Fewer than 4 loops give no verdict (blank). A loop
before the run's settling loop is marked ``warming``, one from it on ``settled``.

Figures, per run loop (NaN where the source lacks it, blank in the text):

    ops_s       operations per second over the loop (ops / secs)
    p99_<OP>    the loop's p99 of each main operation, µs (no Intended-, failed or
                batch-record rows)
    cpu_us_op   client + DBMS CPU per operation, µs: (csec + dsec) / ops × 1e6
    io_kb_op    KB read and written per operation: (read KB/s + write KB/s) / ops/s
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..schema import BATCH_SUFFIX, FAILED_SUFFIXES, INTENDED_PREFIX, TOTAL_OP, step_name
from .stepstats import step_stats
from .uncertainty import t975

MIN_LOOPS = 4            # fewer: no verdict
MIN_BAND = 0.01          # the band is never narrower than ±1 % of the settled level
US = 1e6


def settling_loop(values) -> int | None:
    """The 1-based index of the first loop from which every later value lies inside
    the final third's 95 % prediction band (see the module docstring); None when
    there are fewer than :data:`MIN_LOOPS` values that have the figure."""
    x = np.asarray(values, dtype=float)
    if np.isfinite(x).sum() < MIN_LOOPS or not np.isfinite(x[-1]):
        return None
    k = max(2, math.ceil(len(x) / 3))
    tail = x[-k:][np.isfinite(x[-k:])]
    if len(tail) < 2:
        return None
    m = float(tail.mean())
    half = t975(len(tail) - 1) * float(tail.std(ddof=1)) * math.sqrt(1 + 1 / len(tail))
    half = max(half, MIN_BAND * abs(m))
    outside = [i for i, v in enumerate(x) if not (np.isfinite(v) and abs(v - m) <= half)]
    first = (max(outside) + 2) if outside else 1
    return first if first <= len(x) else None


def _main_p99(latency: pd.DataFrame) -> pd.DataFrame:
    """Per (experiment, run_id, step): the p99 of each main operation, columns ``p99_<OP>``."""
    if latency is None or not len(latency):
        return pd.DataFrame(columns=KEY)
    if "experiment" not in latency:
        latency = latency.assign(experiment="")
    op = latency["op"].astype(str)
    main = latency[~op.str.startswith(INTENDED_PREFIX) & ~op.str.endswith(FAILED_SUFFIXES)
                   & ~op.str.endswith(BATCH_SUFFIX) & (op != TOTAL_OP)
                   & (pd.to_numeric(latency["count"], errors="coerce") > 0)
                   & pd.to_numeric(latency["p99_us"], errors="coerce").notna()]
    wide = main.assign(**{c: _plain(main[c]) for c in (*KEY, "op")}) \
        .pivot_table(index=KEY, columns="op", values="p99_us", aggfunc="first")
    wide.columns = [f"p99_{c}" for c in wide.columns]
    return wide.reset_index()


KEY = ["experiment", "run_id", "step"]   # a loop: two experiments of one matrix share run ids


def _plain(col: pd.Series) -> pd.Series:
    return col.astype(object).where(col.notna(), "").astype(str)


def loop_figures(results: dict) -> pd.DataFrame:
    """One row per run loop of every run: ``experiment config run_id step loop ops_s
    p99_<OP>… cpu_us_op io_kb_op``, in loop order."""
    st = step_stats(results)
    finished = st["status"] == "ok" if "status" in st else True   # an interrupted loop: partial figures
    st = st[(st["phase"] == "run") & finished].copy()
    if not len(st):
        return pd.DataFrame(columns=["experiment", "config", "run_id", "step", "loop", "ops_s"])
    ops = st["ops"].where(st["ops"] > 0)
    rate = st["rate"].where(st["rate"] > 0)
    cpu = st[["csec", "dsec"]].sum(axis=1, min_count=1)
    out = st[["experiment", "config", "run_id", "step"]].copy()
    out["loop"] = pd.to_numeric(st["loop"], errors="coerce")
    out["ops_s"] = st["rate"]
    out["cpu_us_op"] = cpu / ops * US
    out["io_kb_op"] = st[["read_kbps", "write_kbps"]].sum(axis=1, min_count=1) / rate
    for c in KEY:
        out[c] = _plain(out[c])
    p99 = _main_p99(results.get("latency"))
    if len(p99.columns) > len(KEY):
        out = out.merge(p99, on=KEY, how="left")
    figures = ["ops_s", *[c for c in out.columns if c.startswith("p99_")], "cpu_us_op", "io_kb_op"]
    return out[["experiment", "config", "run_id", "step", "loop", *figures]].reset_index(drop=True)


def figure_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c == "ops_s" or c.startswith("p99_") or c in ("cpu_us_op", "io_kb_op")]


def loops(results: dict) -> pd.DataFrame:
    """:func:`loop_figures` with the verdict: ``state`` (warming | settled, blank without
    one) per loop and, per run, ``settled_from`` (the run's settling loop number) and
    ``settled_<figure>`` (each figure's)."""
    df = loop_figures(results)
    if not len(df):
        return df.assign(state=pd.Series(dtype=object), settled_from=pd.Series(dtype=float))
    parts = []
    for _, run in df.groupby(["experiment", "run_id"], sort=False):
        run = run.sort_values("loop").copy()
        per = {c: settling_loop(run[c]) for c in figure_columns(run) if run[c].notna().any()}
        have = [v for v in per.values() if v is not None]
        verdict = max(have) if have and len(have) == len(per) else None
        for c, v in per.items():
            run[f"settled_{c}"] = np.nan if v is None else float(run["loop"].iloc[v - 1])
        run["settled_from"] = np.nan if verdict is None else float(run["loop"].iloc[verdict - 1])
        run["state"] = "" if verdict is None else np.where(np.arange(len(run)) + 1 < verdict,
                                                           "warming", "settled")
        parts.append(run)
    return pd.concat(parts, ignore_index=True)


def _fmt(v: float, col: str) -> str:
    if v is None or not np.isfinite(v):
        return ""
    if col == "io_kb_op":
        return f"{v:.3f}"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}"


def loops_text(results: dict) -> str:
    """Per run: a line with the verdict, then one line per loop (``summary --kind loops``)."""
    df = loops(results)
    if not len(df):
        return "(no run loops)"
    blocks = []
    many = df["experiment"].nunique() > 1
    for (exp, run_id), run in df.groupby(["experiment", "run_id"], sort=False):
        run_id = f"{exp}/{run_id}" if many else run_id
        figs = [c for c in figure_columns(run) if run[c].notna().any()]
        blocks.append(_verdict(run_id, run, figs) + "\n" + _table(run, figs))
    return "\n\n".join(blocks)


def _name(col: str) -> str:
    return {"ops_s": "ops/s", "cpu_us_op": "cpu_us/op", "io_kb_op": "io_kb/op"}.get(
        col, col[4:] + ".p99_us" if col.startswith("p99_") else col)


def _verdict(run_id: str, run: pd.DataFrame, figs: list[str]) -> str:
    first = run["settled_from"].iloc[0]
    per = ", ".join(f"{_name(c)} {step_name('run', int(run[f'settled_{c}'].iloc[0]))}" for c in figs
                    if np.isfinite(run[f"settled_{c}"].iloc[0]))
    n = len(run)
    if not np.isfinite(first):
        return f"{run_id}: {n} loops, no verdict (fewer than {MIN_LOOPS} loops with every figure)"
    return f"{run_id}: {n} loops, settled from {step_name('run', int(first))} ({per})"


def _table(run: pd.DataFrame, figs: list[str]) -> str:
    from .formatting import layout
    rows = [["loop", *(_name(c) for c in figs), "state"]]
    for _, r in run.iterrows():
        rows.append([str(r["step"]), *(_fmt(r[c], c) for c in figs), str(r["state"])])
    return layout(rows)
