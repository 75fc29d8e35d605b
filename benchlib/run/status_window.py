"""The status line YCSB's ``-s`` prints, and what the controller keeps for it between
two lines: per operation its count and, for the ops timed one by one, their
latencies' count, sum, min, max and counts per bucket — a fixed size however long the
status interval, where the raw latencies since the last line used to be kept (11 MB
over a 5-minute loop of YCSB with ``status_interval_s: 3600``).

The buckets are the step's HdrHistogram's (1 µs … 1 h at 3 significant digits: one
per µs below 2,048 µs, then 1,024 per power of two), counted with numpy: feeding an
``HdrHistogram`` a value at a time costs ~5 µs per distinct value, tens of ms a second
of a busy controller. The line's figures are those of the raw latencies: Count, Min,
Max and Avg exactly; 99 the sample of :func:`benchlib.measure.percentile_rank`'s rank
reported as the histogram reports it (the top of its bucket, never above Max): exact
below 2,048 µs, within 3 significant digits above.
"""
from __future__ import annotations

from datetime import datetime

import numpy as np

from .. import measure

SUB = 2048                       # one bucket per µs below this, then SUB // 2 per power of two
N_BUCKETS = SUB + (int(measure.HIGHEST_US).bit_length() - SUB.bit_length() + 1) * (SUB // 2)


def bucket_of(values_us: np.ndarray) -> np.ndarray:
    """Each latency's bucket (its index in the counts)."""
    v = np.clip(np.asarray(values_us, dtype=np.int64), 0, measure.HIGHEST_US)
    shift = np.maximum(np.frexp(v.astype(np.float64))[1] - SUB.bit_length() + 1, 0)
    return np.where(shift == 0, v, SUB + (shift - 1) * (SUB // 2) + (v >> shift) - SUB // 2)


def top_of(bucket: int) -> int:
    """The highest latency of a bucket."""
    if bucket < SUB:
        return bucket
    shift, sub = divmod(bucket - SUB, SUB // 2)
    return ((sub + SUB // 2 + 1) << (shift + 1)) - 1


class _Op:
    __slots__ = ("count", "timed", "sum_us", "min_us", "max_us", "counts")

    def __init__(self):
        self.count = self.timed = 0
        self.sum_us, self.min_us, self.max_us = 0.0, np.inf, -np.inf
        self.counts = None       # per bucket, once a latency came

    def add(self, svc_us: np.ndarray) -> None:
        self.timed += len(svc_us)
        self.sum_us += float(np.sum(svc_us, dtype=np.float64))
        self.min_us = min(self.min_us, float(np.min(svc_us)))
        self.max_us = max(self.max_us, float(np.max(svc_us)))
        more = np.bincount(bucket_of(svc_us), minlength=N_BUCKETS)
        if self.counts is None:
            self.counts = more
        else:
            self.counts += more

    def block(self, op: str) -> str:
        if not self.timed:
            return f"[{op}: Count={self.count}]"
        rank = measure.percentile_rank(99.0, self.timed)
        p99 = min(top_of(int(np.searchsorted(np.cumsum(self.counts), rank))), self.max_us)
        return (f"[{op}: Count={self.count}, Max={self.max_us:.0f}, Min={self.min_us:.0f}, "
                f"Avg={self.sum_us / self.timed:.2f}, 99={p99:.0f}]")


class StatusWindow:
    """The operations since the last status line, op by op in the order they came."""

    def __init__(self):
        self._ops: dict[str, _Op] = {}

    def add(self, op: str, count: int, svc_us: np.ndarray | None = None) -> None:
        """``count`` operations of ``op``; ``svc_us`` their latencies when timed one by one."""
        w = self._ops.setdefault(op, _Op())
        w.count += count
        if svc_us is not None and len(svc_us):
            w.add(svc_us)

    def line(self, elapsed_s: float, total_ops: int, cur_ops_s: float) -> str:
        """The status line of the window, which then starts again empty. Its brackets
        cover every operation since the previous line (their counts add up to the
        line's operations), as YCSB's own do; an op counted only in records (a batch's
        rows) has its count alone."""
        now = datetime.now().strftime("%Y-%m-%d %H:%M:%S:%f")[:-3]
        blocks = " ".join(w.block(op) for op, w in self._ops.items())
        self._ops = {}
        return (f"{now} {int(elapsed_s)} sec: {total_ops} operations; {cur_ops_s:.2f} current "
                f"ops/sec; {blocks}").rstrip()
