"""An imported run's coordinates, as benchlib's own runs have them (:mod:`benchlib.points`):
its client threads and target rate, its workload and the workload's properties, so that
``summary --kind points`` and ``compare`` take it as a point like any other.

Every importer leaves in its meta what the tool said of itself (YCSB's command line and
``-p`` properties, pgbench's settings …) and in its steps table each step's threads and
target; :func:`fill` makes the run's coordinates of them, for every importer alike:

- ``threads``, ``target_ops_per_s``: the run loops' (one value among them; blank when
  they differ or no step says);
- ``workload_properties``: what the importer gave, else the tool's ``properties`` —
  strings, secrets masked, as an own run's;
- ``matrix_properties``: none (a tool's run is one point of its own matrix);
- ``target``: its DBMS configuration as far as the tool says (:func:`..points.target_point`):
  the name the import was given (``--name``, the configuration) and, as its kind, the
  client the tool drove (YCSB's ``db`` binding) — so an import pairs in ``compare`` with
  an import of the same name, and with anything else only when told (``--pair``).

An importer that knows more (the workload the tool ran, a property file's name) sets it
in its meta; what it set is kept.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..masking import mask_mapping
from ..schema import phase_of


def _one(steps: pd.DataFrame, column: str) -> Any:
    """The run loops' one value of ``column`` (None when they differ or none says)."""
    if column not in steps or not len(steps):
        return None
    run = steps[steps["step"].astype(str).map(phase_of) == "run"] if "step" in steps else steps
    values = pd.to_numeric((run if len(run) else steps)[column], errors="coerce").dropna().unique()
    return values[0].item() if len(values) == 1 else None


def fill(meta: dict, steps: pd.DataFrame | None) -> dict:
    """``meta`` with the run's coordinates filled where the importer left them blank."""
    steps = steps if steps is not None else pd.DataFrame()
    if meta.get("threads") is None:
        threads = _one(steps, "threads")
        meta["threads"] = int(threads) if threads is not None else None
    if meta.get("target_ops_per_s") is None:
        target = _one(steps, "target_ops_per_s")
        meta["target_ops_per_s"] = float(target) if target else None
    props = meta.get("workload_properties") or meta.get("properties") or {}
    if isinstance(props, dict):
        meta["workload_properties"] = mask_mapping({str(k): str(v) for k, v in props.items()})
    meta.setdefault("matrix_properties", [])
    if not isinstance(meta.get("target"), dict):
        db = (props.get("db") if isinstance(props, dict) else None) or meta.get("db")
        meta["target"] = {"name": str(meta.get("target") or meta.get("config") or ""),
                          "kind": str(db).rsplit(".", 1)[-1] if db else None}
    return meta
