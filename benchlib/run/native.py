"""A thread per connection whose operations run in C, a chunk at a time.

Where the workload's client has ``native`` ops (a binding over one of the C loops of
``workloads/_native/``, built: YCSB's on PostgreSQL, ``workloads/ycsb/bindings/postgres_native.py``;
``workloads/_native/ops.LoopOps``), this thread hands each chunk of prepared
operations to C, which issues, awaits and times them without the GIL and returns at
the end of the chunk, at the first completion in a new second, when the paced
schedule passes the step's end, or on a lost connection (opened again by the one
reconnection policy, ``workloads/reconnect.py``, through :func:`.recording.reopen`).
The thread then files the
outcomes exactly as :class:`.clients.ClientThread` does per operation: service times
per operation code into the second's lists (the one that crossed into a new second
into the new one), intended-start latencies when paced, non-OK statuses, and the
inner statements of a compound operation under their own codes, and a batched
operation's units (ybio's rows) where it did not fail. Everything after (the
per-second hand-over, HdrHistograms, tables) is the same code.
"""
from __future__ import annotations

import time

import numpy as np

from ..schema import NOT_ERRORS
from .recording import CHUNK_OPS, NS, RecordingThread, reopen

COUNTED = np.array(sorted(NOT_ERRORS), np.int8)   # statuses whose units count


def plan_on(client, chunk, what: str):
    """``client``'s plan of ``chunk`` on its connection; where making it talks to the
    server (LinkBench's MULTIGET_LINK statements prepared for the chunk's IN-list lengths)
    and finds the connection lost (ended between two chunks), the one reconnection policy
    opens it again (:func:`.recording.reopen`) and the plan is made there."""
    try:
        return client.native.plan(chunk)
    except Exception:
        if not client.is_broken():
            raise
    reopen(client, what)
    return client.native.plan(chunk)


class NativeThread(RecordingThread):
    """One client, its connection's operations run by ``client.native`` in C."""

    def __init__(self, client, gindex: int, total: int, step, start_box: list):
        super().__init__([client], step, start_box)
        self.client = client
        self.gindex, self.total = gindex, total
        self.path = client.native.path
        self.first = client.next_chunk(CHUNK_OPS)

    def _loop(self):
        step = self.step
        start = self._wait_start()
        end = start + int(step.loop_secs * NS) if step.loop_secs else None
        rate = step.target_ops_per_s
        pacing = (start, int(self.gindex * NS / rate), self.total * NS / rate) if rate else (0, 0, 0.0)
        next_tick = start + NS if end is None else min(start + NS, end)
        chunk, self.first = self.first, None
        f = self.client.native.loop            # why the C loop returned: its F_* constants
        issued = 0
        self.last_ns = start
        while chunk is not None:
            plan = plan_on(self.client, chunk, f"client {self.gindex}")
            i = 0
            while i < len(plan):
                i1, t1, flags = self.client.native.run(plan, i, next_tick, end, pacing, issued)
                issued += i1 - i
                if i1 > i:
                    self.last_ns = t1
                if flags & f.F_TICK:
                    # as ClientThread: the operation that ended in a new second is its
                    # first; the inner statements of a compound one were recorded as it ran
                    self._file_ops(plan, i, i1 - 1, chunk.units)
                    self._file_inner(plan, i, i1)
                    next_tick = self._tick(t1, start, end)
                    self._file_ops(plan, i1 - 1, i1, chunk.units)
                else:
                    self._file_ops(plan, i, i1, chunk.units)
                    self._file_inner(plan, i, i1)
                self._ack(self.client, plan, i, i1)
                if flags & f.F_BROKEN:
                    reopen(self.client, f"client {self.gindex}")
                if flags & f.F_END or (flags & f.F_TICK and next_tick is None):
                    return
                i = i1
            chunk = self.client.next_chunk(CHUNK_OPS)

    def _file_ops(self, plan, a: int, b: int, units) -> None:
        """Operations a..b-1 into this second's lists (``units``: the chunk's, where its
        operations are batches: those that did not fail count theirs, as ClientThread's)."""
        if b <= a:
            return
        raw = plan.results(a, b)
        codes, st = np.frombuffer(raw[0], np.int8), np.frombuffer(raw[1], np.int8)
        svc, itd = np.frombuffer(raw[2], np.int64), np.frombuffer(raw[3], np.int64)
        paced = itd[0] >= 0    # -1 unpaced
        for code in np.unique(codes).tolist():
            m = codes == code
            self.svc[code].extend(svc[m].tolist())
            if paced:
                self.itd[code].extend(itd[m].tolist())
        bad = np.flatnonzero(st)
        if len(bad):
            self.errs.extend(zip(codes[bad].tolist(), st[bad].tolist(), svc[bad].tolist(),
                                 (itd[bad] if paced else np.full(len(bad), -1)).tolist()))
        if units is not None:
            u = np.asarray(units[a:b], np.int64) * np.isin(st, COUNTED)
            for code in np.unique(codes).tolist():
                self.units[code] += int(u[codes == code].sum())

    @staticmethod
    def _ack(client, plan, a: int, b: int) -> None:
        """Operations a..b-1 returned: the client acknowledges its inserts among them
        (YCSB's acknowledged insert counter), where it keeps one."""
        done = getattr(client, "ops_done", None)
        if done is not None and b > a:
            done(np.frombuffer(plan.results(a, b)[0], np.int8))

    def _file_inner(self, plan, a: int, b: int) -> None:
        """The inner statements of compound operations a..b-1 under their own codes."""
        compound = self.clients[0].native.compound
        if b <= a or not compound:
            return
        raw = plan.results(a, b)
        codes = np.frombuffer(raw[0], np.int8)
        for code, (c1, c2) in compound.items():
            m = codes == code
            if m.any():
                for inner, lat in ((c1, raw[4]), (c2, raw[5])):
                    x = np.frombuffer(lat, np.int64)[m]
                    self.svc[inner].extend(x[x >= 0].tolist())


