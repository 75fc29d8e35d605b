"""A run's steps in order: each step's schema work, the step (its clients, or the
controller itself for an index build) with the hardware sampler beside it, its line on
the terminal and its rows kept; the data a load made kept for the runs after it.

What a run's steps share is one :class:`RunContext` (the experiment, the run's rows,
workload, target, seed, where lines go, the executor), not a dozen arguments;
what the steps of one call share besides (the workload's reference for the clients,
the run's insert counter, the hardware sources) is :class:`StepsShared`.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, TextIO

from .. import schema
from ..measure import throughput
from ..params import Experiment
from ..registries.workloads import ref_of
from ..store import folders
from ..targets import cpu_sets, ownership
from ..workloads import keycounter
from ..workloads.base import StepSpec, WorkloadSpec
from . import loaded_data, unfinished
from .cleanup import tidy
from .hwsources import sources_for
from .runrows import RunRows, give_back
from .step import StepOutcome, run_step

StepLines = Callable[[dict, str, str], str]   # (tables, run_id, step) -> the step's seed-format lines


@dataclass
class RunContext:
    """One run's parts, as every step of it sees them."""

    exp: Experiment
    run: RunRows
    workload: Any                  # workloads.base.Workload
    target: Any                    # targets.base.Target
    seed: int
    out: TextIO
    progress: bool | None
    step_lines: StepLines | None
    executor: Any                  # the experiment's, started (run/executors)


@dataclass
class StepsShared:
    """What the steps of one call share: the workload as client processes build it, the
    run's insert counter, the hardware sources and the client processes' pids."""

    wspec: WorkloadSpec
    counter: Any                   # workloads.keycounter's, or None
    sources: Any                   # run/hwsources.HwSources
    client_pids: list[int] = field(default_factory=list)
    client_cpus: Any = None        # targets.cpu_sets': where the clients are pinned, or None

    def set_client_pids(self, pids: list[int]) -> None:
        self.client_pids[:] = pids
        cpu_sets.pin(pids, self.client_cpus)   # server and clients apart


def _controller_step(step: StepSpec, workload, target) -> StepOutcome:
    """A step the controlling process runs itself (an index build), timed like any."""
    started = datetime.now(timezone.utc)
    t0, cpu0 = time.perf_counter(), time.thread_time()
    status, error, rows = "ok", None, 0
    try:
        rows = workload.run_in_controller(target, step)
    except Exception as e:
        status, error = "failed", str(e).strip().splitlines()[0]
    secs = time.perf_counter() - t0
    o = StepOutcome(step, started, datetime.now(timezone.utc), secs, rows or 0, 0, status, error)
    # no client ran it: the clients' CPU is 0; an engine that runs inside its caller
    # (SQLite) built the index on this thread, whose CPU is the DBMS's
    o.controller_cpu_s = time.thread_time() - cpu0
    return o


def step_line(run_id: str, o: StepOutcome) -> str:
    """A short line as each step ends; the seed-format lines come from summaries. A paced
    step's p99 is from the intended start, its service time beside it (``svc``)."""
    parts = [f"{o.step.name:<6} {run_id}: {o.ops} ops in {o.secs:.2f} s = "
             f"{(throughput(o.ops, o.secs) if o.secs else 0):,.0f} ops/s, errors {o.errors}"
             + (f" (failed {o.failed})" if o.failed else "")]
    intended = {r["op"]: r["p99_us"] for r in o.latency_rows if schema.is_intended(r["op"]) and r["count"]}
    for r in o.latency_rows:
        if not schema.is_intended(r["op"]) and r["count"] and r["p99_us"] == r["p99_us"]:
            paced = intended.get(schema.intended(r["op"]))
            parts.append(f"{r['op']} p99={r['p99_us']:.0f}us" if paced is None or paced != paced else
                         f"{r['op']} p99={paced:.0f}us (svc {r['p99_us']:.0f}us)")
    if o.status != "ok":
        parts.append(f"[{o.status.upper()}: {o.error}]")
    return "  ".join(parts)


def _run_steps(ctx: RunContext, steps: list[StepSpec]) -> tuple[str, str | None]:
    """Every step in order, each with the sampler beside it; stops at the first that fails."""
    counter = open_key_counter(ctx.workload, steps, ctx.run.key_state)
    sources, owned = sources_for(ctx.exp, ctx.executor)
    shared = StepsShared(WorkloadSpec(ref_of(ctx.exp.workload), ctx.workload.properties), counter, sources,
                         client_cpus=getattr(ctx.target, "client_cpus", None))
    try:
        return _each_step(ctx, steps, shared)
    finally:   # neither cleanup masks the error of a step (tidy)
        if counter is not None:
            tidy(counter.close, unlink=True)
        if owned:
            tidy(sources.close)


