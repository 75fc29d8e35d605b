"""LinkBench (mdcallag fork) client logs and CSV statistics into the tidy tables.

What LinkBench writes and where it goes:

- the client log (stdout): progress lines (``N/M requests finished … secs elapsed`` in
  the request phase, ``N/M id1s … links at … counts at …`` in the load; the counts are
  cumulative over all threads), per-thread statistics every ``displayfreq`` seconds
  (``ThreadID = 0 GET_NODE totalOps = … ops = … sampleDuration = 20000ms … 99% = …``,
  latencies in µs over a sample of at most 10 000 operations), one final line per
  operation with *bucket* percentiles (``p99 = [1,2]ms``, ``max``/``mean`` in ms) and
  ``LOAD PHASE COMPLETED`` / ``REQUEST PHASE COMPLETED``;
- ``-csvstats``: the final lines as CSV (max/mean rounded to 0.01 ms);
- ``-csvstream``: the per-thread statistics as CSV — the column ``sampleDuration_us``
  holds milliseconds.

Tables: a load log becomes step ``l.pre`` (ops = nodes + links + counts, as the
seeds' ``l.pre`` lines count them), a request log ``r.L1`` (``r.L2`` … for more); a
log of both phases (one client run, or benchlib's ``linkbench.log``) is cut after each
``PHASE COMPLETED`` line. A request step's seconds are its ops over the log's own
Requests/second (the log's "in 61 seconds" is rounded down), its threads the requesters
that started; meta says workload ``linkbench`` and the requesters as ``threads``, so an
import and benchlib's own run are the same point; ``Graph Link other: … add_to_upd, …
upd_to_add`` becomes the ``returns`` table (ADD_LINK / UPDATE_LINK RETRY and OK). A
percentile's ``pXX_us`` is its bucket's upper bound, but never above ``max``;
latency per final line, with ``pXX_us`` the bucket's upper bound and both bounds in
``pXX_lo_us``/``pXX_hi_us``; intervals per operation from the per-thread windows
(merged over threads: operations added, means weighted by operations, the p99 only
where one thread reported, else its range over threads in ``p99_lo_us``/``p99_hi_us``)
and ``TOTAL`` rows between progress lines. ``RANGE_SIZE`` and ``*_NLINKS`` count
rows per call, not latencies, and are left out. Log times carry no zone; they are
taken as UTC, which is what the CSV's epoch seconds match on the captured machine.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import TOTAL_OP
from .base import Imported, ImportFormatError, stack_steps
from .linkbench_requesters import TOTALS_LINE, requesters, totals_of
from .text import BadNumber, number_at, numbers, read_text, stem_of

_PCTS = ["p25", "p50", "p75", "p95", "p99"]
_NOT_LATENCY = re.compile(r"^RANGE_SIZE$|_NLINKS$")

_TIME = re.compile(r"^(?:[A-Z]+ )?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) \[([^\]]*)\]: (.*)$")
_FINAL = re.compile(
    r"(\w+) count = (\d+)" + "".join(rf"\s+{p} = \[(\d+(?:\.\d+)?),(\d+(?:\.\d+)?)\]ms" for p in _PCTS)
    + r"\s+max = (\d+(?:\.\d+)?)ms\s+mean = (\d+(?:\.\d+)?)ms(?:\s+threads = (\d+))?\s*$")
_THREAD = re.compile(
    r"ThreadID = (\d+) (\w+) total[Oo]ps = (\d+) totalErrors = (\d+) ops = (\d+) "
    r"sampleDuration = (\d+)ms samples = (\d+)"
    r"(?: mean = (\S+) min = (\S+) 25% = (\S+) 50% = (\S+) 75% = (\S+) 90% = (\S+) 95% = (\S+) "
    r"99% = (\S+) max = (\S+))?\s*$")
_REQ_PROGRESS = re.compile(r"(\d+)/(\d+) requests finished: \d+(?:\.\d+)?% complete at (\d+(?:\.\d+)?) ops/sec "
                           r"(\d+(?:\.\d+)?)/(\d+) secs elapsed")
_LOAD_PROGRESS = re.compile(r"(\d+)/(\d+) id1s \(\d+(?:\.\d+)?%\) at \d+(?:\.\d+)? /sec\. (\d+) links at \d+(?:\.\d+)? /sec\. "
                            r"(\d+) counts at \d+(?:\.\d+)? /sec\. link\+count at \d+(?:\.\d+)? /sec\.")
_LOAD_DONE = re.compile(r"LOAD PHASE COMPLETED\. Loaded (\d+) nodes \(Expected \d+\), (\d+) links "
                        r"\(\d+(?:\.\d+)? /node\), (\d+) counts \(\d+(?:\.\d+)? /node\)\. (\d+(?:\.\d+)?) seconds, "
                        r"(\d+(?:\.\d+)?) Links/s, (\d+(?:\.\d+)?) \(link\+count\)/s, (\d+(?:\.\d+)?) \(link\+count\+node\)/s")
_RETRIES = re.compile(r"Graph Link other: (\d+) add_to_upd, (\d+) upd_to_add")
_REQ_DONE = re.compile(r"REQUEST PHASE COMPLETED\. (\d+) requests done in (\d+(?:\.\d+)?) seconds\. "
                       r"Requests/second = (\d+(?:\.\d+)?)")
# a line holding one of these must parse, else the file is not what we think
_MUST = [("PHASE COMPLETED.", (_LOAD_DONE, _REQ_DONE), "a 'PHASE COMPLETED.' summary"),
         ("ThreadID = ", (_THREAD, TOTALS_LINE), "per-thread statistics"),
         (" requests finished: ", (_REQ_PROGRESS,), "a progress line"),
         (" id1s (", (_LOAD_PROGRESS,), "a load progress line"),
         ("]ms  max = ", (_FINAL,), "a final latency line 'OP count = … p99 = [a,b]ms …'")]
_STREAM_COLS = ["threadID", "timestamp", "op", "totalops", "totalerrors", "ops", "sampleDuration_us",
                "sampleOps", "mean_us", "min_us", "p25_us", "p50_us", "p75_us", "p90_us", "p95_us",
                "p99_us", "max_us"]
_FINAL_COLS = ["op", "count"] + [f"{p}_{b}" for p in _PCTS for b in ("low", "high")] + ["max", "mean", "threads"]


def _when(s: str) -> pd.Timestamp:
    # log4j here drops trailing zeros of the milliseconds ("06.27" is 06.270)
    return pd.Timestamp(s, tz="UTC")


# ----------------------------------------------------------------- the client log

def _segments(text: str) -> list[tuple[int, str]]:
    """A log cut after each 'PHASE COMPLETED.' line (a client run with both phases, as
    benchlib's linkbench.log): (first line number - 1, text) per phase."""
    lines, out, start = text.split("\n"), [], 0
    for i, line in enumerate(lines):
        if "PHASE COMPLETED." in line:
            out.append((start, "\n".join(lines[start:i + 1])))
            start = i + 1
    rest = "\n".join(lines[start:])
    if rest.strip() or not out:
        out.append((start, rest))
    return out


def _scan_log(path: Path, text: str, offset: int = 0) -> dict:
    log = {"path": path, "final": [], "threads": [], "progress": [], "done": None, "start": None,
           "phase": None, "config": {}, "requesters": 0, "loaders": None, "totals": [],
           "retries": None}
    for lineno, line in enumerate(text.split("\n"), offset + 1):
        m = _TIME.match(line)
        if not m:
            continue
        when, msg = m.group(1), m.group(3)
        for mark, pats, what in _MUST:
            if mark in msg and not any(p.search(msg) for p in pats):
                raise ImportFormatError(path, lineno, f"expected {what}")
        try:
            t = _when(when)
        except ValueError:
            raise ImportFormatError(path, lineno, f"expected a date, got {when!r}") from None
        if (f := _FINAL.search(msg)):
            g = f.groups()
            row = {"op": g[0], "count": number_at(path, lineno, g[1])}
            for k, p in enumerate(_PCTS):
                row[f"{p}_low"], row[f"{p}_high"] = float(g[2 + 2 * k]), float(g[3 + 2 * k])
            row["max"], row["mean"] = float(g[12]), float(g[13])
            row["threads"] = float(g[14]) if g[14] else np.nan
            log["final"].append(row)
        elif (f := _THREAD.search(msg)):
            g = f.groups()
            vals = [None if v is None else number_at(path, lineno, v) for v in g[2:]]
            log["threads"].append([int(g[0]), t.timestamp(), g[1], *vals])
        elif (f := _REQ_PROGRESS.search(msg)):
            log["progress"].append((t, float(f.group(1))))
            log["phase"] = "run"
        elif (f := _LOAD_PROGRESS.search(msg)):
            log["progress"].append((t, float(f.group(3)) + float(f.group(4))))
            log["phase"] = "load"
        elif (f := _LOAD_DONE.search(msg)):
            log["done"] = (t, "load", [float(x) for x in f.groups()])
        elif (f := _REQ_DONE.search(msg)):
            log["done"] = (t, "run", [float(x) for x in f.groups()])
        else:
            _scan_other(log, msg, t)
    if log["done"] is None and not log["final"] and not log["progress"] and not log["threads"] \
            and offset == 0:
        raise ImportFormatError(path, None, "expected a LinkBench client log (progress, statistics "
                                            "or 'PHASE COMPLETED' lines)")
    if log["done"] is not None:
        log["phase"] = log["done"][1]
    if log["phase"] is None:
        ops = {r["op"] for r in log["final"]} | {r[2] for r in log["threads"]}
        log["phase"] = "load" if ops and all(o.startswith("LOAD_") for o in ops) else "run"
    return log


def _scan_other(log: dict, msg: str, t: pd.Timestamp) -> None:
    """Thread starts, the loaders, the retry counters, totals and config file names."""
    if "Requester thread #" in msg and " started" in msg:
        log["start"] = log["start"] or t
        log["requesters"] += 1
        log["phase"] = log["phase"] or "run"
    elif msg.startswith("Starting loader thread"):
        log["start"] = log["start"] or t
        log["phase"] = log["phase"] or "load"
    elif (f := _RETRIES.search(msg)):
        log["retries"] = (int(f.group(1)), int(f.group(2)))
    elif (f := re.match(r"Starting loaders (\d+)", msg)):
        log["loaders"] = int(f.group(1))
    elif (f := TOTALS_LINE.search(msg)):
        log["totals"].append(totals_of(f))
    elif msg.startswith(("Config file: ", "Workload config file: ")):
        k, v = msg.split(": ", 1)
        log["config"][k.lower().replace(" ", "_")] = v.strip()


# ----------------------------------------------------------------- the CSV files

def _read_csv(path: Path, text: str, columns: list[str], numeric: list[str],
              required: tuple[str, ...]) -> pd.DataFrame:
    header = text.split("\n", 1)[0].strip().split(",")
    if header != columns:
        raise ImportFormatError(path, 1, f"expected the header {','.join(columns)}")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, ValueError) as e:
        m = re.search(r"line (\d+)", str(e))
        raise ImportFormatError(path, int(m.group(1)) if m else None,
                                f"expected {len(columns)} comma-separated fields") from None
    for c in numeric:
        try:
            df[c] = numbers(df[c].tolist())
        except BadNumber as e:
            raise ImportFormatError(path, e.index + 2, f"expected a number in column {c}, got {e.value!r}") from None
        if c in required and df[c].isna().any():
            i = int(np.flatnonzero(df[c].isna().to_numpy())[0])
            raise ImportFormatError(path, i + 2, f"expected a value in column {c}")
    return df


