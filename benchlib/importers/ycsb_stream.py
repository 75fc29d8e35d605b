"""A long YCSB output read in pieces: its interval rows go to Parquet as they are
made, so a million status lines (a 300 MB stderr of a long hdrhistogram run, three
interval rows a line) import in constant memory.

:func:`read_streamed` takes one Java YCSB file of more than :data:`STREAM_FROM_BYTES`
whose lines the C scanner reads (:mod:`.linescan`): status lines, the banner, the
summary. It reads the file :data:`CHUNK_BYTES` at a time, whole lines each; each
piece's status lines become their TOTAL rows and per-op rows (the previous piece's
last line is the baseline of the first interval), its gauges and its failed
operations as :mod:`.ycsb_status` makes them, and the rows are written to Parquet
by a second thread while the next piece is scanned. What the whole-file import
would decide only at the end (the columns, load or run) is decided on the first
piece and checked on every other: a file where it would differ, or that has rows of
another kind (timeseries, raw data), a label, a line the scanner does not read or a
line that is not ASCII, is read whole instead (:func:`read_streamed` says None),
which also names the line of an error. The tables are the whole-file import's, row
for row (a test compares them); only the order of the interval rows differs.
"""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import schema
from ..schema import TOTAL_OP
from .base import Imported, ImportFormatError, constant_str
from .linescan import AVAILABLE, status_frames
from .sources import pick_sources
from .text import FileText
from .ycsb_hdrlog import fill_latency
from .ycsb_status import StatusRows, fold_failed
from .ycsb_summary import JVM_OPS, latency_from_summary, measurement_type, scan_summary

STREAM_FROM_BYTES = 64 << 20
# a summary line: a regular expression finds one ~4x faster than bytes.find (the status
# lines are full of "\n" and "[")
_SUMMARY_LINE = re.compile(rb"\n\[")
CHUNK_BYTES = 8 << 20


class _NotStreamed(Exception):
    """The file is not of the shape read in pieces: read it whole."""


def applies(paths: list[Path]) -> bool:
    """One file, large, not an HdrHistogram log, and the C scanner built."""
    if not AVAILABLE or len(paths) != 1 or paths[0].suffix == ".hdr":
        return False
    try:
        return paths[0].stat().st_size >= STREAM_FROM_BYTES
    except OSError:
        return False


def _pieces(path: Path, size: int = CHUNK_BYTES):
    """The file ``size`` bytes at a time: (the bytes read, the length of their whole
    lines); what follows the last line break is read again with the next piece (no
    copy of a piece's bytes)."""
    with open(path, "rb") as f:
        while True:
            block = f.read(size)
            if len(block) < size:   # the end of the file
                if block:
                    yield block, len(block)
                return
            cut = block.rfind(b"\n") + 1
            while cut == 0:   # a line longer than a piece: read on to its end
                more = f.read(size)
                block += more
                cut = block.rfind(b"\n") + 1 if more else len(block)
            f.seek(cut - len(block), 1)
            yield block, cut


class _Carry:
    """What one piece hands the next: the last status line, the last interval's second."""

    def __init__(self):
        self.when = self.sec = self.ops = None
        self.second = -1
        self.t0 = None
        self.max_ops = -np.inf
        self.secs = 0.0


