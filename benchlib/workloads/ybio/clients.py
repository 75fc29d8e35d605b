"""ybio's client threads: the load (setup's inserts) and the sessions of runit.

A run session's call reads — or, for ``pct_update`` of the rows, updates — the rows
of one random range of ``batch_size`` keys: one operation (READ-BATCH / UPDATE-BATCH)
in the latency histograms, whose rows are counted as READ / UPDATE units, so the
steps and intervals carry rows/s (RIOPS) beside calls/s.

How rows are counted: the range's first key is drawn in [1, tab_rows - batch_size +
1], so the range is always inside the table's keys 1..tab_rows and a call touches
exactly ``batch_size`` rows; the driver counts the units before the call. A call
that finds another count (a table with fewer rows than tab_rows, rows deleted)
returns NOT_FOUND, so it shows as an error of the step instead of a silent miscount.

Which calls update is the seed's rule, decided before the run from the planned
rows: update when ``100 × (rows updated + batch_size / 2) / (rows + batch_size) <
pct_update`` (or pct_update is 100), which keeps the updated share at pct_update.

On PostgreSQL with the C loop built (run.driver c or auto, ``prepared``), the session
hands the driver its chunks to run in C (``native``: bindings/postgres_native.py): a
call's arguments are then ``(statement, lo, hi, batch_size)``, numbers, judged in C as
here; its status line counts the calls as they are handed back (``ops_done``), each
with its planned rows.
"""
from __future__ import annotations

import sys
import time
from itertools import repeat

import numpy as np

from ... import seeds
from ...schema import NOT_FOUND, OK
from ..base import Chunk, WorkloadClient
from ..reconnect import Reconnecting, ReconnectingClient
from .bindings import binding, open_session
from .sql import table_statements

READ_BATCH, UPDATE_BATCH = 0, 1


class YbioRunClient(ReconnectingClient, WorkloadClient):
    """One runit session on its table (session ``index``)."""

    op_names = ["READ-BATCH", "UPDATE-BATCH", "READ", "UPDATE"]
    batch_units = {"READ-BATCH": "READ", "UPDATE-BATCH": "UPDATE"}

    def __init__(self, params, endpoint, index: int, seed: int, job: str, driver: str = "python"):
        self.params, self.job = params, job
        self.table = params.table_name(index)
        self.rng = seeds.generator(seed, f"ybio run {index}")
        self.batch = params.batch_size
        self.planned_rows = self.planned_updated = 0
        # what the calls really did (the status line)
        self.rows = self.updated = self.calls = 0
        self.start_ns, self.next_status_ns = 0, 0
        self.every_ns = int(params.status_every_s * 1e9)
        kind = binding(endpoint.dialect)
        self.key = kind.key
        self.st = table_statements(kind, endpoint.dialect, self.table, params)
        self.firsts: list[int] = []      # the chunk's ranges (the C loop's status lines)
        self.chunk_pos = 0
        self.link = Reconnecting(lambda: open_session(endpoint, self.st, params, driver),
                                 f"ybio session {index + 1} ({endpoint.dialect.name})",
                                 endpoint.target_class())
        self._bind()

    def _bind(self):
        session = self.link.session
        # the whole chunk in C, where the session can (PostgreSQL's, run.driver c/auto)
        self.native = session.native(len(self.op_names)) if hasattr(session, "native") else None
        if self.native is not None:
            self.fns = []
            return
        s_read, s_update = session.calls(self.st, self.params.prepared)
        done = self._done

        def read(lo, hi, first):
            return done(s_read(lo, hi), False, first)

        def update(lo, hi, first):
            return done(s_update(lo, hi), True, first)
        self.fns = [read, update]

    def _done(self, n: int, updated: bool, first: int) -> int:
        self.calls += 1
        self.rows += n
        if updated:
            self.updated += n
        if self.every_ns and time.perf_counter_ns() >= self.next_status_ns:
            self._status(n, first)
        return OK if n == self.batch else NOT_FOUND

    def ops_done(self, codes: np.ndarray) -> None:
        """The C loop ran these calls of the chunk (in order): the status line's counts."""
        k = len(codes)
        upd = int(np.count_nonzero(codes == UPDATE_BATCH))
        self.calls += k
        self.rows += k * self.batch
        self.updated += upd * self.batch
        self.chunk_pos += k
        if k and self.every_ns and time.perf_counter_ns() >= self.next_status_ns:
            self._status(self.batch, self.firsts[self.chunk_pos - 1])

    def _status(self, n: int, first: int) -> None:
        """The seed's NOTICE line, at most once per ``status_every_s``."""
        now = time.perf_counter_ns()
        if not self.start_ns:
            self.start_ns = now
        else:
            rate = self.rows / max((now - self.start_ns) / 1e9, 1e-9)
            print(f"{rate:9.0f} rows/s on {self.table}, job: {self.job} batch#: {self.calls:6d}, "
                  f"total: {self.rows:12d} rows read, {100 * self.updated / max(self.rows, 1):5.1f} % "
                  f"updated, last: {n} rows between {first} and {first + self.batch - 1}",
                  file=sys.stderr, flush=True)
        self.next_status_ns = now + self.every_ns

    def next_chunk(self, max_ops):
        b, pct = self.batch, self.params.pct_update
        firsts = self.rng.integers(1, self.params.tab_rows - b + 2, max_ops).tolist()
        codes = []
        rows, upd = self.planned_rows, self.planned_updated
        for _ in range(max_ops):
            if pct == 100 or (pct and 100 * (upd + 0.5 * b) / (rows + b) < pct):
                codes.append(UPDATE_BATCH)
                upd += b
            else:
                codes.append(READ_BATCH)
            rows += b
        self.planned_rows, self.planned_updated = rows, upd
        if self.native is not None:   # numbers: the C loop writes them as text
            self.firsts, self.chunk_pos = firsts, 0
            args = list(zip(codes, firsts, [f + b - 1 for f in firsts], repeat(b)))
            return Chunk(codes, args, [b] * max_ops)
        key = self.key
        args = [(key(f), key(f + b - 1), f) for f in firsts]
        return Chunk(codes, args, [b] * max_ops)
