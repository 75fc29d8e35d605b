"""Key, value-length and choice generators, vectorized with numpy: YCSB's, shared by the
workloads that draw keys as YCSB does (YCSB, kv, LinkBench's zipfian).

Semantics follow YCSB 0.17/0.18 (``core/.../generator/*.java``, ``Utils.fnvhash64``
and ``CoreWorkload.java``), including their quirks (eta recomputed with the
*original* item count, the histogram's off-by-one buckets, the 1e10-item zipfian
behind the scrambled one). What differs is only how the numbers are drawn: a
seeded ``numpy.random.Generator`` instead of ``ThreadLocalRandom``, unbiased
``integers`` instead of ``abs(nextLong()) % n``, and whole batches at a time, so
that the driver prepares a chunk of operations before its timed loop.

How CoreWorkload wires them into a client's stream of operations is in
:mod:`.ycsb.plan`.
"""
from __future__ import annotations

import math
import string
from pathlib import Path

import numpy as np

from ..inputfiles import PARAMETER_BYTES, InputFileError, read_bounded
from .properties_file import PropertyFileError
from .zeta import DIRECT_MAX_TERMS, zeta, zeta_sum

ZIPFIAN_CONSTANT = 0.99                 # ZipfianGenerator.ZIPFIAN_CONSTANT
SCRAMBLED_ITEM_COUNT = 10_000_000_000   # ScrambledZipfianGenerator.ITEM_COUNT
SCRAMBLED_ZETAN = 26.46902820178302     # its precomputed zeta(ITEM_COUNT, 0.99)
INT_MAX = 2**31 - 1                     # Java Integer.MAX_VALUE
MAX_REDRAW_ROUNDS = 10_000   # nextKeynum's rejection loop; only a broken setup hits it
ALPHABET = np.frombuffer((string.ascii_letters + string.digits).encode(), dtype=np.uint8)

_FNV_OFFSET_BASIS_64 = np.uint64(0xCBF29CE484222325)
_FNV_PRIME_64 = np.uint64(1099511628211)


def fnvhash64(values) -> np.ndarray:
    """``Utils.fnvhash64`` of each value: FNV-1a over the 8 low-first bytes, then ``Math.abs``.

    uint64 arithmetic wraps like Java's long; ``Math.abs(Long.MIN_VALUE)`` stays
    negative, and so does numpy's int64 abs.
    """
    x = np.asarray(values, dtype=np.int64).view(np.uint64)
    h = np.full(x.shape, _FNV_OFFSET_BASIS_64, dtype=np.uint64)
    for i in range(8):
        h ^= (x >> np.uint64(8 * i)) & np.uint64(0xFF)
        h *= _FNV_PRIME_64
    return np.abs(h.view(np.int64))


def build_key_names(keynums, hashed: bool, zeropadding: int, prefix: str = "user") -> list[str]:
    """``CoreWorkload.buildKeyName`` for each keynum.

    Parameters
    ----------
    keynums : array-like of int
    hashed : bool
        ``insertorder=hashed``: the key is ``fnvhash64(keynum)``, else keynum itself.
    zeropadding : int
        Left-pad the decimal number with '0' to this many characters.
    """
    nums = (fnvhash64(keynums) if hashed else np.asarray(keynums, dtype=np.int64)).tolist()
    if zeropadding <= 1:  # every decimal has at least one character: nothing to pad
        return [f"{prefix}{v}" for v in nums]
    return [prefix + str(v).rjust(zeropadding, "0") for v in nums]


# ------------------------------------------------------------------ generators

class Constant:
    """``ConstantIntegerGenerator``."""

    def __init__(self, value: int):
        self.value = int(value)

    def next_batch(self, n: int) -> np.ndarray:
        return np.full(n, self.value, dtype=np.int64)


class UniformLong:
    """``UniformLongGenerator(lb, ub)``: uniform over [lb, ub] inclusive."""

    def __init__(self, lb: int, ub: int, rng: np.random.Generator):
        if ub < lb:
            raise ValueError(f"uniform over an empty range [{lb}, {ub}]")
        self.lb, self.ub, self.rng = int(lb), int(ub), rng

    def next_batch(self, n: int) -> np.ndarray:
        return self.rng.integers(self.lb, self.ub + 1, size=n, dtype=np.int64)