def _totals(heads: pd.DataFrame, c: _Carry) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """TOTAL rows of a piece's status lines; with each line's interval (second and
    length) and its place, as :func:`.ycsb_status._intervals` gives them."""
    when = heads["ms"].to_numpy()
    sec, ops, cur = heads["sec"].to_numpy(), heads["ops"].to_numpy(), heads["cur"].to_numpy()
    if np.any(np.diff(when) < 0) or np.any(np.diff(ops) < 0) or (c.ops is not None and ops[0] < c.ops):
        raise _NotStreamed   # out of order, or two runs mixed: the whole-file import says where
    if c.when is None:
        if ops[0] > 0 or sec[0] > 0:   # no "0 sec: 0 operations" line: a baseline at the start
            c.when, c.sec, c.ops = when[0] - round(sec[0] * 1000), 0.0, 0.0
        else:
            c.when, c.sec, c.ops = when[0], sec[0], ops[0]
            when, sec, ops, cur = when[1:], sec[1:], ops[1:], cur[1:]
        c.t0 = pd.Timestamp(int(c.when), unit="ms", tz="UTC")
    start = np.r_[c.sec, sec[:-1]]
    ar = np.arange(len(start))
    lifted = start - ar
    if len(lifted):
        lifted[0] = max(lifted[0], c.second + 1)
    second = (np.maximum.accumulate(lifted) + ar).astype(np.int64)
    dt = np.diff(np.r_[c.when, when]) / 1000.0
    n_ops = np.diff(np.r_[c.ops, ops])
    total = pd.DataFrame({"second": second, "op": constant_str(TOTAL_OP, len(second)),
                          "ops": n_ops, "interval_s": dt, "ops_per_s": cur})
    if len(second):
        c.when, c.sec, c.ops, c.second = when[-1], sec[-1], ops[-1], int(second[-1])
        c.max_ops = max(c.max_ops, float(ops.max()))
        c.secs += float(dt.sum())
    return total, second, dt, len(heads) - len(second)


def _piece_rows(heads, blocks, c: _Carry) -> tuple[list[pd.DataFrame], pd.DataFrame | None, set[str]]:
    """A piece's interval rows (TOTAL, then the ops' rows of each kind of block), its
    gauges, and the ops of its rows."""
    total, second, dt, skipped = _totals(heads, c)
    if blocks is None or not len(blocks):
        return [total], None, set()
    k = blocks["idx"].to_numpy() - skipped   # the first line of the file has no interval
    kept = np.flatnonzero(k >= 0)
    # the ops are categories (a handful of names over ~10^5 rows): every comparison,
    # selection and concatenation of them is one of small integers
    names = blocks["op"].cat.categories
    total["op"] = pd.Categorical.from_codes(np.full(len(total), names.get_loc(TOTAL_OP)), categories=names)
    status = StatusRows(blocks, kept, second[k[kept]], dt[k[kept]], frozenset(JVM_OPS))
    sources = [(2, status.ops(hdr=True), lambda ops: status.rows(hdr=True, ops=ops)),
               (4, status.ops(hdr=False), lambda ops: status.rows(hdr=False, ops=ops))]
    picked, ops = pick_sources(sources)
    if any(schema.is_failed(o) for o in ops):   # the failures are errors of their op: one frame
        return [fold_failed(pd.concat([total, *picked], ignore_index=True), ops)], status.gauges(), ops
    return [total, *picked], status.gauges(), ops


class _Writer:
    """The interval rows to Parquet in a second thread, a row group a frame, with the
    columns and types of the first frame as :func:`benchlib.schema.conform` makes them."""

    def __init__(self, path: Path, run_id: str, step: str):
        self.path, self.run_id, self.step = path, run_id, step
        self.pool = ThreadPoolExecutor(1)
        self.pending = None
        self.writer = self.schema = None

    def write(self, frames: list[pd.DataFrame]) -> None:
        if self.schema is None:
            first = frames[0].head(0).assign(run_id="", step="", op=lambda d: d["op"].astype("str"))
            cols = set().union(*(f.columns for f in frames))
            self.schema = pa.Table.from_pandas(
                schema.conform("intervals", first.reindex(columns=sorted(cols | {"run_id", "step"}))),
                preserve_index=False).schema
            self.writer = pq.ParquetWriter(self.path, self.schema)
        if any(set(f.columns) - set(self.schema.names) for f in frames):
            raise _NotStreamed   # a figure the first piece had not: the whole-file import has it
        self._wait()
        self.pending = self.pool.submit(self._write, frames)

    def _write(self, frames: list[pd.DataFrame]) -> None:
        for rows in frames:
            self.writer.write_table(self._table(rows))

    def _table(self, rows: pd.DataFrame) -> pa.Table:
        n, arrays = len(rows), []
        for f in self.schema:
            if f.name in ("run_id", "step"):
                a = pa.repeat(pa.scalar(self.run_id if f.name == "run_id" else self.step, f.type), n)
            elif f.name == "op" and isinstance(rows["op"].dtype, pd.CategoricalDtype):
                cat = rows["op"].array
                a = pa.array(list(cat.categories), f.type).take(pa.array(cat.codes))
            elif f.name in rows:
                a = pa.array(rows[f.name].to_numpy(), from_pandas=True).cast(f.type)
            else:
                a = pa.nulls(n, f.type)
            arrays.append(a)
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def _wait(self) -> None:
        if self.pending is not None:
            self.pending.result()
            self.pending = None

    def close(self) -> None:
        try:
            self._wait()
        finally:
            self.pool.shutdown()
            if self.writer is not None:
                self.writer.close()


