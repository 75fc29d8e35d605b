"""The load step's loader count: ``load.processes`` and ``load.threads``, ``auto`` by default.

``load.processes: auto`` is one loader process per core of the machine the loaders run
on (``os.cpu_count()``; with ``executor: dask``, one per Dask worker, as
``run.processes: auto``), and no more than

- :data:`AUTO_MAX` (32): a bulk load keeps one server backend busy per connection, so
  past the server's cores more loaders only queue for them. A server on the loaders'
  machine has those very cores (the loaders' count is its count); a remote one is
  not known when the run is planned, and 32 connections stay well inside the DBMSs'
  default connection limits (PostgreSQL's ``max_connections`` 100, MariaDB's 151) with
  room for the run's other sessions;
- the target's client processes (an embedded DBMS that one process opens, RocksDB's
  directory or DuckDB's file: 1) and its writers (SQLite writes one transaction at a
  time: 1, more loaders only wait for its lock);
- the load's threads, given (``load.threads: N``) or the workload's own (LinkBench's
  node loader and ``loaders``: ``Workload.own_load_threads``), since a process without
  a thread loads nothing.

``load.threads: auto`` is one connection per loader process, as a bare COPY per process
loads. Explicit values are kept as given, and the run's name (``-l<N>``), meta
(``load_processes``, and ``load_processes_auto``: what auto was for its target on its
host) and steps say the count that ran.
"""
from __future__ import annotations

AUTO = "auto"
AUTO_MAX = 32


def check_processes(v, most: int) -> list:
    """``load.processes`` as a list: counts from 1 to ``most`` or ``auto`` (a lone value
    is a list of one); ValueError naming what it takes."""
    items = v if isinstance(v, list) else [v]
    ok = items and all(p == AUTO or (type(p) is int and 1 <= p <= most) for p in items)
    if not ok:
        bad = next((p for p in items if not (p == AUTO or (type(p) is int and 1 <= p <= most))), v)
        raise ValueError(f"a list of loader process counts from 1 to {most} or {AUTO} "
                         f"(one per core), got {repr(bad)[:40]}")
    return items


def check_threads(v, most: int):
    """``load.threads``: a count from 1 to ``most`` or ``auto``; ValueError naming them."""
    if v == AUTO or (type(v) is int and 1 <= v <= most):
        return v
    raise ValueError(f"a count of connections from 1 to {most} or {AUTO} (one per loader "
                     f"process), got {repr(v)[:40]}")


def auto_count(cpus: int, *caps: int | None) -> int:
    """``auto``'s loader processes: the cores, at most AUTO_MAX and each cap given."""
    return max(1, min(cpus, AUTO_MAX, *(c for c in caps if c)))


def loader_counts(load, own_threads: int | None, cpus: int, *caps: int | None) -> tuple[list[int], int | None]:
    """``load.processes`` with ``auto`` resolved for one target (``caps``: its client
    processes, its writers), and what auto was (None when the list has none)."""
    if AUTO not in load.processes:
        return list(load.processes), None
    threads = own_threads or (load.threads if load.threads != AUTO else None)
    n = auto_count(cpus, *caps, threads)
    return [n if p == AUTO else p for p in load.processes], n


def step_threads(load, own_threads: int | None, processes: int) -> int:
    """The load step's threads: the workload's own, else ``load.threads``, auto: one
    per loader process."""
    return own_threads or (processes if load.threads == AUTO else load.threads)
