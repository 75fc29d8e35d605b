"""LinkBench's payload generators (``{link_add,link_up,node_add,node_up}_datagen*``):
the bytes of a link's or a node's ``data``, so that they compress as LinkBench's do.

``MotifDataGenerator`` (the maintained client's default): a payload is cut in chunks
of 128 bytes; each chunk is, with probability ``*_uniqueness``, random bytes in
[``*_startbyte``, ``*_endbyte``], else a copy of a slice of the generator's motif, 512
random bytes drawn once. As in the Java client, ``*_motif_length`` is read and has no
effect: MotifDataGenerator.init asks ``Properties.contains``, which looks at values,
not keys, so the motif is always its default 512 bytes.
``UniformDataGenerator``: random bytes in [startbyte, endbyte] (no motif), the choice
for incompressible payloads.
"""
from __future__ import annotations

import numpy as np

PREFIXES = ("link_add", "link_up", "node_add", "node_up")
CLASSES = ("MotifDataGenerator", "UniformDataGenerator")
MAX_CHUNK = 128      # MotifDataGenerator.MAX_CHUNK_SIZE
MOTIF_BYTES = 512    # MotifDataGenerator.DEFAULT_MOTIF_BUFFER_SIZE
FILL_BYTES = 1 << 18  # payload bytes made at a time (their index arrays: ~10 MB)
# the maintained FBWorkload.properties: class, startbyte, endbyte, uniqueness
DEFAULTS = {"link": ("MotifDataGenerator", 32, 100, 0.225),
            "node": ("MotifDataGenerator", 50, 220, 0.63)}


def settings(datagen: dict, prefix: str) -> tuple[str, int, int, float]:
    """(class, startbyte, endbyte, uniqueness) of one generator; ValueError naming the key."""
    cls, lo, hi, uniq = DEFAULTS[prefix.split("_")[0]]
    key = f"{prefix}_datagen"
    cls = datagen.get(key, cls).rsplit(".", 1)[-1]
    if cls not in CLASSES:
        raise ValueError(f"{key}: one of {', '.join(CLASSES)}, got {cls!r}")
    try:
        lo = int(datagen.get(f"{key}_startbyte", lo))
        hi = int(datagen.get(f"{key}_endbyte", hi))
        uniq = float(datagen.get(f"{key}_uniqueness", uniq))
        int(datagen.get(f"{key}_motif_length", MOTIF_BYTES))
    except ValueError:
        raise ValueError(f"{key}_*: startbyte, endbyte and motif_length are integers, "
                         "uniqueness a number") from None
    if not 0 <= lo < hi <= 255:
        raise ValueError(f"{key}_startbyte, {key}_endbyte: 0 <= start < end <= 255, "
                         f"got {lo}, {hi}")
    if not 0.0 <= uniq <= 1.0:
        raise ValueError(f"{key}_uniqueness: between 0 and 1, got {uniq}")
    return cls, lo, hi, uniq


def check(datagen: dict) -> None:
    for prefix in PREFIXES:
        settings(datagen, prefix)


class Payloads:
    """One generator: ``fill(sizes)`` gives a payload of each size."""

    def __init__(self, datagen: dict, prefix: str, rng: np.random.Generator):
        cls, self.lo, hi, self.uniq = settings(datagen, prefix)
        self.range = hi - self.lo + 1
        self.rng = rng
        self.motif = None if cls == "UniformDataGenerator" else self._random(MOTIF_BYTES)

    def _random(self, n: int) -> np.ndarray:
        return (self.lo + self.rng.integers(0, self.range, n)).astype(np.uint8)

    def fill(self, sizes) -> list[bytes]:
        """A payload of each size, made ``FILL_BYTES`` at a time: the motif's per-byte
        index arrays are ~40 bytes a payload byte, so a batch made at once (40,000 nodes
        of ~280 bytes) held 280 MB of them; a slice's are a few MB, whatever the batch."""
        sizes = np.asarray(sizes, dtype=np.int64)
        ends = np.cumsum(sizes)
        out: list[bytes] = []
        lo = 0
        while lo < len(sizes):
            start = int(ends[lo] - sizes[lo])
            hi = max(int(np.searchsorted(ends, start + FILL_BYTES, side="right")), lo + 1)
            part = sizes[lo:hi]
            total = int(part.sum())
            buf = self._random(total) if self.motif is None else self._motif_bytes(part, total)
            raw = buf.tobytes()
            cut = (ends[lo:hi] - start).tolist()
            out += [raw[e - n:e] for e, n in zip(cut, part.tolist())]
            lo = hi
        return out

    def _motif_bytes(self, sizes: np.ndarray, total: int) -> np.ndarray:
        """Each payload's chunks in order: random bytes (uniqueness) or a motif slice."""
        rng, chunk = self.rng, min(MAX_CHUNK, MOTIF_BYTES)
        nch = (sizes + chunk - 1) // chunk
        owner = np.repeat(np.arange(len(sizes)), nch)
        ix = np.arange(int(nch.sum())) - np.repeat(np.cumsum(nch) - nch, nch)
        clen = np.minimum(chunk, sizes[owner] - ix * chunk)
        unique = rng.random(len(clen)) < self.uniq
        off = rng.integers(0, MOTIF_BYTES - clen + 1)
        of_byte = np.repeat(np.arange(len(clen)), clen)
        pos = np.arange(total) - np.repeat(np.cumsum(clen) - clen, clen)
        out = self.motif[off[of_byte] + pos]
        rand = unique[of_byte]
        out[rand] = self._random(int(rand.sum()))
        return out
