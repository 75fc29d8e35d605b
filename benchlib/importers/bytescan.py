"""Fields of a file's lines as columns, cut from its bytes without a Python object
per line.

A regular expression over a file of a million lines makes a tuple of strings a
line, about 1 µs each. Here numpy finds the lines (the positions of ``\\n``),
checks literals and character classes at given positions of all lines at once, and
pyarrow cuts the fields out into string columns and converts them: the work per
line is done in C.

A scanner built on this (see :mod:`.ycsb_status`, :mod:`.ycsb_summary`) gives
exactly what its regular expression would, or None when a line is anything but
plain: then the regular expression reads the file and names the line that is wrong.
Only ASCII text is scanned so (:meth:`Lines.of`): a regular expression over ``str``
gives ``\\d`` and ``\\s`` a Unicode meaning that bytes do not have.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_CHUNK = 1 << 18   # bytes compared at a time: the mask stays in the CPU cache
_MAX_RUNS = 4096   # more runs of selected lines than this: scan the whole file
_PAD = 64          # a text shorter than this is read from a padded copy

# Eight bytes at a time as one little-endian uint64 ("SWAR"): byte k of a word is the
# byte at position + k. A test of all eight sets the high bit (0x80) of each byte
# that passes, with no carry from one byte into the next.
_U = np.uint64
_ONES, _HIGH, _LOW7 = 0x0101010101010101, _U(0x8080808080808080), _U(0x7F7F7F7F7F7F7F7F)
# _PAST[k]: flags on the bytes from k on (none for k = 8); _KEEP[k]: the bytes below k;
# _TEN[k]: 10 ** k
_PAST = np.array([~((1 << 8 * k) - 1) & 0x8080808080808080 for k in range(8)] + [0], np.uint64)
_KEEP = np.array([(1 << 8 * k) - 1 for k in range(8)] + [2 ** 64 - 1], np.uint64)
_TEN = np.array([10 ** k for k in range(9)], np.uint64)


def _below(w: np.ndarray, n: int) -> np.ndarray:
    """0x80 in each byte of the words ``w`` that is below ``n`` (1 <= n <= 128)."""
    x = w & _LOW7                       # in place from here: no array more
    x += _U((0x80 - n) * _ONES)         # the high bit of a byte set from n on …
    x |= w                              # … or when it was set in the byte
    np.invert(x, out=x)
    x &= _HIGH
    return x


def _eight_digits(w: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The number the first ``d`` (0 to 8) bytes of each word write in decimal digits:
    the digits are moved to the top (what is below them reads as leading zeros) and
    added up in pairs, fours and eights."""
    x = w - _U(0x30 * _ONES)                 # a borrow only runs into bytes dropped here
    x &= _KEEP[d]
    x <<= ((8 - d) * 8 % 64).astype(np.uint64)   # d = 0 keeps nothing: x is 0 already
    for shift, mask in ((8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)):
        y = x >> _U(shift)
        x *= _U(10 ** (shift // 8))
        x += y
        x &= _U(mask)
    return x


def _first(flags: np.ndarray) -> np.ndarray:
    """The first byte of each word with its flag (0x80) set; 8 when none is."""
    # isolate the lowest flag: its bit number (7, 15 … 63) is that of a power of two
    # that a float holds exactly
    low = np.invert(flags)
    low += _U(1)
    low &= flags
    k = np.frexp(low.astype(np.float64))[1]   # 0 when no flag is set
    k -= 8
    k //= 8
    k[k < 0] = 8
    return k


class ByteClass:
    """A set of ASCII bytes, tested by comparisons (cheaper than a table lookup)."""

    def __init__(self, chars: bytes = b"", ranges: tuple[tuple[int, int], ...] = (), negate: bool = False):
        members = set(chars) | {c for lo, hi in ranges for c in range(lo, hi + 1)}
        assert all(c < 128 for c in members)
        # the fewest tests: runs of three or more as ranges, the rest one by one
        self.chars, self.ranges, self.negate = b"", (), negate
        for c in sorted(members):
            if self.ranges and self.ranges[-1][1] == c - 1:
                self.ranges = (*self.ranges[:-1], (self.ranges[-1][0], c))
            else:
                self.ranges = (*self.ranges, (c, c))
        singles = [lo for lo, hi in self.ranges if hi - lo < 2] + [hi for lo, hi in self.ranges if hi - lo == 1]
        self.chars = bytes(sorted(singles))
        self.ranges = tuple((lo, hi) for lo, hi in self.ranges if hi - lo >= 2)

    def __or__(self, other: ByteClass) -> ByteClass:
        assert not (self.negate or other.negate)
        return ByteClass(self.chars + other.chars, self.ranges + other.ranges)

    def __invert__(self) -> ByteClass:
        return ByteClass(self.chars, self.ranges, not self.negate)

    def __call__(self, b: np.ndarray) -> np.ndarray:
        """Membership of each byte of the uint8 array ``b``."""
        out = np.zeros(b.shape, bool)
        for lo, hi in self.ranges:
            out |= (b - np.uint8(lo)) <= np.uint8(hi - lo)   # wraps below lo
        for c in self.chars:
            out |= b == c
        return ~out if self.negate else out

    def flags(self, w: np.ndarray) -> np.ndarray:
        """Membership of the eight bytes of each word of ``w``, as 0x80 in each member."""
        out = np.zeros(w.shape, np.uint64)
        for lo, hi in self.ranges:
            inside = _below(w, hi + 1)
            if lo:
                below = _below(w, lo)
                np.invert(below, out=below)
                inside &= below
            out |= inside
        for c in self.chars:
            x = w ^ _U(c * _ONES)
            out |= _below(x, 1)
        if self.negate:
            out ^= _HIGH
        return out


DIGIT = ByteClass(ranges=((48, 57),))
# what Python's ``\s`` matches in an ASCII str: \t \n \v \f \r, \x1c-\x1f and space
SPACE = ByteClass(b" ", ranges=((9, 13), (28, 31)))
CONTROL = ByteClass(b"\x7f", ranges=((0, 31),))
_NOT_DIGIT = ~DIGIT


class Lines:
    """The lines of an ASCII text: ``starts``/``ends`` (exclusive, without the
    ``\\n``) as byte positions, in order; a text ending with ``\\n`` has a last, empty line."""

    def __init__(self, data: bytes):
        self.data = data
        self.buf = np.frombuffer(data, np.uint8)
        nl = self.find(b"\n")
        self.starts = np.concatenate(([0], nl + 1))
        self.ends = np.concatenate((nl, [len(data)]))
        # what the scanners of several threads read: made here, not on first use
        self._padded = data if len(data) >= _PAD else data + bytes(_PAD)
        self.first = np.where(self.ends > self.starts, self.at(self.starts), 0)   # 0: empty line

    @classmethod
    def of(cls, data: bytes) -> Lines | None:
        """The lines of ``data``; None when it is not ASCII (and not empty)."""
        return cls(data) if data and data.isascii() else None

    def __len__(self) -> int:
        return len(self.starts)

    # ------------------------------------------------------------ finding bytes

    def find(self, chars: bytes, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Positions of any of the bytes ``chars`` in ``data[lo:hi]``, in order."""
        hi = len(self.buf) if hi is None else hi
        out = []
        for i in range(lo, hi, _CHUNK):
            chunk = self.buf[i:min(i + _CHUNK, hi)]
            hit = chunk == chars[0]
            for c in chars[1:]:
                hit |= chunk == c
            pos = np.flatnonzero(hit)
            if len(pos):
                out.append(pos + i)
        return np.concatenate(out) if out else np.empty(0, np.int64)

    def spans(self, rows: np.ndarray) -> list[tuple[int, int]] | None:
        """The byte spans of the runs of consecutive lines among ``rows`` (indices,
        ascending); None when there are too many runs to go through one by one."""
        if not len(rows):
            return []
        cut = np.flatnonzero(np.diff(rows) != 1) + 1
        firsts, lasts = rows[np.r_[0, cut]], rows[np.r_[cut - 1, len(rows) - 1]]
        if len(firsts) > _MAX_RUNS:
            return None
        return list(zip(self.starts[firsts].tolist(), self.ends[lasts].tolist()))

    def find_in(self, chars: bytes, rows: np.ndarray) -> np.ndarray:
        """Positions of any of ``chars`` in the lines ``rows`` (indices, ascending):
        only the runs of consecutive lines are scanned, which a file keeps together."""
        spans = self.spans(rows)
        if spans is None:
            pos = self.find(chars)
            keep = np.zeros(len(self), bool)
            keep[rows] = True
            return pos[keep[self.line_of(pos)]]
        parts = [self.find(chars, lo, hi) for lo, hi in spans]
        return np.concatenate(parts) if parts else np.empty(0, np.int64)

    def count_in(self, text: bytes, rows: np.ndarray) -> int | None:
        """How often ``text`` stands in the lines ``rows``; None when they are too
        scattered to tell cheaply."""
        spans = self.spans(rows)
        return None if spans is None else sum(self.data.count(text, lo, hi) for lo, hi in spans)

    @staticmethod
    def next_of(found: np.ndarray, pos: np.ndarray, missing: int) -> np.ndarray:
        """For each of ``pos``, the first of the sorted positions ``found`` at or after
        it (``missing`` when there is none)."""
        return np.append(found, missing)[np.searchsorted(found, pos)]

    def line_of(self, pos: np.ndarray) -> np.ndarray:
        """The line each byte position is on."""
        return np.searchsorted(self.starts, pos, side="right") - 1

    # ------------------------------------------------------------ checking

    def at(self, pos: np.ndarray) -> np.ndarray:
        """The bytes at ``pos`` (0 past the end of the data)."""
        n = len(self.buf)
        if not n:
            return np.zeros(len(pos), np.uint8)
        return np.where(pos < n, self.buf.take(np.minimum(pos, n - 1)), 0).astype(np.uint8)

    def _records(self, pos: np.ndarray, width: int) -> np.ndarray:
        """The ``width`` bytes from each of ``pos`` as one record each ("V<width>");
        a record past the end of the data holds other bytes (check ``pos + width``)."""
        data = self._padded
        view = np.ndarray((len(data) - width + 1,), f"V{width}", data, strides=(1,))
        return view[np.clip(pos, 0, len(data) - width)]

    def words_at(self, pos: np.ndarray, count: int) -> np.ndarray:
        """``count`` words (8 bytes each) from each of ``pos``, a row each (``pos + 8 * count``
        within the data)."""
        return self._records(pos, 8 * count).view(np.uint64).reshape(len(pos), count)

    def words(self, pos: np.ndarray) -> np.ndarray:
        """The eight bytes from each of ``pos`` as a uint64 (0 past the end of the data)."""
        w = self._records(pos, 8).view(np.uint64)
        late = np.clip(pos - (len(self._padded) - 8), 0, 7)   # read from an earlier start:
        return w >> (late * 8).astype(np.uint64)                # shift the bytes into place

    def literal(self, pos: np.ndarray, end: np.ndarray, text: bytes) -> np.ndarray:
        """Where ``text`` stands at ``pos`` and ends by ``end``."""
        return (self._records(pos, len(text)) == np.void(text)) & (pos + len(text) <= end) & (pos >= 0)

    def shape(self, pos: np.ndarray, end: np.ndarray, pattern: bytes, digit: int = ord("d")) -> np.ndarray:
        """Where ``pattern`` (a multiple of 8 bytes) stands at ``pos`` (by ``end``),
        ``digit`` standing for any digit."""
        assert len(pattern) % 8 == 0
        want = np.frombuffer(pattern, np.uint64)
        is_digit = np.frombuffer(bytes(0x80 if c == digit else 0 for c in pattern), np.uint64)
        literal = np.frombuffer(bytes(0 if c == digit else 0xFF for c in pattern), np.uint64)
        w = self.words_at(pos, len(want))
        ok = pos + len(pattern) <= end
        for k in range(len(want)):
            ok &= (w[:, k] & literal[k]) == (want[k] & literal[k])
            ok &= (_NOT_DIGIT.flags(w[:, k]) & is_digit[k]) == 0
        return ok

    def run(self, pos: np.ndarray, end: np.ndarray, allowed: ByteClass, longest: int) -> np.ndarray | None:
        """Where the run of ``allowed`` bytes from each of ``pos`` stops (at most at
        ``end``), read eight bytes at a time; None when a run goes on past ``longest``
        (then it is no field of these lines: the caller gives up)."""
        stops = ~allowed
        stop = pos.copy()
        todo = np.arange(len(pos))
        while len(todo):
            at = stop[todo]
            f = stops.flags(self.words(at)) | _PAST[np.clip(end[todo] - at, 0, 8)]
            k = _first(f)
            stop[todo] = at + k
            todo = todo[k == 8]
            if len(todo) and (stop[todo] - pos[todo]).max() > longest:
                return None
        return stop

    def number(self, pos: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The run of digits from each of ``pos`` (to ``end`` at most): where it stops,
        and the number it writes as float64 (what a cast of its text gives); None when
        a run is longer than 16 digits."""
        w = self.words(pos)
        k = _first(_NOT_DIGIT.flags(w) | _PAST[np.clip(end - pos, 0, 8)])
        value = _eight_digits(w, k)
        more = np.flatnonzero(k == 8)   # eight digits and maybe more: the next word
        if len(more):
            at = pos[more] + 8
            w2 = self.words(at)
            k2 = _first(_NOT_DIGIT.flags(w2) | _PAST[np.clip(end[more] - at, 0, 8)])
            if ((k2 == 8) & (at + 8 < end[more]) & DIGIT(self.at(at + 8))).any():
                return None
            value[more] = value[more] * _TEN[k2] + _eight_digits(w2, k2)
            k[more] += k2
        return pos + k, value.astype(np.float64)

    # ------------------------------------------------------------ cutting

    def strings(self, starts: np.ndarray, stops: np.ndarray) -> pa.StringArray:
        """``data[starts[i]:stops[i]]`` as a string column; the spans must be in order
        and not overlap."""
        n = len(starts)
        if not n:
            return pa.array([], pa.string())
        big = len(self.buf) >= 2 ** 31
        off = np.empty(2 * n, np.int64 if big else np.int32)
        off[0::2], off[1::2] = starts, stops
        if not ((off[1:] >= off[:-1]).all() and off[0] >= 0 and off[-1] <= len(self.buf)):
            raise ValueError("spans out of order")   # a scanner's mistake: never read past them
        # the spans and the gaps between them as one column over the data, no copy;
        # then the spans alone
        spans = (pa.LargeStringArray if big else pa.StringArray).from_buffers(
            2 * n - 1, pa.py_buffer(off), pa.py_buffer(self.data))
        out = pc.take(spans, pa.array(np.arange(0, 2 * n, 2, dtype=np.int64)))
        return out.cast(pa.string()) if big else out


def string_bytes(arr: pa.StringArray) -> np.ndarray:
    """All the bytes of the strings of ``arr``, one after the other (no copy)."""
    if not len(arr) or arr.buffers()[2] is None:
        return np.empty(0, np.uint8)
    off = np.frombuffer(arr.buffers()[1], np.int32, len(arr) + 1, arr.offset * 4)
    return np.frombuffer(arr.buffers()[2], np.uint8)[off[0]:off[-1]]


def has_any(arr: pa.StringArray, cls: ByteClass) -> bool:
    """Whether any string of ``arr`` has a byte of ``cls``."""
    return bool(cls(string_bytes(arr)).any())


def strings_with(arr: pa.StringArray, cls: ByteClass) -> np.ndarray:
    """For each string of ``arr``, whether it has a byte of ``cls``."""
    out = np.zeros(len(arr), bool)
    if not len(arr):
        return out
    off = np.frombuffer(arr.buffers()[1], np.int32, len(arr) + 1, arr.offset * 4)
    full = np.flatnonzero(np.diff(off) > 0)   # the bytes of a string run up to the next one's
    if len(full):
        out[full] = np.logical_or.reduceat(cls(string_bytes(arr)), off[full] - off[0])
    return out
