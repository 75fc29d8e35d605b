"""The workload interface the driver runs: steps, and per client thread a stream of
operations prepared in chunks before they are timed.

A workload names its operations (codes 0..n-1 index ``op_names``) and, per client
thread, returns a :class:`WorkloadClient` whose ``fns[code](*args)`` performs one
operation and returns a status (0 = OK, 1 = NOT_FOUND, 2 = ERROR, as YCSB's
Status). Everything that can be computed before the run — keys, values, scan
lengths, the choice of the operation — is in the chunk: the driver's hot loop only
calls, times and appends.

The shape fits the workloads to come without change: a social graph's
multi-statement transactions are one ``fn`` each; a row-I/O benchmark's range scan
or batched update is one ``fn`` with its range in ``args``; a key-value mix on Redis
is a binding with get/set/… fns. Batched operations (a multi-row insert) set
``batch_units`` so that the driver counts records, not batches.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

STATUS_NAMES = {0: "OK", 1: "NOT_FOUND", 2: "ERROR"}


@dataclass
class Chunk:
    codes: Sequence[int]           # operation codes, in the order they run
    args: Sequence[tuple]          # the arguments of each operation
    units: Sequence[int] | None = None  # records per operation when batched, else None


@dataclass(frozen=True)
class StepSpec:
    """One test step as the driver runs it; picklable."""

    name: str                      # l.pre | l.post | r.L1 …
    phase: str                     # load | index | run
    loop: int | None = None
    threads: int = 1
    processes: int = 1
    target_ops_per_s: float | None = None
    duration_s: float | None = None
    ops_total: int | None = None   # operations (records for a load) over all threads
    warmup_s: float = 0.0
    status_interval_s: float = 10.0
    multiplex: bool | str = False  # see RunLoopSpec.multiplex (True, False or "auto")


class WorkloadClient:
    """One client thread's view of a workload. Subclasses set ``op_names``, ``fns``."""

    op_names: list[str]
    fns: list[Callable[..., int]]
    # batched ops are counted in records: e.g. {"INSERT-BATCH": "INSERT"} records each
    # batch's latency under INSERT-BATCH and count × (latency / count) under INSERT
    batch_units: dict[str, str] = {}

    def next_chunk(self, max_ops: int) -> Chunk | None:
        """The next operations, at most ``max_ops``; None when the client is done."""
        raise NotImplementedError

    def is_broken(self) -> bool:
        """True when the connection is gone (the DBMS died or dropped us)."""
        return False

    def reconnect(self) -> None:
        """Open a new connection and rebind ``fns``."""

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class WorkloadSpec:
    """A picklable description from which a client process builds its workload."""

    kind: str
    properties: dict[str, Any]

    def build(self):
        if self.kind == "ycsb":
            from .ycsb import YcsbWorkload
            return YcsbWorkload(self.properties)
        raise ValueError(f"unknown workload {self.kind!r} (known: ycsb)")
