"""``executor: dask``: a step's client processes as tasks on a Dask cluster.

Each task does one client process's work (:func:`.clients.run_client`: its threads,
its share of the keyspace and of the target, its per-second latencies, its
histograms) inside a Dask worker, so a step's drivers may run on many hosts. The
controller stays the one of :mod:`.step`; only the carriage differs:

- messages go through a named ``distributed.Queue`` (msgpack: the per-second
  latencies travel as bytes, decoded back into arrays here);
- the start is a barrier: every task connects and prepares, says ``ready``, then waits
  on a named ``distributed.Event``; the controller sets one start instant in wall-clock
  time (a ``Variable``), which each task turns into its own ``perf_counter`` — the
  hosts' clocks must agree (NTP) for their seconds to line up;
- a task that raises, or a worker that is lost (the scheduler's ``KilledWorker``, or its
  address gone from the cluster), is a lost client: the step fails with that reason and
  keeps what the others measured; a task that the scheduler would run again elsewhere
  after its worker was lost refuses to (the barrier is past) — no silent partial merge;
- every host that runs drivers and is not the controller's samples its own hardware
  beside them (the first driver task there runs a :class:`~benchlib.hw.sampler.Sampler`
  counting that host's driver workers as clients) and sends its rows at the end; the
  controller's host is sampled by the controller, as with local processes.

Without ``dask.scheduler`` a ``LocalCluster`` of ``dask.workers`` processes on loopback
TCP is started for the experiment, with ``allowed-failures: 0`` so a lost worker fails
its task at once instead of running it again.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import queue
import socket
import time
import uuid

import numpy as np

from ..hw.roles import CLIENT, tag
from ..params import ParameterError
from .clients import run_client
from .addresses import refused_at_once
from .executors import Clients, Placement
from .recording import StepError, one_line

CONNECT_TIMEOUT_S = 10
CLOSE_TIMEOUT_S = 5
# what the client raises when the scheduler is gone (CommClosedError is an OSError;
# "Timed out trying to connect" a TimeoutError)
GONE = (OSError, TimeoutError)
FINISHED_GRACE_S = 5.0
POLL_S = 0.05              # the controller's look at the queue when it was empty
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,   # a lost worker fails its task at once
    # the worker's statistical profiler samples every thread's stack each 10 ms: in a
    # driver process that is GIL time taken from the hot loops
    "distributed.worker.profile.enabled": False,
    # the event loop's own wake-ups (health tick 20 ms, memory monitor 100 ms, system
    # monitor 500 ms by default), each taking the GIL beside the driver's threads
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}     # a task finished but its result not read after this: lost


def _wall_offset_ns() -> int:
    """time_ns() - perf_counter_ns(): turns this host's perf_counter into wall time."""
    return time.time_ns() - time.perf_counter_ns()


