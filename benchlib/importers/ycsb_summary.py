"""What Java YCSB's measurements exporter prints to stdout at the end of a run.

Lines ``[OP], Metric, value``: ``[OVERALL]`` (RunTime, Throughput), the JVM's GC
totals and, per operation, what its measurement type keeps —

- histogram: ``Operations``, ``AverageLatency(us)``, ``LatencyVariance(us)``, Min/Max,
  ``95thPercentileLatency(us)``/``99th…`` as 1 ms bucket *lower* bounds;
- hdrhistogram: the same with ``hdrhistogram.percentiles`` lines (``99.9PercentileLatency(us)``);
- timeseries: one row ``[OP], t_ms, avg`` per ``timeseries.granularity`` (the
  interval's average latency, a Java double);
- raw: ``op,timestamp_ms,latency_us`` data points under ``OP latency raw data: …``,
  then ``Total Operations``, ``Average``, ``Min``, ``Max``, ``p1 … p99.99``;

and ``Return=STATUS`` counts. This module reads those lines into a summary dict
(op -> metric -> value), the timeseries rows and the raw points, and turns them into
latency and interval rows.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .base import ImportFormatError
from .linescan import summary_rows
from .text import BadNumber, FileText, fail_at, nth_match_line, numbers, pct_column

JVM_OPS = {"THREAD_COUNT", "USED_MEM_MB", "SYS_LOAD_AVG", "GCS", "GCS_TIME", "MAX_MEM_USED",
           "MIN_MEM_USED", "MAX_THREADS", "MIN_THREADS", "MAX_SYS_LOAD_AVG", "MIN_SYS_LOAD_AVG"}

# each pattern starts with "\n": the text is scanned as "\n" + text
_SUMMARY = re.compile(r"\n\[([^\]\n]+)\], ([^,\n]+), ([^\n]*)")
_SUMMARY_LOOSE = re.compile(r"\n\[[^\]\n]*\], ")
_RAW = re.compile(r"\n([A-Za-z][\w-]*),(\d+),(-?\d+)[ \t]*(?=\n)")
_RAW_LOOSE = re.compile(r"\n[A-Za-z][\w-]*,\d")
_PCT = re.compile(r"^(\d+(?:\.\d+)?)(?:st|nd|rd|th)?PercentileLatency\(us\)$")
_RAW_PCT = re.compile(r"^p(\d+(?:\.\d+)?)$")
_DOUBLE = "[.NE]"   # in a Java double's text, never in a long's


def scan_summary(path: Path, src: FileText) -> tuple[dict, pd.DataFrame | None, bool | None]:
    """The summary (op -> {metric: value}) and the timeseries rows (op, t_ms, mean_us)
    of a file; and whether it has a raw data header (None: not looked for)."""
    summary: dict = {}
    rows = summary_rows(src.data) if src.ascii else None
    if rows is None:
        ops, metrics, values = _rows_of_text(path, src.w)
        t_ms = None
        dbl = pc.match_substring_regex(values, _DOUBLE).to_numpy(zero_copy_only=False)
        raw_header = None
    else:
        ops, metrics, values, t_ms, dbl = rows.ops, rows.metrics, rows.values, rows.t_ms, rows.dbl
        raw_header = rows.raw_header
    if not len(ops):
        return summary, None, raw_header
    try:
        vals = numbers(values)
    except BadNumber as e:
        raise ImportFormatError(path, nth_match_line(_SUMMARY, src.w, e.index),
                                f"expected a number for a summary value, got {e.value!r}") from None
    if t_ms is None:   # each all-digit metric as a number (as ^\d+$), NaN for the others
        numeric = pc.ascii_is_decimal(metrics).to_numpy(zero_copy_only=False)
        t_ms = np.full(len(metrics), np.nan)
        t_ms[numeric] = numbers(metrics.filter(pa.array(numeric)))
    numeric = ~np.isnan(t_ms)
    names = metrics.to_pylist() if not numeric.any() else None
    for i in np.flatnonzero(~numeric).tolist():
        metric = names[i] if names is not None else metrics[i].as_py()
        if metric.startswith(">"):
            continue  # histogram.verbose overflow bucket
        m = summary.setdefault(ops[i].as_py(), {})
        if not np.isnan(vals[i]):   # "NaN" (an average of nothing) is no figure: leave it NA
            m[metric] = vals[i]
    ts = None
    if numeric.any():
        idx = np.flatnonzero(numeric)
        t = t_ms[idx]
        if (t >= 2.0 ** 53).any():
            i = int(idx[np.argmax(t >= 2.0 ** 53)])
            raise ImportFormatError(path, nth_match_line(_SUMMARY, src.w, i),
                                    "expected a time in milliseconds in a timeseries row '[OP], t_ms, avg'")
        # timeseries averages are Java doubles ("563.94", "NaN"); histogram.verbose
        # bucket counts are longs: only the former are time series
        op_arr = ops.take(pa.array(idx))
        keep = pc.is_in(op_arr, value_set=pc.unique(op_arr.filter(pa.array(dbl[idx])))).to_numpy(
            zero_copy_only=False)
        if keep.any():
            ts = pd.DataFrame({"op": pd.array(op_arr.filter(pa.array(keep)), dtype="str"),
                               "t_ms": t[keep].astype(np.int64), "mean_us": vals[idx][keep]})
    return summary, ts, raw_header


def _rows_of_text(path: Path, w: str) -> tuple[pa.Array, pa.Array, pa.Array]:
    """The op, metric and value of each summary line, by the regular expression."""
    rows = _SUMMARY.findall(w)
    if len(rows) != w.count("\n["):
        loose = [m.start() for m in _SUMMARY_LOOSE.finditer(w)]
        if len(loose) != len(rows):
            for pos in loose:
                if not _SUMMARY.match(w, pos):
                    fail_at(path, w, pos, "expected a summary line '[OP], Metric, value'")
    return tuple(pa.array([r[k] for r in rows], pa.string()) for k in range(3))


def timeseries_intervals(ts: list[pd.DataFrame], granularity: float | None) -> pd.DataFrame:
    """Interval rows of the timeseries rows of a run's files (printed once per file:
    each row kept once). Rows finer than a second keep their ``offset_ms``."""
    ts = pd.concat(ts, ignore_index=True).drop_duplicates(["op", "t_ms"]) if len(ts) > 1 else ts[0]
    gran = granularity if granularity is not None else _granularity(ts["t_ms"].to_numpy())
    rows = ts.assign(second=ts["t_ms"] // 1000, interval_s=gran / 1000.0)
    if gran < 1000:
        return rows.rename(columns={"t_ms": "offset_ms"})
    return rows.drop(columns="t_ms")


def _granularity(t: np.ndarray) -> float:
    """The smallest gap between two of the times ``t`` (ms): the granularity of a
    timeseries run that does not say it (1000 when there is no gap)."""
    if len(t) < 2:
        return 1000.0
    d = np.diff(t)
    d = d[d > 0]
    if len(d):
        # a gap between rows that follow each other in the file; the smallest of all
        # when every time is on its grid (YCSB's are: each a multiple of it)
        g = d.min()
        if not ((t - t[0]) % g).any():
            return float(g)
    gaps = np.diff(np.unique(t))
    return float(gaps.min()) if len(gaps) else 1000.0


def scan_raw(path: Path, src: FileText, raw_header: bool | None = None) -> pd.DataFrame | None:
    """The raw data points (op, ts_ms, lat_us) of a file, None when it has none.
    ``raw_header``: whether the file has a line "OP latency raw data: …" (None: look)."""
    if raw_header is None:
        raw_header = " latency raw data: " in src
    if "," not in src or (not raw_header and not _RAW.match("\n" + src.first_line() + "\n")):
        return None   # raw data comes under its header, or is a file of raw lines only
    w = src.w
    rows = _RAW.findall(w)
    if len(rows) != len(_RAW_LOOSE.findall(w)):
        for m in _RAW_LOOSE.finditer(w):
            if not _RAW.match(w, m.start()):
                fail_at(path, w, m.start(), "expected a raw data line 'OP,timestamp_ms,latency_us'")
    if not rows:
        return None
    return pd.DataFrame({"op": [r[0] for r in rows],
                         "ts_ms": np.asarray([r[1] for r in rows], dtype=np.int64),
                         "lat_us": np.asarray([r[2] for r in rows], dtype=np.float64)})


def raw_intervals(raw: pd.DataFrame, t0_ms: float) -> pd.DataFrame:
    """Per-second rows of raw data points: ops, mean, min, max and the p99 of each."""
    d = raw.assign(second=((raw["ts_ms"] - t0_ms) // 1000).astype(np.int64))
    d = d.sort_values(["op", "second", "lat_us"], kind="stable").reset_index(drop=True)
    g = d.groupby(["op", "second"], sort=False)["lat_us"]
    out = g.agg(ops="size", mean_us="mean", min_us="min", max_us="max").reset_index()
    first = np.concatenate([[0], np.cumsum(out["ops"].to_numpy())[:-1]])
    k = np.maximum(np.ceil(0.99 * out["ops"].to_numpy()).astype(np.int64) - 1, 0)
    out["p99_us"] = d["lat_us"].to_numpy()[first + k]
    out["interval_s"] = 1.0
    return out


def latency_from_summary(summary: dict, mtype: str | None) -> list[dict]:
    """One latency row per operation of the summary (not OVERALL, GC or JVM lines)."""
    rows = []
    for op, m in summary.items():
        if op == "OVERALL" or op.startswith("TOTAL_GC") or op in JVM_OPS:
            continue
        row = {"op": op}
        returns = {k[7:]: int(v) for k, v in m.items() if k.startswith("Return=") and not np.isnan(v)}
        operations = m.get("Operations", m.get("Total Operations"))
        row["count"] = sum(returns.values()) if returns else operations
        row["errors"] = sum(v for k, v in returns.items() if k != "OK") if returns else np.nan
        row["returns"] = json.dumps(returns, sort_keys=True) if returns else None
        row["mean_us"] = m.get("AverageLatency(us)", m.get("Average"))
        row["min_us"] = m.get("MinLatency(us)", m.get("Min"))
        row["max_us"] = m.get("MaxLatency(us)", m.get("Max"))
        if "LatencyVariance(us)" in m:
            row["variance_us2"] = m["LatencyVariance(us)"]
        for k, v in m.items():
            pm = _PCT.match(k) or _RAW_PCT.match(k)
            if pm:
                row[pct_column(float(pm.group(1)))] = v
                if mtype == "histogram" and _PCT.match(k):
                    # a 1 ms bucket: YCSB prints its lower bound
                    row[pct_column(float(pm.group(1)))[:-3] + "_lo_us"] = v
                    row[pct_column(float(pm.group(1)))[:-3] + "_hi_us"] = v + 1000
        measured = operations if operations is not None else row["count"]
        if measured is not None and measured == 0:
            # no operation succeeded, so none was timed: YCSB still prints Min = Long.MAX,
            # Max and percentiles 0 — figures of nothing, blank here (the failed ones'
            # latencies are their own op, [INSERT-FAILED], as YCSB prints them)
            for k in list(row):
                if k.endswith("_us") or k == "variance_us2":
                    row[k] = np.nan
        rows.append(row)
    return rows


def measurement_type(props: dict, summary: dict, timeseries: bool, raw: bool) -> str | None:
    """The ``measurementtype`` of a run: its property, else what the summary shows."""
    mt = props.get("measurementtype")
    if mt:
        return mt
    ms = [m for op, m in summary.items() if op != "OVERALL"]
    if any("LatencyVariance(us)" in m for m in ms):
        return "histogram"
    if timeseries:
        return "timeseries"
    if any("Total Operations" in m for m in ms) or raw:
        return "raw"
    if any(any(_PCT.match(k) for k in m) for m in ms):
        return "hdrhistogram"
    return None
