"""The run's interval log: each completed second appended to ``intervals.jsonl`` at once,
so a killed run keeps its seconds and the intervals table is made from them."""
from __future__ import annotations

import json
from pathlib import Path

from ..store import folders, space


class IntervalLog:
    """Appends completed seconds to ``intervals.jsonl`` at once: a killed run keeps them."""

    def __init__(self, run_dir: Path, run_id: str):
        self.path = run_dir / folders.INTERVAL_LOG
        self.run_id = run_id
        self.f = self.path.open("a")
        self.step = None
        self.rows: list[dict] = []

    def __call__(self, rows: list[dict]) -> None:
        rows = [{"run_id": self.run_id, "step": self.step, **{k: v for k, v in r.items() if k != "min_us"}}
                for r in rows]
        self.rows.extend(rows)   # kept in memory whatever the disk says
        try:
            self.f.write(json.dumps(rows, default=float) + "\n")
            self.f.flush()
        except OSError as e:    # the step stops with this one line (step._Collector)
            raise (space.no_space(self.path.parent) if space.is_no_space(e) else e) from None

    def close(self) -> None:
        try:
            self.f.close()
        except OSError:
            pass   # what it could not write is in self.rows, written as the intervals table
