"""Latency measurement: HdrHistograms per operation, merged exactly, and per-second stats.

Latencies are recorded in microseconds into HdrHistograms (the ``hdrhistogram``
package, module ``hdrh``) covering 1 µs … 1 h at 3 significant digits. Histograms of
different clients are merged by adding them (``Histogram.add``), never by averaging
percentiles. A :class:`ClientResult` is what one client (process) hands back: its
histograms encoded as text, so a client on another host can send the same thing
and be merged the same way.

One percentile rule for every p-value benchlib computes, merged or per second:
:func:`percentile_rank`, HdrHistogram's own. A p99 of one second's raw latencies and
the p99 of a histogram of the same latencies are then the same sample (the histogram
reports the top of that sample's bucket: equal within 3 significant digits).

Uses of ``hdrhistogram``'s internals (pinned in pyproject.toml): the encoded form
(``encode``/``decode``, sent by clients and stored in run folders) and the rank rule
of ``get_target_count_at_percentile``, which :func:`percentile_rank` restates; the
``counts`` array and the bucket arithmetic that :func:`mean_us` walks as ``get_mean_value``
does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour
DIGITS = 3
PERCENTILES = {"p50_us": 50.0, "p90_us": 90.0, "p95_us": 95.0, "p99_us": 99.0, "p999_us": 99.9}


def throughput(ops, secs):
    """Operations per second over a measured duration, ``ops / secs``: YCSB's
    ``Throughput(ops/sec)`` (operations done over the run time). The one definition of a
    step's and a run's throughput in every table (a run's: its run loops' Σ ops / Σ secs);
    NaN where no duration was measured. Works on numbers and on pandas Series alike.
    Per-second rates and their batch means serve only the interval of a steady state."""
    if hasattr(secs, "where"):
        return ops / secs.where(secs > 0)
    return ops / secs if secs and secs > 0 else float("nan")


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)


def record_many(hist: HdrHistogram, values_us: np.ndarray, count_each: int = 1) -> None:
    """Record many latencies at once: one record_value per distinct value.

    Values are clipped into the histogram's range (a sub-microsecond operation
    counts as 1 µs, as YCSB rounds up).
    """
    if len(values_us) == 0:
        return
    v = np.clip(np.asarray(values_us, dtype=np.int64), LOWEST_US, HIGHEST_US)
    uniq, counts = np.unique(v, return_counts=True)
    rec = hist.record_value
    for value, c in zip(uniq.tolist(), counts.tolist()):
        rec(value, c * count_each)


def encode(hist: HdrHistogram) -> str:
    return hist.encode().decode() if hist.get_total_count() else ""


def decode(text: str) -> HdrHistogram:
    if not text:
        return new_histogram()
    return HdrHistogram.decode(text.encode())


def merge(histograms) -> HdrHistogram:
    """Exact merge: the sum of the counts of every histogram (encoded or not)."""
    out = new_histogram()
    for h in histograms:
        if isinstance(h, str):
            if not h:
                continue
            h = decode(h)
        if h.get_total_count():
            out.add(h)
    return out


def summarize(hist: HdrHistogram) -> dict:
    """count, mean, min, percentiles and max of a histogram, in µs (NaN when empty)."""
    n = hist.get_total_count()
    if not n:
        return {"count": 0, "mean_us": np.nan, "min_us": np.nan, **{k: np.nan for k in PERCENTILES},
                "max_us": np.nan}
    pct = hist.get_percentile_to_value_dict(list(PERCENTILES.values()))
    return {
        "count": n,
        "mean_us": mean_us(hist),
        "min_us": float(hist.get_min_value()),
        **{k: float(pct[p]) for k, p in PERCENTILES.items()},
        "max_us": float(hist.get_max_value()),
    }


def mean_us(hist: HdrHistogram) -> float:
    """``hist.get_mean_value()``, the same sum over the same buckets (each count times its
    bucket's median-equivalent value), visiting only the buckets that hold a count: hdrh's
    own walks every bucket up to the largest value in Python (~0.4 s a histogram whose
    tail reaches tens of ms, the most of a short step's bookkeeping)."""
    if not hist.get_total_count():
        return 0.0
    counts = np.ctypeslib.as_array(hist.counts)
    total = 0
    for index in np.flatnonzero(counts).tolist():
        top = hist.get_highest_equivalent_value(hist.get_value_from_index(index))
        total += int(counts[index]) * hist._hdr_median_equiv_value(top)
    return float(total) / hist.get_total_count()


def percentile_rank(percentile: float, count: int) -> int:
    """The 1-based rank, among ``count`` sorted samples, of the sample that is the
    ``percentile`` (0..100): HdrHistogram's rule (``get_target_count_at_percentile``),
    the nearest rank rounded half up, at least 1. No interpolation between samples."""
    return max(int((min(percentile, 100.0) * count / 100) + 0.5), 1)


def percentile_of(values_us: np.ndarray, percentile: float) -> float:
    """The ``percentile`` of raw samples by :func:`percentile_rank` (NaN when none)."""
    n = len(values_us)
    if n == 0:
        return np.nan
    k = min(percentile_rank(percentile, n), n) - 1
    return float(np.partition(np.asarray(values_us), k)[k])


def interval_stats(values_us: np.ndarray) -> tuple[float, float, float]:
    """(mean, p99, max) of one second's latencies, exact (NaN when none); p99 by
    :func:`percentile_rank`, as the step's histogram gives it."""
    n = len(values_us)
    if n == 0:
        return (np.nan, np.nan, np.nan)
    v = np.asarray(values_us)
    return (float(v.mean()), percentile_of(v, 99.0), float(v.max()))


@dataclass
class OpResult:
    """One operation's figures of one client in one step."""

    hdr: str = ""                     # service time (from the actual start)
    intended_hdr: str = ""            # from the intended start; empty when unpaced
    returns: dict[str, int] = field(default_factory=dict)  # OK, NOT_FOUND, ERROR … counts
    units: int = 0                    # records, for batched ops (rows of a batch insert)
    # the calls that did not return OK (NOT_FOUND, ERROR …), timed apart as YCSB's
    # [OP-FAILED]; they are in hdr/intended_hdr too
    not_ok_hdr: str = ""
    not_ok_intended_hdr: str = ""


@dataclass
class ClientResult:
    """What one client process returns for one step; JSON-serialisable."""

    client_id: str
    host: str
    step: str
    ops: dict[str, OpResult] = field(default_factory=dict)
    started_ns: int = 0
    ended_ns: int = 0
    error: str | None = None
    cpu_s: float | None = None        # the client process's CPU (user + system) over the step
    rss_bytes: int | None = None      # its resident and virtual size at the step's end
    vsz_bytes: int | None = None
    voluntary_switches: int | None = None    # its threads' context switches over the step
    involuntary_switches: int | None = None  # (getrusage: waits, and preemptions)
    driver_path: str | None = None    # the hot path its threads ran: python | c-libpq
    reconnects: int = 0               # connections its threads lost and reopened
    reconnect_s: float = 0.0          # the time its threads spent reopening them (summed)
    driver_threads: int = 0           # the threads that drove its connections
    refused: int = 0                  # reopening attempts that failed (the server was gone)
    # each thread's client's own counts, where its workload keeps some (WorkloadClient.counters:
    # LinkBench's per-requester found / not found, history queries, RANGE_SIZE)
    thread_counters: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"client_id": self.client_id, "host": self.host, "step": self.step,
                "started_ns": self.started_ns, "ended_ns": self.ended_ns, "error": self.error,
                "cpu_s": self.cpu_s, "rss_bytes": self.rss_bytes, "vsz_bytes": self.vsz_bytes,
                "voluntary_switches": self.voluntary_switches,
                "involuntary_switches": self.involuntary_switches,
                "driver_path": self.driver_path, "reconnects": self.reconnects,
                "reconnect_s": self.reconnect_s, "driver_threads": self.driver_threads,
                "refused": self.refused, "thread_counters": self.thread_counters,
                "ops": {k: vars(v) for k, v in self.ops.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> "ClientResult":
        ops = {k: OpResult(**v) for k, v in d.get("ops", {}).items()}
        return cls(d["client_id"], d["host"], d["step"], ops, d.get("started_ns", 0),
                   d.get("ended_ns", 0), d.get("error"), d.get("cpu_s"), d.get("rss_bytes"),
                   d.get("vsz_bytes"), d.get("voluntary_switches"), d.get("involuntary_switches"),
                   d.get("driver_path"), d.get("reconnects", 0), d.get("reconnect_s", 0.0),
                   d.get("driver_threads", 0), d.get("refused", 0), d.get("thread_counters") or [])


def merge_client_results(results: list[ClientResult]) -> dict[str, dict]:
    """Per operation: merged service and intended histograms and summed return counts."""
    by_op: dict[str, dict] = {}
    for r in results:
        for op, o in r.ops.items():
            m = by_op.setdefault(op, {"hdr": [], "intended_hdr": [], "returns": {}, "units": 0,
                                      "not_ok_hdr": [], "not_ok_intended_hdr": []})
            for k in ("hdr", "intended_hdr", "not_ok_hdr", "not_ok_intended_hdr"):
                m[k].append(getattr(o, k))
            m["units"] += o.units
            for k, v in o.returns.items():
                m["returns"][k] = m["returns"].get(k, 0) + v
    for m in by_op.values():
        for k in ("hdr", "intended_hdr", "not_ok_hdr", "not_ok_intended_hdr"):
            m[k] = merge(m[k])
    return by_op


def not_ok_fields(merged: dict) -> dict:
    """A merged op's (:func:`merge_client_results`) histograms of its calls that did not
    return OK, encoded, for its latency row; {} when every call did."""
    if not merged["not_ok_hdr"].get_total_count():
        return {}
    return {"not_ok_hdr": encode(merged["not_ok_hdr"]), "not_ok_intended_hdr": encode(merged["not_ok_intended_hdr"])}


def without(hist: HdrHistogram, part: HdrHistogram) -> HdrHistogram:
    """``hist`` less the values of ``part`` (which were recorded into it too): bucket by
    bucket, so exact to the histogram's precision."""
    if not part.get_total_count():
        return hist
    out = new_histogram()
    left = {v.value_iterated_to: v.count_at_value_iterated_to for v in part.get_recorded_iterator()}
    for v in hist.get_recorded_iterator():
        n = v.count_at_value_iterated_to - left.get(v.value_iterated_to, 0)
        if n > 0:
            out.record_value(v.value_iterated_to, n)
    return out
