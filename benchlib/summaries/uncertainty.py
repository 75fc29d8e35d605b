"""Numbers with their uncertainty: a point's mean and 95% confidence interval, the
ratio of two experiments' points, and a steady-state check per run loop.

A *point* is one cell of the matrix (``schema.POINT``: threads, target throughput and the
workload's own matrix properties, see :mod:`benchlib.points`) over its run loops. Its
samples of a metric are, in this order of preference:

- its **repetitions** (``repetitions: N``): one value per run — the spread between
  runs, which is what a reader of a published figure needs; or, with one run,
- **batch means** of the run loops' per-second intervals (after warm-up): the loop's
  full seconds cut into :data:`BATCHES` consecutive batches, one mean each. Batching
  removes most of the correlation between neighbouring seconds, so the interval is an
  honest estimate of the noise within one run (not of the noise between runs).

The interval of a mean is Student's t (95%), on the log scale for a quantity that cannot
be zero or below (throughput, latency, CPU and I/O per operation: all of these):
``m·exp(±t·s/(√n·m))``, the delta method's, which stays above zero however wide the
spread (and is not symmetric round the mean). The ratio B/A of two points is compared on
the log scale, its interval ``exp(log(b/a) ± t·sqrt(sa²/(na·a²) + sb²/(nb·b²)))``
(delta method, Welch's degrees of freedom) — the same shape as pyperf's
``compare_to``. A ratio whose interval spans 1 is "not significant".
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..schema import BATCH_SUFFIX, FAILED_SUFFIXES, INTENDED_PREFIX, POINT, TOTAL_OP

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


def mean_ci(samples, positive: bool = True) -> tuple[float, float, float, int]:
    """(mean, low, high, n): the 95% interval of the mean; min–max when n < 3. For a
    ``positive`` quantity (all samples >= 0, a mean > 0) on the log scale (delta method):
    its low end stays above zero."""
    x = np.asarray([v for v in samples if v is not None and np.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    m = float(x.mean())
    if n < 3:
        return m, float(x.min()), float(x.max()), n
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


def _batch_means(per_second: pd.Series, batches: int = BATCHES) -> list[float]:
    v = per_second.to_numpy(dtype=float)
    if len(v) < 2:
        return list(v)
    k = min(batches, len(v))
    return [float(c.mean()) for c in np.array_split(v, k)]


def run_samples(results: dict) -> pd.DataFrame:
    """Per run, its point (:data:`POINT`) and its run-loop metrics: ops_per_s (units:
    rows/s for a batched workload), cpu_us_per_op, io_kb_per_op, the p99 of each main
    call (``<op>_p99_us``) and the batch means of its per-second throughput
    (``ops_per_s_batches``)."""
    runs = results["runs"]
    steps = results["steps"]
    steps = steps[steps["phase"] == "run"]
    rows = [_run_row(results, run_id, st) for run_id, st in steps.groupby("run_id")]
    out = pd.DataFrame(rows)
    keep = [c for c in ["run_id", "experiment", "config", *POINT, "repetition"] if c in runs]
    if not len(out):
        return out
    pts = runs[keep].copy()
    # an unthrottled point has no target: 0, so that points match and group; threads a
    # source does not know are 0 too (no run has none), a workload without a matrix ""
    pts["target_ops_per_s"] = pd.to_numeric(pts.get("target_ops_per_s"), errors="coerce").fillna(0.0)
    pts["threads"] = pd.to_numeric(pts.get("threads"), errors="coerce").fillna(0).astype(int)
    pts["point"] = pts["point"].fillna("").astype(str) if "point" in pts else ""
    return pts.merge(out, on="run_id", how="inner")


def _run_row(results: dict, run_id, st: pd.DataFrame) -> dict:
    runs, hw = results["runs"], results.get("hw")
    iv, lat = results.get("intervals"), results.get("latency")
    secs, ops = float(st["secs"].sum()), float(st["ops"].sum())
    row = {"run_id": run_id, "ops_per_s": ops / secs if secs else math.nan}
    if hw is not None and len(hw):
        h = hw[(hw["run_id"] == run_id) & hw["step"].isin(st["step"])]
        # client CPU from one source, the clients' getrusage (eff.op's csec); the DBMS's
        # that dsec counts (the run's own sessions over the step, where the server says)
        cpu = _step_cpu(st, h, "client_cpu_s")
        if not _engine_in_clients(runs, run_id):
            dbms = _step_cpu(st, h, "dbms_cpu_s")
            cpu = cpu + dbms if pd.notna(dbms) else cpu
        # no CPU at all beside operations: no sample of the sampler's fell inside a step
        # shorter than its interval, a figure not measured rather than a zero
        row["cpu_us_per_op"] = float(cpu) * 1e6 / ops if ops and pd.notna(cpu) and cpu > 0 else math.nan
        kb = h[["disk_read_kb", "disk_write_kb"]].sum(axis=1, min_count=1).sum(min_count=1)
        row["io_kb_per_op"] = float(kb) / ops if ops and pd.notna(kb) else math.nan
    if lat is not None and len(lat):
        lr = lat[(lat["run_id"] == run_id) & lat["step"].isin(st["step"])]
        calls = call_ops(lr)
        lr = calls[calls["op"].astype(str).isin(main_calls(lr))]
        for op, g in lr.groupby(lr["op"].astype(str)):
            row[f"{op}_p99_us"] = float(g["p99_us"].max())
    if iv is not None and len(iv):
        r = _unit_ops(iv[(iv["run_id"] == run_id) & iv["step"].isin(st["step"])])
        rates = interval_rates(r)
        # a loop's last interval is partial (the loop ended inside it): left out
        row["ops_per_s_batches"] = _batch_means(rates.loc[rates["whole"], "rate"])
    return row


def _step_cpu(st: pd.DataFrame, h: pd.DataFrame, col: str) -> float:
    """The steps' own CPU seconds of ``col`` (measured over each step's window) when every
    step has it, else the hw samples' sum (an import, a run from before)."""
    own = pd.to_numeric(st[col], errors="coerce") if col in st else None
    if own is not None and len(own) and own.notna().all():
        return float(own.sum())
    return h[col].sum(min_count=1) if col in h else math.nan


