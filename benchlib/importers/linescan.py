"""YCSB's status and summary lines cut from a file's bytes by the C scanner
(``_linescan.c``), as the regular expressions of :mod:`.ycsb_status` and
:mod:`.ycsb_summary` would read them.

The scanner answers for an ASCII file whose lines of these kinds are all plain, and
says None for any other file (a label ``-l``, raw blocks, a garbled line, a value
that is not a number): then the regular expressions read it and name the line that
is wrong. It is a C extension built when benchlib is installed (``pip install``
compiles it; setuptools leaves it out where there is no C compiler, and the
regular expressions then read every file, about 7× slower: 0.18M lines/s). Why C: a million-line
output has to be read at more than a million lines a second, and every way of
doing it in Python (regular expressions, Arrow's RE2, numpy over the bytes, Polars)
measured 0.5–1 s for the parsing alone (BENCHMARKS.md).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

try:   # by its full name: "from . import" would import the package it is in
    import benchlib.importers._linescan as _linescan
except ImportError:   # built without a C compiler: the regular expressions read every file
    _linescan = None

AVAILABLE = _linescan is not None

# the figures of a status block, in the order the C scanner packs them
BLOCK_COLS = ["count", "max", "min", "avg", "p50", "p90", "p99", "p999", "p9999"]


def _strings(chars: bytes, offsets: bytes) -> pa.StringArray:
    """A string column over packed bytes and their n + 1 int32 offsets (no copy)."""
    n = len(offsets) // 4 - 1
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars))


# a file larger than this is scanned in two halves, in two threads (the summary scan
# runs beside them in a third: a core each as they come free)
_SPLIT_BYTES = 4 << 20


def _scan_status(data: bytes | memoryview) -> list[dict] | None:
    """What the C scanner finds in the status lines, a dict per part of the file."""
    # a view (of a piece of a file: :mod:`.ycsb_stream`) starts where its bytes start
    whole = data.obj if isinstance(data, memoryview) else data
    mid = whole.find(b"\n", len(data) // 2, len(data)) + 1 if len(data) > _SPLIT_BYTES else 0
    if not 0 < mid < len(data):
        found = _linescan.scan_status(data)
        return None if found is None else [found]
    view = memoryview(data)
    with ThreadPoolExecutor(1) as pool:   # the scanner lets go of the GIL
        later = pool.submit(_linescan.scan_status, view[mid:])
        first = _linescan.scan_status(view[:mid])
        second = later.result()
    return None if first is None or second is None else [first, second]


def _heads(parts: list[dict], ms: np.ndarray, col) -> pd.DataFrame:
    """The status lines' heads as :func:`.ycsb_status.scan_status` makes them."""
    n = len(ms)
    return pd.DataFrame({
        "ts": pd.array(pa.StringArray.from_buffers(
            n, pa.py_buffer(np.arange(0, 23 * n + 1, 23, dtype=np.int32)),
            pa.py_buffer(b"".join(p["ts"] for p in parts) if len(parts) > 1 else parts[0]["ts"])), dtype="str"),
        "when": pd.Series(ms.astype("datetime64[ms]")).dt.tz_localize("UTC"),
        "sec": col("sec", np.float64),
        "ops": col("ops", np.float64),
        "cur": col("cur", np.float64),
        "idx": np.arange(n)}, copy=False)


def status_frames(data: bytes | memoryview, categories: bool = False) -> tuple[pd.DataFrame | None, pd.DataFrame | None] | None:
    """The status lines of an ASCII file, one row each, and their blocks, as
    :func:`.ycsb_status.scan_status` makes them; None when a line is not plain (or
    the scanner is not built). ``categories``: the blocks' ops as a categorical (with
    ``TOTAL`` among its categories), made by Arrow's dictionary encoding."""
    if _linescan is None:
        return None
    parts = _scan_status(data)
    if parts is None:
        return None

    def col(key, dtype):
        arrays = [np.frombuffer(p[key], dtype) for p in parts]
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

    ms = col("ms", np.int64)
    if not len(ms):
        return None, None
    n = len(ms)
    if categories:   # a piece of a long file (:mod:`.ycsb_stream`): the figures alone
        heads = pd.DataFrame({"sec": col("sec", np.float64), "ops": col("ops", np.float64),
                              "cur": col("cur", np.float64), "idx": np.arange(n), "ms": ms}, copy=False)
    else:
        heads = _heads(parts, ms, col)
    hdr = col("hdr", np.bool_)
    if not len(hdr):
        return heads, None
    # a block's line: its place among the status lines of the whole file
    first_line = np.cumsum([0] + [len(p["ms"]) // 8 for p in parts[:-1]])
    line = [np.frombuffer(p["line"], np.int64) + k for p, k in zip(parts, first_line)]
    ops = [_strings(p["op_chars"], p["op_offsets"]) for p in parts]
    op = ops[0] if len(ops) == 1 else pa.concat_arrays(ops)
    blocks = {"idx": line[0] if len(line) == 1 else np.concatenate(line),
              "op": _categorical(op) if categories else pd.array(op, dtype="str"),
              "hdr": hdr}
    # as the regular expressions make them: "avg" when a block is of the AverageLatency
    # form, every figure when one is an hdrhistogram block (NaN where a block has none)
    names = (["avg"] if any(p["any_avg"] for p in parts) else []) + \
        (BLOCK_COLS if any(p["any_hdr"] for p in parts) else [])
    for name in names:
        cols = [np.frombuffer(p["v_" + name], np.float64) if "v_" + name in p
                else np.full(len(p["hdr"]), np.nan) for p in parts]
        blocks[name] = cols[0] if len(cols) == 1 else np.concatenate(cols)
    return heads, pd.DataFrame(blocks, copy=False)


def _categorical(op: pa.StringArray) -> pd.Categorical:
    """The ops as categories, TOTAL among them (a status line's whole count)."""
    enc = pc.dictionary_encode(op)
    names = enc.dictionary.to_pylist()
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int16)
    return pd.Categorical.from_codes(codes, categories=[*names, *(["TOTAL"] if "TOTAL" not in names else [])])


@dataclass
class SummaryRows:
    """The summary lines ``[OP], Metric, value`` of a file: the three as strings;
    ``t_ms`` each all-digit metric as a number (NaN for the others), None where the
    scanner leaves that to Arrow (past 15 digits); ``dbl`` whether a value is
    written as a Java double (has ".", "N" or "E")."""

    ops: pa.StringArray
    metrics: pa.StringArray
    values: pa.StringArray
    t_ms: np.ndarray | None
    dbl: np.ndarray
    raw_header: bool   # a line "OP latency raw data: …" is there


def summary_rows(data: bytes) -> SummaryRows | None:
    """The summary lines of an ASCII file; None when one is not whole (or the scanner
    is not built)."""
    if _linescan is None:
        return None
    found = _linescan.scan_summary(data)
    if found is None:
        return None
    return SummaryRows(
        ops=_strings(found["op_chars"], found["op_offsets"]),
        metrics=_strings(found["metric_chars"], found["metric_offsets"]),
        values=_strings(found["value_chars"], found["value_offsets"]),
        t_ms=np.frombuffer(found["t_ms"], np.float64) if found["metrics_ok"] else None,
        dbl=np.frombuffer(found["dbl"], np.bool_),
        raw_header=bool(found["raw_header"]))
