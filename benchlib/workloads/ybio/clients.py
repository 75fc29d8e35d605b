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
"""
from __future__ import annotations

import sqlite3
import sys
import time

import numpy as np

from ...schema import ERROR, NOT_FOUND, OK
from ..base import Chunk, WorkloadClient
from .sql import table_statements

READ_BATCH, UPDATE_BATCH = 0, 1


class _Session:
    """One connection and the two calls of runit, per dialect: ``read(lo, hi)`` and
    ``update(lo, hi)`` return the rows counted by the statement."""

    def __init__(self, endpoint, st, prepared: bool):
        self.dialect = endpoint.dialect.name
        self.conn = endpoint.connect()
        self.read, self.update = getattr(self, f"_bind_{self.dialect}")(st, prepared)

    def key(self, k: int):
        """A key as the hot path passes it (libpq takes bytes: encoded before timing)."""
        return b"%d" % k if self.dialect == "postgres" else k

    def _bind_postgres(self, st, prepared):
        from psycopg import pq
        pg = self.conn.pgconn
        tok = pq.ExecStatus.TUPLES_OK
        if prepared:
            for name, sql in ((b"ybio_read", st.read), (b"ybio_update", st.update)):
                res = pg.prepare(name, sql.encode())
                if res.status != pq.ExecStatus.COMMAND_OK:
                    raise RuntimeError(res.error_message.decode(errors="replace").strip())
            run = pg.exec_prepared
            r_stmt, u_stmt = b"ybio_read", b"ybio_update"
        else:
            run = pg.exec_params
            r_stmt, u_stmt = st.read.encode(), st.update.encode()

        def read(lo, hi):
            r = run(r_stmt, (lo, hi))
            return int(r.get_value(0, 0)) if r.status == tok else -1

        def update(lo, hi):
            r = run(u_stmt, (lo, hi))
            return int(r.get_value(0, 0)) if r.status == tok else -1
        return read, update

    def _bind_sqlite(self, st, prepared):
        ex = self.conn.execute   # sqlite3 caches its prepared statements either way
        r_sql, u_sql, check = st.read, st.update, st.update_check
        returning = sqlite3.sqlite_version_info >= (3, 35)

        def read(lo, hi):
            return ex(r_sql, (lo, hi)).fetchone()[0]

        def update(lo, hi):
            if returning:
                return len(ex(u_sql, (lo, hi)).fetchall())
            ex("BEGIN")
            try:
                ex(u_sql.split(" RETURNING ")[0], (lo, hi))
                n = ex(check, (lo, hi)).fetchone()[0]
                ex("COMMIT")
            except BaseException:
                ex("ROLLBACK")
                raise
            return n
        return read, update

    def _bind_mysql(self, st, prepared):
        conn = self.conn          # no server-side prepared statements on MariaDB here
        cur = conn.cursor()
        r_sql, u_sql, check = st.read, st.update, st.update_check

        def read(lo, hi):
            cur.execute(r_sql, (lo, hi))
            return int(cur.fetchone()[0])

        def update(lo, hi):
            # no data-modifying CTE: the UPDATE, then the range's count, one transaction
            conn.begin()
            try:
                cur.execute(u_sql, (lo, hi))
                cur.execute(check, (lo, hi))
                n = int(cur.fetchone()[0])
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
            return n
        return read, update

    def is_broken(self) -> bool:
        closed = getattr(self.conn, "closed", None)
        if closed is not None and not callable(closed):
            return bool(closed)
        return getattr(self.conn, "open", True) is False

    def close(self) -> None:
        self.conn.close()


class YbioRunClient(WorkloadClient):
    """One runit session on its table (session ``index``)."""

    op_names = ["READ-BATCH", "UPDATE-BATCH", "READ", "UPDATE"]
    batch_units = {"READ-BATCH": "READ", "UPDATE-BATCH": "UPDATE"}

    def __init__(self, params, endpoint, index: int, seed: int, job: str):
        self.params, self.endpoint, self.job = params, endpoint, job
        self.table = params.table_name(index)
        self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 0x59424)))
        self.batch = params.batch_size
        self.planned_rows = self.planned_updated = 0
        # what the calls really did (the status line)
        self.rows = self.updated = self.calls = 0
        self.start_ns, self.next_status_ns = 0, 0
        self.every_ns = int(params.status_every_s * 1e9)
        self.st = table_statements(endpoint.dialect.name, self.table, params)
        self._connect()

    def _connect(self):
        self.session = _Session(self.endpoint, self.st, self.params.prepared)
        s_read, s_update = self.session.read, self.session.update
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
        return OK if n == self.batch else (ERROR if n < 0 else NOT_FOUND)

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
        key = self.session.key
        args = [(key(f), key(f + b - 1), f) for f in firsts]
        return Chunk(codes, args, [b] * max_ops)

    def is_broken(self) -> bool:
        return self.session.is_broken()

    def reconnect(self) -> None:
        try:
            self.session.close()
        except Exception:
            pass
        self._connect()

    def close(self) -> None:
        self.session.close()
