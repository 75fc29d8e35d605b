"""Which operation runs on which key: the mix and the key streams of one client.

Keys are key numbers made into fixed-size strings (:func:`key_strings`): the number
times an odd constant modulo 2^(4·digits), in hex — a bijection, so distinct
numbers give distinct keys, scattered over the key space so that ordered scans and
inserts land everywhere. Keys longer than 16 bytes are padded on the right.

What the store holds is known without asking it: the prepare loads key numbers
[0, keys_loaded) (less every ``prepare_remove_ratio`` share, :func:`removed_in_prepare`),
and in run loop L of ``loops``, client i of T

- inserts only fresh numbers, claimed from the run's acknowledged insert counter
  (:mod:`..keycounter`, YCSB's, shared by the host's clients) from keys_loaded on
  (first the share the prepare left out, then beyond the key space);
- removes only numbers that exist: loaded ones of its own,
  ``(j·T + i)·loops + (L-1)`` below keys_loaded that the prepare did not remove, then
  its own inserts of the loop,
  oldest first; when it has none left a remove finds nothing (a miss).

So after prepare and run the store holds keys_loaded − prepare's removes + the
INSERTs − the DELETEs that returned OK. Reads, updates and scans draw their keys,
as YCSB's core workload does, from the keys inserted so far: YCSB's generators
(uniform, zipfian over key_count, latest) redrawn above the counter's last
acknowledged key. So a read misses (status EMPTY: an outcome, not an error) only a
key that a remove took away.

The mix is exact, not drawn: after n operations each op has had round(p·n) of them
(largest remainders), in a shuffled order within each chunk.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from .. import keycounter
from ..generators import MAX_REDRAW_ROUNDS, ScrambledZipfian, SkewedLatest, UniformLong
from .parameters import KvParameters

READ, INSERT, DELETE, UPDATE, SCAN = range(5)
MULTIPLIER = 0x9E3779B97F4A7C15  # odd: multiplication modulo 2^k is a bijection
PREPARE_REMOVE_PERIOD = 1000


def key_parts(keynums: np.ndarray, key_size: int, prefix: str = "") -> tuple:
    """What :func:`key_strings` makes the keys of: (prefix, hex digits, zeros after them,
    the scrambled numbers as uint64); the C loop over hiredis formats them itself."""
    digits = min(key_size, 16)
    mask = np.uint64((1 << (4 * digits)) - 1) if digits < 16 else np.uint64(0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        scrambled = (np.asarray(keynums, dtype=np.uint64) * np.uint64(MULTIPLIER)) & mask
    return prefix, digits, key_size - digits, scrambled


def key_strings(keynums: np.ndarray, key_size: int, prefix: str = "") -> list[str]:
    """The keys of ``keynums``: ``key_size`` characters (hex, padded right), unique."""
    prefix, digits, pad, scrambled = key_parts(keynums, key_size, prefix)
    fmt = f"{prefix}{{:0{digits}x}}{'0' * pad}"
    return [fmt.format(x) for x in scrambled.tolist()]


def removed_in_prepare(keynums: np.ndarray, ratio: float) -> np.ndarray:
    """Which loaded key numbers the prepare removes again ("scan after del")."""
    cut = round(ratio * PREPARE_REMOVE_PERIOD)
    # a permutation of each block of PERIOD numbers: exactly ``cut`` of every block,
    # spread over it (so every stride of key numbers loses about that share too)
    spread = (np.asarray(keynums, dtype=np.int64) % PREPARE_REMOVE_PERIOD) * 389
    return spread % PREPARE_REMOVE_PERIOD < cut


def keys_after_prepare(p: KvParameters) -> int:
    """How many keys the store holds after the prepare."""
    n, cut = p.keys_loaded, round(p.prepare_remove_ratio * PREPARE_REMOVE_PERIOD)
    full = n // PREPARE_REMOVE_PERIOD * PREPARE_REMOVE_PERIOD
    rest = removed_in_prepare(np.arange(full, n), p.prepare_remove_ratio).sum()
    return n - (full // PREPARE_REMOVE_PERIOD * cut + int(rest))


def request_generator(p: KvParameters, rng: np.random.Generator):
    last = p.key_count - 1
    if p.request_distribution == "zipfian":
        return ScrambledZipfian(0, last, rng)
    if p.request_distribution == "latest":
        return SkewedLatest(last, rng)
    return UniformLong(0, last, rng)


class OpMix:
    """The op codes of each chunk: exact proportions, shuffled."""

    def __init__(self, mix, rng: np.random.Generator):
        self.p = np.asarray(mix, dtype=float) / sum(mix)
        self.done = np.zeros(len(mix), dtype=np.int64)
        self.rng = rng

    def next_codes(self, n: int) -> np.ndarray:
        want = self.p * (self.done.sum() + n)
        give = np.floor(want).astype(np.int64) - self.done
        give = np.maximum(give, 0)
        short = n - int(give.sum())
        if short > 0:  # largest remainders first, among ops with a share
            frac = np.where(self.p > 0, want - np.floor(want), -1.0)
            for j in np.argsort(-frac, kind="stable")[:short]:
                give[j] += 1
        self.done += give
        codes = np.repeat(np.arange(len(give)), give)
        self.rng.shuffle(codes)
        return codes


class RequestKeys:
    """The keys of reads, updates and scans: the request distribution, up to the last
    acknowledged insert (never a key claimed and not inserted)."""

    def __init__(self, p: KvParameters, rng: np.random.Generator, counter):
        self.gen, self.counter = request_generator(p, rng), counter
        self.latest = p.request_distribution == "latest"
        self.holes = counter.holes()

    def next_batch(self, n: int) -> np.ndarray:
        last = np.full(n, self.counter.last_value(), dtype=np.int64)
        out = self.gen.next_for(last) if self.latest else self.gen.next_batch(n)
        for _ in range(MAX_REDRAW_ROUNDS):
            bad = np.flatnonzero((out > last) | self._in_holes(out))
            if len(bad) == 0:
                return self.counter.keynums(out)
            out[bad] = self.gen.next_for(last[bad]) if self.latest else self.gen.next_batch(len(bad))
        raise RuntimeError("kv: request keys keep falling past the last inserted key")

    def _in_holes(self, keys: np.ndarray) -> np.ndarray:
        """Keys claimed by an earlier step whose inserts never ran (redrawn, as YCSB
        redraws a key past lastValue)."""
        return keycounter.in_holes(keys, self.holes)


class KeyStreams:
    """The key numbers of one run client's inserts and removes (see the module doc)."""

    def __init__(self, p: KvParameters, index: int, total: int, loop: int, loops: int, counter):
        self.p, self.loaded = p, p.keys_loaded
        self.stride = total * loops
        self.base = index * loops + (loop - 1)
        self.counter, self.slot = counter, index
        # this client's inserts of the loop not yet removed, in order: the counter's
        # [start, stop) ranges it claimed (one per chunk), not the keys, so that a
        # long loop's client holds no more than a pair of numbers per chunk
        self.own: deque[list[int]] = deque()
        self.inserted = 0      # of those, planned so far (in op order)
        self.own_removed = 0   # of those, planned removes
        self.next_loaded = 0   # j of the next loaded key to pass
        self.last_removed = -1

    def _claim(self, n: int) -> np.ndarray:
        """n fresh key numbers from the shared counter, this client's from now on."""
        start = self.counter.claim(self.slot, n)
        if n:
            self.own.append([start, start + n])
        return self.counter.keynums(np.arange(start, start + n, dtype=np.int64))

    def _pop_own(self) -> int:
        """The oldest of this client's inserts not yet removed (as a key number)."""
        first = self.own[0]
        value = first[0]
        first[0] += 1
        if first[0] == first[1]:
            self.own.popleft()
        return int(self.counter.keynums(np.array([value], dtype=np.int64))[0])

    def _raw_left(self) -> int:
        """Loaded numbers of this stream not yet passed (the prepare's removes included)."""
        span = self.loaded - self.base
        return max(0, -(-span // self.stride) - self.next_loaded) if span > 0 else 0

    def _take_loaded(self, n: int) -> np.ndarray | None:
        """The next n loaded numbers the prepare did not remove; None (nothing taken)
        when fewer than n are left."""
        left, ratio = self._raw_left(), self.p.prepare_remove_ratio
        m = min(left, int(n / (1.0 - ratio)) + 64)
        while True:
            j = np.arange(self.next_loaded, self.next_loaded + m, dtype=np.int64)
            nums = self.base + j * self.stride
            kept = np.flatnonzero(~removed_in_prepare(nums, ratio))
            if len(kept) >= n:
                break
            if m == left:
                return None
            m = left
        take = kept[:n]
        if n:
            self.next_loaded += int(take[-1]) + 1
        return nums[take]

    def plan(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Key numbers for the chunk's INSERTs and DELETEs, in their order."""
        n_ins = int((codes == INSERT).sum())
        n_del = int((codes == DELETE).sum())
        ins = self._claim(n_ins)
        dels = self._take_loaded(n_del)
        if dels is not None:
            self.inserted += n_ins
            if n_del:
                self.last_removed = int(dels[-1])
            return ins, dels
        return ins, self._plan_slow(codes)

    def _plan_slow(self, codes: np.ndarray) -> np.ndarray:
        """Op by op, once the loaded keys of this stream run out: then our own inserts."""
        dels = []
        for c in codes.tolist():
            if c == INSERT:
                self.inserted += 1
            elif c == DELETE:
                one = self._take_loaded(1)
                if one is not None:
                    self.last_removed = int(one[0])
                elif self.own_removed < self.inserted:
                    self.last_removed = self._pop_own()
                    self.own_removed += 1
                # else nothing of ours is left: remove the last one again (a miss)
                dels.append(self.last_removed)
        return np.asarray(dels, dtype=np.int64)