class DaskExecutor:
    """A connected Dask client (and the local cluster it started, if any)."""

    name = "dask"

    def __init__(self, client, cluster=None):
        self.client, self.cluster = client, cluster
        self.address = client.scheduler.address
        self.sample_own_host = False   # tests: sample the controller's host from a worker too
        self.dbms_worker: str | None = None   # dask.dbms_worker: it samples the DBMS host

    @classmethod
    def open(cls, exp) -> DaskExecutor:
        """The experiment's ``dask:`` scheduler, or a local cluster of its workers."""
        ex = cls.connect(exp.dask.scheduler, exp.dask.workers)
        ex.dbms_worker = exp.dask.dbms_worker
        return ex

    @classmethod
    def connect(cls, scheduler: str | None, workers: int,
                timeout_s: float = CONNECT_TIMEOUT_S) -> DaskExecutor:
        """Connect to ``scheduler``, or start a local cluster of ``workers`` processes;
        ParameterError (one line) when it cannot be had."""
        import logging

        import dask
        from distributed import Client, LocalCluster
        where = f"dask.scheduler {scheduler}" if scheduler else "dask: a local cluster"
        try:
            if scheduler:
                refused_at_once(scheduler, timeout_s)
                ex = cls(Client(scheduler, timeout=timeout_s))
                # its reconnection's tracebacks: a scheduler gone is the step's one line
                logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
            else:
                with dask.config.set(LOCAL_CLUSTER_CONFIG):
                    cluster = LocalCluster(n_workers=workers, processes=True, host="127.0.0.1",
                                           protocol="tcp", dashboard_address=None, threads_per_worker=1,
                                           silence_logs=logging.ERROR)
                ex = cls(Client(cluster), cluster)
        except (OSError, TimeoutError, RuntimeError) as e:
            raise ParameterError(f"{where}: cannot connect ({one_line(e)})") from None
        ex.check_versions(where)
        return ex

    def check_versions(self, where: str) -> None:
        """Every worker runs benchlib of the controller's version (ParameterError else)."""
        from ..version import __version__
        try:
            versions = self.client.run(_benchlib_version)
        except Exception as e:  # noqa: BLE001 - unpickling our function there needs benchlib
            self.close()
            raise ParameterError(f"{where}: a worker cannot run benchlib ({one_line(e)}); "
                                 f"install benchlib {__version__} there") from None
        wrong = {a: v for a, v in versions.items() if v != __version__}
        if wrong:
            self.close()
            addr, v = sorted(wrong.items())[0]
            raise ParameterError(f"{where}: worker {addr} has benchlib {v}, this controller "
                                 f"{__version__}: install the same version on every worker")

    def start_clients(self, tasks: list[dict]) -> Clients:
        try:
            return DaskClients(self, tasks)
        except GONE as e:
            raise StepError(scheduler_gone(self.address, e)) from None

    def close(self) -> None:
        """The client (and the local cluster) closed; a scheduler already gone is no error."""
        try:
            self.client.close(timeout=CLOSE_TIMEOUT_S)
        except (*GONE, RuntimeError):
            pass
        if self.cluster is not None:
            self.cluster.close()


def scheduler_gone(address: str, e: BaseException) -> str:
    """One line: the scheduler is gone, and the first cause of it (not the layers of
    Dask's comm above it: "Connection refused", "Timed out trying to connect")."""
    while e.__cause__ is not None:
        e = e.__cause__
    return f"the Dask scheduler {address} is gone ({one_line(e)})"


def _workers(client) -> dict:
    """The scheduler's workers now. Not scheduler_info(): it returns the client's cache,
    which the client's own periodic refresh replaces by one without workers — a race
    that made live workers look lost."""
    return client.sync(client.scheduler.identity, n_workers=-1)["workers"]


def _samples_dbms(info: dict, name: str | None) -> bool:
    """A worker that samples the database host: ``--resources dbms=1`` or named so."""
    return bool((info.get("resources") or {}).get("dbms")) or (name is not None and str(info.get("name")) == name)


def _benchlib_version() -> str:
    from ..version import __version__
    return __version__


def _names() -> dict[str, str]:
    tag = uuid.uuid4().hex[:12]
    return {k: f"benchlib-{k}-{tag}" for k in ("q", "go", "stop", "start")}


