"""YCSB outputs (Java YCSB 0.17/0.18, go-ycsb) into the tidy tables.

Java YCSB writes, per run (one ``bin/ycsb load|run`` process):

- stdout: the summary ``[OP], Metric, value`` at the end — per measurement type
  histogram (``LatencyVariance``, 95th/99th as 1 ms bucket *lower* bounds),
  hdrhistogram (``hdrhistogram.percentiles`` lines), timeseries (``[OP], t_ms, avg``
  rows) or raw (``op,timestamp_ms,latency_us`` lines and ``p1 … p99.99``);
  ``Return=STATUS`` counts, ``[CLEANUP]`` (one per thread), JVM GC totals;
- stderr: ``Command line:``, the version banner and, with ``-s``, a status line per
  ``status.interval`` (``timeseries`` prints them to stdout too);
- with ``hdrhistogram.fileoutput``: one HdrHistogram log per operation.

Status lines, read the way YCSB's ``StatusThread`` writes them: ``N operations`` is
the cumulative count of finished operations (so an interval's operations are the
difference of two lines); the block of each operation describes *that interval
only* — hdrhistogram's ``Count``/``Max``/``Min``/``Avg``/percentiles come from
``Recorder.getIntervalHistogram()``, histogram/timeseries print the interval's
``AverageLatency`` without a count, raw prints ``count`` and ``average``. ``N sec``
is the whole seconds elapsed, so an interval starts at the previous line's ``N``.
An empty interval prints ``Avg=NaN``/``Min=9223372036854775807``: its operations are
0 and its latencies NA.

Steps: a process run with ``-load`` (or, without a command line, one whose
operations are INSERT only) is the load ``l.pre``; the others are run loops
``r.L1``, ``r.L2`` … in the order of their start. Files of one process share a
name stem (``x.out``/``x.err``/``x-READ.hdr``).

The parsing runs regular expressions over whole files and converts columns with
pyarrow (see ``bench/bench_import.py``); a line that looks like a YCSB line but does
not parse raises :class:`ImportFormatError` with its number.
"""
from __future__ import annotations

import gc
import json
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from hdrh.histogram import HdrHistogram

from .. import measure
from . import TOTAL_OP, BadNumber, numbers, pct_column, read_text, stem_of
from .base import Imported, ImportFormatError, register

JVM_OPS = {"THREAD_COUNT", "USED_MEM_MB", "SYS_LOAD_AVG", "GCS", "GCS_TIME", "MAX_MEM_USED",
           "MIN_MEM_USED", "MAX_THREADS", "MIN_THREADS", "MAX_SYS_LOAD_AVG", "MIN_SYS_LOAD_AVG"}
INTENDED = "Intended-"

# ---- line patterns; each starts with "\n" (the text is scanned as "\n" + text) so the
# regex engine can jump between line starts instead of trying every character
_SUMMARY = re.compile(r"\n\[([^\]\n]+)\], ([^,\n]+), ([^\n]*)")
_SUMMARY_LOOSE = re.compile(r"\n\[[^\]\n]*\], ")
_HEAD = re.compile(r"\n(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}) (\d+) sec: (\d+) operations; "
                   r"(?:([^ \n]+) current ops/sec; )?([^\n]*)")
_HEAD_SLOW = re.compile(r"(.*?)(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}) (\d+) sec: (\d+) operations; "
                        r"(?:([^ \n]+) current ops/sec; )?(.*)")
_HEAD_LIKE = re.compile(r"\d\d:\d\d:\d\d:\d{3} \d+ sec: ")
_V = r"([^,\]\s]+)"
_BLOCKS = re.compile(
    rf"\[([^\]:\s]+)(?:: Count={_V}, Max={_V}, Min={_V}, Avg={_V}, (?:50={_V}, )?90={_V}, 99={_V}, "
    rf"99\.9={_V}, 99\.99={_V}| AverageLatency\(us\)={_V})\]")
_RAW_BLOCK = re.compile(r"([A-Za-z][\w-]*) count: (\d+), average latency\(us\): ([^\s\[]+)")
_RAW = re.compile(r"\n([A-Za-z][\w-]*),(\d+),(-?\d+)[ \t]*(?=\n)")
_RAW_LOOSE = re.compile(r"\n[A-Za-z][\w-]*,\d")
_PCT = re.compile(r"^(\d+(?:\.\d+)?)(?:st|nd|rd|th)?PercentileLatency\(us\)$")
_RAW_PCT = re.compile(r"^p(\d+(?:\.\d+)?)$")
_GO = re.compile(r"\n([A-Za-z][\w-]*) +- Takes\(s\): ([^,\n]+), Count: ([^,\n]+), OPS: ([^,\n]+), "
                 r"Avg\(us\): ([^,\n]+), Min\(us\): ([^,\n]+), Max\(us\): ([^,\n]+)((?:, [^,\n]+)*)[ \t]*(?=\n)")
