"""The server's work of one run: the CPU and storage I/O of the run's own sessions over
exactly a step's window.

A session is a task of the server's that serves one of the run's connections: a
PostgreSQL backend (a process: ``(pid, None)``), a MariaDB connection thread (``(mysqld
pid, tid)``), Redis's one process. The target lists them
(``Target.session_tasks``); this module reads their counters from ``/proc``:

- CPU: ``utime + stime`` of ``/proc/<pid>/stat`` (or ``/proc/<pid>/task/<tid>/stat``), in
  clock ticks (``SC_CLK_TCK``, 10 ms on Linux), so a step's figure is exact to a tick per
  session;
- storage I/O: ``read_bytes`` / ``write_bytes`` of ``…/io`` (what the task caused to be
  fetched from or sent to the storage layer); blank when ``/proc`` does not let this
  user read it (another user's process, not root).

:class:`SessionAccount` is read at the step's start (:meth:`begin`), listed again with
every sample in between (:meth:`poll`: sessions that come and go mid-step, as a
reconnect's, keep the last values seen), the known ones' counters read every
:data:`REREAD_S` by a thread of its own (a session whose client closes as the step ends
is gone at :meth:`end`: it loses at most that much), and at its end (:meth:`end`). A session first seen after the start
counts from zero when it was born after the start (all its work is the step's), from
its first reading otherwise. A task whose start time changed is a new task on a reused
id.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

Task = tuple[int, "int | None"]   # (pid, tid): tid None = the whole process

REREAD_S = 0.1   # the known sessions' counters are read this often between the listings
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _base(task: Task) -> str:
    pid, tid = task
    return f"/proc/{pid}" if tid is None else f"/proc/{pid}/task/{tid}"


def read_task(task: Task) -> tuple[int, float, int | None, int | None] | None:
    """(start time in ticks since boot, CPU seconds, bytes read, bytes written) of a task
    now; None when it is gone. The I/O figures are None where ``/proc`` refuses them."""
    base = _base(task)
    try:
        with open(f"{base}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # the command may hold spaces and parentheses: the fields follow the last ")"
    fields = raw[raw.rfind(b")") + 2:].split()
    utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    rd = wr = None
    try:
        with open(f"{base}/io", "rb") as f:
            io = dict(line.split(b":", 1) for line in f.read().splitlines() if b":" in line)
        rd, wr = int(io[b"read_bytes"]), int(io[b"write_bytes"])
    except (OSError, KeyError, ValueError):
        pass
    return start, (utime + stime) / _HZ, rd, wr


def now_ticks() -> float:
    """Now, in clock ticks since boot (the clock of a task's start time)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME) * _HZ


@dataclass
class SessionWork:
    """What the run's sessions did over a window."""

    cpu_s: float
    read_kb: float | None       # None: /proc did not say for every session
    write_kb: float | None
    sessions: int               # sessions seen in the window


@dataclass
class _Seen:
    start: int
    first: tuple[float, int | None, int | None]   # the baseline (cpu, read, written)
    last: tuple[float, int | None, int | None]


class SessionAccount:
    """The counters of the tasks ``list_tasks()`` names, differenced over a window.

    ``list_tasks`` returns the run's sessions now, or None when the server cannot say
    (then :meth:`end` returns None). Thread-safe: the sampler's thread polls while the
    step's thread begins and ends the window.
    """

    def __init__(self, list_tasks: Callable[[], list[Task] | None]):
        self.list_tasks = list_tasks
        self._lock = threading.Lock()
        self._seen: dict[Task, _Seen] = {}
        self._begun: float | None = None
        self._open = False
        self._known = True
        self.error: str | None = None   # the last listing that failed
        self._thread: threading.Thread | None = None
        self.cost_cpu_s = 0.0           # the re-reading thread's own CPU

    def begin(self) -> None:
        with self._lock:
            self._seen, self._begun, self._open, self._known = {}, now_ticks(), True, True
            self._read(baseline_all=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._reread_loop, name="hw-sessions", daemon=True)
        self._thread.start()

    def _reread_loop(self) -> None:
        # the sessions known, read again every REREAD_S: a session that goes (its client
        # closed the connection as the step ended) loses at most its last REREAD_S
        while not self._stop.wait(REREAD_S):
            with self._lock:
                for task, seen in list(self._seen.items()):
                    got = read_task(task) if isinstance(task[0], int) else None
                    if got is not None and got[0] == seen.start:
                        seen.last = tuple(got[1:])
        with self._lock:
            self.cost_cpu_s += time.thread_time()

    def poll(self) -> None:
        """A reading between the two ends (a failed listing skips it)."""
        with self._lock:
            if self._open:
                self._read(required=False)

    def end(self) -> SessionWork | None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        with self._lock:
            if not self._open:
                return None
            self._read()
            self._open = False
            if not self._known:
                return None
            return _total(self._seen.values())

    def _read(self, baseline_all: bool = False, required: bool = True) -> None:
        try:
            tasks = self.list_tasks()
        except Exception as e:  # noqa: BLE001 - the listing failed: the figure is unknown
            self.error, tasks = f"{type(e).__name__}: {e}", None
        if tasks is None:
            self._known = self._known and not required
            return
        for task in dict.fromkeys(tasks):
            got = read_task(task)
            if got is None:
                continue
            start, *now = got
            seen = self._seen.get(task)
            if seen is not None and seen.start == start:
                seen.last = tuple(now)
                continue
            if seen is not None:   # the id reused by a new task: keep the old one's work
                self._seen[(task, seen.start)] = seen
            born_after = not baseline_all and start >= self._begun - 1
            first = (0.0, 0, 0) if born_after else tuple(now)
            self._seen[task] = _Seen(start, first, tuple(now))


def _total(seen) -> SessionWork:
    cpu, rd, wr, n = 0.0, 0, 0, 0
    for s in seen:
        n += 1
        cpu += max(0.0, s.last[0] - s.first[0])
        rd = None if rd is None or s.last[1] is None or s.first[1] is None else rd + s.last[1] - s.first[1]
        wr = None if wr is None or s.last[2] is None or s.first[2] is None else wr + s.last[2] - s.first[2]
    return SessionWork(cpu, None if rd is None else rd / 1024, None if wr is None else wr / 1024, n)
