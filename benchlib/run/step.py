"""The controller of one step: spawn the client processes, merge their seconds, finish.

See :mod:`benchlib.run.clients` for the client side. The controller

- starts ``step.processes`` spawned processes with the step's threads split among them,
  waits until every client is connected and has prepared its first operations, then
  gives all of them one start time;
- merges each second across processes exactly (the raw latencies of that second) as
  soon as every process is past it, and hands the interval rows to ``on_intervals``
  (the run folder appends them to its log at once);
- prints a status line every ``step.status_interval_s`` like YCSB's ``-s``, and a
  progress bar when stderr is a terminal;
- on Ctrl-C or a client's fatal error stops the clients, keeps what completed, and
  reports the step as interrupted/failed.
"""
from __future__ import annotations

import multiprocessing as mp
import queue
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

import numpy as np

from .. import measure
from ..workloads.base import NOT_ERROR_NAMES, StepSpec, WorkloadSpec
from .clients import worker_main
from .recording import NS, StepError

READY_TIMEOUT_S = 300.0


@dataclass
class StepOutcome:
    step: StepSpec
    started: datetime
    ended: datetime
    secs: float
    ops: int
    errors: int
    status: str                      # ok | failed | interrupted
    error: str | None
    latency_rows: list[dict] = field(default_factory=list)
    client_results: list[measure.ClientResult] = field(default_factory=list)


