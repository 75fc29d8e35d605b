"""YCSB's HdrHistogram interval logs (``hdrhistogram.fileoutput=true``), the figures
of a histogram as Java YCSB reports them, and the histograms of the latency rows.

One log per operation (``<path prefix><OP>.hdr``), format 1.2/1.3: comment lines
``#[Logging for: OP]``, ``#[StartTime: s (…)]``, ``#[BaseTime: s (…)]``, a CSV
header in quotes, then one interval a line ``[Tag=…,]start,length,max,HISTF…``
(a compressed histogram in base64), written at every status tick. The intervals
give per-second rows for the op, and all of them added up its whole-run histogram.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from .. import measure
from ..schema import TOTAL_OP
from .base import ImportFormatError
from .text import pct_column, stem_of

_HDR_LINE = re.compile(r"(?:Tag=[^,]*,)?(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(HIST[A-Za-z0-9+/]+=*)\s*$")
_HIST_PCTS = [50, 90, 95, 99, 99.9, 99.99]


def scan_hdr(path: Path, text: str) -> dict:
    """An HdrHistogram interval log (format 1.2/1.3) as YCSB's hdrhistogram.fileoutput
    writes it: relative timestamps against ``#[StartTime``/``#[BaseTime``."""
    op, start, base, rows = None, None, None, []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line or line.startswith('"'):
            continue
        if line.startswith("#"):
            if line.startswith("#[Logging for: "):
                op = line[15:].rstrip("]").strip()
            elif line.startswith("#[StartTime: "):
                start = _hdr_time(path, lineno, line[13:])
            elif line.startswith("#[BaseTime: "):
                base = _hdr_time(path, lineno, line[12:])
            continue
        m = _HDR_LINE.match(line)
        if not m:
            raise ImportFormatError(path, lineno, "expected an interval 'start,length,max,HISTF…'")
        try:
            hist = HdrHistogram.decode(m.group(4).encode())
        except Exception:  # noqa: BLE001 - the decoder raises whatever zlib, base64 or struct raise
            raise ImportFormatError(path, lineno, "expected a compressed HdrHistogram (HISTF…)") from None
        if hist is None:
            raise ImportFormatError(path, lineno, "expected a compressed HdrHistogram (HISTF…)")
        rows.append((float(m.group(1)), float(m.group(2)), hist, lineno))
    if not rows:
        raise ImportFormatError(path, None, "expected HdrHistogram log intervals")
    if op is None:
        op = stem_of(path).rsplit("-", 1)[-1]
    if start is None:
        start = rows[0][0]
    if base is None:  # HdrHistogram's rule: timestamps a year before StartTime are relative
        base = start if rows[0][0] < start - 365 * 24 * 3600 else 0.0
    return {"op": op, "start": start, "base": base, "rows": rows, "path": path}


def _hdr_time(path, lineno, s):
    try:
        return float(s.split()[0])
    except (ValueError, IndexError):
        raise ImportFormatError(path, lineno, "expected seconds since the epoch") from None


