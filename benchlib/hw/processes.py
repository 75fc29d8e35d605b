"""Process accounting: a server's process tree, and the CPU seconds, RSS and VSZ of a
set of processes that comes and goes between samples (backends fork and exit)."""
from __future__ import annotations

import os
import time

import psutil

GB = 1024 ** 3


def process_tree_pids(root: int | None) -> list[int] | None:
    """``root`` and all its descendants now (e.g. the postmaster and its backends);
    None when ``root`` is gone.

    Reads /proc/<pid>/task/<pid>/children: psutil's ``children()`` scans every
    process of the machine, which alone would cost more than the rest of a sample.
    Only children forked by each process's main thread are seen, which is how servers
    fork (the postmaster, from its main loop); a multi-threaded server that forks
    from another thread needs its own listing.
    """
    if not root:
        return None
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = [int(c) for c in f.read().split()]
        except FileNotFoundError:
            if pid != root:
                continue                  # exited while we looked
            if not os.path.exists(f"/proc/{root}"):
                return None
            try:                          # a kernel without the children files
                return [root] + [c.pid for c in psutil.Process(root).children(recursive=True)]
            except psutil.Error:
                return None
        except OSError:
            if pid == root:
                return None
            continue
        out.append(pid)
        todo.extend(kids)
    return out


def _boot_clock() -> float:
    """Now, on the clock of psutil's create_time() (boot clock + boot time on Linux)."""
    if hasattr(time, "CLOCK_BOOTTIME"):
        return time.clock_gettime(time.CLOCK_BOOTTIME) + _BOOT_TIME
    return time.time()


_BOOT_TIME = psutil.boot_time() if hasattr(time, "CLOCK_BOOTTIME") else 0.0


class ProcAccount:
    """CPU seconds, RSS and VSZ of a set of processes that changes between samples.

    - A process seen before: its CPU (user + system) increase since the last sample.
    - A process first seen: all its CPU if it was created after the previous sample
      (a backend forked mid-interval used all of it within the interval); only a
      baseline otherwise (it existed but was not listed: its past is not ours).
    - A process that vanished: the kernel adds a reaped child's whole CPU to its
      parent's children_user/children_system. So every tracked process counts its
      own CPU plus its reaped children's, and a vanished process whose parent is
      tracked (the postmaster reaps its backends) is subtracted once with its last
      seen total: its final partial interval is then counted exactly. The sampler's
      own process stands in as that parent for processes it spawned (clients).
      A vanished process whose parent is neither loses its last interval.
    - Sampling is not atomic: a reap between reading a child and its parent can make
      one interval short and the next long; a negative figure is carried into the
      next interval instead of being reported, so sums over a step stay exact.
    """

    def __init__(self) -> None:
        self._procs: dict[int, tuple[psutil.Process, float, int]] = {}  # pid -> (proc, cpu, ppid)
        self._me = os.getpid()
        self._own = None        # our reaped children's CPU at the last sample, once adopted
        self._debt = 0.0
        self._prev = None       # _boot_clock() at the last sample

    def sample(self, pids: list[int] | None) -> tuple[float | None, int | None, int | None]:
        """(CPU seconds since the last call, RSS bytes, VSZ bytes); None = unknown."""
        now, prev = _boot_clock(), self._prev
        self._prev = now      # also when there is no list: a pid listed next is new or old by it
        if pids is None:
            return None, None, None
        cpu, rss, vsz, n, seen = 0.0, 0, 0, 0, {}
        for pid in dict.fromkeys(pids):
            old = self._procs.get(pid)
            try:
                p = old[0] if old else psutil.Process(pid)
                # two reads (/proc/<pid>/stat and statm): per process, this is the cost
                t = p.cpu_times()
                m = p.memory_info()
                total = t.user + t.system + t.children_user + t.children_system
                if old and total < old[1]:        # the pid was reused by a new process
                    p, old = psutil.Process(pid), None
                ppid = old[2] if old else p.ppid()
            except psutil.Error:      # gone between listing and reading, or not ours to read
                continue
            if old:
                cpu += total - old[1]
            elif prev is not None and p.create_time() >= prev - 0.02:
                cpu += total          # born within this interval: all its CPU is in it
            seen[pid] = (p, total, ppid)
            if m.rss:   # an exiting process (a zombie) holds no memory: not a size of 0
                rss, vsz, n = rss + m.rss, vsz + m.vms, n + 1
        if self._own is None and self._me not in seen and any(v[2] == self._me for v in seen.values()):
            self._own = own_children_cpu()
        if self._own is not None:
            own = own_children_cpu()
            if self._me not in seen:
                cpu += own - self._own
            self._own = own
        reapers = set(seen) | ({self._me} if self._own is not None else set())
        for pid, (p, last, ppid) in self._procs.items():
            if pid in seen:
                continue
            try:
                if p.status() == psutil.STATUS_ZOMBIE:
                    seen[pid] = (p, last, ppid)   # dead, not yet reaped: wait for the reap
                    continue
                continue                          # alive but no longer listed: not ours now
            except psutil.NoSuchProcess:
                pass
            except psutil.Error:
                continue
            if ppid in reapers:
                cpu -= last                       # its final total is in the parent's figure
        self._procs = seen
        cpu -= self._debt
        self._debt = max(0.0, -cpu)
        return max(cpu, 0.0), (rss if n else None), (vsz if n else None)


def own_children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def tree_cpu_s(root: int | None) -> float:
    """The CPU seconds ``root``'s tree has used so far: each process's own and its reaped
    children's (the postmaster reaps every backend: theirs is in its children_user and
    children_system) — the truth a window's edges difference, where every process that
    ran meanwhile was reaped inside the tree."""
    total = 0.0
    for pid in process_tree_pids(root) or []:
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total
