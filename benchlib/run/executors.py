"""Ways to start a step's clients: spawned processes on this host (``local``), or tasks
on a Dask cluster (``dask``, :mod:`.dask_executor`). The controller (:mod:`.step`) is
one code path for both: it starts the clients through an executor and reads the same
messages from them, whoever carried them —

- ``("ready", p, batch_units)`` connected, first operations prepared;
- ``("second", p, second, payload)`` one second's raw latencies, in order, each once;
- ``("done", p, ClientResult dict)`` at the end; ``("error", p, line)`` when it could not start.

A started set of clients (:class:`Clients`) answers ``get`` (the next message, in the
controller's clock), ``start`` (the common start, ``perf_counter`` ns of this host),
``stop``, ``lost`` (clients gone without their result, with why), ``placements``
(which host and process ran each client) and ``join``.
"""
from __future__ import annotations

import os
import queue
import socket
import time
from dataclasses import dataclass

from . import forkserver, semaphores
from .clients import worker_main


@dataclass
class Placement:
    """Where one client (a driver process) ran: the drivers table's row, before figures."""

    client: int
    host: str
    pid: int | None = None
    worker: str | None = None        # the Dask worker's address; None when local


class Clients:
    """A step's started clients; see the module doc."""

    n: int
    executor: str
    lead_ns: int = 50_000_000    # the common start is this far ahead: every client has it then
    hw_frames: tuple = ()        # other hosts' hw rows, when they sampled themselves

    def get(self, timeout: float):
        raise NotImplementedError

    def start(self, start_ns: int) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def lost(self, have: set[int]) -> list[tuple[int, str]]:
        raise NotImplementedError

    def placements(self) -> list[Placement]:
        raise NotImplementedError

    def local_pids(self) -> list[int]:
        """The clients running on this host (the controller's sampler counts them)."""
        host = socket.gethostname()
        return [p.pid for p in self.placements() if p.host == host and p.pid]

    def join(self, timeout_s: float) -> None:
        raise NotImplementedError

    def abandon(self, timeout_s: float = 5.0) -> None:
        """Stop the clients of a step the controller leaves before their results came (an
        error of its own, a test's timeout): none may run on, or outlive the run."""
        self.stop()
        self.join(timeout_s)


class LocalClients(Clients):
    """Processes on this host (:func:`.forkserver.context`: forked from a server that
    imported the client's modules once), a multiprocessing queue, a shared start value."""

    executor = "local"

    def __init__(self, tasks: list[dict]):
        ctx = forkserver.context()
        self.q, self.stop_evt, self.start_val = ctx.Queue(), ctx.Event(), ctx.Value("q", 0)
        self.procs = []
        env = dict(os.environ)   # as spawn gives it: the controller's environment now
        for task in tasks:
            pr = ctx.Process(target=forkserver.in_environment,
                             args=(env, worker_main, task, self.q, self.start_val, self.stop_evt),
                             daemon=True, name=f"benchlib-client-{task['proc_index']}")
            pr.start()
            self.procs.append(pr)
        self.n = len(self.procs)

    def get(self, timeout: float):
        return self.q.get(timeout=timeout)   # queue.Empty when nothing came

    def start(self, start_ns: int) -> None:
        self.start_val.value = start_ns

    def stop(self) -> None:
        self.stop_evt.set()

    def lost(self, have: set[int]) -> list[tuple[int, str]]:
        return [(i, f"client process {pr.name} died (exit code {pr.exitcode})")
                for i, pr in enumerate(self.procs) if i not in have and not pr.is_alive()]

    def placements(self) -> list[Placement]:
        host = socket.gethostname()
        return [Placement(i, host, pr.pid) for i, pr in enumerate(self.procs)]

    def join(self, timeout_s: float) -> None:
        for pr in self.procs:
            pr.join(timeout=timeout_s)
            if pr.is_alive():
                pr.kill()   # a client ignores SIGTERM (the controller handles it): terminate() would not end it
                pr.join(timeout=1)

    def abandon(self, timeout_s: float = 5.0) -> None:
        """Stop asked, and the queue read meanwhile: a client's last messages sit in its
        queue's pipe and its exit waits until they are written, so a client whose
        controller reads no more never ended (the controller then hung at its own exit,
        joining it). Killed past ``timeout_s``."""
        self.stop()
        deadline = time.monotonic() + timeout_s
        while any(pr.is_alive() for pr in self.procs) and time.monotonic() < deadline:
            try:
                self.q.get(timeout=0.05)
            except queue.Empty:
                pass
            except Exception:  # noqa: BLE001 - a message cut short: no more to read
                break
        self.join(0)


class LocalExecutor:
    """``executor: local``: today's processes on this host."""

    name = "local"

    @classmethod
    def open(cls, exp) -> LocalExecutor:
        forkserver.start_method()   # a misspelled BENCHLIB_START_METHOD: one line, before any run
        semaphores.sweep()      # what a run killed with its resource tracker left
        return cls()

    def start_clients(self, tasks: list[dict]) -> Clients:
        return LocalClients(tasks)

    def hosts(self) -> list[str]:
        return []

    def close(self) -> None:
        pass
