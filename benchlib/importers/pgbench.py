"""pgbench's summary and ``-P`` progress lines into the tidy tables.

The formats, as pgbench's ``printResults``/``printProgressReport`` print them:

- PostgreSQL ≤ 13: ``tps = %f (including connections establishing)`` and
  ``(excluding connections establishing)``; ``latency average = %.3f ms`` (9.x:
  ``latency average: %.3f ms``); percentages as ``(%.3f %%)``; progress
  ``progress: %.1f s, %.1f tps, lat %.3f ms stddev %.3f[, lag %.3f ms[, N skipped]]``.
- 14: ``initial connection time = %.3f ms`` and
  ``tps = %f (without initial connection time)`` (``-C``: ``average connection time``,
  ``(including reconnection times)``).
- ≥ 15: ``maximum number of tries``, ``number of failed transactions: N (x%)``
  (and with ``--failures-detailed`` serialization/deadlock/other), retries with
  ``--max-tries``; progress adds ``, N failed`` after the stddev and
  ``, N retried, N retries``; ``-r`` prints each statement's failures (and retries).
- ``-R``: ``rate limit schedule lag: avg %.3f (max %.3f) ms``; with ``--latency-limit``
  ``number of transactions skipped`` and ``… above the %.1f ms latency limit: N/M``.
- ``--progress-timestamp``: progress times are epoch seconds (``%.3f s``).

One run is one step ``r.L1`` with the operation ``TX`` (a transaction of the
script). ``secs`` is transactions / tps, the duration pgbench itself divides by; the
interval ``ops`` are the printed tps times the interval's length, rounded (pgbench
prints rates, not counts), the rate kept as ``ops_per_s``. Per-statement latencies
(``-r``) go to meta.json ``statements``.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from .base import Imported, ImportFormatError
from .text import read_text

OP = "TX"
RUN_STEP = schema.step_name("run", 1)  # one run, one step
_F = r"(-?\d+(?:\.\d+)?|nan|-nan|inf)"
_PROGRESS = re.compile(
    rf"^progress: {_F} s, {_F} tps, lat {_F} ms stddev {_F}(?:, (\d+) failed)?"
    rf"(?:, lag {_F} ms)?(?:, (\d+) skipped)?(?:, (\d+) retried, (\d+) retries)?\s*$")
_PCT = r"\(\s*\d+(?:\.\d+)? ?%\)"
_SUMMARY = [  # (key, pattern); every line starting with one of these words must parse
    ("version", re.compile(r"^pgbench \(([^\s,()]+)")),
    ("transaction_type", re.compile(r"^transaction type: (.+)$")),
    ("scaling_factor", re.compile(r"^scaling factor: (\d+)$")),
    ("partition_method", re.compile(r"^partition method: (\S+)$")),
    ("partitions", re.compile(r"^partitions: (\d+)$")),
    ("query_mode", re.compile(r"^query mode: (\S+)$")),
    ("clients", re.compile(r"^number of clients: (\d+)$")),
    ("jobs", re.compile(r"^number of threads: (\d+)$")),
    ("max_tries", re.compile(r"^maximum number of tries: (\d+)$")),
    ("duration_s", re.compile(r"^duration: (\d+) s$")),
    ("per_client", re.compile(r"^number of transactions per client: (\d+)$")),
    ("processed", re.compile(r"^number of transactions actually processed: (\d+)(?:/(\d+))?$")),
    ("failed", re.compile(rf"^number of failed transactions: (\d+) {_PCT}$")),
    ("serialization_failures", re.compile(rf"^number of serialization failures: (\d+) {_PCT}$")),
    ("deadlock_failures", re.compile(rf"^number of deadlock failures: (\d+) {_PCT}$")),
    ("other_failures", re.compile(rf"^number of other failures: (\d+) {_PCT}$")),
    ("retried", re.compile(rf"^number of transactions retried: (\d+) {_PCT}$")),
    ("retries", re.compile(r"^total number of retries: (\d+)$")),
    ("skipped", re.compile(rf"^number of transactions skipped: (\d+) {_PCT}$")),
    ("late", re.compile(rf"^number of transactions above the (\d+(?:\.\d+)?) ms latency limit: (\d+)(?:/(\d+))? {_PCT}$")),
    ("latency_average", re.compile(r"^latency average ?[:=] (\d+(?:\.\d+)?|nan) ms(?: \(including failures\))?$")),
    ("latency_stddev", re.compile(r"^latency stddev ?[:=] (\d+(?:\.\d+)?|nan) ms$")),
    ("lag", re.compile(r"^rate limit schedule lag: avg (\d+(?:\.\d+)?|nan) \(max (\d+(?:\.\d+)?|nan)\) ms$")),
    ("connection_time", re.compile(r"^(?:initial|average) connection time = (\d+(?:\.\d+)?) ms$")),
    ("tps", re.compile(r"^tps = (\d+(?:\.\d+)?|nan|inf) \((including connections establishing|excluding connections "
                       r"establishing|without initial connection time|including reconnection times)\)$")),
]
_WORDS = ("pgbench (", "transaction type", "scaling factor", "query mode", "number of", "maximum number",
          "duration:", "latency average", "latency stddev", "rate limit", "initial connection",
          "average connection", "tps =", "total number of retries", "partition")
_STATEMENTS = re.compile(r"^(?: - )?statement latencies in milliseconds(.*):$")
_STATEMENT = re.compile(r"^\s+(-?\d+(?:\.\d+)?)(?:\s+(\d+))?(?:\s+(\d+))?\s+(\S.*)$")
_SCRIPT = re.compile(r"^SQL script (\d+): (.*)$")


def _parse(path: Path, text: str, out: dict) -> None:
    script, in_statements = 1, None
    for lineno, line in enumerate(text.split("\n"), 1):
        s = line.rstrip()
        if s.startswith("progress: "):
            m = _PROGRESS.match(s)
            if not m:
                raise ImportFormatError(path, lineno, "expected 'progress: T s, X tps, lat X ms stddev X"
                                                      "[, N failed][, lag X ms][, N skipped]'")
            out["progress"].append([float(x) if x is not None else np.nan for x in m.groups()] + [lineno])
            in_statements = None
            continue
        if in_statements is not None:
            m = _STATEMENT.match(s)
            if m and s.startswith(" ") and not s.startswith(" - "):
                mean, a, b, stmt = m.groups()
                row = {"script": script, "statement": stmt.strip(), "mean_us": round(float(mean) * 1000, 3)}
                if a is not None:
                    row["failures"] = int(a)
                if b is not None:
                    row["retries"] = int(b)
                out["statements"].append(row)
                continue
            in_statements = None
        if (m := _SCRIPT.match(s)):
            script = int(m.group(1))
            continue
        if (m := _STATEMENTS.match(s)):
            in_statements = m.group(1)
            continue
        if s.startswith(" - "):
            continue  # per-script figures: the totals are what the tables hold
        for key, pat in _SUMMARY:
            m = pat.match(s)
            if m:
                if key in out["summary"] and key not in ("tps", "version"):
                    raise ImportFormatError(path, lineno, "expected the summary of one pgbench run "
                                                          "(import each run on its own)")
                if key == "tps":
                    out["summary"].setdefault("tps", {})[m.group(2)] = float(m.group(1))
                else:
                    out["summary"][key] = m.groups()
                break
        else:
            if s.startswith(_WORDS):
                raise ImportFormatError(path, lineno, f"expected a pgbench summary line, got {s[:60]!r}")


def _progress(rows: list) -> pd.DataFrame | None:
    if not rows:
        return None
    p = pd.DataFrame(rows, columns=["t", "tps", "lat_ms", "stddev_ms", "failed", "lag_ms", "skipped",
                                    "retried", "retries", "line"])
    t = p["t"].to_numpy()
    if (np.diff(t) <= 0).any():
        raise ImportFormatError("progress", int(p["line"].iloc[int(np.flatnonzero(np.diff(t) <= 0)[0]) + 1]),
                                "expected progress times that grow")
    if t[0] > 1e8:  # --progress-timestamp: epoch seconds; the first interval is as long as the next
        step = np.diff(t)[0] if len(t) > 1 else 1.0
        start = np.concatenate([[t[0] - step], t[:-1]])
        t0 = start[0]
    else:
        start, t0 = np.concatenate([[0.0], t[:-1]]), 0.0
    secs = t - start
    out = pd.DataFrame({"second": np.rint(start - t0).astype(np.int64), "op": OP,
                        "ops": np.rint(p["tps"].to_numpy() * secs), "interval_s": secs,
                        "ops_per_s": p["tps"], "mean_us": p["lat_ms"] * 1000, "stddev_us": p["stddev_ms"] * 1000})
    if p["failed"].notna().any():
        out["errors"] = p["failed"]
    for col, src, scale in (("lag_us", "lag_ms", 1000), ("skipped", "skipped", 1), ("retried", "retried", 1),
                            ("retries", "retries", 1)):
        if p[src].notna().any():
            out[col] = p[src] * scale
    out.attrs["t0_epoch"] = t0 if t0 else None
    return out


def import_pgbench(paths: list[Path]) -> Imported:
    """One pgbench run: its stdout (summary) and stderr (progress), in any order."""
    out = {"summary": {}, "progress": [], "statements": []}
    for path in paths:
        try:
            _parse(path, read_text(path), out)
        except ImportFormatError as e:
            if e.path == "progress":
                raise ImportFormatError(path, e.lineno, e.expected) from None
            raise
    s, prog = out["summary"], None
    try:
        prog = _progress(out["progress"])
    except ImportFormatError as e:
        raise ImportFormatError(paths[-1], e.lineno, e.expected) from None
    if "processed" not in s and prog is None:
        raise ImportFormatError(paths[0], None, "expected pgbench output: a summary "
                                                "('number of transactions actually processed') or progress lines")

    tps = s.get("tps", {})
    tps_main = tps.get("without initial connection time", tps.get("excluding connections establishing",
                       tps.get("including reconnection times", tps.get("including connections establishing"))))
    processed = _one(s, "processed")
    failed = _one(s, "failed")
    lat = _latency_row(s, processed, failed)
    secs = processed / tps_main if processed and tps_main else None
    if secs is None and prog is not None:
        secs = float(prog["interval_s"].sum())
    step = {"step": RUN_STEP, "phase": "run", "loop": 1, "secs": secs,
            "ops": processed if processed is not None else (prog["ops"].sum() if prog is not None else None),
            "errors": failed, "ops_per_s": tps_main, "threads": _one(s, "clients", cast=int),
            "status": "ok" if processed is not None else "interrupted"}
    t0 = prog.attrs.get("t0_epoch") if prog is not None else None
    if t0:
        step["started"] = pd.Timestamp(t0, unit="s", tz="UTC")
        if secs:
            step["ended"] = step["started"] + pd.to_timedelta(secs, unit="s")
    latency = pd.DataFrame([lat]).assign(step=RUN_STEP) if processed is not None or len(lat) > 3 else None
    intervals = prog.assign(step=RUN_STEP) if prog is not None else None
    return Imported(steps=pd.DataFrame([step]), latency=latency, intervals=intervals,
                    meta=_meta(s, tps, out["statements"]))


def _one(s: dict, key: str, i: int = 0, cast=float):
    """The ``i``-th figure of a summary line, cast; None when absent."""
    v = s.get(key)
    return cast(v[i]) if v is not None and v[i] is not None else None


def _latency_row(s: dict, processed, failed) -> dict:
    """The latency row of the run from the summary (ms figures in µs)."""
    lat = {"op": OP, "count": (processed or 0) + (failed or 0) if processed is not None else None,
           "errors": failed}
    if "latency_average" in s:
        lat["mean_us"] = _one(s, "latency_average") * 1000
    if "latency_stddev" in s:
        lat["stddev_us"] = _one(s, "latency_stddev") * 1000
    if "lag" in s:
        lat["lag_mean_us"], lat["lag_max_us"] = _one(s, "lag") * 1000, _one(s, "lag", 1) * 1000
    if "late" in s:
        lat["latency_limit_ms"], lat["late"] = _one(s, "late"), _one(s, "late", 1)
    for k in ("skipped", "retried", "retries", "serialization_failures", "deadlock_failures", "other_failures"):
        if k in s:
            lat[k] = _one(s, k)
    if "connection_time" in s:
        lat["connection_ms"] = _one(s, "connection_time")
    return lat


def _meta(s: dict, tps: dict, statements: list) -> dict:
    """What the run's meta keeps: pgbench's version, its parameters, tps figures and
    per-statement latencies."""
    meta = {"tool": "pgbench"}
    if "version" in s:
        meta["tool_version"] = s["version"][0]
    params = {k: int(s[k][0]) if s[k][0].isdigit() else s[k][0]
              for k in ("transaction_type", "scaling_factor", "query_mode", "clients", "jobs",
                        "max_tries", "duration_s", "per_client", "partition_method", "partitions")
              if k in s}
    if params:
        meta["pgbench"] = params
    # the workload's coordinates (importers/coordinates.py): clients are the threads
    meta["workload"] = "pgbench"
    meta["workload_properties"] = {k: v for k, v in params.items()
                                   if k not in ("clients", "jobs", "duration_s", "per_client")}
    if tps:
        meta["tps"] = tps
    if statements:
        meta["statements"] = statements
    return meta
