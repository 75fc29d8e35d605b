"""The driver: one step as N client processes × T threads, timed and paced.

Python threads alone cannot saturate a DBMS, so clients are processes (forked from a
server that imported the client side once, :mod:`.forkserver`), each with threads. Every
thread runs the hot loop of :class:`ClientThread`: take the next prepared operation,
wait for its intended start when paced, call it, time it, append the latency to a plain
list. Nothing else happens per operation; once per second (the first operation to
complete in a new second) the thread hands its lists to its process, which records them
into HdrHistograms per operation (the step's, kept in the process) and sends the raw
per-second latencies to the controller. The controller merges seconds across processes
exactly, emits interval rows as soon as every process is past a second (so a killed run
keeps them), prints YCSB-style status lines, and at the end merges the processes'
histograms exactly (:mod:`benchlib.measure`).

Pacing: with a target throughput, thread k of K issues operation i at
``start + (i + k/K) × K/target`` — an open-loop schedule. Latency is recorded from that
intended start (``Intended-<OP>``, coordinated-omission corrected) and from the actual
start (service time); both are kept.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass, field

import numpy as np

from .. import measure
from ..schema import COMPLETED, ERROR, NOT_ERRORS, OK, STATUS_NAMES
from ..workloads.base import StepSpec, WorkloadSpec
from . import lifeline
from .chunk_ahead import ahead
from .ownusage import own_cpu_s, own_memory, own_switches
from .recording import CHUNK_OPS, NS, RecordingThread, SecondMerger, one_line, reopen, reopened

MUX_AUTO_FROM = 4  # connections per process from which multiplex="auto" multiplexes


class ClientThread(RecordingThread):
    """One client: a connection, its prepared operations, the hot loop."""

    def __init__(self, client, gindex: int, total: int, step: StepSpec, start_box: list):
        super().__init__([client], step, start_box)
        self.client = client
        self.gindex, self.total = gindex, total
        self.first = client.next_chunk(CHUNK_OPS)

    def _loop(self):
        step = self.step
        start = self._wait_start()
        end = start + int(step.loop_secs * NS) if step.loop_secs else None
        paced = bool(step.target_ops_per_s)
        period = self.total * NS / step.target_ops_per_s if paced else 0
        offset = self.gindex * NS / step.target_ops_per_s if paced else 0
        next_tick = start + NS
        if end is not None:
            next_tick = min(next_tick, end)
        chunk, self.first = self.first, None
        self._ops(chunk, start, end, paced, period, offset, next_tick)

    def _ops(self, chunk, start, end, paced, period, offset, next_tick):
        if not paced and (chunk is None or chunk.units is None):
            self._ops_fast(chunk, start, end, next_tick)
        else:
            self._ops_general(chunk, start, end, paced, period, offset, next_tick)

    def _on_exception(self):
        """An operation raised: count it as ERROR; when the connection is gone, the one
        reconnection policy opens it again (workloads/reconnect.py, through
        recording.reopen), or its ConnectionGone ends the step saying why. Returns the
        functions to call from now on."""
        client = self.client
        if client.is_broken():
            reopen(client, f"client {self.gindex}")
        return client.fns

    def _ops_fast(self, chunk, start, end, next_tick):
        """The hot loop, unpaced and unbatched: call, time, append — nothing else."""
        ns = time.perf_counter_ns
        client = self.client
        fns = client.fns
        append = [lst.append for lst in self.svc]
        t1 = start
        try:
            while chunk is not None:
                for code, a in zip(chunk.codes, chunk.args):
                    t0 = ns()
                    try:
                        st = fns[code](*a)
                    except Exception:
                        st = 2
                        fns = self._on_exception()
                    t1 = ns()
                    if t1 >= next_tick:
                        next_tick = self._tick(t1, start, end)
                        append = [lst.append for lst in self.svc]
                    append[code](t1 - t0)
                    if st:
                        self.errs.append((code, st, t1 - t0, -1))
                    if next_tick is None:
                        # the step is over; the operation that ended past it did its work
                        # on the database: counted (in the second it ended), as mux does
                        return
                chunk = client.next_chunk(CHUNK_OPS)
        finally:
            self.last_ns = t1

    def _ops_general(self, chunk, start, end, paced, period, offset, next_tick):
        """Paced (open loop on the intended schedule) and/or batched operations."""
        ns = time.perf_counter_ns
        sleep = time.sleep
        client = self.client
        fns = client.fns
        issued = 0
        t1 = start
        try:
            while chunk is not None:
                units = chunk.units
                for idx, (code, a) in enumerate(zip(chunk.codes, chunk.args)):
                    if paced:
                        intended = start + offset + int(issued * period)
                        if end is not None and intended >= end:
                            return
                        now = ns()
                        if now < intended:
                            sleep((intended - now) / NS)
                    t0 = ns()
                    try:
                        st = fns[code](*a)
                    except Exception:
                        st = 2
                        fns = self._on_exception()
                    t1 = ns()
                    if t1 >= next_tick:
                        next_tick = self._tick(t1, start, end)
                    self.svc[code].append(t1 - t0)
                    if paced:
                        self.itd[code].append(t1 - intended)
                    if st:
                        self.errs.append((code, st, t1 - t0, t1 - intended if paced else -1))
                    if units is not None and (not st or st in NOT_ERRORS):
                        self.units[code] += units[idx]   # a failed batch's records: none
                    issued += 1
                    if next_tick is None:  # over: its last operation counted, as above
                        return
                chunk = client.next_chunk(CHUNK_OPS)
        finally:
            self.last_ns = t1


@dataclass
class _ProcState:
    hists: dict = field(default_factory=dict)     # op -> service HdrHistogram
    ihists: dict = field(default_factory=dict)    # op -> intended HdrHistogram
    returns: dict = field(default_factory=dict)   # op -> {status: count}
    units: dict = field(default_factory=dict)
    not_ok: dict = field(default_factory=dict)    # op -> (service, intended) HdrHistograms of
                                                  # its calls that did not return OK


def _merge_second(parts, op_names, batch_units, state: _ProcState, warm_ns: int, second: int):
    """Combine the threads' lists of one second; record into the step histograms."""
    payload = {}
    for code, name in enumerate(op_names):
        svc = [p[1][code] for p in parts if p[1][code]]
        itd = [p[2][code] for p in parts if p[2][code]]
        bad = [e for p in parts for e in p[3] if e[0] == code]
        errs = [e[1] for e in bad]
        units = sum(p[4][code] for p in parts)
        if not svc and not errs:
            continue
        svc_us = np.concatenate([np.asarray(x, dtype=np.int64) for x in svc]) // 1000 if svc else np.zeros(0, np.int64)
        itd_us = np.concatenate([np.asarray(x, dtype=np.int64) for x in itd]) // 1000 if itd else np.zeros(0, np.int64)
        n = len(svc_us)
        ret = state.returns.setdefault(name, {})
        ret[STATUS_NAMES[OK]] = ret.get(STATUS_NAMES[OK], 0) + n - len(errs)
        for s in errs:
            k = STATUS_NAMES.get(s, STATUS_NAMES[ERROR])
            ret[k] = ret.get(k, 0) + 1
        n_errors = sum(1 for s in errs if s not in NOT_ERRORS)
        n_failed = sum(1 for s in errs if s not in COMPLETED)
        if second * 1_000_000_000 >= warm_ns:
            measure.record_many(state.hists.setdefault(name, measure.new_histogram()), svc_us)
            if len(itd_us):
                measure.record_many(state.ihists.setdefault(name, measure.new_histogram()), itd_us)
            if bad:
                _record_not_ok(state, name, bad)
        if name in batch_units and units and batch_units[name] is None:
            # records counted, no per-record op (LinkBench's LOAD_*_BULK: the batch's
            # latency is the op's, its rows are the step's operations)
            state.units[name] = state.units.get(name, 0) + units
        elif name in batch_units and units:
            # a batch's records: counted, but no latency of their own (nobody waited
            # for one record of a batch: the batch's latency is its own op's)
            unit_name = batch_units[name]
            ur = state.returns.setdefault(unit_name, {})
            ur[STATUS_NAMES[OK]] = ur.get(STATUS_NAMES[OK], 0) + units
            state.units[unit_name] = state.units.get(unit_name, 0) + units
        payload[name] = (svc_us.astype(np.int32), itd_us.astype(np.int32), n_errors, units, n_failed)
    return payload