_GO_PCT = re.compile(r", (\d+(?:\.\d+)?)th\(us\): ([^,\n]+)")
_GO_DUR = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)")
_HDR_LINE = re.compile(r"(?:Tag=[^,]*,)?(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(HIST[A-Za-z0-9+/]+=*)\s*$")
_NO_MIN = 9.223372036854775e18  # Long.MAX_VALUE, YCSB's Min of an empty interval


@contextmanager
def _no_gc():
    # millions of small tuples from findall make the cyclic GC run over and over
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fail(path, text, pos, expected):
    raise ImportFormatError(path, text.count("\n", 0, pos) + 1 if pos is not None else None, expected)


def _nth_line(regex, text, i):
    """Line number (in "\\n"+text) of the i-th match; only called to report an error."""
    for k, m in enumerate(regex.finditer(text)):
        if k == i:
            return text.count("\n", 0, m.start()) + 1
    return None


def _nums(values, path, regex, text, what, index_map=None):
    try:
        return numbers(values)
    except BadNumber as e:
        i = index_map[e.index] if index_map is not None else e.index
        raise ImportFormatError(path, _nth_line(regex, text, i),
                                f"expected a number for {what}, got {e.value!r}") from None


# ----------------------------------------------------------------- one file

@dataclass
class _Part:
    path: Path
    kind: str = "java"                        # java | go | hdr | empty
    summary: dict = field(default_factory=dict)   # op -> {metric: value}
    ts: pd.DataFrame | None = None            # timeseries rows: op, t_ms, mean_us
    heads: pd.DataFrame | None = None         # status lines
    blocks: pd.DataFrame | None = None        # their per-operation blocks
    raw: pd.DataFrame | None = None           # raw data points
    command: str | None = None
    version: str | None = None
    hdr: dict | None = None                   # an HdrHistogram log
    go: dict | None = None                    # go-ycsb rows
    text: str = ""

    @property
    def has_summary(self) -> bool:
        return "OVERALL" in self.summary


def _scan(path: Path) -> _Part:
    text = read_text(path)
    part = _Part(path)
    if not text or text.isspace():
        part.kind = "empty"
        return part
    if path.suffix == ".hdr" or text[:4096].lstrip().startswith("#[Logging for:") \
            or "#[Histogram log format version" in text[:4096]:
        part.kind, part.hdr = "hdr", _scan_hdr(path, text)
        return part
    w = "\n" + text + ("" if text.endswith("\n") else "\n")
    part.text = w
    if " - Takes(s): " in text:
        part.kind, part.go = "go", _scan_go(path, w)
        return part
    with _no_gc():
        _scan_summary(part, w)
        _scan_status(part, w)
        _scan_raw(part, w)
    part.command = _line_after(w, "\nCommand line: ") or None
    part.version = (_line_after(w, "\nYCSB Client ").split() or [None])[0]
    if not (part.summary or part.heads is not None or part.raw is not None or part.ts is not None):
        raise ImportFormatError(path, None, "expected YCSB output: [OVERALL] summary lines, "
                                            "status lines (-s) or raw data lines")
    return part


def _line_after(w: str, mark: str) -> str:
    """The rest of the line after the first ``mark`` ("" when there is none)."""
    i = w.find(mark)
    return w[i + len(mark):w.find("\n", i + 1)].strip() if i >= 0 else ""


def _scan_summary(part: _Part, w: str) -> None:
    rows = _SUMMARY.findall(w)
    if len(rows) != w.count("\n["):
        loose = [m.start() for m in _SUMMARY_LOOSE.finditer(w)]
        if len(loose) != len(rows):
            for pos in loose:
                if not _SUMMARY.match(w, pos):
                    _fail(part.path, w, pos, "expected a summary line '[OP], Metric, value'")
    if not rows:
        return
    ops = np.asarray([r[0] for r in rows], dtype=object)
    metrics = pa.array([r[1] for r in rows], pa.string())
    values = pa.array([r[2] for r in rows], pa.string())
    vals = _nums(values, part.path, _SUMMARY, w, "a summary value")
    numeric = pc.match_substring_regex(metrics, r"^\d+$").to_numpy(zero_copy_only=False)
    names = metrics.to_pylist() if not numeric.any() else None
    for i in np.flatnonzero(~numeric).tolist():
        metric = names[i] if names is not None else metrics[i].as_py()
        if metric.startswith(">"):
            continue  # histogram.verbose overflow bucket
        m = part.summary.setdefault(ops[i], {})
        if not np.isnan(vals[i]):   # "NaN" (an average of nothing) is no figure: leave it NA
            m[metric] = vals[i]
    if numeric.any():
        idx = np.flatnonzero(numeric)
        t = pc.cast(pc.take(metrics, pa.array(idx)), pa.int64()).to_numpy()
        # timeseries averages are Java doubles ("563.94", "NaN"); histogram.verbose
        # bucket counts are longs: only the former are time series
        dbl = pc.match_substring_regex(pc.take(values, pa.array(idx)), r"[.NE]").to_numpy(zero_copy_only=False)
        op_arr = ops[idx]
        ts_ops = pd.unique(op_arr[dbl])
        keep = np.isin(op_arr, ts_ops) if len(ts_ops) else np.zeros(len(idx), bool)
        if keep.any():
            part.ts = pd.DataFrame({"op": op_arr[keep], "t_ms": t[keep], "mean_us": vals[idx][keep]})


