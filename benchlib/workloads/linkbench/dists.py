"""LinkBench's distributions on numpy: out-degree (``nlinks_func``), node and link
access (``*_function`` with their Zipf shapes), id2 choice, multiget sizes and
payload sizes.

The out-degree of a node is a function of its id, so that loaders and requesters
agree on it without talking, and it is the Java loader's (ID2Chooser.calcTotalLinkCount
with LinkBench's own InvertibleShuffler and seeds, ``javarand.py``): the id is
unshuffled to a rank (0: the most links), ``real`` reads the out-degree at that rank off
the ``data_file``'s ``nlinks`` CDF (``realdist.py``), the arithmetic functions compute it
from the id unshuffled; every node gets at least one link per type, and each type gets
the total // link_type_count (so the loaded graph is the Java loader's, link for link).
The *correlated* access distributions (``read_function``, ``write_function``) permute
their ranks with the same shuffler, so that popular ids have many links; the
``*_uncorr_*`` ones and the node ones with LinkBench's other two seeds.
``REAL`` access functions are LinkBench's empirical access distributions,
approximated by Zipf with the shapes FBWorkload.properties derives from them.
"""
from __future__ import annotations

import math

import numpy as np

from ..generators import Zipfian
from .javarand import NLINKS_SEED, NODE_SEED, UNCORR_SEED, InvertibleShuffler
from .realdist import expected_count

DEFAULT_LINK_TYPE = 123456789   # LinkStore.DEFAULT_LINK_TYPE
DEFAULT_NODE_TYPE = 2048        # LinkStore.DEFAULT_NODE_TYPE
MAX_LINK_DATA = 255             # LinkStore.MAX_LINK_DATA
DATASIZE_SIGMA = 1.0            # Config.LINK_DATASIZE_SIGMA / NODE_DATASIZE_SIGMA
REAL_SHAPES = {"read": 0.8, "write": 0.741, "node_read": 0.625, "node_update": 0.606,
               "node_delete": 0.5}
# ID2Chooser: the chance that an operation's id2 names a loaded link
P_GET_EXIST, P_UPDATE_EXIST, P_DELETE_EXIST, P_ADD_EXIST = 0.5, 0.9, 0.9, 0.05


class Graph:
    """What loaders and requesters agree on: each id1's out-degree and its links' id2s."""

    def __init__(self, p):
        self.p = p
        self.start, self.n = p.startid1, p.id_range
        self.links_shuffle = InvertibleShuffler(NLINKS_SEED, self.n)
        self.types = p.link_type_count

    def _raw(self, id1: np.ndarray) -> np.ndarray:
        """LinkDistribution.getNlinks: the out-degree before the per-type split."""
        p, x = self.p, np.asarray(id1, dtype=np.int64) - self.start
        f, cfg, dflt = p.nlinks_func, p.nlinks_config, p.nlinks_default
        if f == "real":   # shuffled, so that the many-link nodes are spread over the ids
            return expected_count(self.links_shuffle.invert(x), self.n, p.data_file)
        ids = x + self.start
        if f == "const":
            return np.full(len(ids), dflt, dtype=np.int64)
        if f == "reciprocal":   # default + ceil(n / (id1 - startid1)); the first id: n
            return dflt + np.ceil(self.n / np.maximum(x, 1)).astype(np.int64)
        if f == "multiples":
            return dflt + np.where(ids % cfg == 0, cfg, 0)
        c = max(cfg, 2)
        if f == "exponential":   # the powers c^k get c^k - c^(k-1) more
            k = np.ceil(np.log(np.maximum(ids, 1)) / math.log(c)).astype(np.int64)
            hit = c ** k == ids
            return dflt + np.where(hit, ids - c ** np.maximum(k - 1, 0), 0)
        root = np.ceil(np.power(ids.astype(float), 1.0 / c)).astype(np.int64)  # perfect powers
        return dflt + np.where(root ** c == ids, ids - (root - 1) ** c, 0)

    def nlinks_of_type(self, id1: np.ndarray, type_ix=None) -> np.ndarray:
        """ID2Chooser.calcLinkCount: at least one link per type, the total // types each."""
        return np.maximum(self._raw(id1), self.types) // self.types

    def nlinks(self, id1: np.ndarray) -> np.ndarray:
        """The loaded out-degree of each id1 (all link types together)."""
        return self.nlinks_of_type(id1) * self.types

    def total_links(self, step: int = 1 << 16) -> int:
        """The links the load writes, over all ids, 65,536 at a time (a million at a time
        held 66 MiB of arrays in the controller at maxid1 = 2,000,001; this, 4 MiB)."""
        return sum(int(self.nlinks(np.arange(a, min(a + step, self.p.maxid1))).sum())
                   for a in range(self.start, self.p.maxid1, step))

    def choose_id2(self, rng, id1: np.ndarray, nlinks: np.ndarray, p_exist) -> np.ndarray:
        """ID2Chooser.chooseForOp: with probability p_exist one of id1's loaded id2s
        (id1 + [0, nlinks)), else any id in [0, maxid1)."""
        k = len(id1)
        existing = rng.random(k) < p_exist
        near = id1 + np.floor(rng.random(k) * np.maximum(nlinks, 1)).astype(np.int64)
        return np.where(existing, near, rng.integers(0, self.p.maxid1, k))


