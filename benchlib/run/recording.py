"""What every kind of hot loop shares, below them all: the per-second latency lists of a
client thread, handed over to its process at each second's rollover, the common start
instant, the merging of seconds from several sources (a process's threads, a step's
processes) and the step's error type. :mod:`.clients` (a thread per connection) and
:mod:`.mux` (one thread, many connections) build on it; neither imports the other.
"""
from __future__ import annotations

import threading
import time

from ..workloads.base import StepSpec
from ..workloads.reconnect import ConnectionGone

NS = 1_000_000_000
CHUNK_OPS = 20_000


class StepError(Exception):
    """A step that could not run or finish; the message is one line."""


def one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def reopen(client, what: str) -> None:
    """A lost connection of ``client`` opened again by the one reconnection policy
    (``client.reconnect()``: workloads/reconnect.py, at once then with backoff, for at most
    its ``give_up_s``), with no retry loop of the caller's own; :class:`ConnectionGone` in
    one line when the policy gives up or the new connection cannot be bound. Each reopened
    connection is counted on ``client`` (``reconnects``; ``reconnect_s``, the time it
    took; ``refused``, its attempts that failed: the server was not there), what the
    step's outage rule reads (:mod:`.outage`)."""
    t0 = time.monotonic()
    link = getattr(client, "link", None)          # workloads/reconnect.Reconnecting
    failed0 = getattr(link, "failed_attempts", 0)
    try:
        client.reconnect()
    except ConnectionGone:
        raise
    except Exception as e:  # noqa: BLE001 - binding the new connection failed
        raise ConnectionGone(f"{what}: connection lost and not reopened: {one_line(e)}") from None
    client.reconnects = getattr(client, "reconnects", 0) + 1
    client.reconnect_s = getattr(client, "reconnect_s", 0.0) + time.monotonic() - t0
    client.refused = getattr(client, "refused", 0) + getattr(link, "failed_attempts", 0) - failed0


def reopened(threads: list) -> tuple[int, float, int]:
    """The connections the threads' clients reopened, the time the threads spent
    reopening them (a thread reopening drives none of its connections meanwhile), and
    the attempts the server refused."""
    clients = [c for th in threads for c in th.clients]
    return (sum(getattr(c, "reconnects", 0) for c in clients),
            sum(getattr(c, "reconnect_s", 0.0) for c in clients),
            sum(getattr(c, "refused", 0) for c in clients))


class SecondMerger:
    """Parts of each second from several sources — the threads of a client process, the
    processes of a step — given out in order once every live source is past a second.

    A source says how far it is with :meth:`advance` (every second up to ``upto`` handed
    over) or :meth:`finish`; a second no source had anything for comes out with no
    parts, so the seconds given out have no gaps.
    """

    def __init__(self, nsources: int):
        self.upto = [-1] * nsources
        self.finished = [False] * nsources
        self.pending: dict[int, list] = {}
        self.emitted = -1

    def add(self, second: int, part) -> None:
        self.pending.setdefault(second, []).append(part)

    def advance(self, source: int, upto: int) -> None:
        self.upto[source] = max(self.upto[source], upto)

    def finish(self, source: int) -> None:
        self.finished[source] = True

    def complete(self, final: bool = False) -> list[tuple[int, list]]:
        """The seconds every source is past, in order: (second, parts); all that is
        pending when ``final`` or when every source has finished."""
        live = [u for u, f in zip(self.upto, self.finished) if not f]
        if live and not final:
            upto = min(live)
        else:
            upto = max(self.pending) if self.pending else self.emitted
        out = [(s, self.pending.pop(s, [])) for s in range(self.emitted + 1, upto + 1)]
        self.emitted = max(self.emitted, upto)
        return out


class RecordingThread(threading.Thread):
    """What every client thread shares: per-second latency lists, handed over at rollover."""

    def __init__(self, clients: list, step: StepSpec, start_box: list):
        super().__init__(daemon=True)
        self.step = step
        self.start_box = start_box
        nops = len(clients[0].op_names)
        self.nops = nops
        self.svc = [[] for _ in range(nops)]
        self.itd = [[] for _ in range(nops)]
        # (code, status, service ns, intended ns or -1) of each call that did not return OK;
        # its latency is in svc/itd too
        self.errs: list[tuple[int, int, int, int]] = []
        self.units = [0] * nops
        self.done: list[tuple] = []     # (second, svc, itd, errs, units) handed to the process
        self.second = 0
        self.finished = False
        self.error: str | None = None
        self.stop_flag = False
        self.last_ns = 0                # completion time of this thread's last operation
        self.path = "python"            # the hot path: python, or the C loop's (c-libpq)
        self.clients = clients
        for c in clients:
            c.record = self._record_inner

    def _record_inner(self, code: int, dt_ns: int) -> None:
        self.svc[code].append(dt_ns)

    def _rollover(self, t1: int, start: int) -> None:
        self.done.append((self.second, self.svc, self.itd, self.errs, self.units))
        n = self.nops
        self.svc, self.itd = [[] for _ in range(n)], [[] for _ in range(n)]
        self.errs, self.units = [], [0] * n
        self.second = (t1 - start) // NS

    def _tick(self, t1: int, start: int, end: int | None) -> int | None:
        """At the first completion in a new second: hand the lists over; return the next
        tick, or None when the step is over (stopped, or past its end)."""
        self._rollover(t1, start)
        if self.stop_flag or (end is not None and t1 >= end):
            return None
        tick = start + (self.second + 1) * NS
        return tick if end is None else min(tick, end)

    def _wait_start(self) -> int:
        """Every client begins at the same instant, the step's start (set in the near future)."""
        while self.start_box[0] == 0:
            time.sleep(0.001)
        start = self.start_box[0]
        wait = start - time.perf_counter_ns()
        if wait > 0:
            time.sleep(wait / NS)
        while time.perf_counter_ns() < start:
            pass
        return start

    def run(self):
        try:
            self._loop()
        except BaseException as e:  # reported by the process, never lost
            self.error = one_line(e)
        finally:
            self.done.append((self.second, self.svc, self.itd, self.errs, self.units))
            self.svc = self.itd = None
            self.finished = True
            for c in self.clients:
                try:
                    c.close()
                except Exception:
                    pass

    def _loop(self):
        raise NotImplementedError