def _when(ts: list[str]) -> np.ndarray | None:
    """"yyyy-MM-dd HH:mm:ss:SSS" (YCSB's SimpleDateFormat) to datetime64[ms], all at once."""
    arr = pa.array(ts, pa.string())
    try:
        sec = pc.strptime(pc.utf8_slice_codeunits(arr, 0, 19), format="%Y-%m-%d %H:%M:%S", unit="ms")
        ms = pc.cast(pc.utf8_slice_codeunits(arr, 20, 23), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return sec.to_numpy(zero_copy_only=False).astype("datetime64[ms]") + ms.to_numpy().astype("timedelta64[ms]")


def _line_of(text: str, char: str) -> np.ndarray:
    """For each ``char`` in ``text``, the number of the line it is on (0-based)."""
    b = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)
    return np.searchsorted(np.flatnonzero(b == 10), np.flatnonzero(b == ord(char)))


def _scan_status(part: _Part, w: str) -> None:
    heads = _HEAD.findall(w)
    if len(heads) != w.count(" sec: "):
        heads = _slow_heads(part.path, w)
    if not heads:
        return
    path = part.path
    ts = [h[0] for h in heads]
    sec = _nums([h[1] for h in heads], path, _HEAD, w, "the seconds of a status line")
    ops = _nums([h[2] for h in heads], path, _HEAD, w, "the operations of a status line")
    cur = _nums([h[3] for h in heads], path, _HEAD, w, "current ops/sec")
    when = _when(ts)
    if when is None:
        bad = pd.to_datetime(pd.Series(ts), format="%Y-%m-%d %H:%M:%S:%f", errors="coerce").isna().to_numpy()
        i = int(np.flatnonzero(bad)[0]) if bad.any() else 0
        raise ImportFormatError(path, _nth_line(_HEAD, w, i), f"expected a date, got {ts[i]!r}")
    part.heads = pd.DataFrame({"ts": ts, "when": pd.Series(when).dt.tz_localize("UTC"), "sec": sec,
                               "ops": ops, "cur": cur, "idx": np.arange(len(heads))})
    rests = [h[4] for h in heads]
    rest = "\n".join(rests)
    found = _BLOCKS.findall(rest)
    n_raw = rest.count(" count: ")
    raw = _RAW_BLOCK.findall(rest) if n_raw else []
    if len(found) != rest.count("[") or len(raw) != n_raw:
        for i, r in enumerate(rests):
            if len(_BLOCKS.findall(r)) != r.count("[") or len(_RAW_BLOCK.findall(r)) != r.count(" count: "):
                raise ImportFormatError(path, _nth_line(_HEAD, w, i),
                                        "expected status blocks like [OP: Count=…, Max=…, Min=…, Avg=…, "
                                        "90=…, 99=…, 99.9=…, 99.99=…] or [OP AverageLatency(us)=…]")
    frames = []
    if found:
        # every "[" of a status line opens one block: its line is known from the counts
        line = _line_of(rest, "[")
        op = [b[0] for b in found]
        hdr = np.fromiter(map(bool, (b[1] for b in found)), bool, len(found))

        def col(k, rows=None):
            vals = [b[k] for b in found] if rows is None else [found[i][k] for i in rows]
            where = line if rows is None else line[rows]
            return _nums(vals, path, _HEAD, w, "a status block value", index_map=where)

        df = pd.DataFrame({"idx": line, "op": op, "kind": np.where(hdr, "hdr", "avg")})
        if not hdr.all():
            rows = np.flatnonzero(~hdr)
            df.loc[rows, "avg"] = col(10, rows)
        if hdr.any():
            rows = None if hdr.all() else np.flatnonzero(hdr)
            for k, name in enumerate(["count", "max", "min", "avg", "p50", "p90", "p99", "p999", "p9999"], 1):
                df.loc[slice(None) if rows is None else rows, name] = col(k, rows)
        frames.append(df)
    if raw:
        line = np.repeat(np.arange(len(rests)), [r.count(" count: ") for r in rests])  # raw: rare
        frames.append(pd.DataFrame({
            "idx": line, "op": [b[0] for b in raw], "kind": "raw",
            "count": _nums([b[1] for b in raw], path, _HEAD, w, "a status count", index_map=line),
            "avg": _nums([b[2] for b in raw], path, _HEAD, w, "a status average", index_map=line)}))
    if frames:
        b = pd.concat(frames, ignore_index=True)
        for c in ("count", "max", "min", "avg", "p50", "p90", "p99", "p999", "p9999"):
            if c not in b:
                b[c] = np.nan
        part.blocks = b