def _stream_rows(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """Per-thread windows: what each covers (end time, seconds) and its errors."""
    d = df.copy()
    d["end"] = d["timestamp"].astype(float)
    d["dur_s"] = d["sampleDuration_us"] / 1000.0   # the "_us" column holds milliseconds
    d = d.sort_values(["threadID", "op", "end", "totalops"], kind="stable")
    d["errors"] = d.groupby(["threadID", "op"])["totalerrors"].diff().fillna(d["totalerrors"])
    d["source"] = source
    return d


def _thread_frame(rows: list) -> pd.DataFrame:
    cols = ["threadID", "timestamp", "op", "totalops", "totalerrors", "ops", "sampleDuration_us",
            "sampleOps", "mean_us", "min_us", "p25_us", "p50_us", "p75_us", "p90_us", "p95_us",
            "p99_us", "max_us"]
    return pd.DataFrame(rows, columns=cols).astype({c: float for c in cols if c not in ("op",)})


def _op_intervals(w: pd.DataFrame, t0: float) -> pd.DataFrame:
    w = w[~w["op"].str.contains(_NOT_LATENCY)]
    if not len(w):
        return w
    w = w.assign(second=np.rint(w["end"] - w["dur_s"] - t0).astype(np.int64),
                 wsum=w["mean_us"].fillna(0) * w["ops"])
    g = w.groupby(["second", "op"], sort=True)
    out = g.agg(ops=("ops", "sum"), errors=("errors", "sum"), interval_s=("dur_s", "max"),
                wsum=("wsum", "sum"), max_us=("max_us", "max"), min_us=("min_us", "min"),
                p99_lo_us=("p99_us", "min"), p99_hi_us=("p99_us", "max"),
                threads=("p99_us", "count")).reset_index()
    out["mean_us"] = np.where(out["ops"] > 0, out["wsum"] / out["ops"].where(out["ops"] > 0), np.nan)
    # a percentile of several threads cannot be had from theirs: only a single one's
    out["p99_us"] = out["p99_lo_us"].where(out["threads"] == 1)
    return out.drop(columns=["wsum", "threads"])


def _progress_intervals(progress: list, t0: pd.Timestamp) -> pd.DataFrame:
    if not progress:
        return pd.DataFrame()
    t = pd.Series([p[0] for p in progress])
    n = np.array([p[1] for p in progress])
    start = pd.concat([pd.Series([t0]), t[:-1]], ignore_index=True)
    secs = (t - start).dt.total_seconds().to_numpy()
    rows = pd.DataFrame({"second": np.floor((start - t0).dt.total_seconds().to_numpy()).astype(np.int64),
                         "op": TOTAL_OP, "ops": np.diff(np.concatenate([[0.0], n])), "interval_s": secs})
    # progress lines come every N operations, not every second: sum those in one second
    return rows.groupby(["second", "op"], as_index=False).sum()


# ----------------------------------------------------------------- steps

def _final_rows(final: list[dict] | pd.DataFrame) -> pd.DataFrame:
    f = pd.DataFrame(final)
    out = pd.DataFrame({"op": f["op"], "count": f["count"]})
    for p in _PCTS:   # a bucket's upper bound, but never above the largest latency seen
        out[f"{p}_us"] = np.minimum(f[f"{p}_high"], f["max"]) * 1000.0
        out[f"{p}_lo_us"] = f[f"{p}_low"] * 1000.0
        out[f"{p}_hi_us"] = f[f"{p}_high"] * 1000.0
    out["max_us"] = f["max"] * 1000.0
    out["mean_us"] = f["mean"] * 1000.0
    out["threads"] = f["threads"]
    return out.round(6)


def _step(log: dict | None, finals: list[pd.DataFrame], streams: list[pd.DataFrame]) -> dict:
    path = log["path"] if log else None
    windows = [s for s in streams]
    if log and log["threads"] and not windows:
        tw = _thread_frame(log["threads"])
        windows.append(_stream_rows(tw, "log"))
    w = pd.concat(windows, ignore_index=True) if windows else None
    if log and log["start"] is not None:
        t0 = log["start"]
    elif w is not None and len(w):
        t0 = pd.Timestamp((w["end"] - w["dur_s"]).min(), unit="s", tz="UTC")
    else:
        t0 = None
    t0_s = t0.timestamp() if t0 is not None else None
    parts = []
    if w is not None and len(w) and t0_s is not None:
        parts.append(_op_intervals(w, t0_s))
    if log and log["progress"] and t0 is not None:
        parts.append(_progress_intervals(log["progress"], t0))
    intervals = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) else None

    if log and log["final"]:
        lat = _final_rows(log["final"])
    elif finals:
        lat = _final_rows(pd.concat(finals, ignore_index=True))
    else:
        lat = pd.DataFrame(columns=["op"])
    if w is not None and len(w):
        last = w[~w["op"].str.contains(_NOT_LATENCY)].sort_values("end").groupby(["threadID", "op"]).tail(1)
        errs = last.groupby("op")["totalerrors"].sum()
        lat["errors"] = lat["op"].map(errs)
    phase = log["phase"] if log else ("load" if len(lat) and lat["op"].str.startswith("LOAD_").all() else "run")
    step = {"phase": phase, "started": t0, "status": "interrupted", "ops": np.nan, "secs": np.nan,
            "ops_per_s": np.nan, "errors": lat["errors"].sum(min_count=1) if "errors" in lat else np.nan,
            "threads": lat["threads"].max() if "threads" in lat and lat["threads"].notna().any() else np.nan}
    if log and log["done"]:
        t, kind, v = log["done"]
        step.update(status="ok", ended=t)
        if kind == "load":
            nodes, links, counts, secs, lps, lcps, lcnps = v
            step.update(ops=nodes + links + counts, secs=secs, ops_per_s=lcnps, nodes=nodes, links=links,
                        counts=counts, links_per_s=lps, link_count_per_s=lcps)
        else:   # the log's whole seconds are rounded down: its own rate gives the time
            step.update(ops=v[0], secs=v[0] / v[2] if v[2] else v[1], ops_per_s=v[2])
        if log["requesters"]:
            step["threads"] = log["requesters"]
    elif not log:
        step["status"] = "ok"
        step["ops"] = lat["count"].sum() if len(lat) else np.nan
    meta = {}
    if log:
        meta.update(log["config"])
        if log["totals"]:
            meta["requesters"] = requesters(log["totals"], log["threads"])
    return {"step": step, "latency": lat, "intervals": intervals, "meta": meta, "t0": t0,
            "key": stem_of(path) if path else "", "retries": log["retries"] if log else None}


