"""``hw.dbms: dask``: benchlib's sampler on the database host, run by a Dask worker there.

The worker is the one started with ``--resources dbms=1`` (``dask worker tcp://… 
--resources dbms=1`` on the database host), or the one named by ``dask.dbms_worker``.
For each step the controller asks it (``Client.run``, outside the task queue: a step's
driver tasks never wait behind it) to start a :class:`~benchlib.hw.sampler.Sampler`
whose DBMS processes are the server's process tree — the process listening on the
URL's port, else the processes named as the target's ``server_names`` (postgres,
mariadbd, redis-server) whose parent is not one — and whose database size is asked
over its own connection. Each row goes to the controller as it is taken (a named Dask
queue, as the drivers' seconds); after the step the controller stops the sampler and
takes its rows whole (role ``dbms``, source ``dask``), or — the worker lost — those it
streamed. The worker's own CPU for sampling is in ``cost_cpu_s``.

It works with either executor: with ``executor: local`` only the sampler goes to Dask.
Without ``dask.scheduler`` a ``LocalCluster`` of one worker with ``dbms=1`` is started
on loopback (the tests: the "database host" is this one).
"""
from __future__ import annotations

import pickle
import socket
import uuid

from ..params import ParameterError
from .recording import one_line

_RUNNING: dict = {}     # on the worker: key -> (sampler, target)


class StreamedOnly(Exception):
    """The sampler's worker was lost: ``rows`` are those it streamed before."""

    def __init__(self, rows, why: str):
        super().__init__(why)
        self.rows = rows


def server_roots(port: int | None, names: tuple[str, ...]) -> list[int]:
    """The server's root processes on this host: the listener on ``port``, else the
    processes named one of ``names`` whose parent is not (a postmaster, not a backend)."""
    import psutil

    from ..targets.base import listening_pid
    pid = listening_pid(port) if port else None
    if pid:
        return [pid]
    procs = {p.pid: p.info for p in psutil.process_iter(["name", "ppid"])}
    return [pid for pid, i in procs.items()
            if i["name"] in names and (procs.get(i["ppid"]) or {}).get("name") not in names]


def _streamer(worker, name: str):
    """Each row into the controller's queue as it is taken (from the sampler's thread:
    the queue and the worker's client are made there, never on the worker's loop)."""
    box: list = []

    def put(row: dict) -> None:
        if not box:
            from distributed import Queue
            box.append(Queue(name, client=worker._get_client()))
        box[0].put(pickle.dumps(row))
    return put


async def start_on_worker(key: str, how: dict, dask_worker=None) -> str:
    """On the DBMS host: start sampling; returns the host's name. ``Client.run`` runs it on
    the worker's event loop, which the sampler's streamed rows need: the blocking part
    (finding the server, connecting for its size) runs beside it, never on it."""
    import asyncio
    return await asyncio.get_running_loop().run_in_executor(None, _start, key, how, dask_worker)


async def stop_on_worker(key: str) -> bytes:
    """On the DBMS host: stop (the sampler's last row may be on its way through the
    loop: joined beside it), and hand back the rows and the sampler's own CPU."""
    import asyncio
    return await asyncio.get_running_loop().run_in_executor(None, _stop, key)


def _start(key: str, how: dict, dask_worker) -> str:
    from ..hw.processes import process_tree_pids
    from ..hw.sampler import Sampler
    from ..targets.base import make_target
    roots = server_roots(how["port"], tuple(how["names"]))

    def pids():
        out = [p for r in roots for p in (process_tree_pids(r) or [])]
        return out or None
    target = size = None
    if how.get("target"):
        try:
            target = make_target(*how["target"])
            size = target.db_size_bytes
        except Exception:  # noqa: BLE001 - no size then, the rest is measured
            target = None
    from ..hw.cgroup import of_server
    s = Sampler(1.0, dbms_pids=pids, db_size_bytes=size, dbms_cgroup=lambda: of_server(pids()))
    if how.get("queue") and dask_worker is not None:
        s.on_row = _streamer(dask_worker, how["queue"])
    s.start(None, None)
    _RUNNING[key] = (s, target)
    return socket.gethostname()


def _stop(key: str) -> bytes:
    s, target = _RUNNING.pop(key)
    df = s.stop()
    if target is not None:
        try:
            target.stop()
        except Exception:  # noqa: BLE001 - its connection is gone with it
            pass
    return pickle.dumps((df, s.cost_cpu_s, s.errors[:3]))