def _slow_heads(path: Path, w: str) -> list[tuple]:
    """Status lines one by one: labelled ones (``-l``), or to find a malformed one."""
    out = []
    for lineno, line in enumerate(w.split("\n")):
        if " sec: " not in line:
            continue
        m = _HEAD_SLOW.fullmatch(line)
        if m:
            out.append(m.groups()[1:])
        elif _HEAD_LIKE.search(line):
            raise ImportFormatError(path, lineno, "expected a status line 'DATE TIME N sec: N operations; …'")
    return out


def _scan_raw(part: _Part, w: str) -> None:
    if "," not in w or (" latency raw data: " not in w and not _RAW.match(w)):
        return   # raw data comes under its header, or is a file of raw lines only
    rows = _RAW.findall(w)
    if len(rows) != len(_RAW_LOOSE.findall(w)):
        for m in _RAW_LOOSE.finditer(w):
            if not _RAW.match(w, m.start()):
                _fail(part.path, w, m.start(), "expected a raw data line 'OP,timestamp_ms,latency_us'")
    if rows:
        part.raw = pd.DataFrame({"op": [r[0] for r in rows],
                                 "ts_ms": np.asarray([r[1] for r in rows], dtype=np.int64),
                                 "lat_us": np.asarray([r[2] for r in rows], dtype=np.float64)})


# ----------------------------------------------------------------- HdrHistogram logs

def _scan_hdr(path: Path, text: str) -> dict:
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


def java_percentiles(h: HdrHistogram, ps: list[float]) -> list[float]:
    """Values at percentiles as Java HdrHistogram 2.1.12 (YCSB) reports them: the
    highest equivalent value at rank ceil(p/100 n) — hdrh rounds the rank instead."""
    c, high, _ = _buckets(h)
    total = int(c.sum())
    if not total:
        return [np.nan] * len(ps)
    cum = np.cumsum(c)
    ranks = [max(1, math.ceil(p / 100.0 * total)) for p in ps]
    return [float(high[min(np.searchsorted(cum, r), len(high) - 1)]) for r in ranks]


_HIST_PCTS = [50, 90, 95, 99, 99.9, 99.99]


def _hist_stats(h: HdrHistogram) -> dict:
    c, high, median = _buckets(h)
    n = int(c.sum())
    if not n:
        return {"ops": 0}
    cum = np.cumsum(c)
    pct = [float(high[min(np.searchsorted(cum, max(1, math.ceil(p / 100.0 * n))), len(high) - 1)])
           for p in _HIST_PCTS]
    # the mean of Java's getMean(): each bucket counted at its median equivalent value
    return {"ops": n, "mean_us": float((median * c).sum() / n), "min_us": float(h.get_min_value()),
            "max_us": float(h.get_max_value()), **{pct_column(q): v for q, v in zip(_HIST_PCTS, pct)}}


def _hdr_intervals(log: dict, t0: float | None) -> tuple[pd.DataFrame, HdrHistogram]:
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
        rows.append({"second": second, "op": log["op"], "interval_s": length, **_hist_stats(hist)})
    return pd.DataFrame(rows), total


# ----------------------------------------------------------------- go-ycsb

def _scan_go(path: Path, w: str) -> dict:
    rows = _GO.findall(w)
    if len(rows) != w.count(" - Takes(s): "):
        for lineno, line in enumerate(w.split("\n")):
            if " - Takes(s): " in line and not _GO.match("\n" + line + "\n"):
                raise ImportFormatError(path, lineno, "expected 'OP - Takes(s): …, Count: …, OPS: …, "
                                                      "Avg(us): …, Min(us): …, Max(us): …'")
    if not rows:
        raise ImportFormatError(path, None, "expected go-ycsb rows 'OP - Takes(s): …'")
    cols = [_nums([r[k] for r in rows], path, _GO, w, name)
            for k, name in enumerate(["", "Takes(s)", "Count", "OPS", "Avg(us)", "Min(us)", "Max(us)"])
            if k]
    pct = []
    for i, r in enumerate(rows):
        d = {}
        for p, v in _GO_PCT.findall(r[7]):
            try:
                d[pct_column(float(p))] = float(v)
            except ValueError:
                raise ImportFormatError(path, _nth_line(_GO, w, i), f"expected a number, got {v!r}") from None
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


