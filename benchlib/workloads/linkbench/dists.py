"""LinkBench's distributions on numpy: out-degree (``nlinks_func``), node and link
access (``*_function`` with their Zipf shapes), id2 choice, multiget sizes and
payload sizes.

The out-degree of a node is a function of its id, so that loaders and requesters
agree on it without talking: ``calc_nlinks``. As in LinkBench, ids are shuffled by an
invertible permutation before the degree is read off (a low shuffled rank = many
links), and the *correlated* access distributions (``read_function``,
``write_function``) walk the same ranks, so that popular ids have many links; the
``*_uncorr_*`` ones use a second permutation.

``real`` is LinkBench's empirical out-degree (``Distribution.dat``'s ``nlinks`` CDF),
summarized here as anchor points of that CDF with log-linear interpolation between
them: one in five nodes has no link, three in four at most one, 98.3 % at most ten,
and a tail of a few nodes with tens of thousands. Nodes are assigned degrees by
quantile of their rank, so a loaded graph has that distribution exactly.
``REAL`` access functions are LinkBench's empirical access distributions,
approximated by Zipf with the shapes FBWorkload.properties derives from them.
"""
from __future__ import annotations

import math

import numpy as np

from ..generators import Zipfian

DEFAULT_LINK_TYPE = 123456789   # LinkStore.DEFAULT_LINK_TYPE
DEFAULT_NODE_TYPE = 2048        # LinkStore.DEFAULT_NODE_TYPE
MAX_LINK_DATA = 255             # LinkStore.MAX_LINK_DATA
DATASIZE_SIGMA = 1.0            # Config.LINK_DATASIZE_SIGMA / NODE_DATASIZE_SIGMA
# (out-degree, % of nodes with at most that many links): anchors of Distribution.dat's nlinks
REAL_NLINKS_CDF = [(0, 19.75), (1, 72.98), (2, 86.74), (3, 91.82), (4, 94.46), (5, 95.87),
                   (7, 97.38), (10, 98.34), (20, 99.22), (50, 99.65), (100, 99.77),
                   (200, 99.84), (500, 99.90), (1000, 99.93), (10000, 99.99), (100000, 100.0)]
REAL_SHAPES = {"read": 0.8, "write": 0.741, "node_read": 0.625, "node_update": 0.606,
               "node_delete": 0.5}
# ID2Chooser: the chance that an operation's id2 names a loaded link
P_GET_EXIST, P_UPDATE_EXIST, P_DELETE_EXIST, P_ADD_EXIST = 0.5, 0.9, 0.9, 0.05


class Shuffler:
    """An invertible permutation of [0, n): x → (a·x + b) mod n, a coprime to n."""

    def __init__(self, n: int, salt: int):
        self.n = n
        a = int(0.6180339887 * n) | 1
        while math.gcd(a, n) != 1:
            a += 2
        self.a, self.b = a % n or 1, (salt * 7919) % n
        self.a_inv = pow(self.a, -1, n) if n > 1 else 1

    def permute(self, x: np.ndarray) -> np.ndarray:
        return (self.a * (x % self.n) + self.b) % self.n if self.n > 1 else x * 0

    def invert(self, y: np.ndarray) -> np.ndarray:
        return (self.a_inv * ((y - self.b) % self.n)) % self.n if self.n > 1 else y * 0


def _real_quantile(q: np.ndarray) -> np.ndarray:
    """Out-degree at quantile q ∈ [0, 1) of REAL_NLINKS_CDF (log-linear between anchors)."""
    ks = np.array([k for k, _ in REAL_NLINKS_CDF], dtype=float)
    ps = np.array([p for _, p in REAL_NLINKS_CDF]) / 100.0
    q = np.asarray(q, dtype=float)
    i = np.clip(np.searchsorted(ps, q, side="right"), 1, len(ps) - 1)
    lo, hi = ks[i - 1], ks[i]
    frac = (q - ps[i - 1]) / (ps[i] - ps[i - 1])
    inner = np.expm1(np.log1p(lo) + frac * (np.log1p(hi) - np.log1p(lo)))
    return np.where(q < ps[0], 0, np.floor(np.maximum(inner, lo + (frac > 0)))).astype(np.int64)


class Graph:
    """What loaders and requesters agree on: each id1's out-degree and its links' id2s."""

    def __init__(self, p):
        self.p = p
        self.start, self.n = p.startid1, p.id_range
        self.links_shuffle = Shuffler(self.n, 1)
        self.types = p.link_type_count

    def nlinks(self, id1: np.ndarray) -> np.ndarray:
        """The loaded out-degree of each id1 (all link types together)."""
        p, x = self.p, np.asarray(id1, dtype=np.int64) - self.start
        f, cfg, dflt = p.nlinks_func, p.nlinks_config, p.nlinks_default
        if f == "real":
            rank = self.links_shuffle.invert(x)
            return _real_quantile(1.0 - (rank + 0.5) / self.n)
        ids = x + self.start
        if f == "reciprocal":  # #links(id1) = range / (1 + rank): small ranks get many
            return self.n // (1 + self.links_shuffle.invert(x))
        if f == "multiples":
            return np.where(ids % cfg == 0, cfg, dflt)
        if f == "perfect_powers":  # squares (cfg 2), cubes (3) …: the root's links
            e = max(cfg, 2)
            root = np.rint(np.power(ids.astype(float), 1.0 / e)).astype(np.int64)
            return np.where(root ** e == ids, root, dflt)
        base = max(cfg, 2)  # exponential: the powers of cfg get as many links as their value
        lg = np.rint(np.log(np.maximum(ids, 1)) / math.log(base)).astype(np.int64)
        return np.where(base ** lg == ids, np.minimum(ids, self.n), dflt)

    def nlinks_of_type(self, id1: np.ndarray, type_ix: np.ndarray) -> np.ndarray:
        """ID2Chooser.calcLinkCount: a node's links split evenly among the types."""
        tot = self.nlinks(id1)
        return tot // self.types + (type_ix < tot % self.types)


class Access:
    """One access distribution over [startid1, maxid1) (LinkBench's AccessDistribution)."""

    def __init__(self, func: str, shape: float, kind: str, p, rng, shuffler: Shuffler,
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
                    kind, p, rng, Shuffler(g.n, 2))
    return Blend(corr, uncorr, getattr(p, f"{kind}_uncorr_blend"), rng)


def node_access(p, rng, kind: str) -> Access:
    return Access(getattr(p, f"{kind}_function"), getattr(p, f"{kind}_shape"), kind, p, rng,
                  Shuffler(p.id_range, 3))