def _split(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def _status_line(elapsed_s: float, total_ops: int, cur_ops_s: float, last: dict) -> str:
    now = datetime.now().strftime("%Y-%m-%d %H:%M:%S:%f")[:-3]
    blocks = " ".join(
        f"[{op}: Count={v['count']}, Max={v['max']:.0f}, Min={v['min']:.0f}, Avg={v['mean']:.2f}, "
        f"99={v['p99']:.0f}]" for op, v in last.items())
    return (f"{now} {int(elapsed_s)} sec: {total_ops} operations; {cur_ops_s:.2f} current ops/sec; "
            f"{blocks}").rstrip()


def run_step(step: StepSpec, workload: WorkloadSpec, endpoint, *, seed: int = 0,
             batch_size: int = 1000, on_intervals: Callable[[list[dict]], None] | None = None,
             status_out=sys.stderr, progress: bool | None = None,
             on_clients: Callable[[list[int]], None] | None = None) -> StepOutcome:
    """Run one step with its client processes; returns what was measured.

    Never raises for a failure of the clients or the DBMS during the step: the
    outcome says ``failed`` with a one-line error and keeps every completed second.
    """
    ctx = mp.get_context("spawn")
    out_q = ctx.Queue()
    stop_evt = ctx.Event()
    start_val = ctx.Value("q", 0)
    threads_per = _split(step.threads, step.processes)
    procs, offset = [], 0
    for p, nthreads in enumerate(threads_per):
        task = {"proc_index": p, "step": step, "workload": vars(workload) | {},
                "endpoint": endpoint, "threads": nthreads, "thread_offset": offset,
                "seed": seed, "batch_size": batch_size}
        offset += nthreads
        pr = ctx.Process(target=worker_main, args=(task, out_q, start_val, stop_evt), daemon=True,
                         name=f"benchlib-client-{p}")
        pr.start()
        procs.append(pr)
    error, status = None, "ok"
    interrupted = False
    batch_units: dict[str, str | None] = {}   # batched op -> its record op (None: none)
    try:
        ready = 0
        deadline = time.monotonic() + READY_TIMEOUT_S
        while ready < len(procs):
            try:
                msg = out_q.get(timeout=0.5)
            except queue.Empty:
                if any(not pr.is_alive() for pr in procs):
                    raise StepError("a client process died while connecting") from None
                if time.monotonic() > deadline:
                    raise StepError(f"clients not ready after {READY_TIMEOUT_S:.0f} s") from None
                continue
            if msg[0] == "error":
                raise StepError(msg[2])
            if msg[0] == "ready":
                ready += 1
                batch_units.update(msg[2] if len(msg) > 2 else {})
    except (StepError, KeyboardInterrupt) as e:
        stop_evt.set()
        for pr in procs:
            pr.join(timeout=5)
            if pr.is_alive():
                pr.terminate()
        now = datetime.now(timezone.utc)
        msg = str(e) if isinstance(e, StepError) else "interrupted before the step started"
        return StepOutcome(step, now, now, 0.0, 0, 0,
                           "interrupted" if isinstance(e, KeyboardInterrupt) else "failed", msg)

    if on_clients:
        # announced only now, connected and prepared, so that the sampler's client CPU
        # excludes the interpreters' start-up and the chunk preparation
        on_clients([pr.pid for pr in procs])
    started = datetime.now(timezone.utc)
    start_ns = time.perf_counter_ns() + 50_000_000
    start_val.value = start_ns
    merger = _SecondMerger(len(procs), batch_units)
    results: dict[int, measure.ClientResult] = {}
    total_ops = total_err = 0
    last_status = time.monotonic()
    status_ops = 0
    bar = _progress_bar(step, progress)
    while len(results) < len(procs):
        try:
            msg = out_q.get(timeout=0.5)
        except KeyboardInterrupt:
            interrupted = True
            stop_evt.set()
            continue
        except queue.Empty:
            dead = [pr for i, pr in enumerate(procs) if not pr.is_alive() and i not in results]
            if dead:
                error = error or f"client process {dead[0].name} died (exit code {dead[0].exitcode})"
                status = "failed"
                stop_evt.set()
                for i, pr in enumerate(procs):
                    if not pr.is_alive() and i not in results:
                        results[i] = measure.ClientResult(pr.name, "", step.name, error=error)
                        merger.finish(i)
            msg = None
        if msg is not None:
            kind, p = msg[0], msg[1]
            if kind == "second":
                merger.add(p, msg[2], msg[3])
            elif kind == "done":
                results[p] = measure.ClientResult.from_dict(msg[2])
                merger.finish(p)
                if results[p].error:
                    error = error or results[p].error
                    status = "failed"
                    stop_evt.set()
        rows = merger.complete_rows()
        if rows:
            n = sum(r.get("_records", r["ops"]) for r in rows if not r.get("_inner"))
            total_ops += n
            total_err += sum(r["errors"] for r in rows if not r.get("_inner"))
            if bar is not None:
                bar.update(n)
            for r in rows:
                r.pop("_inner", None)
                r.pop("_records", None)
            if on_intervals:
                on_intervals(rows)
            now = time.monotonic()
            if status_out is not None and now - last_status >= step.status_interval_s:
                last = {r["op"]: {"count": r["ops"], "max": r["max_us"], "min": r.get("min_us", np.nan),
                                  "mean": r["mean_us"], "p99": r["p99_us"]}
                        for r in rows if r["second"] == rows[-1]["second"] and r["ops"]}
                rate = (total_ops - status_ops) / (now - last_status)
                print(_status_line((time.perf_counter_ns() - start_ns) / NS, total_ops, rate, last),
                      file=status_out, flush=True)
                last_status, status_ops = now, total_ops
    ended_ns = time.perf_counter_ns()
    ended = datetime.now(timezone.utc)
    if bar is not None:
        bar.close()
    for pr in procs:
        pr.join(timeout=10)
        if pr.is_alive():
            pr.terminate()
    if interrupted:
        status, error = "interrupted", error or "interrupted (Ctrl-C)"
    # the measured window: from the common start to the last operation's completion
    last = max((r.ended_ns for r in results.values() if r.ended_ns), default=ended_ns)
    secs = max(last - start_ns, 1) / NS
    outcome = StepOutcome(step, started, ended, secs, 0, 0, status, error,
                          client_results=list(results.values()))
    outcome.latency_rows, outcome.ops, outcome.errors = latency_rows(outcome.client_results,
                                                                     batch_units)
    return outcome


def _is_batch(op: str, batch_units: dict | None) -> bool:
    return op in batch_units if batch_units else op.endswith("-BATCH")


def latency_rows(client_results: list[measure.ClientResult],
                 batch_units: dict | None = None) -> tuple[list[dict], int, int]:
    """Latency rows per op (and Intended-op), merged exactly; the step's ops and errors.

    A batched op (``batch_units``; by default the ``-BATCH`` ones) counts its records:
    through its record op, or, when it has none (``None``), its own ``units``."""
    rows, ops, errors = [], 0, 0
    merged = measure.merge_client_results(client_results)
    for op, m in sorted(merged.items()):
        n_all = sum(m["returns"].values())
        n_err = sum(v for k, v in m["returns"].items() if k not in NOT_ERROR_NAMES)
        s = measure.summarize(m["hdr"])
        rows.append({"op": op, **s, "count": n_all, "errors": n_err,
                     "hdr": measure.encode(m["hdr"]), "returns": m["returns"]})
        if m["intended_hdr"].get_total_count():
            si = measure.summarize(m["intended_hdr"])
            rows.append({"op": f"Intended-{op}", **si, "errors": n_err,
                         "hdr": measure.encode(m["intended_hdr"]), "returns": {}})
        if not _is_batch(op, batch_units):  # a batch's records are counted under its unit op
            ops += n_all
        elif batch_units and batch_units.get(op, "") is None:
            ops += m["units"]    # a batch that keeps its latency: its rows are the step's ops
        # a batch that failed is an error of the step (its unit op counts records only)
        errors += n_err
    if "READ-MODIFY-WRITE" in merged:
        # YCSB times RMW's inner read and update as READ and UPDATE too; they are
        # part of the RMW operation, not operations of their own
        ops -= 2 * sum(merged["READ-MODIFY-WRITE"]["returns"].values())
    return rows, ops, errors


class _SecondMerger:
    """Collect each process's seconds; emit a second once every process is past it."""

    def __init__(self, nprocs: int, batch_units: dict | None = None):
        self.batch_units = batch_units
        self.last = [-1] * nprocs
        self.finished = [False] * nprocs
        self.pending: dict[int, dict[str, list]] = {}
        self.emitted = -1

    def add(self, p: int, second: int, payload: dict):
        self.last[p] = max(self.last[p], second)
        sec = self.pending.setdefault(second, {})
        for op, part in payload.items():
            sec.setdefault(op, []).append(part)

    def finish(self, p: int):
        self.finished[p] = True

    def complete_rows(self) -> list[dict]:
        live = [s for s, f in zip(self.last, self.finished) if not f]
        upto = min(live) if live else (max(self.pending) if self.pending else self.emitted)
        rows = []
        for s in range(self.emitted + 1, upto + 1):
            for op, parts in sorted(self.pending.pop(s, {}).items()):
                svc = np.concatenate([x[0] for x in parts])
                itd = np.concatenate([x[1] for x in parts])
                errs = sum(x[2] for x in parts)
                units = sum(x[3] for x in parts)
                mean, p99, mx = measure.interval_stats(svc)
                imean, ip99, imx = measure.interval_stats(itd)
                row = {"second": s, "op": op, "ops": len(svc), "errors": int(errs),
                       "mean_us": mean, "p99_us": p99, "max_us": mx,
                       "min_us": float(svc.min()) if len(svc) else np.nan,
                       "intended_mean_us": imean, "intended_p99_us": ip99,
                       "intended_max_us": imx, "_inner": _is_batch(op, self.batch_units)}
                rows.append(row)
                unit_op = (self.batch_units or {}).get(op, op[:-len("-BATCH")])
                if row["_inner"] and unit_op is None:
                    row["_inner"], row["_records"] = False, int(units)  # counted in records
                elif row["_inner"] and units:
                    # the batch's records, each taking latency / (records per batch)
                    per = len(svc) / units
                    rows.append({**row, "op": unit_op, "ops": int(units),
                                 "mean_us": mean * per, "p99_us": p99 * per, "max_us": mx * per,
                                 "min_us": row["min_us"] * per, "intended_mean_us": imean * per,
                                 "intended_p99_us": ip99 * per, "intended_max_us": imx * per,
                                 "_inner": False})
            self.emitted = s
        return rows


def _progress_bar(step: StepSpec, progress: bool | None):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm
    return tqdm(total=step.ops_total, desc=step.name, unit="op", leave=False, file=sys.stderr)
