"""What every importer shares: the one-line format error and the registry of kinds.

An importer turns the raw output of another tool into the tidy tables of
:mod:`benchlib.schema`. It fills what its source has and leaves the rest NA.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd


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


# kind name -> function(paths: list[Path]) -> Imported
IMPORTERS: dict[str, Callable[[list[Path]], Imported]] = {}


def register(kind: str):
    def deco(fn):
        IMPORTERS[kind] = fn
        return fn
    return deco