class Access:
    """One access distribution over [startid1, maxid1) (LinkBench's AccessDistribution)."""

    def __init__(self, func: str, shape: float, kind: str, p, rng, shuffler: InvertibleShuffler,
                 cfg: int = 2):
        self.func, self.rng, self.shuffler = func, rng, shuffler
        self.start, self.n, self.cfg = p.startid1, p.id_range, max(cfg, 2)
        self.next_rr = 0
        self.shape = REAL_SHAPES[kind] if func == "REAL" else \
            (0.99 if func == "RECIPROCAL" else shape)
        if func in ("ZipfDistribution", "REAL", "RECIPROCAL") and self.shape < 1:
            self.zipf = Zipfian(0, self.n - 1, rng, self.shape)

    def next(self, k: int) -> np.ndarray:
        f, n = self.func, self.n
        if f in ("ZipfDistribution", "REAL", "RECIPROCAL"):
            ranks = self.zipf.next_batch(k) if self.shape < 1 else self._steep(k)
            return self.start + self.shuffler.permute(np.asarray(ranks, dtype=np.int64))
        if f == "UniformDistribution":
            return self.rng.integers(self.start, self.start + n, k)
        if f == "ROUND_ROBIN":
            out = self.start + (self.next_rr + np.arange(k)) % n
            self.next_rr = (self.next_rr + k) % n
            return out
        if f == "MULTIPLE":
            m = max(n // self.cfg, 1)
            return self.start + (self.rng.integers(0, m, k) * self.cfg) % n
        exps = self.cfg if f == "PERFECT_POWER" else None
        if exps:  # perfect powers k^cfg in range
            top = max(int(n ** (1.0 / exps)), 1)
            return self.start + (self.rng.integers(1, top + 1, k) ** exps) % n
        top = max(int(math.log(max(n, 2), self.cfg)), 0)  # POWER: cfg^j in range
        return self.start + (self.cfg ** self.rng.integers(0, top + 1, k)) % n


    def _steep(self, k: int) -> np.ndarray:
        """Zipf ranks for a shape > 1 (numpy's sampler), redrawn until below n."""
        out = self.rng.zipf(self.shape, k) - 1
        while (bad := np.flatnonzero(out >= self.n)).size:
            out[bad] = self.rng.zipf(self.shape, bad.size) - 1
        return out


class Blend:
    """A correlated distribution mixed with an uncorrelated one (``*_uncorr_blend`` %)."""

    def __init__(self, corr: Access, uncorr: Access | None, blend_pct: float, rng):
        self.corr, self.uncorr, self.blend, self.rng = corr, uncorr, blend_pct / 100.0, rng

    def next(self, k: int) -> np.ndarray:
        out = self.corr.next(k)
        if self.uncorr is not None and self.blend > 0:
            pick = self.rng.random(k) < self.blend
            out[pick] = self.uncorr.next(int(pick.sum()))
        return out


def multiget_sizes(p, rng, k: int) -> np.ndarray:
    """id2s per MULTIGET_LINK: LinkBench's GeometricDistribution in [min, max]."""
    lo, hi = p.link_multiget_dist_min, p.link_multiget_dist_max
    if p.link_multiget_dist == "":
        return np.ones(k, dtype=np.int64)
    if p.link_multiget_dist == "UniformDistribution":
        return rng.integers(lo, hi + 1, k)
    return np.minimum(lo - 1 + rng.geometric(p.link_multiget_dist_prob, k), hi)


def data_sizes(median: float, cap: int, rng, k: int) -> np.ndarray:
    """Payload sizes: LogNormalDistribution with the configured median, sigma 1."""
    if median <= 0:
        return np.zeros(k, dtype=np.int64)
    return np.minimum(np.rint(rng.lognormal(math.log(median), DATASIZE_SIGMA, k)), cap).astype(np.int64)


def link_access(p, rng, kind: str) -> Blend:
    """The link read (``kind='read'``) or write distribution, blended as configured."""
    g = Graph(p)
    corr = Access(getattr(p, f"{kind}_function"), getattr(p, f"{kind}_shape"), kind, p, rng,
                  g.links_shuffle)
    uncorr = Access(getattr(p, f"{kind}_uncorr_function"), getattr(p, f"{kind}_uncorr_shape"),
                    kind, p, rng, InvertibleShuffler(UNCORR_SEED, g.n))
    return Blend(corr, uncorr, getattr(p, f"{kind}_uncorr_blend"), rng)


def node_access(p, rng, kind: str) -> Access:
    return Access(getattr(p, f"{kind}_function"), getattr(p, f"{kind}_shape"), kind, p, rng,
                  InvertibleShuffler(NODE_SEED, p.id_range))
