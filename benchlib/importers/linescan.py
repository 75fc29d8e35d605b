"""YCSB's status and summary lines cut from a file's bytes by the C scanner
(``_linescan.c``), as the regular expressions of :mod:`.ycsb_status` and
:mod:`.ycsb_summary` would read them.

The scanner answers for an ASCII file whose lines of these kinds are all plain, and
says None for any other file (a label ``-l``, raw blocks, a garbled line, a value
that is not a number): then the regular expressions read it and name the line that
is wrong. It is a C extension built when benchlib is installed (``pip install``
compiles it; setuptools leaves it out where there is no C compiler, and the
regular expressions then read every file, about 4× slower). Why C: a million-line
output has to be read at more than a million lines a second, and every way of
doing it in Python (regular expressions, Arrow's RE2, numpy over the bytes, Polars)
measured 0.5–1 s for the parsing alone (BENCHMARKS.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

try:
    from . import _linescan
except ImportError:   # built without a C compiler: the regular expressions read every file
    _linescan = None

AVAILABLE = _linescan is not None

# the figures of a status block, in the order the C scanner packs them
BLOCK_COLS = ["count", "max", "min", "avg", "p50", "p90", "p99", "p999", "p9999"]
_AVG = BLOCK_COLS.index("avg")


def _strings(chars: bytes, offsets: bytes) -> pa.StringArray:
    """A string column over packed bytes and their n + 1 int32 offsets (no copy)."""
    n = len(offsets) // 4 - 1
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars))


def status_frames(data: bytes) -> tuple[pd.DataFrame | None, pd.DataFrame | None] | None:
    """The status lines of an ASCII file, one row each, and their blocks, as
    :func:`.ycsb_status.scan_status` makes them; None when a line is not plain (or
    the scanner is not built)."""
    if _linescan is None:
        return None
    found = _linescan.scan_status(data)
    if found is None:
        return None
    ms = np.frombuffer(found["ms"], np.int64)
    if not len(ms):
        return None, None
    n = len(ms)
    heads = pd.DataFrame({
        "ts": pd.array(pa.StringArray.from_buffers(
            n, pa.py_buffer(np.arange(0, 23 * n + 1, 23, dtype=np.int32)), pa.py_buffer(found["ts"])), dtype="str"),
        "when": pd.Series(ms.astype("datetime64[ms]")).dt.tz_localize("UTC"),
        "sec": np.frombuffer(found["sec"], np.float64),
        "ops": np.frombuffer(found["ops"], np.float64),
        "cur": np.frombuffer(found["cur"], np.float64),
        "idx": np.arange(n)})
    hdr = np.frombuffer(found["hdr"], np.bool_)
    if not len(hdr):
        return heads, None
    blocks = {"idx": np.frombuffer(found["line"], np.int64),
              "op": pd.array(_strings(found["op_chars"], found["op_offsets"]), dtype="str"),
              "hdr": hdr}
    names = (["avg"] if found["any_avg"] else []) + (BLOCK_COLS if found["any_hdr"] else [])
    blocks.update(_block_values(np.frombuffer(found["has"], np.uint16),
                                np.frombuffer(found["values"], np.float64), names))
    return heads, pd.DataFrame(blocks)


_POPCOUNT = np.array([bin(m).count("1") for m in range(1 << len(BLOCK_COLS))], np.int64)


def _block_values(has: np.ndarray, values: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """The figures of the blocks as columns (NaN where a block has none): ``values``
    holds, block after block, those its bits in ``has`` say it has, in BLOCK_COLS order."""
    start = np.cumsum(_POPCOUNT[has]) - _POPCOUNT[has]
    out = {}
    for name in names:
        bit = BLOCK_COLS.index(name)
        col = np.full(len(has), np.nan)
        sel = np.flatnonzero(has & (1 << bit))
        col[sel] = values[start[sel] + _POPCOUNT[has[sel] & ((1 << bit) - 1)]]
        out[name] = col
    return out


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