def read_streamed(path: Path, run_id: str, folder: Path) -> Imported | None:
    """Import one long YCSB file in pieces, its intervals written to
    ``folder/intervals.parquet`` (in ``Imported.files``); None when the file is not
    of the shape read in pieces (read it whole)."""
    from .ycsb import _command

    pieces = _pieces(path)
    first = next(pieces, None)
    if first is None:
        return None
    head = FileText(path, first[0][: 1 << 20])
    if not head.ascii or " - Takes(s): " in head.head(65536) or "#[Histogram log format" in head.head(4096):
        return None
    command = head.line_after("Command line: ") or None
    cmd = _command(command)
    c, found = _Carry(), _Found()
    writer = step = None
    try:
        for block, cut in _chain(first, pieces):
            part = _scan_piece(path, block, cut, found)
            if part is None:
                return None
            heads, blocks = part
            if heads is None or not len(heads):
                continue
            frames, g, ops = _piece_rows(heads, blocks, c)
            load = cmd["load"] if cmd["load"] is not None else _only_inserts(ops)
            if step is None:
                step = schema.step_name("load") if load else schema.step_name("run", 1)
                writer = _Writer(folder / "intervals.parquet", run_id, step)
            elif (schema.phase_of(step) == "load") != load:
                return None
            writer.write(frames)
            if g is not None:
                found.gauges.append(g)
            found.per_op += [_op_totals(f) for f in frames[1:] or frames]
    except (_NotStreamed, ImportFormatError):   # the whole-file import names the line
        return None
    finally:
        if writer is not None:
            writer.close()
    if step is None:
        return None   # no status line: a short file's shape, read whole
    version = (head.line_after("YCSB Client ").split() or [None])[0]
    return _imported(found, cmd, command, version, c, step, folder)


class _Found:
    """What the pieces gave besides the interval rows."""

    def __init__(self):
        self.summary: dict = {}
        self.gauges: list[pd.DataFrame] = []
        self.per_op: list[pd.DataFrame] = []


def _scan_piece(path: Path, block: bytes, cut: int, found: _Found):
    """A piece's status lines and blocks (its summary lines into ``found``); None when
    it is not of the shape read in pieces."""
    if not block.isascii():
        return None
    view = memoryview(block)[:cut]
    part = status_frames(view, categories=True) if b" sec: " in block else (None, None)
    if part is None:
        return None   # a line the scanner does not read: the regular expressions name it
    if b" latency raw data: " in block:
        return None
    if block.startswith(b"[") or _SUMMARY_LINE.search(block):
        s, ts, raw_header = scan_summary(path, FileText(path, bytes(view)))
        if (ts is not None and len(ts)) or raw_header:
            return None
        for op, m in s.items():
            found.summary.setdefault(op, {}).update(m)
    return part