class Zipfian:
    """``ZipfianGenerator(min, max, theta[, zetan])``: Gray et al., SIGMOD 1994.

    Item ``min`` is the most popular, ``min + 1`` the next, … . :meth:`next_for`
    is ``nextLong(itemcount)`` with a per-draw item count (``SkewedLatest``):
    zeta grows incrementally, never shrinks (``allowitemcountdecrease=false``).
    """

    def __init__(self, min_item: int, max_item: int, rng: np.random.Generator,
                 theta: float = ZIPFIAN_CONSTANT, zetan: float | None = None):
        self.base, self.items = int(min_item), int(max_item) - int(min_item) + 1
        if self.items < 1:
            raise ValueError(f"zipfian over an empty range [{min_item}, {max_item}]")
        self.rng, self.theta = rng, float(theta)
        self.alpha = 1.0 / (1.0 - self.theta)
        self.zeta2theta = zeta(2, self.theta)
        self.zetan = zeta(self.items, self.theta) if zetan is None else float(zetan)
        self.countforzeta = self.items
        self.eta = float(self._eta(self.zetan))

    def _eta(self, zetan):
        # YCSB uses the constructor's item count here even after the count grew
        with np.errstate(divide="ignore", invalid="ignore"):  # 2 items: 0/0, never used
            return np.divide(1.0 - (2.0 / self.items) ** (1.0 - self.theta),
                             1.0 - self.zeta2theta / np.asarray(zetan, dtype=np.float64))

    def _draw(self, u: np.ndarray, itemcount, zetan, eta) -> np.ndarray:
        # itemcount, zetan, eta: scalars, or arrays aligned with u (next_for)
        uz = u * zetan
        out = np.full(u.shape, self.base, dtype=np.int64)
        out[uz >= 1.0] = self.base + 1
        tail = uz >= 1.0 + 0.5 ** self.theta

        def at_tail(a):
            return a[tail] if np.ndim(a) else a
        e = at_tail(eta)
        x = at_tail(itemcount) * np.power(e * u[tail] - e + 1.0, self.alpha)
        out[tail] = self.base + x.astype(np.int64)  # Java's (long) cast: truncation, x >= 0
        return out

    def next_batch(self, n: int) -> np.ndarray:
        return self._draw(self.rng.random(n), self.items, self.zetan, self.eta)

    def next_for(self, itemcounts) -> np.ndarray:
        """One draw per entry of ``itemcounts`` (``nextLong(itemcount)`` each, in order)."""
        counts = np.asarray(itemcounts, dtype=np.int64)
        if counts.size == 0:
            return np.empty(0, dtype=np.int64)
        m = np.maximum.accumulate(np.maximum(counts, self.countforzeta))
        uniq, inv = np.unique(m, return_inverse=True)
        if uniq[-1] > self.countforzeta:
            if uniq[-1] - self.countforzeta <= DIRECT_MAX_TERMS:
                terms = np.arange(self.countforzeta + 1, uniq[-1] + 1, dtype=np.float64) ** -self.theta
                cums = np.concatenate(([0.0], np.cumsum(terms)))
                zu = self.zetan + cums[uniq - self.countforzeta]
            else:
                zu, z, c = np.empty(len(uniq)), self.zetan, self.countforzeta
                for j, v in enumerate(uniq.tolist()):
                    z, c = zeta_sum(c, v, self.theta, z), v
                    zu[j] = z
            zetan = zu[inv]
            eta = self._eta(zetan)
            self.zetan, self.countforzeta, self.eta = float(zu[-1]), int(uniq[-1]), float(eta[-1])
        else:
            zetan, eta = self.zetan, self.eta
        return self._draw(self.rng.random(len(counts)), counts, zetan, eta)


class ScrambledZipfian:
    """``ScrambledZipfianGenerator(min, max)``: zipfian popularity scattered by fnvhash64.

    As YCSB: a zipfian over [0, 1e10] (zeta precomputed for θ = 0.99), then
    ``min + fnvhash64(v) % itemcount``; so the hottest key has probability ≈ 1/ZETAN
    whatever the item count.
    """

    def __init__(self, min_item: int, max_item: int, rng: np.random.Generator,
                 theta: float = ZIPFIAN_CONSTANT):
        self.min, self.itemcount = int(min_item), int(max_item) - int(min_item) + 1
        if self.itemcount < 1:
            raise ValueError(f"zipfian over an empty range [{min_item}, {max_item}]")
        zetan = SCRAMBLED_ZETAN if theta == ZIPFIAN_CONSTANT else None
        self.gen = Zipfian(0, SCRAMBLED_ITEM_COUNT, rng, theta, zetan)

    def next_batch(self, n: int) -> np.ndarray:
        # np.fmod: Java's % keeps the dividend's sign (only fnvhash64 == Long.MIN_VALUE)
        return self.min + np.fmod(fnvhash64(self.gen.next_batch(n)), self.itemcount)