class DaskClients(Clients):
    """A step's client tasks, one per client process, each pinned to a worker."""

    executor = "dask"
    lead_ns = 500_000_000        # a round trip through the scheduler to every worker

    def __init__(self, ex: DaskExecutor, tasks: list[dict]):
        from distributed import Event, Queue, Variable
        c = self.client = ex.client
        self.names = _names()
        self.q = Queue(self.names["q"], client=c)
        self.go, self.stop_evt = Event(self.names["go"], client=c), Event(self.names["stop"], client=c)
        self.start_var = Variable(self.names["start"], client=c)
        # the database host's sampler worker (hw.dbms: dask) runs no drivers
        workers = sorted(a for a, i in _workers(c).items() if not _samples_dbms(i, ex.dbms_worker))
        if len(tasks) > len(workers):
            # a driver is a process: its CPU and memory (getrusage) are its worker's own,
            # and all of them wait on one barrier, so they must all run at once
            raise StepError(f"{len(tasks)} client processes but the Dask cluster has {len(workers)} "
                            "workers: each runs one (dask.workers, or more `dask worker` processes)")
        self.assigned = workers[:len(tasks)]
        self.address, self.gone = ex.address, None   # gone: why the scheduler cannot be reached
        hosts, pids = c.run(socket.gethostname), c.run(os.getpid)
        own = socket.gethostname()
        sampled: set[str] = set() if ex.sample_own_host else {own}
        for task, w in zip(tasks, self.assigned):
            if hosts[w] not in sampled:   # the first driver on a host samples it
                sampled.add(hosts[w])
                task["sample_pids"] = [pids[a] for a in set(self.assigned) if hosts[a] == hosts[w]]
        self.futures = [c.submit(client_task, task, self.names, workers=[w], allow_other_workers=False,
                                 pure=False, retries=0, key=f"benchlib-client-{i}-{self.names['q'][-12:]}")
                        for i, (task, w) in enumerate(zip(tasks, self.assigned))]
        self.n = len(tasks)
        self.placed: dict[int, Placement] = {}
        self.hw_frames: list = []
        self._buf: list = []
        self._finished_at: dict[int, float] = {}

    def _lose(self, e: BaseException) -> None:
        """The scheduler cannot be reached: every driver not done is lost with the reason."""
        self.gone = self.gone or scheduler_gone(self.address, e)

    def get(self, timeout: float):
        deadline = time.monotonic() + timeout
        while not self._buf:
            if self.gone:
                raise queue.Empty   # lost() says why
            # a blocking get that times out logs a traceback on the scheduler: poll instead
            try:
                self._buf.extend(self.q.get(batch=True))
            except GONE as e:
                self._lose(e)
            if not self._buf:
                if time.monotonic() >= deadline:
                    raise queue.Empty
                time.sleep(POLL_S)
        return self._decode(self._buf.pop(0))

    def _decode(self, msg):
        kind, p = msg[0], msg[1]
        if kind == "ready":
            self.placed[p] = Placement(p, **msg[3])
            return kind, p, msg[2]
        if kind == "second":
            payload = {op: (np.frombuffer(s, np.int32), np.frombuffer(i, np.int32), *rest)
                       for op, (s, i, *rest) in msg[3].items()}   # errors, units, failed
            return kind, p, msg[2], payload
        if kind == "done":
            d, off = dict(msg[2]), _wall_offset_ns()
            for k in ("started_ns", "ended_ns"):     # the task's wall clock -> ours
                d[k] = d[k] - off if d.get(k) else d.get(k)
            self.hw_frames.extend(tag(pickle.loads(f), CLIENT, "local") for f in msg[3])  # a driver host
            return kind, p, d
        return tuple(msg)

    def start(self, start_ns: int) -> None:
        try:
            self.start_var.set(start_ns + _wall_offset_ns())
            self.go.set()
        except GONE as e:
            self._lose(e)

    def stop(self) -> None:
        if not self.gone:
            try:
                self.stop_evt.set()
            except GONE as e:
                self._lose(e)

    def lost(self, have: set[int]) -> list[tuple[int, str]]:
        if not self.gone:
            try:
                alive = set(_workers(self.client))
            except GONE as e:
                self._lose(e)
        if self.gone:
            return [(i, f"driver {i}: {self.gone}") for i in range(self.n) if i not in have]
        out = []
        for i, f in enumerate(self.futures):
            if i in have:
                continue
            where = self._where(i)
            if f.status == "error":
                out.append((i, f"driver {i} on {where} failed: {one_line(f.exception())}"))
            elif f.status in ("cancelled", "lost"):
                out.append((i, f"driver {i} on {where}: its task was {f.status}"))
            elif self.assigned[i] not in alive:
                out.append((i, f"driver {i}: Dask worker {where} lost"))
            elif f.status == "finished":
                t = self._finished_at.setdefault(i, time.monotonic())
                if time.monotonic() - t > FINISHED_GRACE_S:
                    out.append((i, f"driver {i} on {where} ended without its result"))
        return out

    def _where(self, i: int) -> str:
        p = self.placed.get(i)
        return f"{self.assigned[i]} ({p.host})" if p else self.assigned[i]

    def placements(self) -> list[Placement]:
        return [self.placed.get(i) or Placement(i, "", None, w) for i, w in enumerate(self.assigned)]

    def join(self, timeout_s: float) -> None:
        from distributed import wait
        self.stop()
        if self.gone:
            return
        try:
            wait(self.futures, timeout=timeout_s)
            self.client.cancel(self.futures)
        except GONE:   # TimeoutError: not all ended in time; cancelled or gone alike
            with contextlib.suppress(*GONE):
                self.client.cancel(self.futures)


