"""The controller of one step: spawn the client processes, merge their seconds, finish.

See :mod:`benchlib.run.clients` for the client side. The controller

- starts ``step.processes`` spawned processes with the step's threads split among them,
  waits until every client is connected and has prepared its first operations, then
  gives all of them one start time;
- merges each second across processes exactly (the raw latencies of that second) as
  soon as every process is past it, and hands the interval rows to ``on_intervals``
  (the run folder appends them to its log at once);
- prints a status line every ``step.status_interval_s`` like YCSB's ``-s`` (or the
  workload's own lines: ``Workload.progress``), and a progress bar when stderr is a terminal;
- on Ctrl-C or a client's fatal error stops the clients, keeps what completed, and
  reports the step as interrupted/failed.
"""
from __future__ import annotations

import queue
import socket
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Callable


from .. import measure
from ..workloads import keycounter
from ..workloads.base import StepSpec, WorkloadSpec
from ..registries.workloads import workload_class
from .executors import LocalExecutor
from .failed import calls_count, failed_count, too_many_failed
from . import outage
from .intervals import ZeroRows, interval_rows
from .latency import latency_rows, with_defined_ops
from .recording import NS, SecondMerger, StepError
from .status_window import StatusWindow
from .tasks import split, step_tasks

READY_TIMEOUT_S = 300.0
# a step stops early for its failed operations (too_many_failed) only once this many failed:
# a reconnect's one or two errors in its first second do not end a loop
MIN_FAILED_TO_STOP = 100



@dataclass
class StepOutcome:
    step: StepSpec
    started: datetime
    ended: datetime
    secs: float
    ops: int                         # operations that ran (the failed ones are not in it)
    errors: int                      # not OK: NOT_FOUND and the failed ones
    status: str                      # ok | degraded | failed | interrupted (run/outage.py)
    error: str | None
    failed: int = 0                  # operations that failed (status ERROR), beside ops
    latency_rows: list[dict] = field(default_factory=list)
    client_results: list[measure.ClientResult] = field(default_factory=list)
    controller_cpu_s: float | None = None   # a step the controller ran itself (an index)
    executor: str = "local"
    placements: list = field(default_factory=list)   # executors.Placement, one per client
    hw_frames: list = field(default_factory=list)    # other hosts' hw rows (Dask workers)
    driver_rows: list[dict] = field(default_factory=list)  # the drivers table's, one per client
    dbms_window: dict = field(default_factory=dict)  # the server's work over the step (steps' dbms_*)
    dbms_figures: dict = field(default_factory=dict)  # the DBMS's own over it (Target.step_figures)
    reconnects: int = 0              # connections lost and reopened (run/outage.py)
    outage_s: float = 0.0            # how long the step was out for them

    def clients_sum(self, attr: str) -> float | None:
        """The clients' own figure summed (cpu_s, rss_bytes, vsz_bytes); None unless
        every client process reported it (a partial sum would be a made-up figure)."""
        vals = [getattr(c, attr, None) for c in self.client_results]
        return float(sum(vals)) if vals and all(v is not None for v in vals) else None


def run_step(step: StepSpec, workload: WorkloadSpec, endpoint, *, seed: int = 0,
             repetition: int = 1, batch_size: int = 1000, on_intervals: Callable[[list[dict]], None] | None = None,
             status_out="stderr", progress: bool | None = None,
             on_clients: Callable[[list[int]], None] | None = None,
             executor=None, key_counter=None, on_window: Callable[[str], None] | None = None) -> StepOutcome:
    """Run one step with its client processes; returns what was measured.

    ``executor`` starts them (:mod:`.executors`: local processes by default, or Dask
    tasks); the rest is the same whoever started them. Never raises for a failure of
    the clients or the DBMS during the step: the outcome says ``failed`` with a
    one-line error and keeps every completed second. ``seed``: the run's; each client
    draws from its own stream of it, the step and the repetition (:mod:`..seeds`).
    ``key_counter``: the run's
    acknowledged-insert counter (:mod:`..workloads.keycounter`); without one, a run step
    of a workload that inserts gets one of its own. ``on_window(edge)``: the step's start, end.
    """
    if status_out == "stderr":   # the one of now (not the one at import: a test's, closed since)
        status_out = sys.stderr
    counter, own_counter = _step_counter(step, workload, key_counter)
    if counter is not None:
        step = replace(step, key_counter=counter.name)
    try:
        tasks = step_tasks(step, workload, endpoint, seed, batch_size, repetition)
        return _run_step(step, workload, tasks, on_intervals, status_out, progress, on_clients, executor,
                         on_window or (lambda edge: None))
    finally:
        if own_counter:
            counter.close(unlink=True)