def import_linkbench(paths: list[Path]) -> Imported:
    """Client logs (one per phase) with their ``-csvstats``/``-csvstream`` files."""
    logs, finals, streams = [], [], []
    for path in paths:
        text = read_text(path)
        head = text.lstrip("\ufeff").split("\n", 1)[0].strip()
        if not text.strip():
            continue
        if head.startswith("op,count,"):
            finals.append(_read_csv(path, text, _FINAL_COLS, _FINAL_COLS[1:], ("count",)))
        elif head.startswith("threadID,"):
            df = _read_csv(path, text, _STREAM_COLS, [c for c in _STREAM_COLS if c != "op"],
                           ("threadID", "timestamp", "totalops", "totalerrors", "ops", "sampleDuration_us"))
            streams.append(_stream_rows(df, path.name))
        else:
            segs = [_scan_log(path, seg, at) for at, seg in _segments(text)]
            logs.extend(g for i, g in enumerate(segs) if i == 0 or g["done"] or g["final"]
                        or g["progress"] or g["threads"])
    if not (logs or finals or streams):
        raise ImportFormatError(paths[0], None, "expected a LinkBench log or CSV, found empty files")

    def phase_of(df):
        return "load" if len(df) and df["op"].str.startswith("LOAD_").all() else "run"

    steps = []
    for phase in ("load", "run"):
        pl = [g for g in logs if g["phase"] == phase]
        pf = [f for f in finals if phase_of(f) == phase]
        ps = [s for s in streams if phase_of(s) == phase]
        if not pl and (pf or ps):
            steps.append(_step(None, pf, ps))
        for i, log in enumerate(sorted(pl, key=lambda g: g["start"].value if g["start"] is not None else 0)):
            # CSVs of a phase go with its first log; a second run of a phase has its own
            steps.append(_step(log, pf if i == 0 else [], ps if i == 0 else []))
    return _name_steps(steps)