def steps_keeping_data(ctx: RunContext, steps: list[StepSpec], keep: bool) -> tuple[str, str | None]:
    """The steps; with ``keep``, the data its load steps made is kept by the target for the
    runs after it (:mod:`.loaded_data`) before the run loops, its seconds in meta.json."""
    make, rest = loaded_data.split(steps) if keep else ([], steps)
    if make:
        status, error = _run_steps(ctx, make)
        if status not in ("ok", "degraded"):
            return status, error
        ctx.run.meta["data_copy"] = ctx.target.keep_loaded()
        folders.write_json(ctx.run.run_dir / folders.META, ctx.run.meta)
        if not rest:
            return status, error
        later = _run_steps(ctx, rest)
        return later if later[0] != "ok" else (status, error)
    return _run_steps(ctx, rest)


def open_key_counter(workload, steps: list[StepSpec], state: dict | None = None):
    """The run's acknowledged-insert counter, shared by its run loops (each loop's inserts
    go on where the previous one's stopped; a resumed run's where ``state`` says), or None."""
    start = workload.insert_counter_start()
    threads = max((s.threads for s in steps if s.phase == "run"), default=0)
    if start is None or not threads:
        return None
    # a resumed run's: past the kept steps' claims and the killed one's, the skipped keys a hole
    first, holes = unfinished.counter_args(start, state)
    return keycounter.create(first, threads, holes)


def _setup(exp: Experiment, workload, target, step: StepSpec) -> None:
    """The step's schema work; a load's only into tables benchlib made (or with
    load.replace), checked again here for a target preflight could not read (embedded),
    and benchlib's mark on them once made."""
    if step.phase == "load":
        ownership.check(target, workload.load_tables(), replace=exp.load.replace)
    workload.setup(target, step)
    if step.phase == "load":
        ownership.claim(target, workload.load_tables())


def _each_step(ctx: RunContext, steps: list[StepSpec], shared: StepsShared) -> tuple[str, str | None]:
    """Every step in order; the run stops at one that failed, goes on after a degraded one
    (its figures kept, marked) and ends degraded, saying the first one's reason."""
    exp, run, workload, target, out = ctx.exp, ctx.run, ctx.workload, ctx.target, ctx.out
    counter = shared.counter
    degraded = None
    for step in steps:
        step = replace(step, max_error_ratio=exp.run.max_error_ratio, max_failed=workload.max_failed_ops,
                       quiet=ctx.progress is False)   # --no-progress: a client's own lines neither
        _setup(exp, workload, target, step)
        run.log.step = step.name
        sampler = shared.sources.step(target, run.spec.run_id, step.name, shared.client_pids, out).start()
        o = None
        try:
            if step.phase in workload.controller_phases:
                sampler.window("start")
                o = _controller_step(step, workload, target)
                sampler.window("end")
            else:
                o = run_step(step, shared.wspec, target.endpoint(), seed=ctx.seed, repetition=run.spec.repetition,
                             batch_size=exp.load.batch_size,
                             on_intervals=run.log, progress=ctx.progress, on_clients=shared.set_client_pids,
                             executor=ctx.executor, key_counter=counter, on_window=sampler.window)
            o.dbms_window = sampler.window_figures
            o.dbms_figures = target.step_figures(o.started)
            if o.status in ("ok", "degraded"):   # it did its work (a degraded load loaded)
                workload.after_step(target, step, o)
        finally:
            run.hw_frames.extend(sampler.stop(o))
        print(step_line(run.spec.run_id, o), file=out, flush=True)
        run.add(o, counter.state() if counter is not None else None)   # OSError: the disk is full
        if ctx.step_lines is not None:
            print(_seed_lines(run, step.name, ctx.step_lines), file=out, flush=True)
        give_back()   # what the step's merging and writing freed
        if o.status == "degraded":
            degraded = degraded or ("degraded", f"degraded: {step.name}: {o.error}")
        elif o.status != "ok":
            return o.status, o.error
    return degraded or ("ok", None)


def _seed_lines(run: RunRows, step: str, step_lines: StepLines) -> str:
    """The step's one-line summaries in every seed format, from what is in memory."""
    try:
        text = step_lines(run.tables(step), run.spec.run_id, step)
    except Exception as e:  # a summary must never cost a measured run
        return f"       (no summary lines: {type(e).__name__}: {e})"
    return "\n".join("       " + line for line in text.splitlines())
