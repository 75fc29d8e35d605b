"""The status lines Java YCSB prints with ``-s`` (to stderr; timeseries runs to
stdout too), one per ``status.interval``::

    2026-11-22 02:38:50:305 1 sec: 100 operations; 100 current ops/sec; est completion in 9 seconds [READ: …] …

read the way YCSB's ``StatusThread`` writes them: ``N operations`` is the cumulative
count of finished operations (so an interval's operations are the difference of two
lines); the block of each operation describes *that interval only* — hdrhistogram's
``Count``/``Max``/``Min``/``Avg``/percentiles come from
``Recorder.getIntervalHistogram()``, histogram/timeseries print the interval's
``AverageLatency`` without a count, raw prints ``count`` and ``average``. ``N sec``
is the whole seconds elapsed, so an interval starts at the previous line's ``N``.
An empty interval prints ``Avg=NaN``/``Min=9223372036854775807``: its operations are
0 and its latencies NA. A label (``-l``) may stand before the date.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import TOTAL_OP, failed_of, is_failed, is_intended
from .base import ImportFormatError, constant_str
from .linescan import BLOCK_COLS, status_frames
from .text import FileText, nth_match_line, numbers_of_matches

# each pattern starts with "\n": the text is scanned as "\n" + text
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


def scan_status(path: Path, src: FileText) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The status lines of a file, one row each (``idx`` their order), and their
    blocks, one row each with the ``idx`` of its line, ``op``, ``hdr`` (an
    hdrhistogram block) and the figures it has (count, max, min, avg, p50 … p9999).

    Plain lines are cut from the bytes (:mod:`.linescan`); the regular expressions
    read the file when a line is anything else, and name the line that is wrong.
    """
    if src.ascii:
        found = status_frames(src.data)
        if found is not None:
            return found
    w = src.w
    heads = _HEAD.findall(w)
    if len(heads) != w.count(" sec: "):
        heads = _slow_heads(path, w)
    if not heads:
        return None, None
    heads_df = _heads_frame(path, w, heads)
    rests = [h[4] for h in heads]
    rest = "\n".join(rests)
    found = _BLOCKS.findall(rest)
    n_raw = rest.count(" count: ")
    raw = _RAW_BLOCK.findall(rest) if n_raw else []
    if len(found) != rest.count("[") or len(raw) != n_raw:
        for i, r in enumerate(rests):
            if len(_BLOCKS.findall(r)) != r.count("[") or len(_RAW_BLOCK.findall(r)) != r.count(" count: "):
                raise ImportFormatError(path, nth_match_line(_HEAD, w, i),
                                        "expected status blocks like [OP: Count=…, Max=…, Min=…, Avg=…, "
                                        "90=…, 99=…, 99.9=…, 99.99=…] or [OP AverageLatency(us)=…]")
    frames = []
    if found:
        frames.append(_blocks_frame(path, w, rest, found))
    if raw:
        line = np.repeat(np.arange(len(rests)), [r.count(" count: ") for r in rests])  # raw: rare
        frames.append(pd.DataFrame({
            "idx": line, "op": [b[0] for b in raw], "hdr": False,
            "count": numbers_of_matches([b[1] for b in raw], path, _HEAD, w, "a status count", index_map=line),
            "avg": numbers_of_matches([b[2] for b in raw], path, _HEAD, w, "a status average", index_map=line)}))
    if not frames:
        return heads_df, None
    return heads_df, pd.concat(frames, ignore_index=True)


def _heads_frame(path: Path, w: str, heads: list[tuple]) -> pd.DataFrame:
    """The status lines' heads: time, seconds, operations, current ops/s, their order."""
    ts = [h[0] for h in heads]
    sec = numbers_of_matches([h[1] for h in heads], path, _HEAD, w, "the seconds of a status line")
    ops = numbers_of_matches([h[2] for h in heads], path, _HEAD, w, "the operations of a status line")
    # YCSB prints "∞ current ops/sec" for an interval too short to divide by (its
    # StatusThread divides by 0): the rate is blank, the line's other figures are kept
    cur = numbers_of_matches([("nan" if h[3] in ("∞", "-∞", "Infinity") else h[3]) for h in heads],
                             path, _HEAD, w, "current ops/sec")
    when = _when(ts)
    if when is None:
        bad = pd.to_datetime(pd.Series(ts), format="%Y-%m-%d %H:%M:%S:%f", errors="coerce").isna().to_numpy()
        i = int(np.flatnonzero(bad)[0]) if bad.any() else 0
        raise ImportFormatError(path, nth_match_line(_HEAD, w, i), f"expected a date, got {ts[i]!r}")
    return pd.DataFrame({"ts": ts, "when": pd.Series(when).dt.tz_localize("UTC"), "sec": sec,
                         "ops": ops, "cur": cur, "idx": np.arange(len(heads))})


