"""LatencyStats of the maintained Java client (its ``displayLatencyStats``): the
operations in LinkBenchOp's order, their latencies in its buckets (0.1 ms wide below
1 ms, 1 ms to 100 ms, 100 ms to 1 s, then 1 s), and each operation's final line of
linkbench.log, ``OP count = N  p25 = [a,b]ms … max = Xms  mean = Yms threads = T``,
from the step's histogram (log.py writes it)."""
from __future__ import annotations

import numpy as np

from ... import measure
from .reqstats import java_decimal as _fmt

OP_ORDER = ["LOAD_NODE_BULK", "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK", "ADD_NODE", "UPDATE_NODE",
            "DELETE_NODE", "GET_NODE", "ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK",
            "MULTIGET_LINK", "GET_LINKS_LIST"]   # LinkBenchOp's order, as it prints them
SUB_MS, MS, HUNDRED_MS, SEC = 10, 99, 9, 9   # LatencyStats' buckets
NUM_BUCKETS = SUB_MS + MS + HUNDRED_MS + SEC + 1


def bucket_of(us: np.ndarray) -> np.ndarray:
    """LatencyStats.latencyToBucket of latencies in µs."""
    us = np.asarray(us, dtype=np.int64)
    ms = us // 1000
    return np.select([ms == 0, ms < 100, ms < 1000, ms < 10000],
                     [us // 100, SUB_MS + ms - 1, SUB_MS + MS + ms // 100 - 1,
                      SUB_MS + MS + HUNDRED_MS + ms // 1000 - 1], NUM_BUCKETS - 1)


def bucket_bounds(b: int) -> tuple[int, int]:
    """LatencyStats.bucketBound: [low, high) in µs."""
    if b < SUB_MS:
        return b * 100, (b + 1) * 100
    if b < SUB_MS + MS:
        return (b - SUB_MS + 1) * 1000, (b - SUB_MS + 2) * 1000
    if b < SUB_MS + MS + HUNDRED_MS:
        h = b - SUB_MS - MS + 1
        return h * 100_000, (h + 1) * 100_000
    if b < NUM_BUCKETS - 1:
        s = b - SUB_MS - MS - HUNDRED_MS + 1
        return s * 1_000_000, (s + 1) * 1_000_000
    return (SEC + 1) * 1_000_000, 100 * 1_000_000


def final_line(op: str, row: dict, threads: int) -> str:
    """``OP count = N  p25 = [a,b]ms … max = Xms  mean = Yms threads = T``."""
    hist = measure.decode(row["hdr"])
    values, counts = [], []
    for it in hist.get_recorded_iterator():
        values.append(it.value_iterated_to)
        counts.append(it.count_added_in_this_iter_step)
    cum = np.cumsum(np.bincount(bucket_of(np.array(values)), weights=counts,
                                minlength=NUM_BUCKETS))
    n = int(cum[-1])
    parts = [f"{op} count = {n} "]
    for pct in (25, 50, 75, 95, 99):
        need = int(pct / 100.0 * n)   # getBucketBounds: the first bucket holding that rank
        lo, hi = bucket_bounds(int(np.argmax(cum >= need)))
        parts.append(f" p{pct} = [{_fmt(lo / 1000, 2)},{_fmt(hi / 1000, 2)}]ms ")
    parts.append(f" max = {_fmt(row['max_us'] / 1000, 3)}ms ")
    parts.append(f" mean = {_fmt(row['mean_us'] / 1000, 3)}ms threads = {threads}")
    return "".join(parts)
