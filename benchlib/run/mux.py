"""Many connections' closed loops driven by one thread, as ``pgbench -j`` does.

With a thread per connection, every completed query wakes a thread and hands the
GIL over; at 16 connections on 2 cores that costs more CPU than the queries. Here
one thread per client process owns all its connections: it sends each
connection's next statement with libpq's asynchronous API, waits on all their
sockets at once (epoll), and on a readable socket collects the result, records the
latency and sends that connection's next operation. Each connection is still a
closed loop — one operation in flight, the next one sent when it completes — so the
numbers mean what they mean with threads.

An operation is a generator from the workload (``client.afns[code](*args)``): it
sends its statement and yields; it is resumed with the result and either returns
its status or sends its next statement (a read-modify-write is two). Used for
unpaced run steps of targets whose binding has such generators (PostgreSQL).
"""
from __future__ import annotations

import selectors
import time

from .recording import CHUNK_OPS, NS, RecordingThread


def _op_starter(clients: list, gens: list, t0s: list, codes: list):
    """``start_op(i)``: send connection i's next operation (its generator runs up to
    the first yield); False when the connection has none left."""
    iters = []
    for c in clients:
        chunk = c.next_chunk(CHUNK_OPS)
        iters.append(iter(zip(chunk.codes, chunk.args)) if chunk else iter(()))
    afns = [c.afns for c in clients]
    ns = time.perf_counter_ns

    def start_op(i: int) -> bool:
        try:
            code, a = next(iters[i])
        except StopIteration:
            chunk = clients[i].next_chunk(CHUNK_OPS)
            if chunk is None:
                return False
            iters[i] = iter(zip(chunk.codes, chunk.args))
            code, a = next(iters[i])
        g = afns[i][code](*a)
        codes[i] = code
        t0s[i] = ns()
        next(g)  # runs up to the first yield: the statement is sent
        gens[i] = g
        return True
    return start_op


class MuxThread(RecordingThread):
    def _loop(self):
        n = len(self.clients)
        gens, t0s, codes = [None] * n, [0] * n, [0] * n
        start_op = _op_starter(self.clients, gens, t0s, codes)
        pgs = [c.conn for c in self.clients]
        sel = selectors.DefaultSelector()
        try:
            for i, pg in enumerate(pgs):
                pg.nonblocking = 0  # sends may block briefly; results are read only when complete
                sel.register(pg.socket, selectors.EVENT_READ, i)
            start = self._wait_start()
            end = start + int(self.step.duration_s * NS) if self.step.duration_s else None
            active = 0
            for i in range(n):
                if start_op(i):
                    active += 1
                else:
                    sel.unregister(pgs[i].socket)
            self._drive(sel, pgs, start_op, (gens, t0s, codes), start, end, active)
        finally:
            sel.close()

    def _drive(self, sel, pgs, start_op, in_flight, start: int, end: int | None, active: int):
        """The loop: on each readable connection, collect its result, resume its operation;
        when that completes, record it and send the connection's next one."""
        gens, t0s, codes = in_flight
        ns = time.perf_counter_ns
        next_tick = start + NS if end is None else min(start + NS, end)
        append = [lst.append for lst in self.svc]
        t1 = start
        try:
            while active:
                events = sel.select(1.0)
                if not events and (self.stop_flag or (end is not None and ns() >= end)):
                    return
                for key, _ in events:
                    i = key.data
                    pg = pgs[i]
                    pg.consume_input()
                    if pg.is_busy():
                        continue
                    res = pg.get_result()
                    while pg.get_result() is not None:  # end of this statement's results
                        pass
                    try:
                        gens[i].send(res)
                        continue  # it sent another statement (read-modify-write)
                    except StopIteration as done:
                        st = done.value
                    t1 = ns()
                    if t1 >= next_tick:
                        # a stopped step lets the operations in flight finish (below)
                        next_tick = self._tick(t1, start, end) or (1 << 62)
                        append = [lst.append for lst in self.svc]
                    code = codes[i]
                    append[code](t1 - t0s[i])
                    if st:
                        self.errs.append((code, st))
                    if self.stop_flag or (end is not None and t1 >= end) or not start_op(i):
                        sel.unregister(pg.socket)
                        active -= 1
        finally:
            self.last_ns = t1