def _blocks_frame(path: Path, w: str, rest: str, found: list[tuple]) -> pd.DataFrame:
    """The [OP: …] blocks, one row each: an hdrhistogram block's figures, a plain
    one's average."""
    # every "[" of a status line opens one block: its line is known from the counts
    line = _line_of(rest, "[")
    hdr = np.fromiter(map(bool, (b[1] for b in found)), bool, len(found))

    def col(k, rows=None):
        vals = [b[k] for b in found] if rows is None else [found[i][k] for i in rows]
        where = line if rows is None else line[rows]
        return numbers_of_matches(vals, path, _HEAD, w, "a status block value", index_map=where)

    df = pd.DataFrame({"idx": line, "op": [b[0] for b in found], "hdr": hdr})
    if not hdr.all():
        rows = np.flatnonzero(~hdr)
        df.loc[rows, "avg"] = col(10, rows)
    if hdr.any():
        rows = None if hdr.all() else np.flatnonzero(hdr)
        for k, name in enumerate(BLOCK_COLS, 1):
            df.loc[slice(None) if rows is None else rows, name] = col(k, rows)
    return df


def _when(ts: list[str] | pa.Array) -> np.ndarray | None:
    """"yyyy-MM-dd HH:mm:ss:SSS" (YCSB's SimpleDateFormat) to datetime64[ms], all at once."""
    arr = ts if isinstance(ts, pa.Array) else pa.array(ts, pa.string())
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


def status_intervals(files: list, gauges: frozenset[str] = frozenset()
                     ) -> tuple[pd.DataFrame, StatusRows | None, pd.Timestamp, float]:
    """The status lines of one run's files as intervals: ``TOTAL`` rows from the
    cumulative counts, and the per-op rows of the blocks (:class:`StatusRows`); with
    the run's start and the highest operation count printed.

    ``files`` are ``(path, src, heads, blocks)``: a file and what :func:`scan_status`
    found in it (``heads`` not None). Timeseries runs print the status lines to stdout
    and stderr: each is kept once. ``gauges`` are the names of blocks that are not
    operations (:meth:`StatusRows.gauges`).
    """
    heads, blocks, off = [], [], 0
    for k, (_path, _src, h, b) in enumerate(files):
        heads.append(h.assign(hid=h["idx"] + off, file=k))
        if b is not None:
            blocks.append(b.assign(hid=b["idx"] + off))
        off += len(h)
    h = pd.concat(heads, ignore_index=True) if len(heads) > 1 else heads[0]
    if len(heads) > 1:
        h = h.drop_duplicates("ts", keep="first")
    if not h["when"].is_monotonic_increasing:
        h = h.sort_values("when", kind="stable")
    bad = np.flatnonzero(np.diff(h["ops"].to_numpy()) < 0)
    if len(bad):
        row = h.iloc[bad[0] + 1]
        path, src = files[int(row["file"])][:2]
        raise ImportFormatError(path, nth_match_line(_HEAD, src.w, int(row["idx"])),
                                "expected a growing operation count (status lines of two runs mixed?)")
    b = pd.concat(blocks, ignore_index=True) if len(blocks) > 1 else blocks[0] if blocks else None
    max_ops = float(pd.concat([x["ops"] for x in heads]).max())
    return (*_intervals(h, b, frozenset(gauges)), max_ops)


def _intervals(heads: pd.DataFrame, blocks: pd.DataFrame | None, gauges: frozenset[str]):
    """TOTAL rows from the cumulative counts; per-op rows from the interval blocks."""
    h = heads if heads["when"].is_monotonic_increasing else heads.sort_values("when", kind="stable")
    when = h["when"].dt.tz_localize(None).to_numpy().astype("datetime64[ms]").astype(np.int64)
    sec, ops, cur = h["sec"].to_numpy(), h["ops"].to_numpy(), h["cur"].to_numpy()
    hid = h["hid"].to_numpy().astype(np.int64)
    if ops[0] > 0 or sec[0] > 0:
        # no "0 sec: 0 operations" line: start from a baseline at the run's start
        when = np.r_[when[0] - round(sec[0] * 1000), when]
        sec, ops, cur, hid = np.r_[0.0, sec], np.r_[0.0, ops], np.r_[np.nan, cur], np.r_[-1, hid]
    n = len(when)
    start = sec[:-1]
    # strictly increasing: the last, partial interval repeats the previous N sec
    ar = np.arange(len(start))
    second = (np.maximum.accumulate(start - ar) + ar).astype(np.int64) if len(start) else start
    dt = np.diff(when) / 1000.0
    total = pd.DataFrame({"second": second, "op": constant_str(TOTAL_OP, n - 1),
                          "ops": np.diff(ops), "interval_s": dt, "ops_per_s": cur[1:]})
    t0 = pd.Timestamp(int(when[0]), unit="ms", tz="UTC")
    if blocks is None or not len(blocks) or n < 2:
        return total, None, t0
    # the line each block is on, by its place among the kept lines: a block describes
    # the interval that ends with its line (none for the first line)
    where = np.full(max(int(hid.max()), int(blocks["hid"].max())) + 2, -1)
    where[hid + 1] = np.arange(n)
    k = where[blocks["hid"].to_numpy() + 1]
    kept = np.flatnonzero(k > 0)
    return total, StatusRows(blocks, kept, second[k[kept] - 1], dt[k[kept] - 1], gauges), t0


