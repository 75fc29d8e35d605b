"""LinkBench's graph as the maintained Java client (mdcallag/linkbench) builds it: the
totals its loader loads, computed here from its algorithm (RealDistribution.expectedCount,
ID2Chooser.calcLinkCount); its shuffler (values printed by the Java class itself); the
id2s a request picks; the defaults of its FBWorkload.properties; its payloads'
compressibility (MotifDataGenerator.fill restated here from its Java source)."""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pytest

from benchlib.workloads.linkbench.dists import P_ADD_EXIST, P_UPDATE_EXIST, Graph
from benchlib.workloads.linkbench.javarand import NLINKS_SEED, InvertibleShuffler, JavaRandom
from benchlib.workloads.linkbench.payloads import Payloads
from benchlib.workloads.linkbench.properties import from_properties
from benchlib.workloads.linkbench.realdist import SHIPPED

SMALL = Path(__file__).parent / "data" / "linkbench" / "Distribution_small.dat"


def java_total_links(dist: Path, maxid1: int, startid1: int = 1, types: int = 2) -> int:
    """What LinkBenchLoad loads: for every id1, getNlinks of its shuffled id (a
    permutation, so the sum over all ids does not depend on it): the value of the first
    nlinks point whose cumulative probability >= 1 - rank/n; at least `types`, then
    (total // types) per type."""
    raw = dist.read_bytes()
    lines = (gzip.decompress(raw) if dist.suffix == ".gz" else raw).decode().splitlines()
    pts = []
    for line in lines[lines.index("nlinks") + 1:]:
        tok = line.split()
        if len(tok) != 2:
            break
        pts.append((int(tok[0]), float(tok[1]) / 100))
    vals, probs = np.array([v for v, _ in pts]), np.array([p for _, p in pts])
    n = maxid1 - startid1
    u = 1.0 - np.arange(n) / n
    v = np.maximum(vals[np.searchsorted(probs, u, side="left")], types)
    return int((types * (v // types)).sum())


@pytest.mark.parametrize("maxid1", [100001, 1000001])
def test_graph_totals_are_the_java_loaders(maxid1):
    p = from_properties({"maxid1": maxid1})
    ours = int(Graph(p).nlinks(np.arange(1, maxid1)).sum())
    java = java_total_links(SHIPPED / "Distribution.dat.gz", maxid1)
    assert abs(ours - java) <= 0.01 * java
    # as the real run's load log says (4597662 links at 100001, 2.00 counts per node)
    assert maxid1 != 100001 or java == 4597662


def test_the_2012_defaults_and_a_config_data_file():
    p = from_properties({"maxid1": 100001, "linkbench_defaults": 2012})
    assert (p.getlinklist, p.link_datasize, p.data_file) == (50.7119145, 8, "config/Distribution_2011.dat")
    java = java_total_links(SHIPPED / "Distribution_2011.dat.gz", 100001)
    assert int(Graph(p).nlinks(np.arange(1, 100001)).sum()) == java
    q = from_properties({})   # the maintained client's FBWorkload.properties
    assert (q.getnode, q.getlinklist, q.getlink, q.link_datasize, q.node_datasize) == \
        (43.9869, 22.57039, 12.14725, 23, 168)
    s = from_properties({"maxid1": 5001, "data_file": str(SMALL)})
    assert int(Graph(s).nlinks(np.arange(1, 5001)).sum()) == java_total_links(SMALL, 5001)
    with pytest.raises(ValueError, match="data_file: nope/Other.dat: no such file"):
        from_properties({"data_file": "nope/Other.dat"})


def test_java_random_and_shuffler_are_javas():
    """Values printed by java.util.Random and LinkBench's InvertibleShuffler (javac'd
    from the maintained client's source: new InvertibleShuffler(NLINKS_SEED, 1024, 100000))."""
    r = JavaRandom(0)
    assert r.next_bits(32) == -1155484576 and JavaRandom(0).next_double() == 0.730967787376657
    s = InvertibleShuffler(NLINKS_SEED, 100000)
    assert int(s.invert([0])[0]) == 86016 and int(s.permute([0])[0]) == 14336
    x = np.arange(100000)
    assert (s.invert(s.permute(x)) == x).all() and len(set(s.permute(x).tolist())) == 100000


def test_request_id2s_hit_the_loaded_links_as_id2chooser():
    """chooseForOp: with p_exist an id2 among id1's loaded ones, else any id: an
    UPDATE_LINK finds its link ~90 % of the time, an ADD_LINK ~5 % (the real run's
    upd_to_add 10.4 %, add_to_upd 5.0 %)."""
    p = from_properties({"maxid1": 100001})
    g, rng = Graph(p), np.random.default_rng(1)
    id1 = rng.integers(1, 100001, 200000)
    nl = g.nlinks_of_type(id1)
    for p_exist in (P_UPDATE_EXIST, P_ADD_EXIST):
        id2 = g.choose_id2(rng, id1, nl, p_exist)
        hit = ((id2 - id1) >= 0) & ((id2 - id1) < nl)
        assert abs(hit.mean() - p_exist) < 0.01


def java_motif_fill(rng: JavaRandom, motif: list[int] | None, n: int, lo: int, hi: int,
                    uniq: float) -> tuple[list[int], bytes]:
    """MotifDataGenerator.fill (512 motif bytes, chunks of 128), from its Java source."""
    rng_range = hi - lo + 1
    if motif is None:
        motif = [lo + rng.next_int(rng_range) for _ in range(512)]
    out = bytearray(n)
    for i in range(0, n, 128):
        if rng.next_double() < uniq:
            for j in range(i, min(n, i + 128)):
                out[j] = lo + rng.next_int(rng_range)
        else:
            this = min(128, n - i)
            k = rng.next_int(512 - this + 1)
            out[i:i + this] = bytes(motif[k:k + this])
    return motif, bytes(out)


@pytest.mark.parametrize("prefix, lo, hi, uniq", [("link_add", 32, 100, 0.225),
                                                  ("node_add", 50, 220, 0.63)])
def test_payloads_compress_as_the_java_generators(prefix, lo, hi, uniq):
    sizes = np.minimum(np.rint(np.random.default_rng(2).lognormal(
        np.log(23 if prefix == "link_add" else 168), 1.0, 20000)), 255).astype(int)
    gen = Payloads({}, prefix, np.random.default_rng(3))
    ours = b"".join(gen.fill(sizes))
    jr, motif, parts = JavaRandom(4), None, []
    for n in sizes.tolist():
        motif, data = java_motif_fill(jr, motif, n, lo, hi, uniq)
        parts.append(data)
    java = b"".join(parts)
    assert len(ours) == len(java)
    assert [len(b) for b in gen.fill(sizes)] == sizes.tolist()   # made a slice at a time
    ratio = [len(zlib.compress(b, 6)) / len(b) for b in (ours, java)]
    assert abs(ratio[0] / ratio[1] - 1) < 0.05, ratio
    assert min(ours) >= lo and max(ours) <= hi
    rand = Payloads({f"{prefix}_datagen": "UniformDataGenerator"}, prefix,
                    np.random.default_rng(3)).fill(sizes)
    assert len(zlib.compress(b"".join(rand))) > 1.2 * len(zlib.compress(ours))


def test_a_node_batch_is_made_in_memory_that_does_not_grow_with_it():
    """A loader's slice of nodes (8 batches of 5,000, payloads of ~280 bytes: 11 MB) is
    made a slice of bytes at a time: its index arrays stayed 280 MB when made at once."""
    import tracemalloc
    sizes = np.minimum(np.rint(np.random.default_rng(2).lognormal(np.log(168), 1.0, 40_000)),
                       4096).astype(np.int64)
    gen = Payloads({}, "node_add", np.random.default_rng(3))
    tracemalloc.start()
    try:
        out = gen.fill(sizes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    made = sum(len(b) for b in out)
    assert made == int(sizes.sum()) > 10e6
    assert peak < 3 * made, (peak, made)   # the payloads themselves and a few MB of slices


def test_total_links_is_the_same_a_slice_of_ids_at_a_time():
    g = Graph(from_properties({"maxid1": 300_001, "data_file": str(SMALL)}))
    assert g.total_links() == g.total_links(1 << 20) == g.total_links(50_000)