def _op_totals(rows: pd.DataFrame) -> pd.DataFrame:
    """Per op of a frame of rows: its operations, their mean, min and max latency, as
    :func:`.ycsb_hdrlog.latency_of_intervals` takes them from the whole file's rows."""
    op = rows["op"].array
    if not isinstance(op, pd.Categorical):
        return pd.DataFrame(columns=["op", "ops", "mean_us", "errors", "min_us", "max_us"])
    k, codes = len(op.categories), op.codes
    ops = rows["ops"].to_numpy(dtype="float64")
    err = rows["errors"].to_numpy(dtype="float64", na_value=np.nan) if "errors" in rows else np.full(len(ops), np.nan)
    ok = ops - np.nan_to_num(err)   # the latencies are of the operations that succeeded
    n = np.bincount(codes, weights=ops, minlength=k)
    n_ok = np.bincount(codes, weights=ok, minlength=k)
    n_err = np.bincount(codes, weights=np.nan_to_num(err), minlength=k)
    has_err = np.bincount(codes, weights=~np.isnan(err), minlength=k) > 0
    w = np.bincount(codes, weights=np.nan_to_num(ok * rows["mean_us"].to_numpy(dtype="float64")), minlength=k)
    lo, hi = np.full(k, np.inf), np.full(k, -np.inf)
    for col, out, fn in (("min_us", lo, np.fmin), ("max_us", hi, np.fmax)):
        fn.at(out, codes, rows[col].to_numpy(dtype="float64"))
    seen = np.bincount(codes, minlength=k) > 0
    seen[op.categories.get_loc(TOTAL_OP)] = False
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_ok > 0, w / n_ok, np.nan)
    return pd.DataFrame({"op": list(op.categories[seen]), "ops": n[seen], "mean_us": mean[seen],
                         "errors": np.where(has_err, n_err, np.nan)[seen],
                         "min_us": np.where(np.isinf(lo), np.nan, lo)[seen],
                         "max_us": np.where(np.isinf(hi), np.nan, hi)[seen]})


def _chain(first: bytes, rest):
    yield first
    yield from rest


def _only_inserts(ops: set[str]) -> bool:
    main = {o for o in ops if not schema.is_intended(o) and not schema.is_failed(o) and o != "CLEANUP"}
    return main == {"INSERT"}


def _imported(found: _Found, cmd, command, version, c: _Carry, step, folder) -> Imported | None:
    """The tables of the whole file from what its pieces gave."""
    from .ycsb import _java_meta, _java_step_row

    summary, per_op, gauges = found.summary, found.per_op, found.gauges
    mtype = measurement_type(cmd["props"], summary, False, False)
    lat = pd.DataFrame(latency_from_summary(summary, mtype))
    ops_rows = pd.concat(per_op, ignore_index=True) if per_op else None
    ops = set(ops_rows["op"]) if ops_rows is not None else set()
    lat = fill_latency(lat, {}, None, ops_rows, ops)
    for col in ("op", "count", "errors"):
        if col not in lat:
            lat[col] = pd.Series(dtype=object if col == "op" else float)
    row = _java_step_row(summary, cmd, lat, pd.DataFrame({"interval_s": [c.secs]}),
                         c.max_ops if np.isfinite(c.max_ops) else None, c.t0)
    if (row["phase"] == "load") != (schema.phase_of(step) == "load"):
        return None
    steps = pd.DataFrame([{"step": step, "loop": schema.loop_of(step), **row}])
    for col in ("started", "ended"):
        steps[col] = pd.to_datetime(steps[col], utc=True)
    meta = {**_java_meta(summary, mtype, version, command, cmd), "streamed": True}
    extra = {"gauges": pd.concat(gauges, ignore_index=True).assign(step=step)} if gauges else {}
    return Imported(steps=steps, latency=lat.assign(step=constant_str(step, len(lat))), meta=meta,
                    extra=extra, files={"intervals": folder / "intervals.parquet"})