class SkewedLatest:
    """``SkewedLatestGenerator``: ``last - zipfian(last)``, favouring the newest keys.

    ``last_keynum`` is the basis counter's ``lastValue()`` at construction;
    :meth:`next_for` takes the per-draw last keynum as it moves with inserts.
    """

    def __init__(self, last_keynum: int, rng: np.random.Generator, theta: float = ZIPFIAN_CONSTANT):
        if last_keynum < 1:
            raise ValueError("the 'latest' distribution needs recordcount >= 2")
        self.last = int(last_keynum)
        self.zipf = Zipfian(0, self.last - 1, rng, theta)  # new ZipfianGenerator(lastValue)

    def next_batch(self, n: int) -> np.ndarray:
        return self.next_for(np.full(n, self.last, dtype=np.int64))

    def next_for(self, last_keynums) -> np.ndarray:
        last = np.asarray(last_keynums, dtype=np.int64)
        return last - self.zipf.next_for(last)


class Hotspot:
    """``HotspotIntegerGenerator``: a ``hot_opn_fraction`` of draws from the lowest
    ``hotset_fraction`` of [lb, ub], uniform within the hot and the cold set."""

    def __init__(self, lb: int, ub: int, hotset_fraction: float, hot_opn_fraction: float,
                 rng: np.random.Generator):
        if not (0.0 <= hotset_fraction <= 1.0 and 0.0 <= hot_opn_fraction <= 1.0):
            raise ValueError("hotspot fractions must be in [0, 1]")
        lb, ub = min(lb, ub), max(lb, ub)  # YCSB swaps reversed bounds too
        interval = ub - lb + 1
        self.lb, self.hot = int(lb), int(interval * hotset_fraction)  # (int) cast truncates
        self.cold, self.p_hot, self.rng = interval - self.hot, hot_opn_fraction, rng
        if (self.hot == 0 and hot_opn_fraction > 0) or (self.cold == 0 and hot_opn_fraction < 1):
            raise ValueError(f"hotspot: an empty hot or cold set ({self.hot} hot, {self.cold} "
                             f"cold keys) would be drawn from")  # YCSB: division by zero

    def next_batch(self, n: int) -> np.ndarray:
        hot = self.rng.random(n) < self.p_hot
        out = np.empty(n, dtype=np.int64)
        k = int(hot.sum())
        if k:
            out[hot] = self.lb + self.rng.integers(0, self.hot, k)
        if n - k:
            out[~hot] = self.lb + self.hot + self.rng.integers(0, self.cold, n - k)
        return out


class Sequential:
    """``SequentialGenerator(start, end)``: start, start+1, …, end, start, … (wraps).

    YCSB's counter is shared by all threads; client ``offset`` of ``stride``
    clients takes every stride-th value of it, so C clients together walk the
    range once per interval/C draws each, as YCSB's threads do.
    """

    def __init__(self, start: int, end: int, offset: int = 0, stride: int = 1):
        if end < start:
            raise ValueError(f"sequential over an empty range [{start}, {end}]")
        self.start, self.interval = int(start), int(end) - int(start) + 1
        self.counter, self.stride = int(offset), int(stride)

    def next_batch(self, n: int) -> np.ndarray:
        k = self.counter + self.stride * np.arange(n, dtype=np.int64)
        self.counter += self.stride * n
        return self.start + k % self.interval


class Exponential:
    """``ExponentialGenerator(percentile, range)``: ``percentile``% of draws are < range."""

    def __init__(self, percentile: float, range_items: float, rng: np.random.Generator):
        if not (0 < percentile < 100 and range_items > 0):
            raise ValueError("exponential needs 0 < percentile < 100 and a positive range")
        self.gamma, self.rng = -math.log(1.0 - percentile / 100.0) / range_items, rng

    def next_float(self, n: int) -> np.ndarray:
        with np.errstate(divide="ignore"):  # u == 0 gives +inf, as in Java
            return -np.log(self.rng.random(n)) / self.gamma

    def next_batch(self, n: int) -> np.ndarray:
        # CoreWorkload takes .intValue(): truncation, saturating at Integer.MAX_VALUE
        return np.minimum(self.next_float(n), INT_MAX).astype(np.int64)


class Discrete:
    """``DiscreteGenerator``: index i with probability weights[i] / sum(weights)."""

    def __init__(self, weights, rng: np.random.Generator):
        w = np.asarray(weights, dtype=np.float64)
        if (w < 0).any() or not (w > 0).any():
            raise ValueError(f"discrete weights must be >= 0 with one > 0, got {w.tolist()}")
        self.cum, self.last, self.rng = np.cumsum(w / w.sum()), int(np.flatnonzero(w)[-1]), rng

    def next_batch(self, n: int) -> np.ndarray:
        # Java: first i with val < w_i/sum after subtracting the earlier ones = first cum_i > u
        idx = np.searchsorted(self.cum, self.rng.random(n), side="right")
        return np.minimum(idx, self.last).astype(np.int64)  # a cum sum that rounds below 1