def _step_counter(step: StepSpec, workload: WorkloadSpec, given):
    """(the counter a run step's inserts claim keys from, whether this step made it)."""
    if step.phase != "run":
        return None, False
    if given is not None:
        given.settle()           # the previous step's claims that never ran: holes
        return given, False
    start = workload.build().insert_counter_start()
    return (None, False) if start is None else (keycounter.create(start, step.threads), True)


def _run_step(step, workload, tasks, on_intervals, status_out, progress, on_clients,
              executor, on_window) -> StepOutcome:
    clients = None
    try:
        clients = (executor or LocalExecutor()).start_clients(tasks)
        batch_units = _await_ready(clients)
    except (StepError, KeyboardInterrupt) as e:
        if clients is not None:
            clients.stop()
            clients.join(5)
        now = datetime.now(timezone.utc)
        msg = str(e) if isinstance(e, StepError) else "interrupted before the step started"
        return StepOutcome(step, now, now, 0.0, 0, 0,
                           "interrupted" if isinstance(e, KeyboardInterrupt) else "failed", msg)
    if step.key_counter and any(p.host and p.host != socket.gethostname() for p in clients.placements()):
        print(keycounter.ACROSS_HOSTS, file=status_out or sys.stderr, flush=True)
    if on_clients:
        # announced only now, connected and prepared, so that the sampler's client CPU
        # excludes the interpreters' start-up and the chunk preparation
        on_clients(clients.local_pids())
    lines = workload.build().progress(step)   # the workload's own lines, else status lines
    if lines is not None and progress is False:
        status_out = None   # --no-progress: none of them
    on_window("start")
    defined = workload.build().defined_ops(step)   # each has a row every second, 0 or more
    started = datetime.now(timezone.utc)
    start_ns = time.perf_counter_ns() + clients.lead_ns
    clients.start(start_ns)
    collector = _Collector(step, clients, start_ns, on_intervals, status_out,
                           _progress_bar(step, progress), batch_units, lines, ZeroRows(defined, batch_units))
    try:
        collector.run()
    except BaseException:   # not Ctrl-C (the collector stops the clients and waits): its
        # own error (a full disk under on_intervals), SystemExit, a test's timeout — the
        # clients must not run on without it, or outlive it (see Clients.abandon)
        collector.close()
        clients.abandon()
        raise
    on_window("end")
    ended_ns = time.perf_counter_ns()
    ended = datetime.now(timezone.utc)
    collector.close()
    clients.join(10)
    return _outcome(step, workload, clients, collector, batch_units, defined,
                    started, ended, start_ns, ended_ns)


def _outcome(step, workload, clients, collector, batch_units, defined, started, ended,
             start_ns: int, ended_ns: int) -> StepOutcome:
    """A step's outcome from what its collector gathered: its status, its measured window
    (from the common start to the last operation's completion), its latency and driver
    rows, and the judgements on them (too many failed, an outage)."""
    status, error = collector.status, collector.error
    if collector.interrupted:
        status, error = "interrupted", error or f"interrupted ({collector.interrupted})"
    results = [collector.results[i] for i in sorted(collector.results)]
    last = max((r.ended_ns for r in results if r.ended_ns), default=ended_ns)
    outcome = StepOutcome(step, started, ended, max(last - start_ns, 1) / NS, 0, 0, status, error,
                          client_results=results, executor=clients.executor,
                          placements=clients.placements(), hw_frames=list(clients.hw_frames))
    compound = workload_class(workload.ref).compound_ops
    outcome.latency_rows, outcome.ops, outcome.errors = latency_rows(results, batch_units, compound)
    outcome.latency_rows = with_defined_ops(outcome.latency_rows, defined)
    outcome.failed = failed_count(outcome.latency_rows, compound)
    tried = calls_count(outcome.latency_rows, batch_units, compound)
    if outcome.status == "ok" and (why := too_many_failed(step, outcome.failed, tried)):
        outcome.status, outcome.error = "failed", why
    outage.judge(outcome)   # an outage is not ok
    outcome.driver_rows = _driver_rows(step, clients, results, batch_units, compound)
    return outcome


