"""Numbers with their uncertainty: the one interval rule, the ratio of two points, the
batch means of a loop's seconds and the steady-state check per run loop.

A point's figure (:mod:`.samples`) is the mean of its runs' own figures — a run's
throughput its operations over its measured duration (:func:`..measure.throughput`) —
and its interval comes from an :class:`Estimate`'s spread:

- its **repetitions** (``repetitions: N``): one value per run — the spread between
  runs, which is what a reader of a published figure needs; or, with one run, for
  throughput only,
- the **batch means** of the run loops' per-second rates (after warm-up): the loop's
  whole seconds cut into :data:`BATCHES` consecutive batches, one mean each — the noise
  within one run at a steady state (not the noise between runs). They set the width of
  the interval, never the figure: a run's throughput stays ops / secs;
- otherwise **one run**: no interval, and it says so.

One rule at any n >= 2 (:func:`mean_ci`): Student's t (95%) on the log scale for a
quantity that cannot be zero or below (throughput, latency, CPU and I/O per operation:
all of these), ``m·exp(±t·s/(√n·m))``, the delta method's, which stays above zero however
wide the spread (and is not symmetric round the mean); :func:`label` names it. The ratio
B/A of two points is compared on the log scale, its interval
``exp(log(b/a) ± t·sqrt(sa²/(na·a²) + sb²/(nb·b²)))`` (delta method, Welch's degrees of
freedom) — the same shape as pyperf's ``compare_to``. A ratio whose interval spans 1 is
"not significant".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..schema import BATCH_SUFFIX, FAILED_SUFFIXES, INTENDED_PREFIX, TOTAL_OP

BATCHES = 10
MAIN_SHARE = 0.01   # an op of fewer calls than this share (YCSB's CLEANUP) is no main op


class CompareError(ValueError):
    """A comparison that cannot be made; the message is one line."""

# Student's t, two-sided 95%, by degrees of freedom; past 30, the normal's 1.96
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df: float) -> float:
    if not df or df < 1 or math.isnan(df):
        return math.nan
    return _T975[int(df) - 1] if df <= 30 else 1.96


RUNS, BATCH_MEANS, ONE_RUN = "runs", "batch means of one run", "one run"


@dataclass(frozen=True)
class Estimate:
    """A point's figure and what its interval comes from: ``value`` (the mean of its runs'
    own figures), ``spread`` (the runs' values, or one run's batch means) and ``how``
    (:data:`RUNS`, :data:`BATCH_MEANS`, :data:`ONE_RUN`)."""
    value: float
    spread: tuple[float, ...]
    how: str

    @property
    def n(self) -> int:
        return len(self.spread)

    def ci(self) -> tuple[float, float]:
        """(low, high): :func:`mean_ci` of the spread, scaled to ``value`` (batch means
        set the width round the run's own throughput); NaN with one sample."""
        m, lo, hi, _ = mean_ci(self.spread)
        if not m or math.isnan(lo) or math.isnan(self.value):
            return math.nan, math.nan
        return self.value * lo / m, self.value * hi / m

    def label(self) -> str:
        return label(self.n, self.how)


def label(n: int, how: str = RUNS) -> str:
    """What an interval is: ``95% t, log scale, 3 runs``; ``one run`` (no interval)."""
    if n < 2 or how == ONE_RUN:
        return ONE_RUN
    return f"95% t, log scale, {n} {'runs' if how == RUNS else how.replace('of one run', '(one run)')}"


def mean_ci(samples, positive: bool = True) -> tuple[float, float, float, int]:
    """(mean, low, high, n): the 95% t-interval of the mean at any n >= 2 (NaN bounds at
    n = 1: one run has no interval). For a ``positive`` quantity (all samples >= 0, a mean
    > 0) on the log scale (delta method): its low end stays above zero."""
    x = np.asarray([v for v in samples if v is not None and np.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    m = float(x.mean())
    if n < 2:
        return m, math.nan, math.nan, n
    half = t975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    if positive and m > 0 and (x >= 0).all():
        f = math.exp(half / m)
        return m, m / f, m * f, n
    return m, m - half, m + half, n


def _unit_ops(iv: pd.DataFrame) -> pd.DataFrame:
    """Interval rows of the operations themselves: no Intended- copy, no -BATCH parent
    (a batched workload's throughput counts its units: rows/s); TOTAL rows where a
    source has nothing else (an import of a tool that prints only totals)."""
    op = iv["op"].astype(str)
    units = iv[~op.str.startswith(INTENDED_PREFIX) & ~op.str.endswith(BATCH_SUFFIX) & (op != TOTAL_OP)
               & ~op.str.endswith(FAILED_SUFFIXES)]
    # an op's rows without counts (YCSB's histogram status lines time ops, TOTAL counts them)
    units = units[pd.to_numeric(units["ops"], errors="coerce").notna()] if "ops" in units else units
    return units if len(units) or not (op == TOTAL_OP).any() else iv[op == TOTAL_OP]


def call_ops(lat: pd.DataFrame) -> pd.DataFrame:
    """Latency rows of the calls a client waits for: a batch (``READ-BATCH``) rather than
    the units counted inside it (its ``READ`` rows), no Intended- copy, no failures'
    timings, no TOTAL. Latency is the call's; throughput the units' (:func:`_unit_ops`)."""
    op = lat["op"].astype(str)
    batched = {o.removesuffix(BATCH_SUFFIX) for o in set(op) if o.endswith(BATCH_SUFFIX)}
    return lat[~op.str.startswith(INTENDED_PREFIX) & (op != TOTAL_OP) & ~op.isin(batched)
               & ~op.str.endswith(FAILED_SUFFIXES)]


def main_calls(lat: pd.DataFrame) -> list[str]:
    """The calls of :func:`call_ops` that are at least :data:`MAIN_SHARE` of them."""
    calls = call_ops(lat)
    counts = pd.to_numeric(calls["count"], errors="coerce").groupby(calls["op"].astype(str)).sum()
    total = counts.sum()
    return sorted(o for o, c in counts.items() if not total or c >= MAIN_SHARE * total)


def interval_rates(iv: pd.DataFrame) -> pd.DataFrame:
    """Per (step, second): the operations' rate over the interval's real length
    (``interval_s``; 1 s where a source has none) and whether the interval is whole.
    A partial one (a step's last, which ends with its last operation) is shorter than
    nine tenths of the step's usual: rates of whole intervals only are compared over time."""
    length = pd.to_numeric(iv["interval_s"], errors="coerce") if "interval_s" in iv else None
    iv = iv.assign(interval_s=1.0 if length is None else length.fillna(1.0))
    g = iv.groupby(["step", "second"]).agg(ops=("ops", "sum"), interval_s=("interval_s", "max"))
    g["rate"] = g["ops"] / g["interval_s"]
    # whole: near the step's usual length (a tool's status lines jitter by milliseconds)
    g["whole"] = g["interval_s"] >= 0.9 * g.groupby(level=0)["interval_s"].transform("median")
    return g


def batch_means(per_second: pd.Series, batches: int = BATCHES) -> list[float]:
    """The means of ``batches`` consecutive runs of ``per_second`` (the interval of a
    steady state, never a run's figure)."""
    v = per_second.to_numpy(dtype=float)
    if len(v) < 2:
        return list(v)
    k = min(batches, len(v))
    return [float(c.mean()) for c in np.array_split(v, k)]


def ratio_ci(a, b, value_a: float | None = None, value_b: float | None = None) -> tuple[float, float, float]:
    """(ratio b/a, low, high), 95%, on the log scale (delta method, Welch's degrees of
    freedom) from the samples ``a`` and ``b``; ``value_a``/``value_b``: the points' own
    figures when they are not their samples' means (one run's throughput over its batch
    means). NaN bounds when a side has one sample."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b) or a.mean() <= 0 or b.mean() <= 0:
        return math.nan, math.nan, math.nan
    ma, mb = a.mean(), b.mean()
    r = (value_b if value_b is not None else mb) / (value_a if value_a is not None else ma)
    if len(a) < 2 or len(b) < 2:
        return r, math.nan, math.nan
    va = a.var(ddof=1) / (len(a) * ma * ma)
    vb = b.var(ddof=1) / (len(b) * mb * mb)
    se = math.sqrt(va + vb)
    if se == 0:
        return r, r, r
    df = (va + vb) ** 2 / ((va * va) / (len(a) - 1) + (vb * vb) / (len(b) - 1))
    half = t975(df) * se
    return r, r * math.exp(-half), r * math.exp(half)


def ratio_of(a: Estimate, b: Estimate) -> tuple[float, float, float]:
    """:func:`ratio_ci` of two points' estimates."""
    return ratio_ci(a.spread, b.spread, a.value, b.value)


METRICS = {"ops_per_s": "higher", "cpu_us_per_op": "lower"}   # + each op's p99_us: lower


def verdict(metric: str, r: float, lo: float, hi: float) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return f"no interval ({ONE_RUN})"
    if lo <= 1 <= hi:
        return "not significant"
    higher_better = METRICS.get(metric, "lower") == "higher"
    return "better" if (r > 1) == higher_better else "worse"


def steady_state(results: dict, min_drift: float = 0.05) -> pd.DataFrame:
    """Per run loop, the trend of its per-second throughput: the drift over the loop
    (slope × duration, as a share of the mean) and whether it is larger than the noise
    (|t| of the slope > 2, on batch means) and than ``min_drift``. A loop that drifts
    was not at a steady state: its mean depends on how long it ran. Rates are over
    each interval's real length; partial intervals (a loop's last) are left out, and
    ``partial_left_out`` says how many."""
    iv = results.get("intervals")
    if iv is None or not len(iv):
        return pd.DataFrame()
    iv = iv[iv["step"].astype(str).str.startswith("r.")]
    rows = []
    keys = [k for k in ("experiment", "run_id", "step") if k in iv]   # experiments share run ids
    for key, g in _unit_ops(iv).groupby(keys, dropna=False):
        run_id, step = key[-2:]
        rates = interval_rates(g)
        per_sec = rates.loc[rates["whole"], "rate"]
        if len(per_sec) < 6:
            continue
        y = np.asarray(batch_means(per_sec, min(BATCHES, len(per_sec) // 2)))
        x = np.arange(len(y), dtype=float)
        slope, icpt = np.polyfit(x, y, 1)
        resid = y - (slope * x + icpt)
        se = math.sqrt(resid.var(ddof=2) / ((x - x.mean()) ** 2).sum()) if len(y) > 2 else math.nan
        drift = slope * (len(y) - 1) / y.mean() if y.mean() else math.nan
        t = slope / se if se else math.inf
        rows.append({**dict(zip(keys, key)), "drift": drift, "t": t,
                     "steady": not (abs(t) > 2 and abs(drift) > min_drift),
                     "partial_left_out": int((~rates["whole"]).sum())})
    return pd.DataFrame(rows)
