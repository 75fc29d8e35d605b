"""What every importer shares: the one-line format error and the naming of steps (the
kinds are registered in :mod:`benchlib.registries.importers`).

An importer turns the raw output of another tool into the tidy tables of
:mod:`benchlib.schema`. It fills what its source has and leaves the rest NA.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .. import schema


class ImportFormatError(Exception):
    """A file that is not what the importer expects: one line, naming the file,
    the line number and what was expected."""

    def __init__(self, path: str | Path, lineno: int | None, expected: str):
        self.path, self.lineno, self.expected = str(path), lineno, expected
        where = f"{self.path}:{lineno}" if lineno else self.path
        super().__init__(f"{where}: {expected}")


@dataclass
class Imported:
    """What an importer returns: the tidy tables (without run_id; the caller sets it)
    and facts for meta.json (tool, version, command line, workload …)."""

    steps: pd.DataFrame | None = None
    latency: pd.DataFrame | None = None
    intervals: pd.DataFrame | None = None
    hw: pd.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)   # schema.EXTRA_TABLES by name
    files: dict[str, Path] = field(default_factory=dict)   # tables already written as Parquet


def constant_str(value: str, n: int) -> pd.api.extensions.ExtensionArray:
    """A string column of ``n`` times ``value`` (a step, a run_id, op TOTAL), made in
    Arrow: pandas makes one from a Python object per row, ~0.1 s a million."""
    return pd.array(pa.repeat(pa.scalar(value, pa.large_string()), n), dtype="str")


def stack_steps(steps: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """Name the steps as the seeds do and stack their tables.

    ``steps`` are dicts with ``"step"`` (the step's row: phase, secs, ops …),
    ``"latency"`` and ``"intervals"`` (DataFrames or None), in the order they ran.
    Loads become ``l.pre`` (``l.pre.2`` …), the others run loops ``r.L1``, ``r.L2`` ….
    Returns the steps table (its ``step`` column in the order of ``steps``) and the
    latency and intervals tables with their ``step`` set.
    """
    loads = runs = 0
    rows, lats, ivs = [], [], []
    for s in steps:
        if s["step"]["phase"] == "load":
            loads += 1
            name = schema.step_name("load") + (f".{loads}" if loads > 1 else "")
            loop = None
        else:
            runs += 1
            name, loop = schema.step_name("run", runs), runs
        rows.append({"step": name, "loop": loop, **s["step"]})
        if s["latency"] is not None and len(s["latency"]):
            lats.append(s["latency"].assign(step=constant_str(name, len(s["latency"]))))
        if s["intervals"] is not None and len(s["intervals"]):
            ivs.append(s["intervals"].assign(step=constant_str(name, len(s["intervals"]))))
    steps_df = pd.DataFrame(rows)
    for c in ("started", "ended"):
        steps_df[c] = pd.to_datetime(steps_df[c], utc=True) if c in steps_df else pd.NaT
    return (steps_df, pd.concat(lats, ignore_index=True) if lats else None,
            pd.concat(ivs, ignore_index=True) if ivs else None)
