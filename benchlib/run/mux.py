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

from ..schema import ERROR
from ..workloads.reconnect import ConnectionGone
from .recording import CHUNK_OPS, NS, RecordingThread, one_line, reopen

OK_CONN = 0               # libpq's CONNECTION_OK


def _op_starter(clients: list, gens: list, t0s: list, codes: list, afns: list):
    """``start_op(i)``: send connection i's next operation (its generator runs up to
    the first yield); False when the connection has none left. ``afns[i]`` is
    connection i's operations (replaced when it reconnects)."""
    iters = []
    for c in clients:
        chunk = c.next_chunk(CHUNK_OPS)
        iters.append(iter(zip(chunk.codes, chunk.args)) if chunk else iter(()))
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
        self._afns = [c.afns for c in self.clients]
        start_op = _op_starter(self.clients, gens, t0s, codes, self._afns)
        pgs = self._pgs = [c.conn for c in self.clients]
        self._codes, self._t0s = codes, t0s
        sel = selectors.DefaultSelector()
        try:
            for i, pg in enumerate(pgs):
                pg.nonblocking = 0  # sends may block briefly; results are read only when complete
                sel.register(pg.socket, selectors.EVENT_READ, i)
            start = self._wait_start()
            end = start + int(self.step.loop_secs * NS) if self.step.loop_secs else None
            active = 0
            for i in range(n):
                if self._start_safely(sel, i, start_op):
                    active += 1
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
                    try:
                        pg.consume_input()
                        if pg.is_busy():
                            continue
                        res = pg.get_result()
                        while pg.get_result() is not None:  # end of this statement's results
                            pass
                        gens[i].send(res)
                        continue  # it sent another statement (read-modify-write)
                    except StopIteration as done:
                        st = done.value
                    except Exception:  # noqa: BLE001 - the connection is gone (server ended it)
                        st = ERROR
                    t1 = ns()
                    if t1 >= next_tick:
                        # a stopped step lets the operations in flight finish (below)
                        next_tick = self._tick(t1, start, end) or (1 << 62)
                        append = [lst.append for lst in self.svc]
                    code = codes[i]
                    append[code](t1 - t0s[i])
                    if st:
                        self.errs.append((code, st, t1 - t0s[i], -1))
                    if st == ERROR and pg.status != OK_CONN:
                        self._reconnect(sel, i)   # as a thread-per-connection client does
                    if self.stop_flag or (end is not None and t1 >= end) \
                            or not self._start_safely(sel, i, start_op):
                        self._unregister(sel, i)
                        active -= 1
        finally:
            self.last_ns = t1

    # --- a connection the server ended: the failed operation counts as an ERROR, the one
    # reconnection policy (workloads/reconnect.py, through recording.reopen) opens it
    # again, and its closed loop goes on; when the policy gives up, the step stops saying why
    def _reconnect(self, sel, i: int) -> None:
        self._unregister(sel, i)
        client = self.clients[i]
        try:
            reopen(client, f"connection {i}")
        except ConnectionGone as e:
            self.error = self.error or one_line(e)
            return
        pg = self._pgs[i] = client.conn
        self._afns[i] = client.afns
        pg.nonblocking = 0
        sel.register(pg.socket, selectors.EVENT_READ, i)

    def _start_safely(self, sel, i: int, start_op) -> bool:
        """Send connection i's next operation; False when it has none (or is lost)."""
        try:
            if self._pgs[i].status != OK_CONN:
                return False
            return start_op(i)
        except StopIteration:
            return False
        except Exception:  # noqa: BLE001 - the send failed: the connection is gone
            now = time.perf_counter_ns()
            code = self._codes[i]
            self.svc[code].append(now - self._t0s[i])   # a failed operation, as the threads count it
            self.errs.append((code, ERROR, now - self._t0s[i], -1))
            self._reconnect(sel, i)
            return self._pgs[i].status == OK_CONN and self._start_safely(sel, i, start_op)

    def _unregister(self, sel, i: int) -> None:
        try:
            sel.unregister(self._pgs[i].socket)
        except Exception:  # noqa: BLE001 - its socket is closed already: find it by index
            for key in list(sel.get_map().values()):
                if key.data == i:
                    sel.unregister(key.fileobj)
