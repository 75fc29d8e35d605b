"""What the step a kill interrupted may have done, for a rerun that keeps the steps
before it (:mod:`.resume`): an upper bound of each op's count (the allowance the loaded
tables' check grants it) and where the resumed run's inserts claim keys.

The allowance is the step's logged seconds and ``TAIL_S`` more of its busiest second
(the seconds a kill left unlogged), or of the loop's before it where that was busier (the
same mix: a first second cut short is no measure). A step killed in its first second
logged none: its busiest second is then the loop's before it, or, killed in the run's
first loop, the run's busiest second of any op so far — never 0, which would make a rerun
refuse the table the killed loop changed ("another run used it?").
"""
from __future__ import annotations

from pathlib import Path

from ..store import folders
from ..workloads.base import StepSpec
from .recording import CHUNK_OPS

TAIL_S = 10     # seconds a killed step may have run past its last logged second


def logged_seconds(run_dir: Path) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Per step and op: the ops logged, and the busiest second's (from the table a
    finished-but-failed run wrote, or the log a killed one left)."""
    import pyarrow.parquet as pq
    table, total, peak = Path(run_dir) / "intervals.parquet", {}, {}
    if table.exists():
        lines = (b.to_pandas().to_dict("records")
                 for b in pq.ParquetFile(table).iter_batches(batch_size=50_000))
    else:
        lines = folders.interval_log_lines(Path(run_dir) / folders.INTERVAL_LOG)
    for line in lines:
        for r in line:
            if r.get("ops") is not None and r.get("step") is not None:
                step, op, n = r["step"], r["op"], int(r["ops"])
                t, p = total.setdefault(step, {}), peak.setdefault(step, {})
                t[op] = t.get(op, 0) + n
                p[op] = max(p.get(op, 0), n)
    return total, peak


def unfinished_ops(run_dir: Path, steps: list[StepSpec], step: str, ops=()) -> dict[str, int]:
    """Per op (those logged and ``ops``, the step's own), the most the step that did not
    finish can have run (see the module doc)."""
    total, peak = logged_seconds(run_dir)
    mine = total.get(step, {})
    before = [s.name for s in steps[:[s.name for s in steps].index(step)] if s.phase == "run"]
    earlier = next((peak[s] for s in reversed(before) if peak.get(s)), {})
    busiest_any = max((n for p in peak.values() for n in p.values()), default=0)

    def busiest(op: str) -> int:   # a first second cut short is no measure of the loop's rate
        own = peak.get(step, {})
        if op in own or op in earlier:
            return max(own.get(op, 0), earlier.get(op, 0))
        return busiest_any
    return {op: mine.get(op, 0) + TAIL_S * busiest(op) for op in {*mine, *earlier, *ops}}


def key_state(records: list[dict], unfinished: dict[str, int], steps: list[StepSpec],
              insert_ops: tuple[str, ...]) -> dict | None:
    """Where a resumed run's inserts claim keys: past the kept steps' claims (their
    counter as saved, ``records``) and past all the unfinished step may have claimed —
    its logged inserts (``insert_ops``: the workload's ops that claim a key) and a margin
    (``unfinished``), and a chunk per thread drawn but
    not run — so that no insert finds a key the killed run inserted. The keys skipped
    become a hole (:func:`counter_args`): no read asks for them."""
    saved = [r["keys"] for r in records if r.get("keys")]
    threads = max((s.threads for s in steps if s.phase == "run"), default=0)
    last = saved[-1] if saved else {"next": None, "holes": []}
    inserts = sum(unfinished.get(op, 0) for op in insert_ops)
    return {**last, "skip": inserts + threads * CHUNK_OPS}


def counter_args(start: int, state: dict | None) -> tuple[int, list]:
    """A run's counter's first key and holes: ``start`` (the workload's), or a resumed
    run's ``state``: past its saved claims and the skip, the skipped range a hole (some of
    its keys the killed loop inserted, the others never: either way none is read)."""
    state = state or {}
    lo = max(start, state.get("next") or start)
    first = lo + int(state.get("skip") or 0)
    holes = [list(h) for h in state.get("holes") or []]
    return first, holes + ([[lo, first]] if first > lo else [])