class DaskDbmsSampler:
    """The controller's side: one Dask client, the DBMS worker's address."""

    source = "dask"

    def __init__(self, client, worker: str, cluster=None):
        self.client, self.worker, self.cluster = client, worker, cluster
        self.cost_cpu_s, self.errors = 0.0, []
        self._key = None

    @classmethod
    def open(cls, exp, executor) -> DaskDbmsSampler:
        own = getattr(executor, "client", None)
        if own is not None and (w := _dbms_worker(own, exp.dask.dbms_worker)):
            return cls(own, w)
        if exp.dask.scheduler:
            from .dask_executor import DaskExecutor
            ex = DaskExecutor.connect(exp.dask.scheduler, 1)
            if w := _dbms_worker(ex.client, exp.dask.dbms_worker):
                return cls(ex.client, w)
            ex.close()
            raise ParameterError(f"hw.dbms: dask: no worker of {exp.dask.scheduler} samples the DBMS host "
                                 f"(start one there with --resources dbms=1, or name it in dask.dbms_worker)")
        return cls._local(exp)

    @classmethod
    def _local(cls, exp) -> DaskDbmsSampler:
        import logging

        import dask
        from distributed import Client, LocalCluster

        from .dask_executor import LOCAL_CLUSTER_CONFIG
        try:
            with dask.config.set(LOCAL_CLUSTER_CONFIG):
                cluster = LocalCluster(n_workers=1, processes=True, host="127.0.0.1", protocol="tcp",
                                       dashboard_address=None, threads_per_worker=1,
                                       resources={"dbms": 1}, silence_logs=logging.ERROR)
            client = Client(cluster)
        except (OSError, TimeoutError, RuntimeError) as e:
            raise ParameterError(f"hw.dbms: dask: cannot start a local worker ({one_line(e)})") from None
        return cls(client, _dbms_worker(client, None), cluster)

    def start(self, run_id: str, step: str, how: dict) -> None:
        from distributed import Queue
        self._key = f"{run_id}/{step}"
        self.queue = Queue(f"benchlib-dbms-{uuid.uuid4().hex[:12]}", client=self.client)
        self.streamed: list[dict] = []
        self.host = self.client.run(start_on_worker, self._key, {**how, "queue": self.queue.name},
                                    workers=[self.worker])[self.worker]

    def receive(self) -> list[dict]:
        """The rows streamed so far (each second's, as the worker takes it)."""
        self.streamed.extend(pickle.loads(r) for r in self.queue.get(batch=True))
        return self.streamed

    def stop(self):
        """The step's rows (role, source and host set by the caller), or None. A worker
        lost before the end: the rows it streamed, and StreamedOnly saying so."""
        if self._key is None:
            return None
        key, self._key = self._key, None
        try:
            done = self.client.run(stop_on_worker, key, workers=[self.worker])[self.worker]
        except Exception as e:  # noqa: BLE001 - the worker (the DBMS host) is gone: keep what came
            raise StreamedOnly(self._streamed_frame(), one_line(e)) from None
        df, cost, errors = pickle.loads(done)
        try:
            self.receive()          # the queue emptied: the rows at stop are the whole step's
        except Exception:  # noqa: BLE001 - nothing streamed is needed now
            pass
        self.cost_cpu_s += cost
        self.errors = errors
        return df

    def _streamed_frame(self):
        import pandas as pd

        from .. import schema
        try:
            rows = self.receive()
        except Exception:  # noqa: BLE001 - the scheduler went with it
            rows = self.streamed
        return schema.conform_hw(pd.DataFrame(rows).assign(host=self.host) if rows else None)

    def close(self) -> None:
        if self.cluster is not None:
            self.client.close()
            self.cluster.close()


def _dbms_worker(client, name: str | None) -> str | None:
    """The address of the worker named ``name``, else of the first with a ``dbms`` resource."""
    from .dask_executor import _samples_dbms
    workers = sorted(client.sync(client.scheduler.identity, n_workers=-1)["workers"].items())
    named = [a for a, i in workers if name and str(i.get("name")) == name]
    return (named or [a for a, i in workers if _samples_dbms(i, None)] or [None])[0]
