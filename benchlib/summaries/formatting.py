"""The seed's fixed-width text: one block per step, a header, one line per run.

The seed's files (``l.pre.eff.op`` …) are columns on 8-character tab stops:

    ips     secs    rpi     rkbpi   wkbpi   cspi    cpupi   csecpq  dsecpq  csec    dsec    dbgb    cnf
    30248   25147   0.000   0.000   0.522   0.1     865     8.7     21.0    15954   15954   188.7   my56.c5

so every column here is as wide as the next tab stop after its longest value (8 for
the seed's figures, 16 when a value has 8 or more characters), and a blank figure is
spaces: the columns stay in place, so a missing value is never confused with the
next column. Each block is preceded by a caption naming it as the seed names its
file: ``l.pre.eff.op``, ``r.L1.eff.sec``, ``l.pre.rt``, ``r.L1.run``.

Number formats follow the seed's examples column by column (see ``SPECS``).
Run loops print ``tps`` (and per-transaction ``rpt rkbpt …``) where load and index
steps print the seed's ``ips`` and per-insert ``rpi rkbpi …``; the DataFrames keep
the seed's load names for every step, with ``step``/``phase`` saying which it is.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from .stepstats import step_sort_key

TAB = 8
Fmt = Callable[[float], str]


def to_float(v, missing):
    """``v`` as a float, or ``missing`` when it has none: ``missing`` for None, NaN
    (float or pandas NA) and a string or object that ``float()`` refuses; a number or a
    numeric string ("16") converts. Callers choose ``missing`` by what an unknown
    means to them: 0.0 to count it as none, ``inf`` to sort it last, ``v`` itself to
    keep a non-number as it was."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return missing
    return missing if math.isnan(f) else f


def _blank(v) -> bool:
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def fixed(decimals: int) -> Fmt:
    """Exactly ``decimals`` decimals: 0.522, 0.1, 188.7; 0 decimals = an integer."""
    return lambda v: f"{float(v):.{decimals}f}"


def trimmed(decimals: int) -> Fmt:
    """Rounded to ``decimals``, trailing zeros dropped, as the seed's run line prints
    (awk style): 1.41, 10.4, and 0.0027 → 0."""
    def fmt(v: float) -> str:
        s = f"{float(v):.{decimals}f}"
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        return "0" if s == "-0" else s
    return fmt


def gigabytes(v: float) -> str:
    """Database size as the seed's run line prints it: 3.0g; under 0.1 GB in MB (15m, not
    a 0.0g that reads as empty)."""
    v = float(v)
    return f"{v * 1024:.0f}m" if 0 < v < 0.1 else f"{v:.1f}g"


def db_gb(v: float) -> str:
    """eff.op's ``dbgb``: one decimal as the seed prints it (3.0); under 0.1 GB in MB (15m,
    as :func:`gigabytes`: not a 0.0 that reads as empty), whichever source gave the size."""
    v = float(v)
    return f"{v * 1024:.0f}m" if 0 < v < 0.1 else f"{v:.1f}"


def millis(v: float) -> str:
    """A response time in ms: integers from 10 ms (the seed's l.rt: 43 1419 26), one
    decimal from 1 ms, two significant digits below (0.44, 0.051) so sub-millisecond
    operations do not all print 0."""
    v = float(v)
    if abs(v) >= 10:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.1f}"
    return np.format_float_positional(v, precision=2, unique=False, fractional=False, trim="-")


def seconds(v: float) -> str:
    """A duration or CPU seconds: an integer from 10 s as the seed prints them (25147),
    two decimals below, so a short step prints 0.13 rather than a made-up 0 (a whole
    number stays whole: the seed's 0 of an index step's client)."""
    v = float(v)
    return f"{v:.0f}" if abs(v) >= 10 or abs(v - round(v)) < 0.005 else f"{v:.2f}"


def text(v) -> str:
    return str(v)


INT, F1, F2, F3 = fixed(0), fixed(1), fixed(2), fixed(3)

