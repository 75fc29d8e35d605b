"""Run folders' tables kept in memory between loads, in a process that asks for it.

A report executes its notebooks one after another in one kernel (``reports.kernel``),
and each notebook loads the experiment again (``benchlib.load_results``): a notebook
stays a few lines a user can run alone. Reading and conforming the parquet tables is
most of a load (15 runs: about 0.6 s of a core each time), so in that kernel a run's
tables are read once and kept: :func:`read` answers from memory while none of the
run folder's files has changed (name, size and modification time of each), else reads
again. The kernel's environment turns it on (:data:`CACHE_ENV` = ``1``); anywhere else
(a user's Jupyter, the command line) nothing is kept, so loading a data folder never
holds its tables twice.

The frames kept are never handed out to be changed: ``load_results`` copies each
(``assign``) before it concatenates them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

CACHE_ENV = "BENCHLIB_RUN_CACHE"
_kept: dict[tuple, tuple[tuple, tuple]] = {}


def enabled() -> bool:
    return os.environ.get(CACHE_ENV) == "1"


def _signature(run_dir: Path) -> tuple:
    """What changes when a run folder does: each file's name, size and mtime."""
    with os.scandir(run_dir) as it:
        return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns)
                            for e in it if e.is_file()))


def read(read_run: Callable, run_dir: Path, tables: tuple, statuses) -> tuple:
    """``read_run(run_dir, tables, statuses)``, from memory when the folder has not changed
    since; a run still running (its meta says so) is read every time."""
    if not enabled():
        return read_run(run_dir, tables, statuses)
    key = (str(Path(run_dir).resolve()), tables, tuple(statuses) if statuses is not None else None)
    sig = _signature(run_dir)
    hit = _kept.get(key)
    if hit is not None and hit[0] == sig:
        return hit[1]
    out = read_run(run_dir, tables, statuses)
    meta = out[0]
    if meta is not None and meta.get("status") != "running":
        _kept[key] = (sig, out)
    return out
