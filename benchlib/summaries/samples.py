"""What each run of a point gives: its figures over its run loops, and a point's
estimate of each (:class:`.uncertainty.Estimate`) — the table ``summary --kind points``.

A run's figures (:func:`run_samples`), one row per run with its point
(:data:`..schema.POINT`: target, threads, target rate, the workload's matrix values):

- ``ops_per_s``: its run loops' operations over their measured seconds
  (:func:`..measure.throughput`, YCSB's ``Throughput(ops/sec)``), units (rows/s) for a
  batched workload; ``ops_per_s_batches``: the batch means of its whole seconds, which
  give a run alone its interval (:func:`.uncertainty.batch_means`), never its figure;
- ``cpu_us_per_op``, ``io_kb_per_op``;
- ``<call>_p99_us`` of each main call (:func:`.uncertainty.main_calls`), of the run's
  loops merged (:mod:`.loops_latency`, the one rule of every page): for a paced run
  (its latency has ``Intended-`` rows) the p99 from the intended start, coordinated
  omission corrected, with the service time beside it in ``<call>_service_p99_us`` — as
  YCSB's ``measurement.interval=both`` prints both; a percentile that a tool printed as a
  bucket (LinkBench's ``[1,2]ms``, YCSB's 1-ms histogram) keeps its bounds in
  ``<call>_p99_lo_us``/``<call>_p99_hi_us``.
"""
from __future__ import annotations

import math

import pandas as pd

from ..measure import throughput
from ..schema import INTENDED_PREFIX, POINT
from .loops_latency import loops_percentile
from .uncertainty import (BATCH_MEANS, ONE_RUN, RUNS, Estimate, METRICS, batch_means, call_ops,
                          interval_rates, main_calls, _unit_ops)

P99, SERVICE_P99 = "_p99_us", "_service_p99_us"
BUCKET = ("_p99_lo_us", "_p99_hi_us")


def run_samples(results: dict) -> pd.DataFrame:
    """Per run — (experiment, run_id): two experiments of one matrix have the same run
    ids, never one run — its point (:data:`POINT`) and its run-loop figures (the module doc)."""
    runs = results["runs"]
    steps = results["steps"]
    steps = steps[steps["phase"] == "run"]
    keys = [k for k in RUN_KEY if k in steps and k in runs]
    steps = steps.assign(**{k: _key_col(steps, k) for k in keys})
    tables = {t: _by_run(results.get(t), keys) for t in ("hw", "intervals", "latency")}
    rows = [_run_row(results, tables, dict(zip(keys, key)), st) for key, st in steps.groupby(keys)]
    out = pd.DataFrame(rows)
    keep = [c for c in ["run_id", "experiment", "config", *POINT, "repetition"] if c in runs]
    if not len(out):
        return out
    pts = runs[keep].copy().assign(**{k: _key_col(runs, k) for k in keys})
    # a run that names no target (a table made by hand) is its configuration's
    config = pts["config"] if "config" in pts else pd.Series("", index=pts.index)
    target = pts["target"] if "target" in pts else pd.Series(None, index=pts.index, dtype="object")
    named = target.astype("object").map(lambda t: isinstance(t, str) and t != "").astype(bool)
    pts["target"] = target.astype("object").where(named, config).fillna("").astype(str)
    # an unthrottled point has no target: 0, so that points match and group; threads a
    # source does not know are 0 too (no run has none), a workload without a matrix ""
    pts["target_ops_per_s"] = pd.to_numeric(pts.get("target_ops_per_s"), errors="coerce").fillna(0.0)
    pts["threads"] = pd.to_numeric(pts.get("threads"), errors="coerce").fillna(0).astype(int)
    pts["point"] = pts["point"].fillna("").astype(str) if "point" in pts else ""
    return pts.merge(out, on=keys, how="inner")


RUN_KEY = ["experiment", "run_id"]   # what names a run in tables of several experiments


def _key_col(df: pd.DataFrame, k: str) -> pd.Series:
    """A run key's column as plain strings ("" where a source has none), so keys match."""
    return df[k].astype("object").where(df[k].notna(), "").astype(str)