class _QueueOut:
    """The task's side of the queue: what run_client puts, made msgpack-able."""

    def __init__(self, q, placement: dict):
        self.q, self.placement = q, placement
        self.sampler = None      # this host's, when this task samples it

    def stop_sampler(self) -> list[bytes]:
        s, self.sampler = self.sampler, None
        return [pickle.dumps(s.stop())] if s is not None else []

    def put(self, msg: tuple) -> None:
        kind = msg[0]
        if kind == "ready":
            msg = (*msg, self.placement)
        elif kind == "second":
            msg = (kind, msg[1], int(msg[2]),
                   {op: (s.tobytes(), i.tobytes(), *(int(x) for x in rest))
                    for op, (s, i, *rest) in msg[3].items()})
        elif kind == "done":
            d, off = dict(msg[2]), _wall_offset_ns()
            for k in ("started_ns", "ended_ns"):     # perf_counter is this host's only
                d[k] = d[k] + off if d.get(k) else d.get(k)
            msg = (kind, msg[1], d, self.stop_sampler())
        self.q.put(list(msg))


class _Polled:
    """A distributed Event read at most every ``every_s`` (each read is a round trip)."""

    def __init__(self, evt, every_s: float = 0.1):
        self.evt, self.every_s, self.last, self.value = evt, every_s, 0.0, False

    def is_set(self) -> bool:
        now = time.monotonic()
        if not self.value and now - self.last >= self.every_s:
            self.value, self.last = self.evt.is_set(), now
        return self.value


def client_task(task: dict, names: dict[str, str]) -> None:
    """On a Dask worker: one client process's work, its messages through the queue."""
    from distributed import Event, Queue, Variable, get_worker
    p = task["proc_index"]
    out = _QueueOut(Queue(names["q"]), {"host": socket.gethostname(), "pid": os.getpid(),
                                        "worker": get_worker().address})
    go, stop = Event(names["go"]), _Polled(Event(names["stop"]))
    if go.is_set():
        # run again after the worker it was on was lost: the step began without it
        out.put(("error", p, "a driver task started after the step began (its worker was lost)"))
        return

    def wait_start() -> int:
        while not go.wait(timeout=0.2):
            if stop.is_set():
                return 0
        start = time.perf_counter_ns() + Variable(names["start"]).get() - time.time_ns()
        out.sampler = _host_sampler(task.get("sample_pids"))   # its rows ride with "done"
        return start
    try:
        run_client(task, out, wait_start, stop, lambda: True)
    finally:
        out.stop_sampler()


def _host_sampler(pids: list[int] | None):
    """This host's hardware over the step, its driver workers as the clients."""
    if pids is None:
        return None
    from ..hw.sampler import Sampler
    return Sampler(1.0, client_pids=lambda: list(pids)).start(None, None)

