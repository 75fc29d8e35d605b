"""Older run folders read as the current format: a meta.json of an earlier
``format_version`` brought up to this one, format 1's intervals given their length.
A folder of a newer format than this benchlib reads is refused in one line.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import schema
from ..errors import ResultsError


def upgrade_meta(meta: dict, path: Path) -> dict:
    """An older meta.json brought up to the current format (still a dict: the reader
    types it)."""
    if not isinstance(meta, dict):
        raise ResultsError(f"{path}: not a run's meta (a JSON object is expected)")
    version = meta.get("format_version")
    if version is None:
        raise ResultsError(f"{path}: no format_version: not written by benchlib")
    if int(version) > schema.FORMAT_VERSION:
        raise ResultsError(f"{path}: format {version} is newer than this benchlib reads "
                           f"({schema.FORMAT_VERSION}); upgrade benchlib")
    target = meta.get("target")
    if isinstance(target, dict) and "dialect" not in target and target.get("kind") == "sqlite":
        # written before meta carried the target's dialect: SQLite's engine ran in its clients
        meta = {**meta, "target": {**target, "dialect": {"name": "sqlite", "engine_in_clients": True}}}
    return meta


def upgrade_intervals(intervals: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Format 1's intervals have no length: each is 1 s but a step's last, which ends
    with the step (its ``secs``); an importer's ``interval_s`` is kept."""
    if not len(intervals):
        return intervals
    secs = dict(zip(steps["step"].astype("object"), pd.to_numeric(steps["secs"], errors="coerce"))) \
        if len(steps) else {}
    left = intervals["step"].astype("object").map(secs) - pd.to_numeric(intervals["second"]).astype("float64")
    derived = left.where(left < 1.0, 1.0).clip(lower=1e-6).fillna(1.0)
    intervals = intervals.copy()
    intervals["interval_s"] = intervals["interval_s"].fillna(derived)
    return intervals