class StatusRows:
    """The per-op interval rows of status blocks, made on demand (an op whose rows
    come from a finer source is not made at all).

    Rows have ``second, op, ops, interval_s, mean_us, min_us, max_us, p50_us, p90_us,
    p99_us, p999_us, p9999_us``; an empty interval (``Count=0``) has NA latencies.
    """

    _STATS = (("mean_us", "avg"), ("min_us", "min"), ("max_us", "max"), ("p50_us", "p50"),
              ("p90_us", "p90"), ("p99_us", "p99"), ("p999_us", "p999"), ("p9999_us", "p9999"))

    def __init__(self, blocks: pd.DataFrame, kept: np.ndarray, second: np.ndarray, interval_s: np.ndarray,
                 gauges: frozenset[str] = frozenset()):
        self.blocks, self.kept, self.second, self.interval_s = blocks, kept, second, interval_s
        self.hdr = blocks["hdr"].to_numpy()[kept]
        self.gauge_names = gauges
        self._ops: dict[bool, set[str]] = {}

    def _all_ops(self, hdr: bool) -> set[str]:
        if hdr not in self._ops:
            rows = self.kept[self.hdr == hdr]
            self._ops[hdr] = set(self.blocks["op"].iloc[rows].unique()) if len(rows) else set()
        return self._ops[hdr]

    def ops(self, hdr: bool) -> set[str]:
        """The ops of the rows of hdrhistogram blocks (``hdr``) or of the others (not
        the gauges: YCSB times its JVM's figures as if they were operations)."""
        return self._all_ops(hdr) - self.gauge_names

    def rows(self, hdr: bool, ops: set[str] | None = None) -> pd.DataFrame:
        """The rows of hdrhistogram blocks (``hdr``) or of the others; of ``ops`` only
        when given."""
        sel = self.hdr == hdr
        if ops is not None and sel.any() and not ops >= self._all_ops(hdr):   # no pass over every op when all are kept
            sel &= self.blocks["op"].iloc[self.kept].isin(ops).to_numpy()
        i = np.flatnonzero(sel)
        b = self.blocks
        rows = self.kept[i]

        def col(name):   # a figure no block of the file has is NA
            return b[name].to_numpy()[rows] if name in b else np.full(len(rows), np.nan)

        count = col("count")
        empty = count == 0
        out = {"second": self.second[i], "op": b["op"].iloc[rows].reset_index(drop=True), "ops": count,
               "interval_s": self.interval_s[i]}
        for name, block_col in self._STATS:
            v = col(block_col)
            out[name] = np.where(empty, np.nan, v) if empty.any() else v
        return pd.DataFrame(out, copy=False)   # no copy of the figures into one block

    def gauges(self) -> pd.DataFrame | None:
        """The gauges' rows (:data:`benchlib.schema.GAUGES`): every figure their blocks
        print, in the gauge's own unit (threads, MB, load, collections, ms)."""
        found = set().union(self._all_ops(True), self._all_ops(False)) & self.gauge_names
        if not found:
            return None
        df = pd.concat([self.rows(hdr, found) for hdr in (True, False) if self._all_ops(hdr) & found],
                       ignore_index=True)
        out = df.rename(columns={"op": "gauge", "ops": "samples"})
        return out.rename(columns={c: c.removesuffix("_us") for c in out.columns if c.endswith("_us")})


def fold_failed(iv: pd.DataFrame | None, ops: set[str]) -> pd.DataFrame | None:
    """Count each interval's failed operations (``[INSERT-FAILED: Count=…]``, timed
    apart by YCSB's DBWrapper) as ``errors`` of their op, and in its ``ops``, as the
    latency table counts them; their rows stay, under their own name, with their own
    latencies. An interval whose operations all failed gets a row for its op with the
    counts alone."""
    failed = {o for o in ops if is_failed(o) and not is_intended(o)}
    if iv is None or not failed:
        return iv
    op = iv["op"].astype("object")
    f = iv[op.isin(failed).to_numpy()]
    add = f.groupby([f["second"].to_numpy(), op[f.index].map(failed_of).to_numpy()])["ops"].sum()
    add.index.names = ["second", "op"]
    bases = set(add.index.get_level_values("op"))
    is_base = op.isin(bases).to_numpy()
    base = iv[is_base].set_index(["second", "op"])
    missing = add.index.difference(base.index)
    if len(missing):   # the interval's length from its failed rows
        blank = pd.DataFrame(index=missing, columns=base.columns, dtype=float)
        blank["ops"] = 0.0
        length = f.drop_duplicates("second").set_index("second")["interval_s"]
        blank["interval_s"] = length.reindex(missing.get_level_values("second")).to_numpy()
        base = pd.concat([base, blank])
    n_failed = add.reindex(base.index, fill_value=0)
    base["ops"] = base["ops"].astype(float) + n_failed.to_numpy()
    base["errors"] = n_failed.to_numpy().astype(float)
    out = pd.concat([iv[~is_base], base.reset_index()], ignore_index=True)
    return out.sort_values(["second"], kind="stable", ignore_index=True)
