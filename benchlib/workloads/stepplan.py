"""A run's steps: :class:`StepSpec` (one step as the driver runs it) and a workload's
plan of its steps, which the runner makes them of.

A workload says in a few keyword-only facts what it loads, whether it builds an index,
what a run loop of it runs and its own defaults (:class:`StepPlan`, returned by
``Workload.step_plan``); :func:`build_steps` applies the experiment (``load.skip``,
``run.loops``, ``run.loop_secs`` …) the same way for every workload, so no workload
copies the runner's fields into ``StepSpec`` positionally.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import loaders, schema


@dataclass(frozen=True)
class StepSpec:
    """One test step as the driver runs it; picklable."""

    name: str                      # l.pre | l.post | r.L1 …
    phase: str                     # load | index | run
    loop: int | None = None
    threads: int = 1
    processes: int = 1
    target_ops_per_s: float | None = None
    loop_secs: float | None = None  # the step runs this long (the YAML's run.loop_secs)
    ops_total: int | None = None   # operations (records for a load) over all threads
    warmup_secs: float = 0.0       # excluded from latency (the YAML's run.warmup_secs)
    status_interval_s: float = 10.0
    multiplex: bool | str = False  # see RunLoopSpec.multiplex (True, False or "auto")
    driver: str = "auto"           # see RunLoopSpec.driver (auto, c or python)
    key_counter: str | None = None  # the host's acknowledged-insert counter (keycounter)
    # the step fails when more of its operations than this share failed (run.max_error_ratio),
    # or more than max_failed of them (LinkBench's max_failed_requests), when set
    max_error_ratio: float = 0.01
    max_failed: int | None = None
    quiet: bool = False            # --no-progress: no progress line of any kind, a client's own too
    load_mode: str = "fast"        # a load's: load.mode (fast, or java: the reference client's way)
    seed: int | None = None        # its streams' master seed, a workload's own (LinkBench's
    #                                request_random_seed); None: the run's (meta.json seed)


@dataclass(frozen=True, kw_only=True)
class StepPlan:
    """What a workload runs; None: the experiment's (or the run point's) own value."""

    load: bool = True                 # a load step (l.pre); False: it runs on what is there
    load_records: int | None = None   # the records its load writes (an index step's too)
    load_threads: int | None = None   # its own load threads (LinkBench's loaders), else load.threads
    load_paced: bool = True           # a load target rate applies (load.target_ops_per_s)
    index: bool = False               # an index step after the load (l.post)
    run_threads: int | None = None    # its own run threads (LinkBench's requesters), else the point's
    run_processes: int | None = None  # its own client processes for them, else the point's
    run_rate: float | None = None     # its own target rate, else the point's
    run_secs: float | None = None     # a loop's length when run.loop_secs does not say one
    run_ops: int | None = None        # a loop's operations when run.loop_secs does not say a length
    warmup_secs: float = 0.0          # its warm-up when run.warmup_secs does not say one
    multiplex: bool = True            # run.multiplex applies; False: a thread per connection
    driver: bool = True               # run.driver picks its loop; False: its own loop only
    load_seed: int | None = None      # the load's own master seed, else the run's
    run_seed: int | None = None       # the loops' own master seed, else the run's


def build_steps(exp, spec, plan: StepPlan) -> list[StepSpec]:
    """The run's steps: the load ``l.pre`` unless ``load.skip``, the index ``l.post`` when
    the plan has one, a run loop ``r.L<n>`` for each of ``run.loops`` unless ``run.skip``."""
    steps = []
    if plan.load and not exp.load.skip:
        threads = loaders.step_threads(exp.load, plan.load_threads, spec.load_processes)
        steps.append(StepSpec(
            schema.step_name("load"), "load", threads=threads,
            processes=min(spec.load_processes, threads),
            target_ops_per_s=spec.load_target_ops_per_s if plan.load_paced else None,
            ops_total=plan.load_records, status_interval_s=exp.run.status_interval_s,
            load_mode=exp.load.mode, seed=plan.load_seed))
    if plan.index:
        steps.append(StepSpec(schema.step_name("index"), "index", ops_total=plan.load_records))
    if exp.run.skip:
        return steps
    for loop in range(1, exp.run.loops + 1):
        steps.append(StepSpec(
            schema.step_name("run", loop), "run", loop,
            threads=plan.run_threads or spec.threads,
            processes=plan.run_processes or spec.processes,
            target_ops_per_s=plan.run_rate if plan.run_rate is not None else spec.target_ops_per_s,
            loop_secs=exp.run.loop_secs or plan.run_secs,
            ops_total=None if exp.run.loop_secs else plan.run_ops,
            warmup_secs=exp.run.warmup_secs or plan.warmup_secs,
            status_interval_s=exp.run.status_interval_s,
            multiplex=exp.run.multiplex if plan.multiplex else False, seed=plan.run_seed,
            **({"driver": exp.run.driver} if plan.driver else {})))
    return steps
