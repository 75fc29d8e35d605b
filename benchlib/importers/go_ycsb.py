"""go-ycsb (pingcap) output into a step of the tidy tables.

go-ycsb prints its properties (``"name"="value"`` lines), then every
``-p measurement.interval`` seconds one row per operation, sorted by name::

    READ   - Takes(s): 1.0, Count: 5552, OPS: 5567.5, Avg(us): 173, Min(us): 27, Max(us): 5011, 50th(us): 138, …

and after ``Run finished, takes 4.19s`` the final rows. Counts and ``OPS`` are
cumulative since the start (``OPS`` is their average rate); ``OP_ERROR`` rows count
the failed operations of ``OP``. Intervals are the differences of successive periods.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import TOTAL_OP
from .base import ImportFormatError
from .text import int_or_none, nth_match_line, numbers_of_matches, pct_column, stem_of

_GO = re.compile(r"\n([A-Za-z][\w-]*) +- Takes\(s\): ([^,\n]+), Count: ([^,\n]+), OPS: ([^,\n]+), "
                 r"Avg\(us\): ([^,\n]+), Min\(us\): ([^,\n]+), Max\(us\): ([^,\n]+)((?:, [^,\n]+)*)[ \t]*(?=\n)")
_GO_PCT = re.compile(r", (\d+(?:\.\d+)?)th\(us\): ([^,\n]+)")
_GO_DUR = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)")


def scan_go(path: Path, w: str) -> dict:
    """The rows of a go-ycsb output (``w`` is "\\n" + its text + "\\n"), its duration
    and properties."""
    rows = _GO.findall(w)
    if len(rows) != w.count(" - Takes(s): "):
        for lineno, line in enumerate(w.split("\n")):
            if " - Takes(s): " in line and not _GO.match("\n" + line + "\n"):
                raise ImportFormatError(path, lineno, "expected 'OP - Takes(s): …, Count: …, OPS: …, "
                                                      "Avg(us): …, Min(us): …, Max(us): …'")
    if not rows:
        raise ImportFormatError(path, None, "expected go-ycsb rows 'OP - Takes(s): …'")
    cols = [numbers_of_matches([r[k] for r in rows], path, _GO, w, name)
            for k, name in enumerate(["", "Takes(s)", "Count", "OPS", "Avg(us)", "Min(us)", "Max(us)"])
            if k]
    pct = []
    for i, r in enumerate(rows):
        d = {}
        for p, v in _GO_PCT.findall(r[7]):
            try:
                d[pct_column(float(p))] = float(v)
            except ValueError:
                raise ImportFormatError(path, nth_match_line(_GO, w, i), f"expected a number, got {v!r}") from None
        pct.append(d)
    df = pd.DataFrame({"op": [r[0] for r in rows], "takes": cols[0], "count": cols[1], "ops_per_s": cols[2],
                       "mean_us": cols[3], "min_us": cols[4], "max_us": cols[5]})
    df = pd.concat([df, pd.DataFrame(pct, index=df.index)], axis=1)
    i = w.find("\nRun finished, takes ")
    n_before = w.count(" - Takes(s): ", 0, i) if i >= 0 else len(df)
    df["final"] = np.arange(len(df)) >= n_before
    secs = None
    if i >= 0:
        dur = w[i + 21:w.find("\n", i + 1)].strip()
        parts = _GO_DUR.findall(dur)
        if not parts or "".join(a + b for a, b in parts) != dur:
            raise ImportFormatError(path, w.count("\n", 0, i + 1), f"expected a duration like 4.19s, got {dur!r}")
        scale = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}
        secs = sum(float(a) * scale[b] for a, b in parts)
    props = dict(re.findall(r'\n"([^"\n]+)"="([^"\n]*)"', w))
    return {"rows": df, "secs": secs, "props": props}


def go_step(path: Path, g: dict) -> dict:
    """The step of one go-ycsb output (what :func:`scan_go` found in it)."""
    df = g["rows"]
    periodic, final = df[~df["final"]], df[df["final"]]
    if not len(final):  # killed before the end: the last periodic rows are the totals so far
        final = periodic.groupby("op", sort=False).tail(1)
    # intervals: rows are cumulative; go-ycsb prints each period's ops sorted by name,
    # so a name not above the previous one starts the next period
    rows = pd.concat([periodic, df[df["final"]]], ignore_index=True)  # the end is a last period
    names = rows["op"].tolist()
    period = np.cumsum([i == 0 or names[i] <= names[i - 1] for i in range(len(names))]) - 1
    p = rows.assign(period=period)
    tot = p[p["op"] == TOTAL_OP].set_index("period")["takes"]
    clock = tot if len(tot) else p.groupby("period")["takes"].max()
    end = clock.reindex(range(int(period.max()) + 1 if len(p) else 0)).ffill()
    start = end.shift(1).fillna(0.0)
    p = p.assign(second=np.rint(start.reindex(p["period"]).to_numpy()).astype(np.int64),
                 interval_s=(end - start).reindex(p["period"]).to_numpy())
    p["ops"] = p.groupby("op")["count"].diff().fillna(p["count"])
    err = p[p["op"].str.endswith("_ERROR")].assign(op=lambda d: d["op"].str[:-6])
    err_by = err.set_index(["period", "op"])["ops"]
    p["errors"] = [err_by.get((k, o), 0.0) for k, o in zip(p["period"], p["op"])]
    # OPS is the average since the start: the interval's rate is ops / interval_s
    intervals = p[["second", "op", "ops", "errors", "interval_s"]].copy()
    if (intervals["ops"] < 0).any():
        raise ImportFormatError(path, None, "expected cumulative counts that do not decrease")
    errors = {o[:-6]: c for o, c in zip(final["op"], final["count"]) if o.endswith("_ERROR")}
    lat = []
    for r in final.to_dict("records"):
        if r["op"] == TOTAL_OP:
            continue
        e = errors.get(r["op"], 0.0) if not r["op"].endswith("_ERROR") else 0.0
        lat.append({**{k: v for k, v in r.items() if k not in ("takes", "final")},
                    "count": r["count"] + e, "errors": e})
    total = final[final["op"] == TOTAL_OP]
    ops = float(total["count"].iloc[0]) if len(total) else sum(x["count"] for x in lat)
    secs = g["secs"] if g["secs"] is not None else (float(total["takes"].iloc[0]) if len(total) else np.nan)
    props = g["props"]
    load = props.get("command") == "load" or props.get("dotransactions") == "false"
    step = {"phase": "load" if load else "run", "secs": secs, "ops": ops, "errors": sum(errors.values()),
            "ops_per_s": float(total["ops_per_s"].iloc[0]) if len(total) else (ops / secs if secs else np.nan),
            "threads": int_or_none(props.get("threadcount")), "status": "ok" if len(df[df["final"]]) else "interrupted",
            "started": None, "ended": None}
    meta = {"tool": "go-ycsb", "workload": "ycsb", "properties": props}
    return {"step": step, "latency": pd.DataFrame(lat), "intervals": intervals, "meta": meta,
            "t0": None, "key": stem_of(path)}