def _driver_rows(step: StepSpec, clients, results: list[measure.ClientResult], batch_units: dict,
                 compound: dict) -> list[dict]:
    """The drivers table's rows: per client process, where it ran (host, Dask worker,
    pid), its planned threads, and its own ops, errors, CPU and memory."""
    rows = []
    for pl, threads, r in zip(clients.placements(), split(step.threads, step.processes), results):
        _, ops, errors = latency_rows([r], batch_units, compound)
        rows.append({"step": step.name, "client": pl.client, "executor": clients.executor,
                     "host": pl.host or r.host, "worker": pl.worker, "pid": pl.pid,
                     "threads": threads, "ops": ops, "errors": errors, "cpu_s": r.cpu_s,
                     "rss_gb": r.rss_bytes / 2**30 if r.rss_bytes else None, "error": r.error,
                     "voluntary_switches": r.voluntary_switches, "involuntary_switches": r.involuntary_switches})
    return rows


def _await_ready(clients) -> dict[str, str | None]:
    """Until every client is connected and has prepared its first operations; their
    batched ops (-> the record op, None: none). StepError when one fails, dies or takes
    longer than READY_TIMEOUT_S."""
    batch_units: dict[str, str | None] = {}
    ready: set[int] = set()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while len(ready) < clients.n:
        try:
            msg = clients.get(timeout=0.5)
        except queue.Empty:
            lost = clients.lost(ready)
            if lost:
                raise StepError(f"while connecting: {lost[0][1]}") from None
            if time.monotonic() > deadline:
                raise StepError(f"clients not ready after {READY_TIMEOUT_S:.0f} s") from None
            continue
        if msg[0] == "error":
            raise StepError(msg[2])
        if msg[0] == "ready":
            ready.add(msg[1])
            batch_units.update(msg[2] if len(msg) > 2 else {})
    return batch_units


