"""YCSB's status lines cut from a file's bytes (:mod:`.bytescan`), a column at a time.

A plain status line is::

    2026-11-22 02:38:50:305 1 sec: 100 operations; 100 current ops/sec; est completion in 9 seconds [READ: …] …

with blocks ``[OP AverageLatency(us)=V]`` (histogram, timeseries) or ``[OP: Count=V,
Max=V, Min=V, Avg=V, (50=V, )90=V, 99=V, 99.9=V, 99.99=V]`` (hdrhistogram). The
scanner checks every byte of a line's head and of each block against that form
(the text between blocks only for "[" and ":"), and gives what the regular
expressions of :mod:`.ycsb_status` would give — or None for a file with any other
line: a label (``-l``), raw blocks, a garbled line, a value that is not a number.
Then the regular expressions read it and say what is wrong.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from .bytescan import DIGIT, ByteClass, Lines, has_any
from .text import BadNumber, numbers

BLOCK_COLS = ["count", "max", "min", "avg", "p50", "p90", "p99", "p999", "p9999"]
_DATE = b"dddd-dd-dd dd:dd:dd:ddd "    # d: a digit
_HDR_KEYS = [b", Max=", b", Min=", b", Avg=", b", 50=", b", 90=", b", 99=", b", 99.9=", b", 99.99="]
_NOT_SPACE = ~ByteClass(b" \n")
# an op [^\]:\s]+ and a value [^,\]\s]+: read up to what ends them, then checked for the
# rest of what they may not have — a "[" (each "[" opens a block), "=", control bytes
_OP_END, _VALUE_END = ByteClass(b":", ranges=((0, 32),)), ByteClass(b",]", ranges=((0, 32),))
_NOT_IN_OP, _NOT_IN_VALUE = ByteClass(b"[]\x7f"), ByteClass(b"[]=\x7f")


def scan_plain(lines: Lines) -> tuple[pd.DataFrame | None, pd.DataFrame | None] | None:
    """What :func:`.ycsb_status.scan_status` gives by its regular expressions, cut from
    the bytes; None when a line is not plain: another line with " sec: " (a label, a garbled
    status line), a block not of the hdrhistogram or AverageLatency form, raw
    blocks, a value that is not a number."""
    s, e = lines.starts, lines.ends
    rows = np.flatnonzero((e - s > len(_DATE)) & DIGIT(lines.first))
    s, e = s[rows], e[rows]
    keep = np.flatnonzero(lines.shape(s, e, _DATE))
    rows, s, e = rows[keep], s[keep], e[keep]
    n0 = s + len(_DATE)
    sec = lines.number(n0, e)
    if sec is None:
        return None
    n1, sec = sec
    keep = np.flatnonzero((n1 > n0) & lines.literal(n1, e, b" sec: "))
    rows, s, e, n1, sec = rows[keep], s[keep], e[keep], n1[keep], sec[keep]
    o0 = n1 + 6
    ops = lines.number(o0, e)
    if ops is None:
        return None
    o1, ops = ops
    keep = np.flatnonzero((o1 > o0) & lines.literal(o1, e, b" operations; "))
    rows, s, e, sec, o1, ops = rows[keep], s[keep], e[keep], sec[keep], o1[keep], ops[keep]
    others = np.ones(len(lines), bool)
    others[rows] = False
    others = np.flatnonzero(others)
    if len(lines.find_in(b":", others)) and lines.count_in(b" sec: ", others) != 0:
        return None   # a line the regular expressions read otherwise (or refuse)
    if not len(rows):
        return None, None
    c0 = o1 + 13
    c1 = lines.run(c0, e, _NOT_SPACE, 32)
    if c1 is None:
        return None
    has_cur = (c1 > c0) & lines.literal(c1, e, b" current ops/sec; ")
    when = _when_of_words(lines.words_at(s, 3))
    if when is None:
        return None
    try:
        cur = numbers(lines.strings(c0, np.where(has_cur, c1, c0)))
    except BadNumber:
        return None
    blocks = _blocks_in_two(lines, rows, np.where(has_cur, c1 + 18, c0), e)
    if blocks is False:
        return None
    heads = pd.DataFrame({"ts": pd.array(lines.strings(s, s + len(_DATE) - 1), dtype="str"),
                          "when": pd.Series(when).dt.tz_localize("UTC"),
                          "sec": sec, "ops": ops, "cur": cur, "idx": np.arange(len(rows))})
    return heads, blocks


def _blocks_in_two(lines: Lines, rows: np.ndarray, rest: np.ndarray, end: np.ndarray) -> pd.DataFrame | None | bool:
    """:func:`_blocks` of many lines: of each half in a thread of its own, so that the
    CPU cores left by the other scanners share the work (numpy lets go of the GIL)."""
    half = len(rows) // 2
    if half < 50_000:
        return _blocks(lines, rows, rest, end)
    with ThreadPoolExecutor(1) as pool:
        later = pool.submit(_blocks, lines, rows[half:], rest[half:], end[half:])
        parts = [_blocks(lines, rows[:half], rest[:half], end[:half]), later.result()]
    if any(p is False for p in parts):
        return False
    if parts[1] is not None:
        parts[1] = parts[1].assign(idx=parts[1]["idx"] + half)
    parts = [p for p in parts if p is not None]
    return pd.concat(parts, ignore_index=True) if parts else None


def _blocks(lines: Lines, rows: np.ndarray, rest: np.ndarray, end: np.ndarray) -> pd.DataFrame | None | bool:
    """The blocks in ``[rest, end)`` of the status lines ``rows``, as :func:`scan_status`
    makes them; False when one is not plain."""
    found = lines.find_in(b"[:", rows)
    # found are in these lines only: a line has those from its start to the next one's
    line = np.repeat(np.arange(len(rows)), np.diff(np.r_[np.searchsorted(found, lines.starts[rows]), len(found)]))
    inside = found >= rest[line]
    found, line = found[inside], line[inside]
    is_open = lines.at(found) == ord("[")
    opens, line = found[is_open], line[is_open]
    if not len(opens):
        return None if not len(found) else False   # a ":" in a line's rest: raw blocks?
    end = end[line]
    b = _block(lines, opens, end)
    if b is None:
        return False
    hdr = b["hdr"]
    # no block overlaps the next, and the only ":" in the rest are those of "OP: Count="
    if not ((b["close"][:-1] < opens[1:]).all() and len(found) - len(opens) == hdr.sum()):
        return False
    n = len(opens)
    ops = lines.strings(opens + 1, b["op_end"])
    if has_any(ops, _NOT_IN_OP):
        return False
    cols = {"idx": line, "op": pd.array(ops, dtype="str"), "hdr": hdr}
    for c, (i, start, stop) in b["values"].items():
        values = lines.strings(start, stop)
        if has_any(values, _NOT_IN_VALUE):
            return False
        cols[c] = np.full(n, np.nan)
        try:
            cols[c][i] = numbers(values)
        except BadNumber:
            return False
    return pd.DataFrame(cols)


def _block(lines: Lines, opens: np.ndarray, end: np.ndarray) -> dict | None:
    """Where the parts of the blocks opening at ``opens`` are: ``[OP AverageLatency(us)=V]``
    or ``[OP: Count=V, Max=V, Min=V, Avg=V, [50=V, ]90=V, 99=V, 99.9=V, 99.99=V]``;
    None when one is neither."""
    op_end = lines.run(opens + 1, end, ~_OP_END, 64)
    if op_end is None or not (op_end > opens + 1).all():
        return None
    after = lines.at(op_end)
    hdr, avg = after == ord(":"), after == ord(" ")
    if not (hdr | avg).all():
        return None
    i, j = np.flatnonzero(hdr), np.flatnonzero(avg)
    if not (lines.literal(op_end[i], end[i], b": Count=").all()
            and lines.literal(op_end[j], end[j], b" AverageLatency(us)=").all()):
        return None
    close = np.zeros(len(opens), np.int64)
    values = {}   # name: (blocks, start, stop)

    def value(i, start, name):
        """The value ``name`` of the blocks ``i`` from ``start``; where it stops."""
        stop = lines.run(start, end[i], ~_VALUE_END, 40)
        if stop is None or not (stop > start).all():
            return None
        values[name] = (i, start, stop)
        return stop

    i = np.flatnonzero(avg)
    if len(i):
        stop = value(i, op_end[i] + 20, "avg")
        if stop is None:
            return None
        close[i] = stop
    i = np.flatnonzero(hdr)
    if len(i):
        stop = value(i, op_end[i] + 8, "count")
        for key, name in zip(_HDR_KEYS, BLOCK_COLS[1:]):
            if stop is None:
                return None
            has = lines.literal(stop, end[i], key)
            if name == "p50":   # YCSB before 0.18 prints no 50=
                j = np.flatnonzero(has)
                if len(j):
                    stop50 = value(i[j], stop[j] + len(key), name)
                    if stop50 is None:
                        return None
                    stop = stop.copy()   # the one kept for Avg stays as it is
                    stop[j] = stop50
                continue
            if not has.all():
                return None
            stop = value(i, stop + len(key), name)
        if stop is None:
            return None
        close[i] = stop
    if not (lines.at(close) == ord("]")).all():
        return None
    return {"op_end": op_end, "hdr": hdr, "close": close, "values": values}


def _when_of_words(w: np.ndarray) -> np.ndarray | None:
    """:func:`_when` of dates known to be "dddd-dd-dd dd:dd:dd:ddd " (their three
    words a row), by arithmetic; None for one that is not a real time of day."""
    # yyyy-MM- | dd HH:mm | :ss:SSS_ : the digits as values, then each with the next one
    # as a two-digit number in its byte (10 × 9 + 9 fits: no byte spills into the next)
    x = [(w[:, k] - _DIGIT_ZERO[k]) & _DIGIT_MASK[k] for k in range(3)]
    two = [(v * _U64(10) + (v >> _U64(8))) for v in x]

    def byte(v, k):
        return ((v >> _U64(8 * k)) & _U64(0xFF)).astype(np.int64)

    y = byte(two[0], 0) * 100 + byte(two[0], 2)
    m, d, hh, mm, ss = byte(two[0], 5), byte(two[1], 0), byte(two[1], 3), byte(two[1], 6), byte(two[2], 1)
    ms = byte(two[2], 4) * 10 + byte(x[2], 6)
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    mdays = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.clip(m, 0, 12)] + (leap & (m == 2))
    if not ((y >= 1900) & (m >= 1) & (m <= 12) & (d >= 1) & (d <= mdays) & (hh <= 23) & (mm <= 59)
            & (ss <= 59)).all():
        return None   # the regular expressions' way (pyarrow's strptime) tells
    # days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)
    y = y - (m <= 2)
    era, yoe = y // 400, y % 400
    doy = (153 * np.where(m > 2, m - 3, m + 9) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return ((days * 86400 + hh * 3600 + mm * 60 + ss) * 1000 + ms).astype("datetime64[ms]")


_U64 = np.uint64
# per word of the date: 0xFF / "0" in the bytes of digits, 0 in the others
_DIGIT_MASK = np.frombuffer(bytes(0xFF if c == ord("d") else 0 for c in _DATE), np.uint64)
_DIGIT_ZERO = np.frombuffer(bytes(0x30 if c == ord("d") else 0 for c in _DATE), np.uint64)
