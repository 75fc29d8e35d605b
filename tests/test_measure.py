"""One percentile rule (measure.percentile_rank): a p-value of raw samples (a second's
interval row, a status line) is the sample HdrHistogram's get_value_at_percentile names
for the same samples, within the histogram's precision (3 significant digits)."""
from __future__ import annotations

import numpy as np
import pytest

from benchlib import measure

PERCENTILES = [50.0, 90.0, 99.0, 99.9]
COUNTS = [1, 2, 3, 60, 99, 100, 101, 1001, 20_000]


def _hist(values) -> object:
    h = measure.new_histogram()
    measure.record_many(h, np.asarray(values))
    return h


@pytest.mark.parametrize("n", COUNTS)
def test_raw_percentiles_are_hdrhistograms(n):
    rng = np.random.default_rng(n)
    # latencies over five decades, with ties (a real second has many equal values)
    values = np.maximum(rng.lognormal(6, 2, n).astype(np.int64), 1)
    h = _hist(values)
    for p in PERCENTILES:
        raw = measure.percentile_of(values, p)
        hdr = h.get_value_at_percentile(p)
        assert h.values_are_equivalent(int(raw), hdr), (n, p, raw, hdr)
        # and the sample is the one at the rank, not a neighbour in another bucket
        rank = measure.percentile_rank(p, n)
        assert raw == np.sort(values)[rank - 1]
    summary = measure.summarize(h)
    assert h.values_are_equivalent(int(measure.interval_stats(values)[1]), int(summary["p99_us"]))


def test_the_rank_is_hdrhistograms_own():
    h = measure.new_histogram()
    for n in range(1, 2000, 7):
        h.total_count = n   # the rule reads only the count
        for p in (0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0):
            assert measure.percentile_rank(p, n) == h.get_target_count_at_percentile(p), (n, p)


def test_where_a_ceil_rank_would_differ():
    # 60 samples: 0.99 × 60 = 59.4; HdrHistogram takes the 59th, a ceil rule the 60th
    values = np.arange(1, 61) * 1000
    assert measure.percentile_rank(99.0, 60) == 59
    assert measure.interval_stats(values)[1] == 59_000
    assert _hist(values).get_value_at_percentile(99.0) // 1000 == 59


def test_no_samples_no_percentile():
    assert np.isnan(measure.percentile_of(np.zeros(0, np.int64), 99.0))
    assert all(np.isnan(x) for x in measure.interval_stats(np.zeros(0, np.int64)))


@pytest.mark.parametrize("seed", range(6))
def test_the_mean_is_hdrhistograms_own(seed):
    """measure.mean_us visits only the buckets that hold a count, and gives exactly what
    hdrh's get_mean_value gives, for a recorded histogram and a decoded one."""
    rng = np.random.default_rng(seed)
    hist = measure.new_histogram()
    n = int(rng.integers(1, 20_000))
    measure.record_many(hist, np.exp(rng.normal(rng.uniform(0, 9), rng.uniform(0.1, 3), n)))
    for h in (hist, measure.decode(measure.encode(hist))):
        assert measure.mean_us(h) == h.get_mean_value()
    assert measure.mean_us(measure.new_histogram()) == 0.0
    assert np.isnan(measure.summarize(measure.new_histogram())["mean_us"])
