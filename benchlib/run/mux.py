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


class MuxThread(RecordingThread):
    def _loop(self):
        step = self.step
        clients = self.clients
        n = len(clients)
        chunks = [c.next_chunk(CHUNK_OPS) for c in clients]
        iters = [iter(zip(ch.codes, ch.args)) if ch else iter(()) for ch in chunks]
        pgs = [c.conn for c in clients]
        afns = [c.afns for c in clients]
        gens = [None] * n
        t0s = [0] * n
        codes = [0] * n
        ns = time.perf_counter_ns
        sel = selectors.DefaultSelector()
        for i, pg in enumerate(pgs):
            pg.nonblocking = 0  # sends may block briefly; results are read only when complete
            sel.register(pg.socket, selectors.EVENT_READ, i)

        def start_op(i: int) -> bool:
            """Send connection i's next operation; False when it has none left."""
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

        start = self._wait_start()
        end = start + int(step.duration_s * NS) if step.duration_s else None
        next_tick = start + NS if end is None else min(start + NS, end)
        active = 0
        for i in range(n):
            if start_op(i):
                active += 1
            else:
                sel.unregister(pgs[i].socket)
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
            sel.close()
