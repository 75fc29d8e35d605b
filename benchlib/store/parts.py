"""A run's finished steps as the runner saves them while it runs, in the run folder's
``.steps/``: ``<step>.json`` (the step's outcome, what a rerun keeps) and
``<step>.hw.parquet`` (its hw rows, of which the run's hw table is made at its end).

A run whose process was killed has no hw table: its readers take the hw rows of its
finished steps from here (:func:`read_hw`), and its status says where it stopped
(:func:`killed_error`). The runner's side (saving, resuming) is ``run/resume.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .. import schema

PARTS = ".steps"


def hw_parts(run_dir: Path) -> list[Path]:
    """The finished steps' hw files, in the order the steps ran."""
    return sorted((Path(run_dir) / PARTS).glob("*.hw.parquet"), key=lambda p: p.stat().st_mtime)


def read_hw(run_dir: Path) -> pd.DataFrame:
    """The hw rows of a run's finished steps (a killed run's: it wrote no hw table)."""
    frames = []
    for p in hw_parts(run_dir):
        try:
            frames.append(pd.read_parquet(p))
        except (OSError, ValueError):
            continue   # a step's file cut short by the kill: that step's hw rows are lost
    frames = [f for f in frames if len(f)]
    return schema.conform("hw", pd.concat(frames, ignore_index=True)) if frames else schema.empty("hw")


def finished_steps(run_dir: Path) -> list[str]:
    """The steps saved as finished, in the order they ran."""
    found = []
    for p in sorted((Path(run_dir) / PARTS).glob("*.json"), key=lambda p: p.stat().st_mtime):
        try:
            found.append(json.loads(p.read_text())["step"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def killed_error(run_dir: Path, meta: dict) -> str:
    """A killed run's status line: the step it stopped in, those it finished."""
    done = finished_steps(run_dir)
    left = [s for s in meta.get("planned") or [] if s not in set(done)]
    where = f" during {left[0]}" if left else ""
    kept = f" ({', '.join(done)} finished)" if done else ""
    return (f"killed: the benchmark process ended{where}{kept}; the next run of the "
            "experiment resumes it")