def _record_not_ok(state: _ProcState, name: str, bad: list[tuple]) -> None:
    """The latencies of the calls that did not return OK, in histograms of their own
    (YCSB's ``[OP-FAILED]``): service time, and intended where paced."""
    svc, itd = state.not_ok.setdefault(name, (measure.new_histogram(), measure.new_histogram()))
    measure.record_many(svc, np.asarray([e[2] for e in bad], dtype=np.int64) // 1000)
    paced = np.asarray([e[3] for e in bad if e[3] >= 0], dtype=np.int64)
    measure.record_many(itd, paced // 1000)


def worker_main(task: dict, out_q, start_val, stop_evt) -> None:
    """A client process: build its threads, run them, stream seconds, return histograms."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the controller handles Ctrl-C and SIGTERM
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    parent = lifeline.die_with_parent()  # a client outlives no controller (kill -9 of it)

    def alive() -> bool:
        if lifeline.orphaned(parent):
            # the controller is gone: nobody reads our queue, and its feeder thread would
            # block the exit forever on a full pipe
            os._exit(lifeline.ORPHAN_EXIT)
        return True

    def wait_start() -> int:
        while start_val.value == 0:
            if stop_evt.is_set():
                return 0
            alive()
            time.sleep(0.001)
        return start_val.value
    run_client(task, out_q, wait_start, stop_evt, alive)


def run_client(task: dict, out_q, wait_start, stop_evt, alive) -> None:
    """One client process's work wherever it runs (a spawned process, a Dask task):
    ``wait_start()`` gives the common start (perf_counter ns; 0: stopped before it),
    ``alive()`` says whether the controller is still there."""
    p = task["proc_index"]
    step: StepSpec = task["step"]
    start_box = [0]
    try:
        threads = _build_threads(task, step, start_box)
    except BaseException as e:
        out_q.put(("error", p, one_line(e)))
        return
    first = threads[0].clients[0] if threads else None
    out_q.put(("ready", p, dict(getattr(first, "batch_units", None) or {})))
    start_ns = wait_start()
    if not start_ns:   # stopped before the start: a Dask worker lives on, its connections must not
        _close_all([c for th in threads for c in th.clients])
        return
    cpu0, sw0 = own_cpu_s(), own_switches()
    for th in threads:
        th.start()
    start_box[0] = start_ns
    state = _stream_seconds(threads, step, p, out_q, stop_evt, alive)
    result = _client_result(threads, step, state, start_box[0])
    # the process's own CPU and memory over the step, measured by itself: exact also
    # for a step shorter than the sampler's tick, and for SQLite, whose engine it runs
    result.cpu_s = own_cpu_s() - cpu0
    result.voluntary_switches, result.involuntary_switches = (
        b - a for a, b in zip(sw0, own_switches()))
    result.rss_bytes, result.vsz_bytes = own_memory()
    out_q.put(("done", p, result.to_dict()))


def workload_clients(task: dict, step: StepSpec) -> list:
    """The process's workload clients, one per thread, each on its own seed (the task's
    ``seeds``, :func:`..run.step.step_tasks`)."""
    workload = WorkloadSpec(**task["workload"]).build()
    clients = []
    try:
        for t in range(task["threads"]):
            clients.append(workload.client(step, task["endpoint"], task["thread_offset"] + t, step.threads,
                                           seed=task["seeds"][t], batch_size=task.get("batch_size", 1000)))
    except BaseException:
        _close_all(clients)   # the ones made: their connections are nobody's
        raise
    return clients


def _close_all(clients: list) -> None:
    for c in clients:
        with contextlib.suppress(Exception):
            c.close()


def _build_threads(task: dict, step: StepSpec, start_box: list) -> list[RecordingThread]:
    """The process's client threads: one per connection, or one driving them all (mux);
    where one cannot be made, every client closed (its chunk maker ended) and why raised."""
    # each chunk made while the previous one runs, where the client allows (chunk_ahead.py)
    return _threads_for([ahead(c) for c in workload_clients(task, step)], task, step, start_box)


def _threads_for(clients: list, task: dict, step: StepSpec, start_box: list) -> list[RecordingThread]:
    try:
        return _make_threads(clients, task, step, start_box)
    except BaseException:
        _close_all(clients)   # a thread made already started its client's chunk maker
        raise


def _make_threads(clients: list, task: dict, step: StepSpec, start_box: list) -> list[RecordingThread]:
    one_thread = len(clients) > 1 and not step.target_ops_per_s and step.phase == "run"
    if clients and all(getattr(c, "native", None) for c in clients):
        # each chunk of operations runs in C (run.driver); from 2 connections per process
        # one thread drives them all where the C loop can (its run_many), as
        # pgbench -j does: a thread per connection cost 1.3-1.5x pgbench's client CPU
        # per operation at 4 and 16 clients, one thread 0.9-1.1x (BENCHMARKS.md)
        from .native import NativeMuxThread, NativeThread
        native = clients[0].native
        if one_thread and native.run_many and (step.multiplex is True or (
                step.multiplex == "auto" and getattr(native, "mux_auto", True))):
            return [NativeMuxThread(clients, step, start_box)]
        return [NativeThread(c, task["thread_offset"] + t, step.threads, step, start_box)
                for t, c in enumerate(clients)]
    mux = one_thread and (step.multiplex is True
                          or (step.multiplex == "auto" and len(clients) >= MUX_AUTO_FROM))
    if mux and all(getattr(c, "afns", None) for c in clients):
        # one thread drives all the process's connections, as pgbench -j does
        from .mux import MuxThread
        return [MuxThread(clients, step, start_box)]
    return [ClientThread(c, task["thread_offset"] + t, step.threads, step, start_box)
            for t, c in enumerate(clients)]


def _stream_seconds(threads: list[RecordingThread], step: StepSpec, p: int, out_q, stop_evt,
                    alive) -> _ProcState:
    """Every 0.2 s: the seconds all threads are past, merged, recorded into the step's
    histograms and sent to the controller; until every thread has finished."""
    first = threads[0].clients[0]
    op_names, batch_units = first.op_names, getattr(first, "batch_units", {})
    state = _ProcState()
    warm_ns = int(step.warmup_secs * NS)
    merger = SecondMerger(len(threads))

    def collect(final: bool) -> None:
        for i, th in enumerate(threads):
            # read before the hand-overs are taken: a thread appends a second before it
            # moves on (and its last one before it says finished), so none is missed
            finished, second = th.finished, th.second
            while th.done:
                item = th.done.pop(0)
                merger.add(item[0], item)
            if finished:
                merger.finish(i)
            else:
                merger.advance(i, second - 1)
        for s, parts in merger.complete(final):
            payload = _merge_second(parts, op_names, batch_units, state, warm_ns, s) if parts else {}
            out_q.put(("second", p, s, payload))

    while not all(th.finished for th in threads):
        time.sleep(0.2)
        if not alive() or stop_evt.is_set():
            for th in threads:
                th.stop_flag = True
        collect(False)
    collect(True)
    return state


def _client_result(threads: list[RecordingThread], step: StepSpec, state: _ProcState,
                   start_ns: int) -> measure.ClientResult:
    result = measure.ClientResult(client_id=f"{socket.gethostname()}:{os.getpid()}",
                                  host=socket.gethostname(), step=step.name, started_ns=start_ns,
                                  ended_ns=max(th.last_ns for th in threads) or time.perf_counter_ns(),
                                  error=next((th.error for th in threads if th.error), None),
                                  driver_path=threads[0].path if threads else None)
    result.reconnects, result.reconnect_s, result.refused = reopened(threads)
    result.driver_threads = len(threads)
    result.thread_counters = [c.counters() for th in threads for c in th.clients
                              if callable(getattr(c, "counters", None))]
    for name in set(state.hists) | set(state.returns):
        result.ops[name] = measure.OpResult(
            hdr=measure.encode(state.hists[name]) if name in state.hists else "",
            intended_hdr=measure.encode(state.ihists[name]) if name in state.ihists else "",
            returns=state.returns.get(name, {}), units=state.units.get(name, 0))
        if name in state.not_ok:
            svc, itd = state.not_ok[name]
            result.ops[name].not_ok_hdr = measure.encode(svc)
            result.ops[name].not_ok_intended_hdr = measure.encode(itd)
    return result