class Histogram:
    """``HistogramGenerator``: bucket sizes in units of ``block_size``, YCSB's off-by-one kept."""

    def __init__(self, buckets, block_size: int, rng: np.random.Generator):
        self.buckets = np.asarray(buckets, dtype=np.int64)
        self.area, self.block, self.rng = int(self.buckets.sum()), int(block_size), rng
        if len(self.buckets) == 0 or self.area <= 0:
            raise ValueError("a histogram needs buckets with a positive total")
        self.cum = np.cumsum(self.buckets[:-1])

    @classmethod
    def from_file(cls, path: str | Path, rng: np.random.Generator) -> Histogram:
        """Read YCSB's format: ``BlockSize<TAB>n``, then ``bucket<TAB>count`` lines."""
        try:
            lines = read_bounded(path, PARAMETER_BYTES, "histogram file").decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            raise PropertyFileError(path, None, "no such file (the histogram file)") from None
        except InputFileError as e:
            raise PropertyFileError(path, None, e.why) from None
        head = lines[0].split("\t") if lines else []
        if len(head) < 2 or head[0] != "BlockSize" or not head[1].strip().isdigit():
            raise PropertyFileError(path, 1, "'BlockSize<TAB><n>'")
        buckets: list[int] = []
        for lineno, line in enumerate(lines[1:], start=2):
            parts = line.split("\t")
            if not line.strip():
                continue
            try:
                bucket, count = int(parts[0]), int(parts[1])
            except (ValueError, IndexError):
                raise PropertyFileError(path, lineno, f"'bucket<TAB>count', got {line[:60]!r}") from None
            if not 0 <= bucket <= len(buckets):  # Java's ArrayList.add(index, value)
                raise PropertyFileError(path, lineno, f"bucket <= {len(buckets)}, got {bucket}")
            buckets.insert(bucket, count)
        return cls(buckets, int(head[1]), rng)

    def next_batch(self, n: int) -> np.ndarray:
        number = self.rng.integers(0, self.area, n)
        i = np.searchsorted(self.cum, number, side="left")  # first i: number - cum[i] <= 0
        last = len(self.buckets) - 1
        return np.where(i < last, i + 1, last).astype(np.int64) * self.block


class ValuePool:
    """Random alphanumeric field values, cut from one pre-generated string."""

    def __init__(self, rng: np.random.Generator, max_len: int, size: int = 1 << 18,
                 as_bytes: bool = False):
        raw = ALPHABET[rng.integers(0, len(ALPHABET), size + max_len)].tobytes()
        self.text = raw if as_bytes else raw.decode()  # bytes for drivers that send bytes
        self.raw = np.frombuffer(raw, np.uint8)
        self.size = size
        self.rng = rng

    def offsets(self, n: int) -> np.ndarray:
        """Where ``n`` values start in ``text`` (int64): :meth:`values` cuts them there."""
        return self.rng.integers(0, self.size, n)

    def values(self, lengths: np.ndarray) -> list:
        offs = self.offsets(len(lengths)).tolist()
        t = self.text
        if len(lengths) and lengths[0] == lengths[-1] and (lengths == lengths[0]).all():
            n = int(lengths[0])   # one length for all (fieldlengthdistribution constant)
            return [t[o:o + n] for o in offs]
        return [t[o:o + n] for o, n in zip(offs, lengths.tolist())]

    def copy_text(self, keys: list[bytes], offsets: np.ndarray, n: int) -> bytes:
        """COPY's text of ``len(keys)`` records whose values are the ``n``-character cuts
        at ``offsets`` (as many per key, in order: what :meth:`values` cuts there), each
        line ``key<TAB>value…<TAB>value<LF>``; the values copied by numpy, no object each."""
        k = len(keys)
        nf = len(offsets) // max(k, 1)
        width = nf * (n + 1) + 1
        out = np.empty((k, width), np.uint8)
        fields = out[:, :-1].reshape(k, nf, n + 1)
        fields[:, :, 0] = 9                     # the tab before each value
        fields[:, :, 1:] = np.lib.stride_tricks.sliding_window_view(self.raw, n)[offsets].reshape(k, nf, n)
        out[:, -1] = 10
        blob = out.tobytes()
        parts: list = [None] * (2 * k)
        parts[0::2] = keys
        parts[1::2] = [blob[i:i + width] for i in range(0, k * width, width)]
        return b"".join(parts)