def _by_run(df: pd.DataFrame | None, keys: list[str]):
    """``df`` split once by the run keys it has, ``(its keys, {key values: its rows}, no
    rows)``, so that each run's rows are a lookup, not a scan of the whole table per run;
    ``df`` itself where it is None or empty."""
    if df is None or not len(df):
        return df
    have = [k for k in keys if k in df]
    if not have:
        return have, {(): df}, df.iloc[:0]
    groups = df.groupby([_key_col(df, k) for k in have], sort=False).indices
    return have, {(k if isinstance(k, tuple) else (k,)): df.iloc[i] for k, i in groups.items()}, df.iloc[:0]


def _of(split, key: dict, steps) -> pd.DataFrame | None:
    """The rows of the run ``key`` and of ``steps`` in a table split by :func:`_by_run`."""
    if split is None or isinstance(split, pd.DataFrame):
        return split
    have, groups, none = split
    rows = groups.get(tuple(key[k] for k in have), none)
    return rows[rows["step"].isin(steps)]


def _run_row(results: dict, tables: dict, key: dict, st: pd.DataFrame) -> dict:
    runs = results["runs"]
    h, iv, lat = (_of(tables[t], key, st["step"]) for t in ("hw", "intervals", "latency"))
    secs, ops = float(st["secs"].sum()), float(st["ops"].sum())
    row = {**key, "ops_per_s": throughput(ops, secs)}
    if h is not None and len(h):
        # client CPU from one source, the clients' getrusage (eff.op's csec); the DBMS's
        # that dsec counts (the run's own sessions over the step, where the server says)
        cpu = _step_cpu(st, h, "client_cpu_s")
        if not _engine_in_clients(runs, key):
            dbms = _step_cpu(st, h, "dbms_cpu_s")
            cpu = cpu + dbms if pd.notna(dbms) else cpu
        # no CPU at all beside operations: no sample of the sampler's fell inside a step
        # shorter than its interval, a figure not measured rather than a zero
        row["cpu_us_per_op"] = float(cpu) * 1e6 / ops if ops and pd.notna(cpu) and cpu > 0 else math.nan
        kb = h[["disk_read_kb", "disk_write_kb"]].sum(axis=1, min_count=1).sum(min_count=1)
        row["io_kb_per_op"] = float(kb) / ops if ops and pd.notna(kb) else math.nan
    if lat is not None and len(lat):
        row.update(p99s(lat))
    if iv is not None and len(iv):
        r = _unit_ops(iv)
        rates = interval_rates(r)
        # a loop's last interval is partial (the loop ended inside it): left out
        row["ops_per_s_batches"] = batch_means(rates.loc[rates["whole"], "rate"])
    return row


def p99s(lat: pd.DataFrame) -> dict:
    """The p99 of each main call over a run's loops (:mod:`.loops_latency`'s one rule: the
    loops' histograms merged; never an average): from the intended start where the run
    was paced, the service time beside it; a bucket's bounds where the source printed one."""
    calls = call_ops(lat)
    ops = lat["op"].astype(str)
    row = {}
    for op in main_calls(lat):
        svc = calls[calls["op"].astype(str) == op]
        p_svc, _ = loops_percentile(svc)
        paced = lat[ops == INTENDED_PREFIX + op]
        p_int = loops_percentile(paced)[0] if len(paced) else math.nan
        if pd.notna(p_int):   # paced: what a client of the schedule waited
            row[op + P99], row[op + SERVICE_P99] = float(p_int), float(p_svc)
        else:
            row[op + P99] = float(p_svc)
            lo, hi = (pd.to_numeric(svc[c[1:]], errors="coerce").max() if c[1:] in svc else math.nan
                      for c in BUCKET)
            if pd.notna(lo) and pd.notna(hi) and hi > lo:
                row[op + BUCKET[0]], row[op + BUCKET[1]] = float(lo), float(hi)
    return row


