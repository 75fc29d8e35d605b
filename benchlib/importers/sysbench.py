"""sysbench 1.0 output (``run`` of an OLTP or other test) into the tidy tables.

What sysbench prints and what becomes of it:

- ``[ 1s ] thds: 1 tps: … qps: … (r/w/o: …) lat (ms,95%): … err/s: … reconn/s: …``
  every ``--report-interval`` (non-database tests: ``thds: 1 eps: … lat (ms,95%): …``;
  the Lua default report writes ``err/s`` without the colon) → intervals, op ``TX``:
  the rates as printed (``ops_per_s``, ``qps`` …), ``ops``/``errors`` as rate ×
  interval rounded, the latency percentile in ``p95_us`` (or ``pNN_us`` for
  ``--percentile=NN``; 99 goes to ``p99_us``);
- ``SQL statistics`` (queries, transactions, ignored errors, reconnects) and
  ``General statistics`` (total time, events) → the step ``r.L1``;
- ``Latency (ms)`` (min/avg/max/Nth percentile/sum) → the latency row of ``TX``;
- ``--histogram`` (value in ms → count) → an HdrHistogram of the same counts stored in
  ``latency.hdr``; percentiles the summary does not print (p50/p90/p99/p99.9) are
  read off those buckets the way sysbench computes its own (the first bucket whose
  cumulative count reaches the rank), so they carry the buckets' ~1.5 % resolution.

``ignored errors`` (errors sysbench retried past) are the step's ``errors``.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import measure, schema
from .base import Imported, ImportFormatError
from .text import number_at, pct_column, read_text

OP = "TX"
RUN_STEP = schema.step_name("run", 1)  # one run, one step
_N = r"(-?\d+(?:\.\d+)?|N/A|nan|-nan|inf)"
_REPORT = re.compile(
    rf"^\[ (\d+(?:\.\d+)?)s \] thds: (\d+) (tps|eps): {_N}(?: qps: {_N} \(r/w/o: {_N}/{_N}/{_N}\))? "
    rf"lat \(ms,(\d+(?:\.\d+)?)%\): {_N}(?: err/s:? {_N} reconn/s: {_N})?\s*$")
_QUEUE = re.compile(r"^\[ \d+(?:\.\d+)?s \] queue length: \d+, concurrency: \d+\s*$")
_HIST_HEAD = "Latency histogram (values are in milliseconds)"
_HIST_ROW = re.compile(r"^\s*(\d+(?:\.\d+)?) \|\**\s+(\d+)\s*$")
_KEY_VALUE = re.compile(r"^\s+([0-9a-zA-Z][\w ()/%.-]*?):\s+(\S+)(?:\s+\((\d+(?:\.\d+)?) per sec\.\))?\s*$")
_PCT_KEY = re.compile(r"(\d+(?:\.\d+)?)th percentile")
_VERSION = re.compile(r"^sysbench (\S+)")
_THREADS = re.compile(r"^Number of threads: (\d+)$")
_SECTIONS = ("SQL statistics:", "General statistics:", "Latency (ms):", "Threads fairness:")


def _parse(path: Path, text: str, out: dict) -> None:
    section, in_hist, prefix = None, False, ""
    for lineno, line in enumerate(text.split("\n"), 1):
        s = line.rstrip()
        if s.startswith("[ ") and "s ] " in s:
            m = _REPORT.match(s)
            if m:
                g = m.groups()
                vals = [None if v in (None, "N/A") else float(v) for v in g[3:8] + g[9:12]]
                out["reports"].append([float(g[0]), int(g[1]), g[2], *vals[:5], float(g[8]), *vals[5:]])
            elif not _QUEUE.match(s):
                raise ImportFormatError(path, lineno, "expected '[ Ns ] thds: N tps: X qps: X (r/w/o: X/X/X) "
                                                      "lat (ms,P%): X err/s: X reconn/s: X'")
            continue
        if s == _HIST_HEAD:
            in_hist = True
            out["histogram"] = []
            continue
        if in_hist:
            if s.strip().startswith("value"):
                continue
            m = _HIST_ROW.match(s)
            if m:
                out["histogram"].append((float(m.group(1)), int(m.group(2))))
                continue
            if s.strip() and not s.startswith(" "):
                in_hist = False
            elif s.strip():
                raise ImportFormatError(path, lineno, "expected a histogram row '  value |***  count'")
            else:
                in_hist = False
                continue
        if (m := _VERSION.match(s)):
            out["version"] = m.group(1)
        elif (m := _THREADS.match(s)):
            out["threads"] = int(m.group(1))
        elif s in _SECTIONS:
            section, prefix = s[:-1], ""
        elif section and s.startswith(" "):
            m = _KEY_VALUE.match(s)
            if m:
                key, val, rate = m.groups()
                if key in ("events (avg/stddev)", "execution time (avg/stddev)"):
                    out["fairness"][key] = val
                    continue
                val = val[:-1] if section == "General statistics" and val.endswith("s") else val
                if key not in ("read", "write", "other", "total"):
                    prefix = ""
                key = prefix + key
                out["stats"][(section, key)] = (number_at(path, lineno, val, f"a number for {key}"),
                                                number_at(path, lineno, rate, f"a number for {key}") if rate else None,
                                                lineno)
            elif s.strip() == "queries performed:":
                prefix = "queries "
            else:
                raise ImportFormatError(path, lineno, f"expected 'name: value' in {section}")
        elif s.strip():
            section = None


def _percentiles(buckets: list[tuple[float, int]], ps: list[float]) -> dict:
    # sysbench: the first bucket whose cumulative count reaches floor(n p / 100 + 0.5)
    values = np.array([b[0] for b in buckets])
    cum = np.cumsum([b[1] for b in buckets])
    n = cum[-1]
    out = {}
    for p in ps:
        rank = max(math.floor(n * p / 100 + 0.5), 1)
        out[pct_column(p)] = float(values[np.searchsorted(cum, rank)] * 1000)
    return out


def import_sysbench(paths: list[Path]) -> Imported:
    """The output of one ``sysbench … run``."""
    out = {"reports": [], "histogram": None, "stats": {}, "fairness": {}, "version": None, "threads": None}
    for path in paths:
        _parse(path, read_text(path), out)
    st = out["stats"]
    if not st and not out["reports"]:
        raise ImportFormatError(paths[0], None, "expected sysbench run output: report lines or statistics")

    events = _stat(st, "General statistics", "total number of events")
    tx = _stat(st, "SQL statistics", "transactions")
    ops = tx if tx is not None else events
    secs = _stat(st, "General statistics", "total time")
    errors = _stat(st, "SQL statistics", "ignored errors")
    ops_per_s = _stat(st, "SQL statistics", "transactions", 1)
    if ops_per_s is None and ops is not None and secs:
        ops_per_s = ops / secs
    lat = _latency_row(st, out["histogram"], ops, errors)
    latency = pd.DataFrame([lat]).assign(step=RUN_STEP) if len(lat) > 3 or ops is not None else None
    intervals = _report_intervals(out["reports"], paths[0]) if out["reports"] else None

    step = {"step": RUN_STEP, "phase": "run", "loop": 1, "secs": secs, "ops": ops, "errors": errors,
            "ops_per_s": ops_per_s, "threads": out["threads"],
            "status": "ok" if ops is not None else "interrupted"}
    for key, col in (("queries", "queries"), ("reconnects", "reconnects")):
        if _stat(st, "SQL statistics", key) is not None:
            step[col] = _stat(st, "SQL statistics", key)
    meta = {"tool": "sysbench", "workload": "sysbench"}
    if out["version"]:
        meta["tool_version"] = out["version"]
    if st:
        meta["sysbench"] = {f"{sec}: {k}": v[0] for (sec, k), v in st.items()}
    if out["fairness"]:
        meta["threads_fairness"] = out["fairness"]
    return Imported(steps=pd.DataFrame([step]), latency=latency, intervals=intervals, meta=meta)


def _stat(st: dict, section: str, key: str, i: int = 0):
    """The ``i``-th figure of ``key`` in a statistics section; None when absent."""
    v = st.get((section, key))
    return v[i] if v else None


def _latency_row(st: dict, histogram, ops, errors) -> dict:
    """The latency row of the run: the statistics' ms figures in µs, and with
    ``--histogram`` the HdrHistogram of its buckets and its percentiles."""
    lat = {"op": OP, "count": ops, "errors": errors}
    for key, col in (("min", "min_us"), ("avg", "mean_us"), ("max", "max_us"), ("sum", "sum_us")):
        v = _stat(st, "Latency (ms)", key)
        if v is not None:
            lat[col] = round(v * 1000, 3)
    lat_p = next((k for (sec, k) in st if sec == "Latency (ms)" and _PCT_KEY.fullmatch(k)), None)
    if lat_p:
        lat[pct_column(float(_PCT_KEY.fullmatch(lat_p).group(1)))] = \
            round(_stat(st, "Latency (ms)", lat_p) * 1000, 3)
    if histogram:
        h = measure.new_histogram()
        for v, c in histogram:
            h.record_value(max(round(v * 1000), 1), c)
        lat["hdr"] = measure.encode(h)
        for k, v in _percentiles(histogram, [50, 90, 95, 99, 99.9]).items():
            lat.setdefault(k, v)
        lat["histogram_count"] = int(sum(c for _, c in histogram))
    return lat


def _report_intervals(reports: list, path: Path) -> pd.DataFrame:
    """The ``--report-interval`` lines as intervals rows (a report covers the time
    since the one before)."""
    r = pd.DataFrame(reports, columns=["t", "threads", "unit", "rate", "qps", "reads_per_s",
                                       "writes_per_s", "other_per_s", "pct", "lat_ms",
                                       "errors_per_s", "reconnects_per_s"])
    t = r["t"].to_numpy()
    start = np.concatenate([[0.0], t[:-1]])
    secs_i = t - start
    if (secs_i <= 0).any():
        raise ImportFormatError(path, None, "expected report times that grow")
    intervals = pd.DataFrame({"second": np.rint(start).astype(np.int64), "op": OP,
                              "ops": np.rint(r["rate"] * secs_i), "interval_s": secs_i,
                              "ops_per_s": r["rate"], "threads": r["threads"]})
    if r["errors_per_s"].notna().any():
        intervals["errors"] = np.rint(r["errors_per_s"] * secs_i)
    for c in ("qps", "reads_per_s", "writes_per_s", "other_per_s", "errors_per_s", "reconnects_per_s"):
        if r[c].notna().any():
            intervals[c] = r[c]
    for p in sorted(r["pct"].unique()):
        intervals.loc[r["pct"] == p, pct_column(p)] = r.loc[r["pct"] == p, "lat_ms"] * 1000
    return intervals.assign(step=RUN_STEP)