def _go_step(part: _Part) -> dict:
    g = part.go
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
        raise ImportFormatError(part.path, None, "expected cumulative counts that do not decrease")
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
            "threads": _int(props.get("threadcount")), "status": "ok" if len(df[df["final"]]) else "interrupted",
            "started": None, "ended": None}
    meta = {"tool": "go-ycsb", "properties": props}
    return {"step": step, "latency": pd.DataFrame(lat), "intervals": intervals, "meta": meta,
            "t0": None, "key": stem_of(part.path)}


# ----------------------------------------------------------------- one process run

def _command(cmd: str | None) -> dict:
    out = {"props": {}, "load": None, "threads": None, "target": None, "workload": []}
    if not cmd:
        return out
    tok = cmd.split()
    for i, t in enumerate(tok):
        nxt = tok[i + 1] if i + 1 < len(tok) else None
        if t == "-load":
            out["load"] = True
        elif t == "-t":
            out["load"] = False
        elif t == "-threads":
            out["threads"] = _int(nxt)
        elif t == "-target":
            out["target"] = _float(nxt)
        elif t == "-P" and nxt:
            out["workload"].append(Path(nxt).name)
        elif t == "-p" and nxt and "=" in nxt:
            k, v = nxt.split("=", 1)
            out["props"][k] = v
    p = out["props"]
    if out["load"] is None and p.get("dotransactions") in ("true", "false"):
        out["load"] = p["dotransactions"] == "false"
    out["threads"] = out["threads"] or _int(p.get("threadcount"))
    out["target"] = out["target"] or _float(p.get("target"))
    return out


def _int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _latency_from_summary(summary: dict, mtype: str | None) -> list[dict]:
    rows = []
    for op, m in summary.items():
        if op == "OVERALL" or op.startswith("TOTAL_GC") or op in JVM_OPS:
            continue
        row = {"op": op}
        returns = {k[7:]: int(v) for k, v in m.items() if k.startswith("Return=") and not np.isnan(v)}
        operations = m.get("Operations", m.get("Total Operations"))
        row["count"] = sum(returns.values()) if returns else operations
        row["errors"] = sum(v for k, v in returns.items() if k != "OK") if returns else np.nan
        row["returns"] = _json(returns) if returns else None
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
        if row["count"] is not None and row["count"] == 0:
            for k in ("mean_us", "min_us", "max_us"):
                row[k] = np.nan
        rows.append(row)
    return rows


def _json(d: dict) -> str:
    return json.dumps(d, sort_keys=True)


def _mtype(cmd: dict, summary: dict, parts: list[_Part]) -> str | None:
    mt = cmd["props"].get("measurementtype")
    if mt:
        return mt
    ms = [m for op, m in summary.items() if op != "OVERALL"]
    if any("LatencyVariance(us)" in m for m in ms):
        return "histogram"
    if any(p.ts is not None for p in parts):
        return "timeseries"
    if any("Total Operations" in m for m in ms) or any(p.raw is not None for p in parts):
        return "raw"
    if any(any(_PCT.match(k) for k in m) for m in ms):
        return "hdrhistogram"
    return None


def _status_intervals(heads: pd.DataFrame, blocks: pd.DataFrame | None):
    """TOTAL rows from the cumulative counts; per-op rows from the interval blocks."""
    h = heads.sort_values("when", kind="stable").reset_index(drop=True)
    if h["ops"].iloc[0] > 0 or h["sec"].iloc[0] > 0:
        # no "0 sec: 0 operations" line: start from a baseline at the run's start
        base = h.iloc[[0]].assign(ops=0.0, cur=np.nan, hid=-1,
                                  when=h["when"].iloc[0] - pd.to_timedelta(h["sec"].iloc[0], unit="s"))
        base["sec"] = 0.0
        h = pd.concat([base, h], ignore_index=True)
    n = len(h)
    start = h["sec"].to_numpy()[:-1]
    # strictly increasing: the last, partial interval repeats the previous N sec
    ar = np.arange(len(start))
    second = (np.maximum.accumulate(start - ar) + ar).astype(np.int64) if len(start) else start
    dt = (h["when"].diff().dt.total_seconds()).to_numpy()[1:]
    ops = np.diff(h["ops"].to_numpy())
    total = pd.DataFrame({"second": second, "op": TOTAL_OP, "ops": ops, "interval_s": dt,
                          "ops_per_s": h["cur"].to_numpy()[1:]})
    t0 = h["when"].iloc[0]
    if blocks is None or not len(blocks) or n < 2:
        return total, None, t0
    pos = pd.Series(np.arange(n), index=h["hid"].to_numpy())
    b = blocks[blocks["hid"].isin(pos.index)]
    k = pos.reindex(b["hid"]).to_numpy()
    b = b[k > 0].assign(second=second[k[k > 0] - 1], interval_s=dt[k[k > 0] - 1])
    empty = b["count"] == 0
    stats = ["mean", "min", "max", "p50", "p90", "p99", "p999", "p9999"]
    rows = pd.DataFrame({"second": b["second"], "op": b["op"], "kind": b["kind"],
                         "ops": b["count"], "interval_s": b["interval_s"],
                         "mean_us": b["avg"], "min_us": b["min"], "max_us": b["max"],
                         "p50_us": b["p50"], "p90_us": b["p90"], "p99_us": b["p99"],
                         "p999_us": b["p999"], "p9999_us": b["p9999"]})
    cols = [f"{s}_us" for s in stats]
    rows.loc[empty.to_numpy(), cols] = np.nan
    return total, rows, t0


