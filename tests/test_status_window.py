"""The status line's window: the figures of the raw latencies it was given, in a size
that does not grow with the status interval."""
import re
import tracemalloc

import numpy as np

from benchlib import measure
from benchlib.run.status_window import StatusWindow, bucket_of, top_of

BLOCK = re.compile(r"\[(\S+): Count=(\d+)(?:, Max=(\d+), Min=(\d+), Avg=([\d.]+), 99=(\d+))?\]")


def _blocks(line: str) -> dict:
    return {m[0]: m[1:] for m in BLOCK.findall(line)}


def test_the_line_has_the_raw_latencies_figures_and_counts_that_add_up():
    rng = np.random.default_rng(5)
    seconds = [rng.integers(0, 2000, 300).astype(np.int32) for _ in range(7)]
    tail = rng.integers(2000, 900_000, 50).astype(np.int32)   # above 2,048 µs: hdr's buckets
    w = StatusWindow()
    for s in seconds:
        w.add("READ", len(s), s)
        w.add("INSERT-BATCH", 3)                                # counted in records only
    w.add("UPDATE", len(tail), tail)
    line = w.line(12.7, 2171, 170.0)
    assert " 12 sec: 2171 operations; 170.00 current ops/sec; [READ: " in line
    got = _blocks(line)
    assert list(got) == ["READ", "INSERT-BATCH", "UPDATE"]     # in the order they came
    assert sum(int(g[0]) for g in got.values()) == 2171
    assert got["INSERT-BATCH"] == ("21", "", "", "", "")
    v = np.concatenate(seconds)
    count, mx, mn, avg, p99 = got["READ"]
    assert (int(count), int(mx), int(mn), avg) == (len(v), v.max(), v.min(), f"{v.mean():.2f}")
    assert int(p99) == measure.percentile_of(v, 99.0)         # exact below 2,048 µs
    count, mx, mn, avg, p99 = got["UPDATE"]
    assert (int(mx), int(mn), avg) == (tail.max(), tail.min(), f"{tail.mean():.2f}")
    assert measure.new_histogram().values_are_equivalent(int(p99), int(measure.percentile_of(tail, 99.0)))
    assert int(p99) <= tail.max()


def test_its_p99_is_the_step_histograms_and_its_buckets_are_hdrs():
    """The same latencies in the step's HdrHistogram: the same p99 (capped at the max)."""
    rng = np.random.default_rng(9)
    for n in (1, 7, 100, 5000):
        v = np.clip(rng.lognormal(np.log(300), 2.5, n), 0, 2**31 - 1).astype(np.int32)
        w = StatusWindow()
        w.add("READ", n, v)
        h = measure.new_histogram()
        measure.record_many(h, v)
        want = min(h.get_value_at_percentile(99.0), int(v.max()))
        assert _blocks(w.line(1, n, n))["READ"][4] == str(want), n
    v = np.array([0, 1, 2047, 2048, 2049, 4095, 4096, 10**6, 3_600_000_000])
    h = measure.new_histogram()
    tops = [top_of(int(b)) for b in bucket_of(v)]
    assert tops == [0, 1, 2047] + [h.get_highest_equivalent_value(int(x)) for x in v[3:]]


def test_a_new_line_starts_empty_and_zero_latencies_stay_zero():
    w = StatusWindow()
    w.add("READ", 4, np.array([900, 901, 902, 903], np.int32))
    w.line(1, 4, 4.0)
    w.add("READ", 2, np.zeros(2, np.int32))
    assert _blocks(w.line(2, 6, 2.0))["READ"] == ("2", "0", "0", "0.00", "0")
    assert w.line(3, 6, 0.0).endswith("0.00 current ops/sec;")


def test_the_window_does_not_grow_with_the_seconds_it_covers():
    w = StatusWindow()
    sec = np.random.default_rng(1).integers(50, 5000, 2000).astype(np.int32)
    w.add("READ", len(sec), sec)   # the histogram allocated
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(600):           # ten minutes of 2,000 READs a second, one status line
        w.add("READ", len(sec), sec)
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert held < 100_000, held    # the raw latencies were 4.8 MB
    assert _blocks(w.line(601, 601 * 2000, 2000.0))["READ"][0] == str(601 * 2000)