class NativeMuxThread(NativeThread):
    """All of a process's connections driven from one thread in C (``run_many``: libpq's
    asynchronous API, libmariadb's non-blocking calls or hiredis, and poll), each still a
    closed loop, as :mod:`.mux` does in Python
    and ``pgbench -j`` in C. Unpaced run steps only, as there."""

    def __init__(self, clients: list, step, start_box: list):
        RecordingThread.__init__(self, clients, step, start_box)
        self.path = clients[0].native.path
        self._units = []        # each connection's chunk's units (batched operations), or None
        for c in clients:
            chunk = c.next_chunk(CHUNK_OPS)
            c.native.conn.assign(c.native.plan(chunk) if chunk is not None else None)
            self._units.append(chunk.units if chunk is not None else None)
        self._filed = [0] * len(clients)

    def _loop(self):
        start = self._wait_start()
        end = start + int(self.step.loop_secs * NS) if self.step.loop_secs else None
        next_tick = start + NS if end is None else min(start + NS, end)
        run_many = self.clients[0].native.run_many
        f = self.clients[0].native.loop        # why run_many returned: its F_* constants
        conns = [c.native.conn for c in self.clients]
        sending = 1
        while True:
            flags, t1, k = run_many(conns, next_tick, end or 0, sending)
            if flags & f.F_TICK:
                self._file_all(conns, but=k)          # the one that crossed: the new second's
                next_tick = self._tick(t1, start, end)
                if next_tick is None:                 # over: the operations in flight finish
                    next_tick, sending = 1 << 62, 0
            self._file_all(conns)
            if t1:
                self.last_ns = max(self.last_ns, t1)
            if flags & f.F_NEED:
                self._next_plan(k)
            if flags & f.F_BROKEN:
                conns[k] = self._reconnect_one(k)
            if flags & f.F_WAIT and (self.stop_flag or (end is not None and time.perf_counter_ns() >= end)):
                sending = 0
            if flags & f.F_IDLE:
                return

    def _file_all(self, conns: list, but: int | None = None) -> None:
        """Every connection's completed operations not filed yet (but the last of ``but``)."""
        for j, conn in enumerate(conns):
            done = conn.done - (1 if j == but else 0)
            plan = conn.plan
            if plan is not None and done > self._filed[j]:
                self._file_ops(plan, self._filed[j], done, self._units[j])
                self._file_inner(plan, self._filed[j], done)
                self._ack(self.clients[j], plan, self._filed[j], done)
                self._filed[j] = done

    def _next_plan(self, k: int) -> None:
        """Connection k used its plan up (all filed): its next chunk, or none."""
        client = self.clients[k]
        chunk = client.next_chunk(CHUNK_OPS)
        client.native.conn.assign(client.native.plan(chunk) if chunk is not None else None)
        self._units[k] = chunk.units if chunk is not None else None
        self._filed[k] = 0

    def _reconnect_one(self, k: int):
        """Connection k is gone (its operation counted as an ERROR): the reconnection
        policy opens it again (or the step stops saying why) and it goes on with its plan
        where it was."""
        client = self.clients[k]
        old = client.native.conn
        plan, done = old.plan, old.done
        reopen(client, f"connection {k}")
        old.assign(None)
        client.native.conn.assign(plan, done)
        return client.native.conn
