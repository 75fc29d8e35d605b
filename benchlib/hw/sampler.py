"""The live sampler: rows of the ``hw`` table, one per second, beside a benchmark step.

Each row covers one sample interval (``second=3`` covers [3 s, 4 s) of the step) and
holds what :data:`benchlib.schema.HW` declares:

- ``cpu_user/cpu_sys/cpu_iowait/cpu_idle``: percent of all CPUs, computed as vmstat
  does from the deltas of ``psutil.cpu_times()``: user includes nice (and guest, which
  Linux counts in user), sys = system + irq + softirq; steal is left out, so the four
  sum to 100 - steal.
- ``ctx_switches``: context switches per second (``psutil.cpu_stats()``).
- ``disk_reads/disk_writes`` (operations/s) and ``disk_read_kb/disk_write_kb``
  (KiB/s) summed over whole disks: :func:`is_whole_disk`, shared with the iostat
  importer so a live run and an imported run count the same devices.
- ``dbms_cpu_s/client_cpu_s``: CPU seconds (user + system) the DBMS / client
  processes used in the interval — the DBMS's read from its cgroup where it has one
  (``dbms_cgroup``: :mod:`.cgroup`, exited processes' CPU included; ``dbms_cpu_from``
  ``cgroup``), else summed over its processes (``processes``);
  ``dbms_rss_gb/dbms_vsz_gb``: their resident and virtual sizes summed, in GB = 2**30
  bytes (as ps KiB / 1024**2; the same GB as ``db_size_gb`` and the ps importer). See :class:`ProcAccount` for how processes
  that come and go are counted.
- ``db_size_gb``: the last value of ``db_size_bytes()``, called in its own thread at
  most every ``db_size_every_s`` and once more at stop; rows between calls carry the
  last value (so the series is a step function and the last row is the size at the
  end of the step, which is what eff.op's ``dbgb`` wants); NA before the first value
  and after a failed call, until the next one succeeds.
- ``ts``: the UTC time the sample was taken, i.e. the end of its interval, as
  vmstat -t / iostat -t / mpstat print it.

A figure the sampler cannot have (no dbms_pids callable: a remote server) stays NA,
never 0.

The step's window (:meth:`Sampler.window_begin` at the step's start, :meth:`window_end`
at its end, called by the step's thread): the server's work over exactly that window,
for the steps table — the run's own sessions (``sessions``: the target's listing, read
by :class:`~.sessions.SessionAccount`, polled with every sample so that sessions that go
mid-step keep their last values), all the server's processes (``dbms_pids``, two
readings of a :class:`ProcAccount`), and ``other_work`` (counters of the server's
other work by key, as each other database's commits) differenced.
"""
from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone

import pandas as pd
import psutil

from .. import schema
from .cgroup import CpuCgroup
from .disks import disk_selector
from .processes import GB, ProcAccount
from .sessions import SessionAccount


def _gb(x: int | None) -> float | None:
    return None if x is None else x / GB


class _Snap:
    """System-wide counters at one moment."""

    __slots__ = ("cpu", "ctx", "disk", "mono", "wall")

    def __init__(self, select: Callable[[str], bool]) -> None:
        self.mono = time.monotonic()
        self.wall = datetime.now(timezone.utc)
        self.cpu = psutil.cpu_times()
        self.ctx = psutil.cpu_stats().ctx_switches
        d = [c for n, c in (psutil.disk_io_counters(perdisk=True) or {}).items() if select(n)]
        # no disk selected: NA, not a made-up 0
        self.disk = [sum(getattr(c, f) for c in d) for f in
                     ("read_count", "write_count", "read_bytes", "write_bytes")] if d else None