# (DataFrame column, header for load/index steps, header for run loops, format)
Spec = tuple[str, str, str, Fmt]
SPECS: dict[str, list[Spec]] = {
    "eff.op": [
        ("ips", "ips", "tps", INT), ("secs", "secs", "secs", seconds),
        ("rpi", "rpi", "rpt", F3), ("rkbpi", "rkbpi", "rkbpt", F3), ("wkbpi", "wkbpi", "wkbpt", F3),
        ("cspi", "cspi", "cspt", F1), ("cpupi", "cpupi", "cpupt", INT),
        ("csecpq", "csecpq", "csecpq", F1), ("dsecpq", "dsecpq", "dsecpq", F1),
        ("csec", "csec", "csec", seconds), ("dsec", "dsec", "dsec", seconds),
        ("dbgb", "dbgb", "dbgb", db_gb), ("cnf", "cnf", "cnf", text),
    ],
    "eff.sec": [
        ("ips", "ips", "tps", INT), ("secs", "secs", "secs", seconds),
        ("rps", "rps", "rps", INT), ("rmbps", "rmbps", "rmbps", INT), ("wmbps", "wmbps", "wmbps", INT),
        ("csps", "csps", "csps", INT), ("cpups", "cpups", "cpups", F1),
        ("cutil", "cutil", "cutil", F3), ("dutil", "dutil", "dutil", F3),
        ("vsz", "vsz", "vsz", F1), ("rss", "rss", "rss", F1), ("cnf", "cnf", "cnf", text),
    ],
    # rt: ips secs, then one p99/max/mean triple per operation (ms), then cnf
    "rt": [("ips", "ips", "tps", INT), ("secs", "secs", "secs", seconds), ("cnf", "cnf", "cnf", text)],
    # the overview's transaction-phase line; the p99 columns sit between rss and r/s
    "run": [
        ("tps", "ips", "tps", INT), ("r/t", "r/i", "r/t", trimmed(2)),
        ("rkb/t", "rkb/i", "rkb/t", trimmed(2)), ("wkb/t", "wkb/i", "wkb/t", trimmed(2)),
        ("Mcpu/t", "Mcpu/i", "Mcpu/t", INT), ("size", "size", "size", gigabytes),
        ("rss", "rss", "rss", F2),
        ("r/s", "", "r/s", trimmed(1)), ("rMB/s", "", "rMB/s", trimmed(1)),
        ("wMB/s", "wMB/s", "wMB/s", trimmed(1)), ("cpu", "cpu", "cpu", trimmed(1)),
        ("engine", "engine", "engine", text),
    ],
}
KINDS = tuple(SPECS)
# the columns of each kind's DataFrame that are not figures of the line
ID_COLS = ("experiment", "config", "run_id", "step", "phase")


def _op_columns(df: pd.DataFrame, kind: str) -> list[str]:
    """The per-operation columns of an rt or run frame (they sit between fixed ones)."""
    cols = [c for c in df.columns if c not in ID_COLS]
    if kind == "rt":
        return [c for c in cols if c not in ("ips", "secs", "cnf")]
    if kind == "run":
        return cols[cols.index("rss") + 1:cols.index("r/s")]
    return []


def block_specs(df: pd.DataFrame, kind: str, phase: str) -> list[Spec]:
    """The columns one step's block prints, in order, with their headers and formats."""
    if kind not in SPECS:
        raise ValueError(f"unknown summary kind {kind!r} (known: {', '.join(KINDS)})")
    base = SPECS[kind]
    ops = [c for c in _op_columns(df, kind) if df[c].notna().any()]
    if kind == "rt":
        return base[:2] + [(c, c, c, millis) for c in ops] + base[2:]
    if kind == "run":
        if phase != "run":  # the seed's load-phase line: no p99s, r/s, rMB/s
            return [s for s in base if s[1]]
        return base[:7] + [(c, c, c, millis) for c in ops] + base[7:]
    return base


def layout(rows: list[list[str]]) -> str:
    """Columns on tab stops of 8 (wider where a value needs it); last column unpadded."""
    if not rows:
        return ""
    ncol = len(rows[0])
    widths = []
    for i in range(ncol - 1):
        longest = max(len(r[i]) for r in rows)
        widths.append(TAB * math.ceil((longest + 1) / TAB))
    lines = []
    for r in rows:
        cells = [c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]
        lines.append("".join(cells).rstrip())
    return "\n".join(lines)


def format_value(v, fmt: Fmt) -> str:
    return "" if _blank(v) else fmt(v)


def format_block(df: pd.DataFrame, kind: str, phase: str) -> str:
    """The header and one line per row of ``df`` (rows of one step)."""
    specs = block_specs(df, kind, phase)
    header = [s[2] if phase == "run" else s[1] for s in specs]
    rows = [header]
    for _, r in df.iterrows():
        rows.append([format_value(r.get(s[0]), s[3]) for s in specs])
    return layout(rows)


def format_lines(df: pd.DataFrame, kind: str, *, captions: bool = True) -> str:
    """The seed's fixed-width text for a summary DataFrame of ``kind``.

    ``kind`` is ``eff.op``, ``eff.sec``, ``rt`` or ``run`` (the frames of
    :func:`eff_op`, :func:`eff_sec`, :func:`response_times`, :func:`run_lines`).
    One block per step in seed order (l.pre, l.post, r.L1 …), each a caption line
    (``l.pre.eff.op``; left out with ``captions=False``), the header and one line
    per run; blocks are separated by a blank line. An empty frame gives "".
    """
    if kind not in SPECS:
        raise ValueError(f"unknown summary kind {kind!r} (known: {', '.join(KINDS)})")
    if df is None or len(df) == 0:
        return ""
    if "step" not in df:
        return format_block(df, kind, "load")
    blocks = []
    steps = df[["step", "phase"]].astype("object").drop_duplicates("step")
    for step, phase in sorted(zip(steps["step"], steps["phase"]),
                              key=lambda sp: step_sort_key(sp[0], sp[1])):
        part = df[df["step"].astype("object") == step]
        phase = phase if isinstance(phase, str) else "load"
        body = format_block(part, kind, phase)
        blocks.append(f"{step}.{kind}\n{body}" if captions else body)
    return "\n\n".join(blocks)