class _Collector:
    """The controller's side of a running step: the clients' messages in; interval rows,
    status lines and the progress bar out; the step's status and error kept."""

    def __init__(self, step: StepSpec, clients, start_ns: int,
                 on_intervals, status_out, bar, batch_units: dict | None = None, lines=None,
                 zeros: ZeroRows | None = None):
        self.step, self.clients, self.start_ns, self.lines = step, clients, start_ns, lines
        self.batch_units = batch_units
        self.on_intervals, self.status_out, self.bar = on_intervals, status_out, bar
        self.merger = SecondMerger(clients.n)
        self.results: dict[int, measure.ClientResult] = {}
        self.status, self.error, self.interrupted = "ok", None, ""
        self.total_ops = self.total_err = self.total_failed = self.total_calls = 0
        self.last_status, self.status_ops = time.monotonic(), 0
        self.window = StatusWindow()         # the operations since the last status line
        self._held: list[tuple] = []         # (second, rows) not emitted yet (see _emit_complete)
        self.zeros = zeros or ZeroRows(None, batch_units)   # a stall's seconds: rows of 0

    def run(self) -> None:
        while len(self.results) < self.clients.n:
            try:
                msg = self.clients.get(timeout=0.5)
            except KeyboardInterrupt as e:
                self.interrupted = str(e) or "Ctrl-C"   # the signal's own word (SIGTERM)
                self.clients.stop()
                continue
            except queue.Empty:
                self._reap_dead()
                msg = None
            if msg is not None:
                self._on_message(msg)
            self._emit_complete()
        self._emit_complete()

    def _emit_complete(self) -> None:
        """The seconds every client is past, each with a row per op (0 where none
        finished); the latest held back until a later one comes or every client is
        done: only then is it known whether it is the step's last, partial one (its
        length). While no op is known (a workload that names none, nothing finished
        yet) every second is held: its rows of 0 are made once one is."""
        for s, parts in self.merger.complete():
            rows = interval_rows(s, parts, self.batch_units)
            self.zeros.see(rows)
            self._held.append((s, rows))
        done = len(self.results) == self.clients.n
        ready = self._held if done else self._held[:-1]
        if not self.zeros.known and not done:
            ready = []
        self._held = self._held[len(ready):]
        rows = [r for s, rs in ready for r in self.zeros.fill(s, rs)]
        if rows:
            self._emit(rows)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _fail(self, error: str) -> None:
        self.error = self.error or error
        self.status = "failed"
        self.clients.stop()

    def _reap_dead(self) -> None:
        """Clients gone without their result (a process that died, a lost Dask worker):
        the step fails with the first reason; the others' seconds go on being merged."""
        lost = self.clients.lost(set(self.results))
        if not lost:
            return
        self._fail(lost[0][1])
        for i, why in lost:
            self.results[i] = measure.ClientResult(f"client-{i}", "", self.step.name, error=why)
            self.merger.finish(i)

    def _on_message(self, msg: tuple) -> None:
        kind, p = msg[0], msg[1]
        if p in self.results:   # a client declared lost: nothing of it is merged any more
            return
        if kind == "second":   # a process sends its seconds in order, each once
            self.merger.add(msg[2], msg[3])
            self.merger.advance(p, msg[2])
        elif kind == "done":
            self.results[p] = measure.ClientResult.from_dict(msg[2])
            self.merger.finish(p)
            if self.results[p].error:
                self._fail(self.results[p].error)

    def _interval_lengths(self, rows: list[dict]) -> None:
        """Each row's ``interval_s``: 1 s, but the step's last second, which ends with
        its last operation: its true length (a sliver is what it is, not a full second)."""
        end_s = None
        if len(self.results) == self.clients.n:
            ends = [r.ended_ns for r in self.results.values() if r.ended_ns]
            end_s = (max(ends) - self.start_ns) / NS if ends else None
        for r in rows:
            left = None if end_s is None else end_s - r["second"]
            r["interval_s"] = 1.0 if left is None or left >= 1.0 else max(left, 1e-6)

    def _emit(self, rows: list[dict]) -> None:
        self._interval_lengths(rows)
        counted = [r for r in rows if not r.get("_inner")]
        n = sum(r.get("_records", r["ops"]) for r in counted)
        self.total_ops += n
        self.total_err += sum(r["errors"] for r in counted)
        self.total_failed += sum(r["_failed"] for r in rows)   # batches' too
        self.total_calls += sum(r["ops"] + r["_failed"] for r in rows if not r.get("_unit"))
        if self.status == "ok" and self.total_failed >= MIN_FAILED_TO_STOP and (
                why := too_many_failed(self.step, self.total_failed, self.total_calls)):
            self._fail(f"stopped: {why}")   # mostly errors: no use going on
        if self.bar is not None:
            self.bar.update(n)
        for r in counted if self.lines is None else ():   # the status line's window
            self.window.add(r["op"], r.get("_records", r["ops"]),
                            None if "_records" in r else r.get("_svc"))
        if self.lines is not None and self.status_out is not None:   # --no-progress: None
            for line in self.lines(rows, (time.perf_counter_ns() - self.start_ns) / NS,
                                   len(self.results) == self.clients.n):   # the step's last
                print(line, file=self.status_out, flush=True)
        for r in rows:
            for k in ("_inner", "_records", "_svc", "_failed", "_unit"):
                r.pop(k, None)
        if self.on_intervals:
            try:
                self.on_intervals(rows)
            except OSError as e:   # the run folder's disk is full: a failure like any other
                self._fail(str(e) if e.strerror is None else e.strerror)
        now = time.monotonic()
        if self.status_out is not None and self.lines is None and \
                now - self.last_status >= self.step.status_interval_s:
            rate = (self.total_ops - self.status_ops) / (now - self.last_status)
            elapsed_s = (time.perf_counter_ns() - self.start_ns) / NS
            print(self.window.line(elapsed_s, self.total_ops, rate), file=self.status_out, flush=True)
            self.last_status, self.status_ops = now, self.total_ops


def _progress_bar(step: StepSpec, progress: bool | None):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm
    return tqdm(total=step.ops_total, desc=step.name, unit="op", leave=False, file=sys.stderr)