def _system_row(a: _Snap, b: _Snap) -> dict:
    """Percents and per-second rates between two snapshots."""
    dt = b.mono - a.mono
    d = {f: getattr(b.cpu, f, 0.0) - getattr(a.cpu, f, 0.0) for f in
         ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")}
    total = sum(d.values())   # guest/guest_nice are inside user/nice already
    row = {"ts": b.wall}
    if total > 0:
        row.update(cpu_user=100 * (d["user"] + d["nice"]) / total,
                   cpu_sys=100 * (d["system"] + d["irq"] + d["softirq"]) / total,
                   cpu_iowait=100 * d["iowait"] / total, cpu_idle=100 * d["idle"] / total)
    if dt > 0:
        row["ctx_switches"] = (b.ctx - a.ctx) / dt
        if a.disk is not None and b.disk is not None:
            r, w, rb, wb = (y - x for x, y in zip(a.disk, b.disk))
            row.update(disk_reads=r / dt, disk_writes=w / dt,
                       disk_read_kb=rb / 1024 / dt, disk_write_kb=wb / 1024 / dt)
    return row


class Sampler:
    """Samples the ``hw`` figures every ``interval_s`` in a background thread.

    ``dbms_pids`` / ``client_pids`` are called every sample (backends come and go)
    and return the processes to account for, or None when there are none to see
    (columns NA); ``engine_in_clients``: the DBMS runs in the client processes
    (SQLite), its figures are the clients' of the same reading. ``disks``: as
    :func:`disk_selector` (None = whole disks).

    Use ``start(run_id, step)`` … ``stop()`` → DataFrame, or
    ``with sampler.start(run_id, step): …`` and then ``sampler.result``.
    ``cost_cpu_s`` is the CPU time the sampler's own threads used (thread_time).

    Rates are per real elapsed second, so a late sample (a stall, or the GIL held by
    CPU-bound Python threads of the same process) makes a longer row, not a wrong
    one; CPU seconds are differences of counters, so their sum over a step is exact.
    A tail shorter than half an interval at stop joins the last row.
    """

    def __init__(self, interval_s: float = 1.0, *, dbms_pids: Callable[[], list[int]] | None = None,
                 client_pids: Callable[[], list[int]] | None = None,
                 db_size_bytes: Callable[[], int | None] | None = None, db_size_every_s: float = 5.0,
                 disks: list[str] | None = None, engine_in_clients: bool = False,
                 sessions: Callable[[], list] | None = None, session_scope: str = "sessions",
                 other_work: Callable[[], dict | None] | None = None,
                 dbms_cgroup: Callable[[], CpuCgroup | None] | None = None):
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.interval_s, self.db_size_every_s = float(interval_s), float(db_size_every_s)
        self.dbms_pids, self.client_pids, self.db_size_bytes = dbms_pids, client_pids, db_size_bytes
        self.engine_in_clients = engine_in_clients
        self.sessions = SessionAccount(sessions) if sessions is not None else None
        self.other_work, self.session_scope = other_work, session_scope
        self.dbms_cgroup = dbms_cgroup
        self._cgroup: CpuCgroup | None = None
        self._cg_last: float | None = None
        self._window: dict = {}
        self.on_row: Callable[[dict], None] | None = None   # called with each full row
        self._select = disk_selector(disks)
        self._threads: list[threading.Thread] = []
        self.result: pd.DataFrame | None = None
        self.errors: list[str] = []     # first few exceptions swallowed while sampling
        self.cost_cpu_s = 0.0

    # --- public
    def start(self, run_id: str | None, step: str | None) -> Sampler:
        if self._threads:
            raise RuntimeError("Sampler already started")
        self.run_id, self.step = run_id, step
        self._rows: list[dict] = []
        self._size: float | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._dbms, self._client = ProcAccount(), ProcAccount()
        self.cost_cpu_s, self.result, self._window = 0.0, None, {}
        self._cgroup = None
        if self.dbms_cgroup is not None and not self.engine_in_clients:
            try:
                self._cgroup = self.dbms_cgroup()
            except Exception as e:  # noqa: BLE001 - no cgroup: the processes are counted
                self._note(e)
        self._cg_last = self._cgroup.cpu_s() if self._cgroup is not None else None
        self._proc_sample()   # baselines
        self._prev = self._first = _Snap(self._select)
        self._threads = [threading.Thread(target=self._run, name="hw-sampler", daemon=True)]
        if self.db_size_bytes is not None:
            self._threads.append(threading.Thread(target=self._size_loop, name="hw-dbsize", daemon=True))
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> pd.DataFrame:
        """Take a last (partial) sample, stop the threads, return the step's rows."""
        if not self._threads:
            return self.result if self.result is not None else schema.conform_hw(None)
        self._stop.set()
        self._threads[0].join()
        if self.sessions is not None:   # a window never ended (a step cut short): its thread
            self.sessions.end()
        size_done = True
        if len(self._threads) > 1:
            # a size query stuck behind a long statement must not hold the step
            self._threads[1].join(timeout=max(10.0, self.db_size_every_s))
            size_done = not self._threads[1].is_alive()
        if size_done and self.db_size_bytes is not None and self._rows:
            self._rows[-1]["db_size_gb"] = self._call_size()
        self._threads = []
        df = pd.DataFrame(self._rows)
        if len(df):
            df.insert(0, "run_id", self.run_id)
            df.insert(1, "step", self.step)
            df.insert(2, "host", socket.gethostname())
        self.result = schema.conform_hw(df)
        return self.result

    def __enter__(self) -> Sampler:  # noqa: PYI034
        if not self._threads:
            self.start(None, None)
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- the sampling thread
    def _run(self) -> None:
        iv, t0 = self.interval_s, self._first.mono
        k_prev, k = 0, 1
        last_start = None   # (snapshot, tick) at the start of the last row, to extend it
        while True:
            stopping = self._stop.wait(max(0.0, t0 + k * iv - time.monotonic()))
            try:
                if self.sessions is not None:
                    self.sessions.poll()
                snap = _Snap(self._select)
                dcpu, drss, dvsz, ccpu, _, _ = self._proc_sample()
                partial = stopping and self._rows and (snap.mono - self._prev.mono) < iv / 2
                if partial:
                    # a short tail joins the last row rather than making a noisy one
                    row, start_snap, start_k = self._rows[-1], *last_start
                    dcpu = _add(row.get("dbms_cpu_s"), dcpu)
                    ccpu = _add(row.get("client_cpu_s"), ccpu)
                else:
                    start_snap, start_k = self._prev, k_prev
                new = {"second": math.floor(start_k * iv + 1e-9), **_system_row(start_snap, snap),
                       "dbms_cpu_s": dcpu, "dbms_rss_gb": _gb(drss), "dbms_vsz_gb": _gb(dvsz),
                       "client_cpu_s": ccpu, "db_size_gb": self._size, "dbms_cpu_from": self._from(dcpu)}
                if partial:
                    self._rows[-1] = new
                elif not stopping or snap.mono > self._prev.mono:
                    self._rows.append(new)
                    last_start = (self._prev, k_prev)
                    if self.on_row is not None:   # streamed as it is taken (a Dask sampler's)
                        self.on_row(dict(new))
                self._prev, k_prev = snap, k
            except Exception as e:  # noqa: BLE001 - one bad sample must not end the series
                self._note(e)
            if stopping:
                break
            # after a stall, skip the missed ticks instead of sampling in a burst
            k = max(k + 1, int((time.monotonic() - t0) / iv) + 1)
        self._add_cost(time.thread_time())

    def _proc_sample(self):
        clients = self._client.sample(self._pids(self.client_pids))
        if self.engine_in_clients:   # one reading: the two cannot differ by a tick
            return (*clients, *clients)
        dcpu, rss, vsz = self._dbms.sample(self._pids(self.dbms_pids))
        if self._cgroup is not None:
            now = self._cgroup.cpu_s()
            dcpu = None if now is None or self._cg_last is None else max(0.0, now - self._cg_last)
            self._cg_last = now
        return dcpu, rss, vsz, *clients

    def _from(self, dcpu) -> str | None:
        """Where a row's dbms_cpu_s comes from."""
        if dcpu is None or self.engine_in_clients:
            return None
        return "cgroup" if self._cgroup is not None else "processes"

    def _pids(self, fn):
        if fn is None:
            return None
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the target's callable must not kill the sampler
            self._note(e)
            return None

    # --- the step's window
    def window_begin(self) -> None:
        """The step starts now: the baselines of its window's figures."""
        w = self._window = {"server": ProcAccount()}
        if not self.engine_in_clients:
            w["server"].sample(self._pids(self.dbms_pids))
            w["cgroup"] = self._cgroup.cpu_s() if self._cgroup is not None else None
        w["other"] = self._counter()
        if self.sessions is not None:
            self.sessions.begin()

    def window_end(self) -> dict:
        """The step ended now: the server's work over its window (the steps table's
        ``dbms_*`` figures; absent what this sampler cannot say)."""
        w, out = self._window, {}
        if not w or self.engine_in_clients:
            return out
        own = None
        if self.sessions is not None:
            own = self.sessions.end()
            self._add_cost(self.sessions.cost_cpu_s)
            self.sessions.cost_cpu_s = 0.0
        server = w["server"].sample(self._pids(self.dbms_pids))[0]
        cg = self._cgroup.cpu_s() if self._cgroup is not None else None
        if cg is not None and w.get("cgroup") is not None:   # exited processes' CPU too
            server = max(0.0, cg - w["cgroup"])
        if server is not None:
            out.update(dbms_server_cpu_s=server, dbms_cpu_from=self._from(server))
        if own is not None:
            out.update(dbms_cpu_s=own.cpu_s, dbms_attribution=self.session_scope, dbms_sessions=own.sessions,
                       dbms_read_kb=own.read_kb, dbms_write_kb=own.write_kb)
        elif server is not None:
            out.update(dbms_cpu_s=server, dbms_attribution="server")
        before, after = w["other"], self._counter()
        if before is not None and after is not None:   # a key made meanwhile counts from 0
            out["other_db_commits"] = sum(max(0, n - before.get(k, 0)) for k, n in after.items())
        return out

    def _counter(self) -> dict | None:
        if self.other_work is None:
            return None
        try:
            return self.other_work()
        except Exception as e:  # noqa: BLE001 - a failed query costs the figure, not the step
            self._note(e)
            return None

    # --- the db size thread
    def _size_loop(self) -> None:
        while True:
            self._size = self._call_size()
            if self._stop.wait(self.db_size_every_s):
                break
        self._add_cost(time.thread_time())

    def _call_size(self) -> float | None:
        try:
            v = self.db_size_bytes()
            return None if v is None else float(v) / GB
        except Exception as e:  # noqa: BLE001 - a failing size query costs a value, not the sampler
            self._note(e)
            return None

    def _note(self, e: Exception) -> None:
        with self._lock:
            if len(self.errors) < 10:
                self.errors.append(f"{type(e).__name__}: {e}")

    def _add_cost(self, s: float) -> None:
        with self._lock:
            self.cost_cpu_s += s


def _add(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b