def _engine_in_clients(runs: pd.DataFrame, run_id: str) -> bool:
    """An engine inside the clients (the target's dialect says so, in meta): its CPU is
    already the clients'."""
    r = runs[runs["run_id"] == run_id]
    if not len(r) or "meta" not in r:
        return False
    target = (r["meta"].iloc[0] or {}).get("target")
    dialect = target.get("dialect") if isinstance(target, dict) else None
    return bool((dialect or {}).get("engine_in_clients"))


def samples_of(g: pd.DataFrame, metric: str) -> list[float]:
    """One point's samples of ``metric``: its repetitions' values, or one run's batch means."""
    if metric == "ops_per_s" and len(g) < 2 and "ops_per_s_batches" in g:
        return list(g["ops_per_s_batches"].iloc[0] or [])
    return [float(v) for v in g[metric] if pd.notna(v)] if metric in g else []


def point_samples(samples: pd.DataFrame, metric: str) -> dict[tuple, list[float]]:
    """{point: samples}, each point's :func:`samples_of`."""
    return {key: samples_of(g, metric) for key, g in samples.groupby(POINT, dropna=False)}


def ratio_ci(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """(ratio of means b/a, low, high), 95%, on the log scale (delta method)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b) or a.mean() <= 0 or b.mean() <= 0:
        return math.nan, math.nan, math.nan
    ma, mb = a.mean(), b.mean()
    r = mb / ma
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


METRICS = {"ops_per_s": "higher", "cpu_us_per_op": "lower"}   # + each op's p99_us: lower


def only_config(results: dict, config: str | None) -> dict:
    """The results of one configuration (cnf) only; all of them when ``config`` is None.
    ValueError naming the configurations there are when it has no run."""
    if config is None:
        return results
    runs = results["runs"]
    keep = set(runs.loc[runs["config"] == config, "run_id"])
    if not keep:
        raise CompareError(f"no runs of configuration {config!r} (there are: "
                         f"{', '.join(sorted(set(map(str, runs['config']))))})")
    return {k: (v[v["run_id"].isin(keep)] if isinstance(v, pd.DataFrame) and "run_id" in v else v)
            for k, v in results.items()}


def compare(res_a: dict, res_b: dict) -> pd.DataFrame:
    """For each point both experiments have (:data:`POINT`), each metric's means in A
    and B, the ratio B/A with its 95% interval, and a verdict: ``better``/``worse``
    (in the metric's own sense) or ``not significant`` when the interval spans 1.
    Two experiments of one point each are compared whatever their points."""
    sa, sb = run_samples(res_a), run_samples(res_b)
    if not len(sa) or not len(sb):
        return pd.DataFrame()
    p99s = sorted({c for c in (*sa.columns, *sb.columns) if c.endswith("_p99_us")})
    rows = []
    for (ka, ga), (kb, gb) in matched_points(sa, sb):
        for metric in (*METRICS, *p99s):
            a, b = samples_of(ga, metric), samples_of(gb, metric)
            if not a or not b:
                continue
            r, lo, hi = ratio_ci(a, b)
            rows.append({"threads": ka[0], "target_ops_per_s": ka[1], "point": ka[2],
                         "threads_b": kb[0], "target_ops_per_s_b": kb[1], "point_b": kb[2],
                         "metric": metric, "a": float(np.mean(a)), "b": float(np.mean(b)),
                         "n_a": len(a), "n_b": len(b), "ratio": r, "ci_low": lo, "ci_high": hi,
                         "verdict": verdict(metric, r, lo, hi)})
    return pd.DataFrame(rows)


def matched_points(sa: pd.DataFrame, sb: pd.DataFrame) -> list[tuple[tuple, tuple]]:
    """[((key, samples of A), (key, samples of B))]: the points both have; the only one
    of each when each has one."""
    ga, gb = dict(list(sa.groupby(POINT))), dict(list(sb.groupby(POINT)))
    same = [((k, ga[k]), (k, gb[k])) for k in ga if k in gb]
    if not same and len(ga) == 1 and len(gb) == 1:
        return [(next(iter(ga.items())), next(iter(gb.items())))]
    return same


def verdict(metric: str, r: float, lo: float, hi: float) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return "no interval (one sample)"
    if lo <= 1 <= hi:
        return "not significant"
    higher_better = METRICS.get(metric, "lower") == "higher"
    return "better" if (r > 1) == higher_better else "worse"


def format_compare(df: pd.DataFrame, name_a: str, name_b: str) -> str:
    if not len(df):
        return f"(no point of {name_b} matches one of {name_a})"
    pw = max((len(_point(p, q)) for p, q in zip(df["point"], df["point_b"])), default=0)
    head = f"{'point':<{pw}} " if pw else ""
    lines = [f"B/A: A = {name_a}, B = {name_b}; 95% intervals",
             f"{'threads':>7} {'target':>8} {head}{'metric':<22} {'A':>12} {'B':>12} {'B/A':>7} "
             f"{'95% CI':>17}  verdict"]
    for r in df.itertuples():
        tgt = _point(r.target_ops_per_s, r.target_ops_per_s_b)
        thr = _point(r.threads, r.threads_b)
        pt = f"{_point(r.point, r.point_b):<{pw}} " if pw else ""
        ci = "" if math.isnan(r.ci_low) else f"{r.ci_low:.3f} – {r.ci_high:.3f}"
        lines.append(f"{thr:>7} {tgt:>8} {pt}{r.metric:<22} {r.a:>12.5g} {r.b:>12.5g} "
                     f"{r.ratio:>7.3f} {ci:>17}  {r.verdict}")
    return "\n".join(lines)


def _point(a, b) -> str:
    def one(v):
        if isinstance(v, str):
            return v
        return "-" if pd.isna(v) else f"{float(v):.0f}"
    return one(a) if one(a) == one(b) else f"{one(a)}/{one(b)}"


def point_summary(results: dict) -> pd.DataFrame:
    """Per point: n samples and, per metric, the mean with its 95% interval (min–max
    when n < 3) — repetitions when there are some, batch means of one run otherwise."""
    samples = run_samples(results)
    if not len(samples):
        return pd.DataFrame()
    metrics = [m for m in (*METRICS, *sorted(c for c in samples if c.endswith("_p99_us")))
               if m in samples]
    rows = []
    for key, g in samples.groupby(POINT):
        row = {"config": ",".join(sorted(set(map(str, g["config"])))) if "config" in g else "",
               "threads": key[0], "target_ops_per_s": key[1], "point": key[2], "runs": len(g)}
        for m in metrics:
            mean, lo, hi, n = mean_ci(samples_of(g, m))
            row.update({m: mean, f"{m}_low": lo, f"{m}_high": hi, f"{m}_n": n})
        rows.append(row)
    out = pd.DataFrame(rows)
    return out if (out["point"] != "").any() else out.drop(columns="point")


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
    for (run_id, step), g in _unit_ops(iv).groupby(["run_id", "step"]):
        rates = interval_rates(g)
        per_sec = rates.loc[rates["whole"], "rate"]
        if len(per_sec) < 6:
            continue
        y = np.asarray(_batch_means(per_sec, min(BATCHES, len(per_sec) // 2)))
        x = np.arange(len(y), dtype=float)
        slope, icpt = np.polyfit(x, y, 1)
        resid = y - (slope * x + icpt)
        se = math.sqrt(resid.var(ddof=2) / ((x - x.mean()) ** 2).sum()) if len(y) > 2 else math.nan
        drift = slope * (len(y) - 1) / y.mean() if y.mean() else math.nan
        t = slope / se if se else math.inf
        rows.append({"run_id": run_id, "step": step, "drift": drift, "t": t,
                     "steady": not (abs(t) > 2 and abs(drift) > min_drift),
                     "partial_left_out": int((~rates["whole"]).sum())})
    return pd.DataFrame(rows)
