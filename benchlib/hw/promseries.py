"""A step's rows from raw Prometheus samples: counters differenced per series, gauges
read at each row's end, and how much of the step real samples cover.

The step's window is cut at its own seconds, edges ``e_0 = start, e_k = e_0 + k·step``.
Per series:

- a **counter** is made cumulative over its samples, each increase the difference to
  the sample before, and after a reset (the value went back: the exporter or the
  process restarted) the new value itself — counted from 0, never a drop; its reading at
  an edge is interpolated between the two real scrapes around it, so a row holds what the
  step did in its own seconds, and a gap between two scrapes (Prometheus down, a missed
  scrape) spreads the difference measured across it over the rows it spans. A series
  that begins mid-step counts from its first sample. What no sample measured — a gap
  that ends in a reset (the exporter restarted: what it counted before it died is lost),
  the time before a figure's first series or after its last sample — is *unknown*: those
  rows are blank, never 0;
- a **gauge** (RSS, a size) is the value of the last sample taken by one scrape after the
  row's end, if it is no older than one scrape before it; else blank.

A figure sums its series row by row; its **coverage** is the share of the step's rows it
knows. A counter under :data:`MIN_COVERAGE` is blank in every row (a part of a step is
never printed as the step); a gauge, read at the step's end, is blank when the step's last
row has no sample (the value "at step end" would be one from before the end); the caller
says which exporter was missing when (:func:`describe_gaps`).

Series that differ only in ``instance``/``job`` (a second exporter scraping the same thing,
a replica's) are one series: :func:`dedupe` keeps one of them, never adds them up.
"""
from __future__ import annotations

import numpy as np

from .promapi import Series

MIN_COVERAGE = 0.90
GAP = 1.5          # consecutive scrapes further apart than GAP intervals: a gap
SCOPE_LABELS = ("instance", "job")


def identity(labels: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in SCOPE_LABELS))


def dedupe(series: list[Series]) -> tuple[list[Series], list[str]]:
    """One series per identity (labels but instance and job): the one with the most
    samples (then the first instance by name); and the instances left out."""
    best: dict[tuple, Series] = {}
    for s in series:
        k = identity(s.labels)
        o = best.get(k)
        if o is None or (len(s.t), _inst(o)) > (len(o.t), _inst(s)):
            best[k] = s
    kept = list(best.values())
    left = sorted({_inst(s) for s in series} - {_inst(s) for s in kept})
    return kept, left


def _inst(s: Series) -> str:
    return str(s.labels.get("instance", ""))


def interval_of(s: Series, intervals: dict[str, float], default: float) -> float:
    """The series' scrape interval: Prometheus' word for its target, else the median
    distance of its samples, else ``default``."""
    if _inst(s) in intervals:
        return intervals[_inst(s)]
    if len(s.t) > 2:
        return float(np.median(np.diff(s.t)))
    return default


def _cumulative(s: Series, iv: float) -> tuple[np.ndarray, np.ndarray]:
    """(cumulative increase at each sample, whether the span ending at each sample is
    unknown: a gap that ends in a reset)."""
    dv, dt = np.diff(s.v), np.diff(s.t)
    reset = dv < 0
    inc = np.where(reset, s.v[1:], dv)
    unknown = reset & (dt > GAP * iv)
    inc = np.where(unknown, 0.0, inc)     # what came after the restart is not this span's alone
    return np.concatenate([[0.0], np.cumsum(inc)]), np.concatenate([[False], unknown])


def counter_rows(s: Series, edges: np.ndarray, iv: float,
                 until: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(each row's increase, whether the series covers the row: 1 known, 0 not there, -1
    unknown) for rows ``[edges[k], edges[k+1])``. ``until``: the last sample of the
    series' exporter (its instance): a series that ends before it was retired, not lost."""
    n = len(edges) - 1
    if not len(s.t):
        return np.zeros(n), np.zeros(n, dtype=int)
    until = s.t[-1] if until is None else until
    c, unknown = _cumulative(s, iv)
    k = np.interp(edges, s.t, c)          # before the first sample: its value (counts from it)
    inc = np.diff(k)
    a, b = edges[:-1], edges[1:]
    there = (b > s.t[0]) & (a < s.t[-1] + 1e-9)
    status = np.where(there, 1, 0)
    status[(b > s.t[-1] + 1e-9) & (b > until + 1e-9)] = -1   # the exporter stopped answering
    for j in np.flatnonzero(unknown):                 # rows overlapping (t[j-1], t[j])
        status[(b > s.t[j - 1]) & (a < s.t[j])] = -1
    return np.where(status == 1, inc, 0.0), status


def gauge_rows(s: Series, edges: np.ndarray, iv: float,
               until: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the value at each row's end, 1 where a sample gives it, 0 where the series is not
    there, -1 where it is missing while its exporter answered or after it stopped)."""
    b = edges[1:]
    if not len(s.t):
        return np.zeros(len(b)), np.zeros(len(b), dtype=int)
    until = s.t[-1] if until is None else until
    i = np.searchsorted(s.t, b + iv + 1e-9, side="right") - 1      # taken by one scrape after
    ok = (i >= 0) & (s.t[np.clip(i, 0, None)] >= b - iv - 1e-9)
    val = np.where(ok, s.v[np.clip(i, 0, None)], 0.0)
    alive = (b >= s.t[0] - iv) & (b <= s.t[-1] + iv)
    status = np.where(ok, 1, np.where(alive | (b > until + iv), -1, 0))
    return val, status


def figure_rows(series: list[Series], edges: np.ndarray, kind: str, intervals: dict[str, float],
                default_iv: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The figure's rows (series summed; NaN where unknown), which rows real samples
    cover, and the share they are of the step (0..1)."""
    n = len(edges) - 1
    total, known, bad = np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    until: dict[str, float] = {}
    for s in series:
        if len(s.t):
            until[_inst(s)] = max(until.get(_inst(s), -np.inf), float(s.t[-1]))
    for s in series:
        fn = gauge_rows if kind == "gauge" else counter_rows
        val, status = fn(s, edges, interval_of(s, intervals, default_iv), until.get(_inst(s)))
        total += val
        known |= status == 1
        bad |= status == -1
    ok = known & ~bad
    cover = float(ok.mean()) if n else 0.0
    out = np.where(ok, total, np.nan)
    if (kind != "gauge" and cover < MIN_COVERAGE) or (kind == "gauge" and n and not ok[-1]):
        out[:] = np.nan    # a gauge is read at the step's end: blank when no sample is there
    return out, ok, cover


def describe_gaps(ok: np.ndarray, step_s: float) -> str:
    """The seconds of the step a figure has no sample for: ``3–8 s, 11–12 s``."""
    spans, start = [], None
    for k, good in enumerate([*ok, True]):
        if not good and start is None:
            start = k
        elif good and start is not None:
            spans.append(f"{start * step_s:g}–{k * step_s:g} s")
            start = None
    return ", ".join(spans)