def _raw_intervals(raw: pd.DataFrame, t0_ms: float) -> pd.DataFrame:
    d = raw.assign(second=((raw["ts_ms"] - t0_ms) // 1000).astype(np.int64))
    d = d.sort_values(["op", "second", "lat_us"], kind="stable").reset_index(drop=True)
    g = d.groupby(["op", "second"], sort=False)["lat_us"]
    out = g.agg(ops="size", mean_us="mean", min_us="min", max_us="max").reset_index()
    first = np.concatenate([[0], np.cumsum(out["ops"].to_numpy())[:-1]])
    k = np.maximum(np.ceil(0.99 * out["ops"].to_numpy()).astype(np.int64) - 1, 0)
    out["p99_us"] = d["lat_us"].to_numpy()[first + k]
    out["interval_s"] = 1.0
    return out


def _merge_intended(df: pd.DataFrame) -> pd.DataFrame:
    if df is None or not len(df):
        return df
    it = df["op"].str.startswith(INTENDED)
    if not it.any():
        return df
    i = df[it].assign(op=lambda d: d["op"].str[len(INTENDED):])
    i = i[["second", "op", "mean_us", "p99_us", "max_us"]].rename(
        columns={"mean_us": "intended_mean_us", "p99_us": "intended_p99_us", "max_us": "intended_max_us"})
    return df[~it].merge(i, on=["second", "op"], how="outer")


def _java_step(group: list[_Part]) -> dict:
    parts = [p for p in group if p.kind == "java"]
    logs = [p.hdr for p in group if p.kind == "hdr"]
    summary: dict = {}
    for p in parts:
        for op, m in p.summary.items():
            summary.setdefault(op, {}).update(m)
    command = next((p.command for p in parts if p.command), None)
    version = next((p.version for p in parts if p.version), None)
    cmd = _command(command)
    mtype = _mtype(cmd, summary, parts)

    # status lines: timeseries runs print them to stdout and stderr; keep each once
    heads, blocks, off = [], [], 0
    for p in parts:
        if p.heads is not None:
            heads.append(p.heads.assign(hid=p.heads["idx"] + off, part=p))
            if p.blocks is not None:
                blocks.append(p.blocks.assign(hid=p.blocks["idx"] + off))
            off += len(p.heads)
    total = status = t0 = None
    if heads:
        h = pd.concat(heads, ignore_index=True) if len(heads) > 1 else heads[0]
        if len(heads) > 1:
            h = h.drop_duplicates("ts", keep="first")
        h = h.sort_values("when", kind="stable")
        bad = np.flatnonzero(np.diff(h["ops"].to_numpy()) < 0)
        if len(bad):
            row = h.iloc[bad[0] + 1]
            raise ImportFormatError(row["part"].path, _nth_line(_HEAD, row["part"].text, int(row["idx"])),
                                    "expected a growing operation count (status lines of two runs mixed?)")
        b = pd.concat(blocks, ignore_index=True) if blocks else None
        total, status, t0 = _status_intervals(h.drop(columns="part"), b)
    t0_s = (t0 - pd.Timestamp(0, tz="UTC")).total_seconds() if t0 is not None else None

    sources = []   # (rank, rows): a lower rank wins for an operation
    raw = [p.raw for p in parts if p.raw is not None]
    raw = pd.concat(raw, ignore_index=True) if raw else None
    if raw is not None:
        sources.append((0, _raw_intervals(raw, t0_s * 1000 if t0_s is not None else raw["ts_ms"].min())))
    ts = [p.ts for p in parts if p.ts is not None]
    if ts:
        ts = pd.concat(ts, ignore_index=True).drop_duplicates(["op", "t_ms"]) if len(ts) > 1 else ts[0]
        gran = _float(cmd["props"].get("timeseries.granularity"))
        if gran is None:
            steps = np.diff(np.sort(ts["t_ms"].unique()))
            gran = float(steps.min()) if len(steps) else 1000.0
        rows = ts.assign(second=ts["t_ms"] // 1000, interval_s=gran / 1000.0)
        if gran < 1000:
            rows = rows.rename(columns={"t_ms": "offset_ms"})
        else:
            rows = rows.drop(columns="t_ms")
        sources.append((1, rows))
    if status is not None:
        sources.append((2, status[status["kind"] == "hdr"].drop(columns="kind")))
    hists = {}
    for log in logs:
        rows, hist = _hdr_intervals(log, t0_s)
        hists[log["op"]] = hist
        sources.append((3, rows))
    if status is not None:
        sources.append((4, status[status["kind"] != "hdr"].drop(columns="kind")))
    per_op = []
    for rank, rows in sources:
        if rows is None or not len(rows):
            continue
        per_op.append(_merge_intended(rows).assign(_rank=rank))
    intervals = None
    if per_op:
        allrows = pd.concat(per_op, ignore_index=True)
        best = allrows.groupby("op")["_rank"].transform("min")
        intervals = allrows[allrows["_rank"] == best].drop(columns="_rank")
    if total is not None:
        intervals = pd.concat([total, intervals], ignore_index=True) if intervals is not None else total

    lat = pd.DataFrame(_latency_from_summary(summary, mtype))
    lat = _fill_latency(lat, hists, raw, intervals)
    for c in ("op", "count", "errors"):
        if c not in lat:
            lat[c] = pd.Series(dtype=object if c == "op" else float)
    ops_main = lat[~lat["op"].str.startswith(INTENDED) & (lat["op"] != "CLEANUP")
                   & ~lat["op"].str.endswith("-FAILED")] if len(lat) else lat

    overall = summary.get("OVERALL", {})
    runtime, thr = overall.get("RunTime(ms)"), overall.get("Throughput(ops/sec)")
    secs = runtime / 1000.0 if runtime is not None else None
    if thr is not None and secs is not None:
        ops = float(round(thr * secs))   # YCSB: throughput = opsDone / runtime, exactly
    elif heads:
        ops = float(pd.concat(heads)["ops"].max())
    else:
        ops = float(ops_main["count"].sum()) if len(ops_main) else np.nan
    if secs is None and total is not None:
        secs = float(total["interval_s"].sum())
    load = cmd["load"]
    if load is None:
        names = set(ops_main["op"]) if len(ops_main) else set()
        load = names == {"INSERT"}
    errors = ops_main["errors"].sum(min_count=1) if len(ops_main) else np.nan
    step = {"phase": "load" if load else "run", "secs": secs, "ops": ops, "errors": errors,
            "ops_per_s": thr if thr is not None else (ops / secs if secs else np.nan),
            "threads": cmd["threads"], "target_ops_per_s": cmd["target"],
            "status": "ok" if overall else "interrupted",
            "started": t0, "ended": t0 + pd.to_timedelta(secs, unit="s") if t0 is not None and secs else None}
    gcs = {op: m for op, m in summary.items() if op.startswith("TOTAL_GC")}
    jvm = {op: m for op, m in summary.items() if op in JVM_OPS}
    meta = {"tool": "ycsb", "measurementtype": mtype}
    if version:
        meta["tool_version"] = version
    if command:
        meta["command_line"] = command
        meta["properties"] = cmd["props"]
        if cmd["workload"]:
            meta["workload"] = cmd["workload"][0]
    if gcs:
        meta["gc"] = gcs
    if jvm:
        meta["jvm"] = jvm
    key = min((stem_of(p.path) for p in parts), default=None) or stem_of(group[0].path)
    return {"step": step, "latency": lat, "intervals": intervals, "meta": meta, "t0": t0, "key": key}


def _fill_latency(lat: pd.DataFrame, hists: dict, raw: pd.DataFrame | None,
                  intervals: pd.DataFrame | None) -> pd.DataFrame:
    """The encoded histogram of each op, and figures a summary lacks (a killed run)."""
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
    if intervals is not None and "ops" in intervals:
        for op, g in intervals[intervals["op"] != TOTAL_OP].groupby("op"):
            if op not in have and g["ops"].notna().all():
                n = g["ops"].sum()
                rows.append({"op": op, "count": n, "errors": np.nan,
                             "mean_us": (g["ops"] * g["mean_us"]).sum() / n if n else np.nan,
                             "min_us": g["min_us"].min() if "min_us" in g else np.nan,
                             "max_us": g["max_us"].max() if "max_us" in g else np.nan})
                have.add(op)
    for r in rows:
        h = hists.get(r["op"])
        if h is None:
            continue
        r["hdr"] = measure.encode(h)
        stats = _hist_stats(h)
        if pd.isna(r.get("count", np.nan)):
            r["count"] = stats["ops"]
        for k, v in stats.items():
            if k != "ops" and pd.isna(r.get(k, np.nan)):
                r[k] = v
    return pd.DataFrame(rows)


# ----------------------------------------------------------------- grouping and steps

def _groups(parts: list[_Part]) -> list[list[_Part]]:
    """Files of one YCSB process together: by name stem, status-only files to the run
    with a summary, .hdr logs to the run whose stem starts their name."""
    java = [p for p in parts if p.kind in ("java", "go")]
    by_stem: dict[str, list[_Part]] = {}
    for p in java:
        by_stem.setdefault(stem_of(p.path), []).append(p)
    with_summary = [s for s, ps in by_stem.items() if any(p.has_summary or p.kind == "go" for p in ps)]
    if len(with_summary) <= 1:
        groups = {with_summary[0] if with_summary else "": java} if java else {}
    else:
        groups = {s: list(by_stem[s]) for s in with_summary}
        for s, ps in by_stem.items():
            if s in groups:
                continue
            home = [g for g in groups if s.startswith(g) or g.startswith(s)]
            if len(home) != 1:
                raise ImportFormatError(ps[0].path, None, "expected to tell which run this file belongs "
                                                          "to (by its name stem); import the runs separately")
            groups[home[0]].extend(ps)
    for p in parts:
        if p.kind != "hdr":
            continue
        home = [g for g in groups if g and p.path.name.startswith(g + "-")]
        if len(home) != 1:
            home = list(groups) if len(groups) == 1 else []
        if not home and not groups:
            groups[""] = []
            home = [""]
        if len(home) != 1:
            raise ImportFormatError(p.path, None, "expected a name '<stem of its run>-<OP>.hdr'")
        groups[home[0]].append(p)
    return [g for g in groups.values() if g]


def _import(paths: list[Path], go_only: bool) -> Imported:
    parts = [_scan(p) for p in paths]
    live = [p for p in parts if p.kind != "empty"]
    if not live:
        raise ImportFormatError(paths[0], None, "expected YCSB output, found empty files")
    kinds = {p.kind for p in live} - {"hdr"}
    if kinds == {"go", "java"}:
        raise ImportFormatError(live[0].path, None, "expected either Java YCSB or go-ycsb files, not both")
    if go_only and kinds != {"go"}:
        raise ImportFormatError(live[0].path, None, "expected go-ycsb rows 'OP - Takes(s): …'")
    steps = []
    for g in _groups(live):
        if any(p.kind == "go" for p in g):
            for p in g:
                steps.append(_go_step(p))
        else:
            steps.append(_java_step(g))
    return _combine(steps)


def _combine(steps: list[dict]) -> Imported:
    """Name the steps (l.pre, r.L1, r.L2 … by start) and stack their tables."""
    def order(s):
        t0 = s["t0"]
        return (s["step"]["phase"] != "load", t0.value if t0 is not None else 0, s["key"])
    steps = sorted(steps, key=order)
    loads = runs = 0
    step_rows, lats, ivs, metas = [], [], [], []
    for s in steps:
        if s["step"]["phase"] == "load":
            loads += 1
            name, loop = ("l.pre" if loads == 1 else f"l.pre.{loads}"), None
        else:
            runs += 1
            name, loop = f"r.L{runs}", runs
        step_rows.append({"step": name, "loop": loop, **s["step"]})
        if s["latency"] is not None and len(s["latency"]):
            lats.append(s["latency"].assign(step=name))
        if s["intervals"] is not None and len(s["intervals"]):
            ivs.append(s["intervals"].assign(step=name))
        metas.append({"step": name, "files_stem": s["key"], **s["meta"]})
    meta = {k: v for k, v in metas[0].items() if k not in ("step", "files_stem")} if len(metas) == 1 \
        else {"steps": metas, "tool": metas[0].get("tool")}
    for k in ("tool_version", "command_line", "workload"):
        vals = [m[k] for m in metas if k in m]
        if vals and len(metas) > 1:
            meta[k] = vals[-1] if k != "command_line" else vals
    if metas[0].get("tool") == "go-ycsb":
        meta["source"] = "go-ycsb"
    steps_df = pd.DataFrame(step_rows)
    for c in ("started", "ended"):
        steps_df[c] = pd.to_datetime(steps_df[c], utc=True)
    return Imported(steps=steps_df,
                    latency=pd.concat(lats, ignore_index=True) if lats else None,
                    intervals=pd.concat(ivs, ignore_index=True) if ivs else None,
                    meta=meta)


@register("ycsb")
def import_ycsb(paths: list[Path]) -> Imported:
    """Java YCSB files (and go-ycsb ones, told apart by their rows)."""
    return _import(paths, go_only=False)


@register("go-ycsb")
def import_go_ycsb(paths: list[Path]) -> Imported:
    """go-ycsb's periodic (cumulative) and final ``OP - Takes(s): …`` rows."""
    return _import(paths, go_only=True)
