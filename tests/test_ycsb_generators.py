"""YCSB's generators: exact where YCSB is deterministic (hashes, key names, sequences),
statistical where it is random — every statistical check has a tolerance from the
binomial standard error (5σ) or a chi-square p-value, with a fixed seed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from benchlib.workloads import generators as g
from benchlib.workloads import zeta as zeta_mod
from benchlib.workloads.generators import (
    SCRAMBLED_ITEM_COUNT,
    SCRAMBLED_ZETAN,
    Discrete,
    Exponential,
    Histogram,
    Hotspot,
    ScrambledZipfian,
    Sequential,
    SkewedLatest,
    UniformLong,
    Zipfian,
    build_key_names,
    fnvhash64,
    zeta,
)
from benchlib.workloads.ycsb.plan import (
    INSERT,
    READ,
    READMODIFYWRITE,
    SCAN,
    UPDATE,
    CoreWorkloadPlan,
    field_length_generator,
    load_keynums,
)
from benchlib.workloads.ycsb.properties import CoreWorkloadProperties

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def rng(seed: int = 1) -> np.random.Generator:
    return np.random.default_rng(seed)


def within_5_sigma(count: int, n: int, p: float) -> bool:
    return abs(count / n - p) <= 5 * math.sqrt(p * (1 - p) / n)


def props(**kw) -> CoreWorkloadProperties:
    return CoreWorkloadProperties.from_properties({"recordcount": 1000, "operationcount": 1000, **kw})


# ------------------------------------------------------------------ hash and key names

def java_fnvhash64(val: int) -> int:
    """Utils.fnvhash64 transcribed with Python ints (Java long = two's complement 64 bit)."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        octet = val & 0xFF
        val >>= 8  # arithmetic shift, as Java's >>
        h = ((h ^ octet) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    h = h - 2**64 if h >= 2**63 else h
    return h if h >= 0 or h == I64_MIN else -h  # Math.abs(Long.MIN_VALUE) == Long.MIN_VALUE


def test_fnvhash64_matches_the_java_code():
    values = [0, 1, 2, 255, 256, 1000, 999_999, 2**31 - 1, 2**40 + 7, I64_MAX, I64_MIN, -1, -12345]
    values += rng().integers(I64_MIN, I64_MAX, 1000, endpoint=True).tolist()
    assert fnvhash64(values).tolist() == [java_fnvhash64(v) for v in values]
    assert (fnvhash64(np.arange(10_000)) >= 0).all()


def test_java_abs_of_long_min_value_stays_negative():
    # the one hash that Math.abs cannot make positive; numpy's int64 abs agrees
    assert np.abs(np.array([I64_MIN], dtype=np.int64))[0] == I64_MIN


def test_known_real_ycsb_keys():
    # A published YCSB BasicDB load trace (workload with recordcount 64000,
    # insertorder=hashed, zeropadding=1) begins:
    #   INSERT usertable user6284781860667377211 [ field0=#H ]
    #   INSERT usertable user8517097267634966620 [ field0=&< ]
    #   INSERT usertable user1820151046732198393 [ field0=!4 ]
    # i.e. keynums 0, 1, 2 of the load's counter.
    assert build_key_names([0, 1, 2], hashed=True, zeropadding=1) == [
        "user6284781860667377211", "user8517097267634966620", "user1820151046732198393"]


def test_key_names_ordered_hashed_and_zeropadding():
    assert build_key_names([7, 1234], hashed=False, zeropadding=1) == ["user7", "user1234"]
    assert build_key_names([7, 1234], hashed=False, zeropadding=5) == ["user00007", "user01234"]
    assert build_key_names([123456], hashed=False, zeropadding=3) == ["user123456"]  # never cut
    assert build_key_names([0], hashed=True, zeropadding=25) == ["user000000" + "6284781860667377211"]
    assert build_key_names([5], hashed=False, zeropadding=2, prefix="k") == ["k05"]
    # Java pads before the sign: "user" + "0" * (zeropadding - len("-9…")) + "-9…"
    assert build_key_names([I64_MIN], hashed=False, zeropadding=21) == ["user0" + str(I64_MIN)]


# ------------------------------------------------------------------ zeta

def test_zeta_reproduces_ycsbs_precomputed_zetan():
    # ScrambledZipfianGenerator.ZETAN = zetastatic(1e10, 0.99), summed term by term in
    # Java doubles (their own rounding error is ~1e-12 relative)
    assert zeta(SCRAMBLED_ITEM_COUNT, 0.99) == pytest.approx(SCRAMBLED_ZETAN, rel=1e-10)


def test_zeta_direct_and_euler_maclaurin_agree_for_large_n():
    n = (1 << 22) + 12_345  # just past the direct-summation limit
    assert zeta_mod._sum_direct(1, n, 0.99) == pytest.approx(g.zeta_sum(0, n, 0.99), rel=1e-13)
    assert g.zeta_sum(0, 100, 0.5) == pytest.approx(sum(i ** -0.5 for i in range(1, 101)), rel=1e-14)
    assert g.zeta_sum(3, 10, 0.9, 1.5) == pytest.approx(1.5 + sum(i ** -0.9 for i in range(4, 11)))
    # past the direct limit the tail is Euler-Maclaurin's: the same as the terms summed
    n = 10_000_000
    assert g.zeta_sum(0, n, 0.8) == pytest.approx(zeta_mod._sum_direct(1, n, 0.8), rel=1e-12)


# ------------------------------------------------------------------ zipfian

@pytest.mark.parametrize("n_items", [1000, 10_000_000])
def test_zipfian_top_ranks(n_items):
    theta, draws = 0.99, 1_000_000
    z = Zipfian(0, n_items - 1, rng(3))
    counts = np.bincount(z.next_batch(draws), minlength=n_items)
    zn = zeta(n_items, theta)
    # ranks 0 and 1 come from the exact branches (uz < 1, uz < 1 + 0.5^θ):
    # P(rank i) = (i+1)^-θ / zeta(n, θ)
    for rank in (0, 1):
        assert within_5_sigma(counts[rank], draws, (rank + 1) ** -theta / zn), rank
    # ranks >= 2 follow Gray et al.'s approximation, which YCSB keeps: its exact
    # probability is (((k+1)/n)^(1-θ) - (k/n)^(1-θ)) / eta, above the closed form
    # (rank 2 by 17-20%)
    eta = (1 - (2 / n_items) ** (1 - theta)) / (1 - zeta(2, theta) / zn)
    for k in range(2, 10):
        gray = (((k + 1) / n_items) ** (1 - theta) - (k / n_items) ** (1 - theta)) / eta
        assert within_5_sigma(counts[k], draws, gray), k
        assert gray > (k + 1) ** -theta / zn
    assert counts.sum() == draws and counts[:3].argmax() == 0


def test_zipfian_min_is_the_most_popular_and_bounds_hold():
    v = Zipfian(100, 199, rng()).next_batch(50_000)
    assert v.min() == 100 and v.max() <= 199
    assert np.bincount(v - 100).argmax() == 0


def test_zipfian_item_count_grows_incrementally_with_ycsbs_eta():
    z = Zipfian(0, 999, rng())
    v = z.next_for([1000, 1003, 1001, 1010])
    assert z.countforzeta == 1010
    assert z.zetan == pytest.approx(zeta(1010, 0.99), rel=1e-14)
    # YCSB recomputes eta with the constructor's item count (1000), not 1010
    assert z.eta == pytest.approx((1 - (2 / 1000) ** 0.01) / (1 - zeta(2, 0.99) / zeta(1010, 0.99)))
    assert (v >= 0).all() and (v < np.array([1000, 1003, 1001, 1010])).all()


def test_scrambled_zipfian_hottest_keys_are_the_hashes_of_ranks_0_and_1():
    items, draws = 1_000_000, 400_000
    v = ScrambledZipfian(5, 5 + items - 1, rng(4)).next_batch(draws)
    assert v.min() >= 5 and v.max() <= 5 + items - 1
    keys, counts = np.unique(v, return_counts=True)
    order = np.argsort(counts)[::-1]
    assert keys[order[0]] == 5 + fnvhash64(0) % items
    assert keys[order[1]] == 5 + fnvhash64(1) % items
    # ≈ 1/ZETAN whatever the item count; collisions of other ranks add ~1/items
    p0 = 1 / SCRAMBLED_ZETAN
    assert abs(counts[order[0]] / draws - p0) < 5 * math.sqrt(p0 * (1 - p0) / draws) + 1e-4


# ------------------------------------------------------------------ the others

def test_uniform_is_flat():
    v = UniformLong(10, 109, rng(5)).next_batch(100_000)
    assert v.min() == 10 and v.max() == 109
    assert stats.chisquare(np.bincount(v - 10, minlength=100)).pvalue > 1e-3


def test_hotspot_sends_the_op_fraction_to_the_hot_set():
    draws = 100_000
    v = Hotspot(0, 999, 0.2, 0.8, rng(6)).next_batch(draws)
    assert v.min() >= 0 and v.max() <= 999
    hot = v < 200  # hotInterval = (int)(1000 * 0.2)
    assert within_5_sigma(int(hot.sum()), draws, 0.8)
    assert stats.chisquare(np.bincount(v[hot], minlength=200)).pvalue > 1e-3
    v = Hotspot(1000, 1999, 0.1, 0.9, rng(7)).next_batch(draws)
    assert within_5_sigma(int((v < 1100).sum()), draws, 0.9)
    with pytest.raises(ValueError):
        Hotspot(0, 9, 0.0, 0.5, rng())  # an empty hot set that would be drawn from


def test_latest_favours_the_newest_keys():
    draws, last = 200_000, 999
    v = SkewedLatest(last, rng(8)).next_batch(draws)
    assert v.min() >= 1 and v.max() == last  # last - zipfian over [0, last - 1]
    assert np.bincount(v).argmax() == last
    assert within_5_sigma(int((v == last).sum()), draws, 1 / zeta(last, 0.99))
    # the last keynum moves with inserts: each draw is relative to its own last
    lasts = np.repeat(np.arange(999, 1999), 100)
    w = SkewedLatest(999, rng(9)).next_for(lasts)
    assert (w <= lasts).all() and (w >= 1).all()
    # P(draw == its last) = 1/zeta(last): zeta grows incrementally with the last keynum
    p_new = np.array([1 / zeta(int(m), 0.99) for m in range(999, 1999)]).repeat(100)
    hits, expected = int((w == lasts).sum()), p_new.sum()
    assert abs(hits - expected) <= 5 * math.sqrt((p_new * (1 - p_new)).sum())


def test_sequential_wraps_and_interleaves_clients():
    s = Sequential(10, 14)
    assert s.next_batch(7).tolist() == [10, 11, 12, 13, 14, 10, 11]
    assert s.next_batch(3).tolist() == [12, 13, 14]
    c1 = Sequential(10, 14, offset=1, stride=2)
    assert c1.next_batch(3).tolist() + c1.next_batch(3).tolist() == [11, 13, 10, 12, 14, 11]


def test_exponential_percentile():
    draws, percentile, rng_items = 200_000, 95.0, 1000 * 0.8571428571
    e = Exponential(percentile, rng_items, rng(10))
    x = e.next_float(draws)
    assert within_5_sigma(int((x < rng_items).sum()), draws, percentile / 100)
    assert within_5_sigma(int((e.next_batch(draws) < 100).sum()), draws,
                          1 - math.exp(-e.gamma * 100))


def test_discrete_never_picks_a_zero_weight():
    v = Discrete([0.0, 0.3, 0.0, 0.7, 0.0], rng(11)).next_batch(50_000)
    assert set(np.unique(v).tolist()) == {1, 3}
    assert within_5_sigma(int((v == 1).sum()), 50_000, 0.3)


def test_histogram_keeps_ycsbs_bucket_arithmetic(tmp_path):
    p = tmp_path / "hist.txt"
    p.write_text("BlockSize\t10\n0\t0\n1\t5\n2\t5\n")
    v = Histogram.from_file(p, rng(12)).next_batch(100_000)
    # nextInt(10) = 0 → 10; 1..5 → 20; 6..9 fall through to (len-1) * 10 = 20
    assert set(np.unique(v).tolist()) == {10, 20}
    assert within_5_sigma(int((v == 10).sum()), 100_000, 0.1)
    p.write_text("BlockSize\t10\n0\tx\n")
    with pytest.raises(ValueError, match=r"hist.txt:2: "):
        Histogram.from_file(p, rng())


def test_field_length_generators():
    r = rng(13)
    assert (field_length_generator(props(), r).next_batch(5) == 100).all()
    u = field_length_generator(props(fieldlengthdistribution="uniform", minfieldlength=10), r)
    v = u.next_batch(20_000)
    assert v.min() == 10 and v.max() == 100
    z = field_length_generator(props(fieldlengthdistribution="zipfian", minfieldlength=10), r)
    w = z.next_batch(20_000)
    assert w.min() == 10 and w.max() <= 100 and np.bincount(w).argmax() == 10


# ------------------------------------------------------------------ CoreWorkloadPlan

MIXES = {
    "a": {"readproportion": 0.5, "updateproportion": 0.5, "requestdistribution": "zipfian"},
    "b": {"readproportion": 0.95, "updateproportion": 0.05, "requestdistribution": "zipfian"},
    "c": {"readproportion": 1.0, "updateproportion": 0.0, "requestdistribution": "zipfian"},
    "d": {"readproportion": 0.95, "updateproportion": 0.0, "insertproportion": 0.05,
          "requestdistribution": "latest"},
    "e": {"readproportion": 0.0, "updateproportion": 0.0, "scanproportion": 0.95,
          "insertproportion": 0.05, "requestdistribution": "zipfian", "maxscanlength": 100},
    "f": {"readproportion": 0.5, "updateproportion": 0.0, "readmodifywriteproportion": 0.5,
          "requestdistribution": "zipfian"},
}


@pytest.mark.parametrize("workload", sorted(MIXES))
def test_operation_mix_of_workloads_a_to_f(workload):
    n = 100_000
    p = props(operationcount=n, **MIXES[workload])
    plan = CoreWorkloadPlan(p, 0, 1, seed=21)
    c = plan.next_chunk(n)
    counts = np.bincount(c.op, minlength=5) / n
    for code, name in enumerate(("readproportion", "updateproportion", "insertproportion",
                                 "scanproportion", "readmodifywriteproportion")):
        assert abs(counts[code] - getattr(p, name)) < 0.01, (workload, name)
    ins = c.op == INSERT
    assert c.keynum[ins].tolist() == list(range(1000, 1000 + int(ins.sum())))
    last = 999 + np.cumsum(ins) - ins
    assert (c.keynum[~ins] <= last[~ins]).all() and (c.keynum >= 0).all()
    assert ((c.scan_len >= 1) & (c.scan_len <= 100))[c.op == SCAN].all()
    assert (c.scan_len[c.op != SCAN] == 0).all()
    # readallfields=true: reads take all fields; writeallfields=false: writes one field,
    # which for UPDATE is also its `field`
    upd = c.op == UPDATE
    assert (c.field[~upd] == -1).all() and np.array_equal(c.field[upd], c.write_field[upd])
    writes = upd | (c.op == READMODIFYWRITE)
    assert ((c.write_field >= 0) & (c.write_field < 10))[writes].all()
    assert (c.n_values[writes] == 1).all() and (c.n_values[ins] == 10).all()


def test_zipfian_plan_hottest_key_and_expected_new_keys():
    # workload A over 1000 records: the hottest key is fnvhash64(0) % 1000, and keys
    # above the last record (room for expectednewkeys) are redrawn
    p = props(readproportion=0.5, updateproportion=0.5, requestdistribution="zipfian",
              operationcount=10_000, insertproportion=0.0)
    c = CoreWorkloadPlan(p, 0, 1, seed=22).next_chunk(50_000)
    assert c.keynum.max() <= 999
    assert np.bincount(c.keynum).argmax() == fnvhash64(0) % 1001  # itemcount = insertcount + 1


def test_run_phase_inserts_claim_from_one_acknowledged_counter():
    # YCSB's AcknowledgedCounterGenerator shared by the clients (threads or processes):
    # inserts claim keys from it; reads stay at or below the highest key below which
    # every claimed insert returned, whichever client claimed it
    from benchlib.workloads import keycounter
    p = props(readproportion=0.5, updateproportion=0.0, insertproportion=0.5,
              requestdistribution="latest")
    shared = keycounter.create(1000, 3)
    try:
        plans = [CoreWorkloadPlan(p, c, 3, seed=23, counter=keycounter.attach(shared.name, 1000, 3, c, 1))
                 for c in range(3)]
        keys = []
        for plan in plans:
            c = plan.next_chunk(250)
            keys += c.keynum[c.op == INSERT].tolist()
            assert (c.keynum[c.op == READ] <= shared.last_value()).all()
        # claimed and unacknowledged: nobody reads them
        assert shared.last_value() == 999
        assert sorted(keys) == list(range(1000, 1000 + len(keys)))
        plans[1].acknowledge(10**6)          # client 1's block, all returned
        plans[2].acknowledge(10**6)
        assert shared.last_value() == 999    # client 0's block is still below theirs
        plans[0].acknowledge(10**6)
        assert shared.last_value() == 999 + len(keys)
        c = plans[0].next_chunk(20_000)
        assert c.keynum[c.op == READ].max() <= 999 + len(keys)
        assert (c.keynum[c.op == READ] > 999 + len(keys) - 50).any()   # latest: the newest
    finally:
        shared.close(unlink=True)


def test_claimed_keys_a_step_never_inserted_are_not_read():
    from benchlib.workloads import keycounter
    p = props(recordcount=10, readproportion=0.5, updateproportion=0.0, insertproportion=0.5,
              requestdistribution="latest")
    shared = keycounter.create(10, 1)
    try:
        CoreWorkloadPlan(p, 0, 1, seed=3, counter=shared).next_chunk(20)   # never ran
        shared.settle()
        plan = CoreWorkloadPlan(p, 0, 1, seed=4, counter=shared)
        lo, hi = plan.holes[0]
        plan.acknowledge(0)
        c = plan.next_chunk(400)
        plan.acknowledge(int((c.op == INSERT).sum()))
        c = plan.next_chunk(4000)
        reads = c.keynum[c.op == READ]
        assert not ((reads >= lo) & (reads < hi)).any() and reads.max() >= hi
    finally:
        shared.close(unlink=True)


def test_plan_fields_when_not_all_fields_and_reproducibility():
    p = props(readallfields="false", writeallfields="false", readproportion=0.25,
              updateproportion=0.25, scanproportion=0.25, readmodifywriteproportion=0.25)
    a = CoreWorkloadPlan(p, 0, 2, seed=24).next_chunk(20_000)
    b = CoreWorkloadPlan(p, 0, 2, seed=24).next_chunk(20_000)
    other = CoreWorkloadPlan(p, 1, 2, seed=24).next_chunk(20_000)
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("op", "keynum", "field"))
    assert not np.array_equal(a.keynum, other.keynum)
    assert ((a.field >= 0) & (a.field < 10)).all()
    upd = a.op == UPDATE
    assert np.array_equal(a.field[upd], a.write_field[upd])
    rmw = a.op == READMODIFYWRITE
    assert (a.field[rmw] != a.write_field[rmw]).mean() == pytest.approx(0.9, abs=0.03)
    p = props(writeallfields="true")
    c = CoreWorkloadPlan(p, 0, 1, seed=25).next_chunk(1000)
    assert (c.write_field == -1).all() and (c.n_values[c.op == UPDATE] == 10).all()


def test_exponential_plan_reads_the_recent_keys():
    p = props(recordcount=100_000, requestdistribution="exponential")
    c = CoreWorkloadPlan(p, 0, 1, seed=26).next_chunk(100_000)
    assert c.keynum.min() >= 0 and c.keynum.max() <= 99_999
    range_items = 100_000 * p.exponential_frac
    e = Exponential(95, range_items, rng())
    # keynum = last - int(x), redrawn while < 0: 95% within the newest recordcount * frac
    p_in = (1 - math.exp(-e.gamma * math.ceil(range_items))) / (1 - math.exp(-e.gamma * 100_000))
    assert within_5_sigma(int((c.keynum > 99_999 - range_items).sum()), 100_000, p_in)


def test_sequential_and_hotspot_and_uniform_plans_stay_in_the_insert_range():
    for dist in ("sequential", "hotspot", "uniform"):
        p = props(recordcount=2000, insertstart=500, insertcount=1000, requestdistribution=dist)
        c = CoreWorkloadPlan(p, 0, 1, seed=27).next_chunk(5000)
        assert c.keynum.min() >= 500 and c.keynum.max() <= 1499, dist
    p = props(requestdistribution="sequential")
    assert CoreWorkloadPlan(p, 0, 1).next_chunk(1002).keynum[-3:].tolist() == [999, 0, 1]


def test_key_names_of_the_plan():
    plan = CoreWorkloadPlan(props(insertorder="ordered", zeropadding=6), 0, 1, seed=1)
    assert plan.key_names([0, 42]) == ["user000000", "user000042"]


def test_load_keynums_split_contiguously():
    p = props(recordcount=1000, insertstart=100, insertcount=803)
    parts = [load_keynums(p, i, 4) for i in range(4)]
    assert [len(x) for x in parts] == [201, 201, 201, 200]
    assert np.concatenate(parts).tolist() == list(range(100, 903))
    assert load_keynums(props(), 0, 1).tolist() == list(range(1000))


def test_one_million_workload_a_operations_in_one_chunk():
    p = props(recordcount=1_000_000, operationcount=1_000_000, readproportion=0.5,
              updateproportion=0.5, requestdistribution="zipfian")
    plan = CoreWorkloadPlan(p, 0, 1, seed=28)
    c = plan.next_chunk(1_000_000)   # its speed is a bench's (bench/), never a test's
    assert len(c) == 1_000_000 and c.keynum.max() <= 999_999