def _buckets(h: HdrHistogram) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of the non-empty buckets with each bucket's highest and median value,
    from the counts array at once (hdrh's iterators take ~0.1 s per histogram)."""
    counts = np.ctypeslib.as_array(h.counts)[:h.counts_len]
    idx = np.flatnonzero(counts)
    c = counts[idx].astype(np.int64)
    bucket = (idx >> h.sub_bucket_half_count_magnitude) - 1
    sub = (idx & (h.sub_bucket_half_count - 1)) + h.sub_bucket_half_count
    first = bucket < 0
    sub, bucket = np.where(first, sub - h.sub_bucket_half_count, sub), np.where(first, 0, bucket)
    low = sub.astype(np.int64) << (bucket + h.unit_magnitude)
    size = np.left_shift(1, h.unit_magnitude + bucket).astype(np.int64)
    return c, low + size - 1, low + (size >> 1)


def _at_ranks(c: np.ndarray, high: np.ndarray, total: int, ps: list[float]) -> list[float]:
    """The highest equivalent value at rank ceil(p/100 n) of each percentile p."""
    cum = np.cumsum(c)
    ranks = [max(1, math.ceil(p / 100.0 * total)) for p in ps]
    return [float(high[min(np.searchsorted(cum, r), len(high) - 1)]) for r in ranks]


def hist_stats(h: HdrHistogram) -> dict:
    """ops, mean, min, max and the usual percentiles of a histogram, as YCSB prints them."""
    c, high, median = _buckets(h)
    n = int(c.sum())
    if not n:
        return {"ops": 0}
    pct = _at_ranks(c, high, n, _HIST_PCTS)
    # the mean of Java's getMean(): each bucket counted at its median equivalent value
    return {"ops": n, "mean_us": float((median * c).sum() / n), "min_us": float(h.get_min_value()),
            "max_us": float(h.get_max_value()), **{pct_column(q): v for q, v in zip(_HIST_PCTS, pct)}}


def hdr_intervals(log: dict, t0: float | None) -> tuple[pd.DataFrame, HdrHistogram]:
    """One row per interval of a log (``second`` since ``t0``, the run's start when
    known), and the whole-run histogram of its op."""
    total = measure.new_histogram()
    rows, prev = [], -1
    t0 = log["start"] if t0 is None else t0
    for start, length, hist, lineno in log["rows"]:
        try:
            total.add(hist)
        except (IndexError, ValueError):
            raise ImportFormatError(log["path"], lineno, "expected latencies between 1 µs and 1 h") from None
        end = log["base"] + start + length - t0
        # an interval ends at a status tick: [k, k+1) ends within second k
        second = max(math.floor(end), prev + 1)
        prev = second
        rows.append({"second": second, "op": log["op"], "interval_s": length, **hist_stats(hist)})
    return pd.DataFrame(rows), total


def latency_of_intervals(intervals: pd.DataFrame, ops: list[str]) -> list[dict]:
    """A latency row per op from its interval rows, where every row counts its
    operations: count, ops-weighted mean, min, max (NaN-skipping, as pandas sums).
    A column at a time in numpy: a million-row groupby on strings took a second."""
    def col(name):
        return intervals[name].to_numpy(dtype="float64", na_value=np.nan) if name in intervals else None

    n_ops, mean, lo, hi, err = col("ops"), col("mean_us"), col("min_us"), col("max_us"), col("errors")
    op_col = intervals["op"]
    out = []
    for op in ops:
        sel = (op_col == op).to_numpy(dtype=bool, na_value=False)
        o = n_ops[sel]
        if not len(o) or np.isnan(o).any():
            continue
        n = o.sum()
        # the latencies are of the operations that succeeded (YCSB times failures apart)
        e = err[sel] if err is not None else np.full(len(o), np.nan)
        ok = o - np.nan_to_num(e)
        row = {"op": op, "count": n, "errors": e.sum() if not np.isnan(e).all() else np.nan,
               "mean_us": np.nansum(ok * mean[sel]) / ok.sum() if ok.sum() and mean is not None else np.nan}
        for name, values, pick in (("min_us", lo, np.min), ("max_us", hi, np.max)):
            v = values[sel] if values is not None else np.empty(0)
            v = v[~np.isnan(v)]
            row[name] = pick(v) if len(v) else np.nan
        out.append(row)
    return out


def fill_latency(lat: pd.DataFrame, hists: dict, raw: pd.DataFrame | None,
                  intervals: pd.DataFrame | None, interval_ops: set[str] | None = None) -> pd.DataFrame:
    """The latency rows of a run with the encoded histogram of each op (from its .hdr
    log or raw data points), and what a summary lacks (a killed run): rows for ops
    only the histograms or the intervals have, figures from the histograms.
    ``interval_ops``: the ops of ``intervals``, when known (no pass over its rows)."""
    rows = lat.to_dict("records") if len(lat) else []
    have = {r["op"] for r in rows}
    if raw is not None:
        for op, g in raw.groupby("op"):
            h = measure.new_histogram()
            measure.record_many(h, g["lat_us"].to_numpy())
            hists.setdefault(op, h)
    for op in hists:
        if op not in have:
            rows.append({"op": op})
            have.add(op)
    if intervals is None:
        lacking = set()
    else:
        ops = interval_ops if interval_ops is not None else set(pd.unique(intervals["op"]))
        lacking = ops - have - {TOTAL_OP}
    if lacking and "ops" in intervals:
        rows += latency_of_intervals(intervals, sorted(lacking))
        have |= {r["op"] for r in rows}
    for r in rows:
        h = hists.get(r["op"])
        if h is None:
            continue
        r["hdr"] = measure.encode(h)
        stats = hist_stats(h)
        if pd.isna(r.get("count", np.nan)):
            r["count"] = stats["ops"]
        for k, v in stats.items():
            if k != "ops" and pd.isna(r.get(k, np.nan)):
                r[k] = v
    return pd.DataFrame(rows)