def _step_cpu(st: pd.DataFrame, h: pd.DataFrame, col: str) -> float:
    """The steps' own CPU seconds of ``col`` (measured over each step's window) when every
    step has it, else the hw samples' sum (an import, a run from before)."""
    own = pd.to_numeric(st[col], errors="coerce") if col in st else None
    if own is not None and len(own) and own.notna().all():
        return float(own.sum())
    return h[col].sum(min_count=1) if col in h else math.nan


def _engine_in_clients(runs: pd.DataFrame, key: dict) -> bool:
    """An engine inside the clients (the target's dialect says so, in meta): its CPU is
    already the clients'."""
    r = runs
    for k, v in key.items():
        r = r[_key_col(r, k) == v]
    if not len(r) or "meta" not in r:
        return False
    target = (r["meta"].iloc[0] or {}).get("target")
    dialect = target.get("dialect") if isinstance(target, dict) else None
    return bool((dialect or {}).get("engine_in_clients"))


def estimate(g: pd.DataFrame, metric: str) -> Estimate | None:
    """One point's figure of ``metric`` (the mean of its runs') and the spread of its
    interval: its runs, or, for one run's throughput, its batch means; None without one."""
    values = [float(v) for v in g[metric] if pd.notna(v)] if metric in g else []
    if not values:
        return None
    value = sum(values) / len(values)
    if len(values) >= 2:
        return Estimate(value, tuple(values), RUNS)
    batches = g["ops_per_s_batches"].iloc[0] if "ops_per_s_batches" in g else None
    if metric == "ops_per_s" and batches is not None and len(batches) >= 2:
        return Estimate(value, tuple(float(b) for b in batches), BATCH_MEANS)
    return Estimate(value, (value,), ONE_RUN)


def bucket(g: pd.DataFrame, metric: str) -> tuple[float, float] | None:
    """(low, high) of a p99 printed as a bucket over the point's runs; None if exact."""
    op = metric.removesuffix(P99)
    lo, hi = op + BUCKET[0], op + BUCKET[1]
    if not metric.endswith(P99) or lo not in g or not g[lo].notna().any():
        return None
    return float(g[lo].min()), float(g[hi].max())


def metrics_of(samples: pd.DataFrame) -> list[str]:
    """The metrics a table of :func:`run_samples` has: throughput, CPU/op, then each
    call's p99 (from the intended start when paced) and, beside it, its service time."""
    p99 = sorted(c for c in samples if c.endswith(P99) and not c.endswith(SERVICE_P99))
    out = [m for m in METRICS if m in samples]
    for c in p99:
        svc = c.removesuffix(P99) + SERVICE_P99
        out += [c, svc] if svc in samples else [c]
    return out


def point_summary(results: dict) -> pd.DataFrame:
    """Per point (a target's points apart from another's): its runs and, per metric, the
    mean of its runs' figures with the 95% interval of :mod:`.uncertainty`'s one rule
    (``<m>_low``/``<m>_high``, blank for one run), ``<m>_n`` and ``interval`` (what the
    intervals are); a bucketed p99's bounds in ``<m>_bucket``."""
    samples = run_samples(results)
    if not len(samples):
        return pd.DataFrame()
    rows = []
    for key, g in samples.groupby(POINT):
        row = {"target": key[0], "threads": key[1], "target_ops_per_s": key[2], "point": key[3],
               "runs": len(g)}
        hows: dict[str, list[str]] = {}
        for m in metrics_of(samples):
            e = estimate(g, m)
            if e is None:
                continue
            lo, hi = e.ci()
            row.update({m: e.value, f"{m}_low": lo, f"{m}_high": hi, f"{m}_n": e.n})
            hows.setdefault(e.label(), []).append(m)
            b = bucket(g, m)
            if b:
                row[f"{m}_bucket"] = f"[{b[0]:g}, {b[1]:g}]"
        row["interval"] = next(iter(hows), "") if len(hows) < 2 else "; ".join(
            f"{lab}: {ms[0]}{' …' if len(ms) > 1 else ''}" for lab, ms in hows.items())
        rows.append(row)
    out = pd.DataFrame(rows)
    return out if (out["point"] != "").any() else out.drop(columns="point")