def _name_steps(steps: list[dict]) -> Imported:
    steps_df, latency, intervals = stack_steps(steps)
    metas = {name: s["meta"] for name, s in zip(steps_df["step"], steps) if s["meta"]}
    meta = {"tool": "linkbench", "workload": "linkbench"}
    threads = [s["step"].get("threads") for s in steps if s["step"]["phase"] == "run"] or \
        [s["step"].get("threads") for s in steps]
    threads = [int(t) for t in threads if t is not None and t == t]
    if threads:
        meta["threads"] = max(threads)   # the requesters, as benchlib's runs name them
    if metas:
        meta["steps"] = metas
    extra = {"returns": r} if len(r := _returns(steps_df["step"].tolist(), steps)) else {}
    return Imported(steps=steps_df, latency=latency, intervals=intervals, meta=meta, extra=extra)


def _returns(names: list[str], steps: list[dict]) -> pd.DataFrame:
    """The retry counters of 'Graph Link other:' as benchlib's returns table: an
    ADD_LINK that found its link (add_to_upd) and an UPDATE_LINK that found none
    (upd_to_add) are RETRY, the others of those two operations OK."""
    rows = []
    for name, s in zip(names, steps):
        if not s.get("retries") or not len(s["latency"]):
            continue
        counts = s["latency"].set_index("op")["count"]
        for op, retry in zip(("ADD_LINK", "UPDATE_LINK"), s["retries"]):
            if op in counts.index:
                rows += [{"step": name, "op": op, "status": "OK", "count": int(counts[op]) - retry},
                         {"step": name, "op": op, "status": "RETRY", "count": retry}]
    return pd.DataFrame(rows)
