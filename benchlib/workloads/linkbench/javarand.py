"""What LinkBench's graph depends on, as its Java code computes it: ``java.util.Random``
(the 48-bit linear congruential generator, for the seeds LinkBench fixes) and
``InvertibleShuffler`` (the permutation of ids by which a node's out-degree and its
popularity are assigned), so that every id1 gets the out-degree the Java loader gives it.
"""
from __future__ import annotations

import numpy as np

_MULT, _ADD, _MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1

# RealDistribution's shuffler seeds and groups (DistributionType → seed)
SHUFFLE_GROUPS = 1024
NLINKS_SEED = 20343988438726021        # the out-degree, and the correlated link accesses
UNCORR_SEED = 53238253823453           # link accesses uncorrelated with the out-degree
NODE_SEED = 4766565305853767165        # node reads, updates and deletes


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


class JavaRandom:
    """java.util.Random: the same numbers for the same seed."""

    def __init__(self, seed: int):
        self.seed = (seed ^ _MULT) & _MASK

    def next_bits(self, bits: int) -> int:
        self.seed = (self.seed * _MULT + _ADD) & _MASK
        return _int32(self.seed >> (48 - bits))

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        r, m = self.next_bits(31), bound - 1
        if bound & m == 0:
            return _int32((bound * r) >> 31)
        u = r
        r = u % bound
        while _int32(u - r + m) < 0:   # Java's overflow test: a draw from the short last run
            u = self.next_bits(31)
            r = u % bound
        return r

    def next_double(self) -> float:
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * 2.0 ** -53


class InvertibleShuffler:
    """LinkBench's InvertibleShuffler(seed, groups, n), its permute and invertPermute on
    numpy arrays of ids in [0, n)."""

    def __init__(self, seed: int, n: int, groups: int = SHUFFLE_GROUPS):
        groups = min(groups, n)
        rng = JavaRandom(seed)
        self.n, self.groups = n, groups
        self.min_group = n // groups
        self.params = np.array([abs(rng.next_int(self.min_group)) for _ in range(groups)],
                               dtype=np.int64)
        self.down = (n // groups) * groups
        self.up = n if n == self.down else self.down + groups

    def permute(self, i, inverse: bool = False) -> np.ndarray:
        i = np.asarray(i, dtype=np.int64)
        group = i % self.groups
        big = group < self.n % self.groups
        rotate = self.params[group]
        if inverse:
            rotate = np.where(big, self.min_group + 1 - rotate, self.min_group - rotate)
        j = i + self.groups * rotate
        wrapped = np.where(big, j % self.up, j % self.down)
        out = np.where(j < self.n, j, wrapped)
        return np.where(out >= self.n, group, out)

    def invert(self, i) -> np.ndarray:
        return self.permute(i, inverse=True)
