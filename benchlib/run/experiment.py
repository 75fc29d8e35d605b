"""Run an experiment: each point of the matrix into its own run folder, resumably.

For each :class:`~benchlib.params.RunSpec` the runner starts (or checks) the target,
runs the steps — load ``l.pre``, optional index ``l.post``, run loops ``r.L1…`` —
with the hardware sampler beside each, and writes the run folder as it goes: the
interval log line by line, the steps and latency tables after every step, meta.json
at start and end. A run that finished ``ok`` is skipped the next time unless
``force``; a failed or killed one resumes after its finished steps (:mod:`.resume`),
or, when they cannot be kept, is moved aside to ``.attempts/`` and run again.
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pandas as pd

from .. import schema, seeds
from ..hw.host import host_facts
from ..masking import mask_mapping, mask_text, mask_url
from ..measure import throughput
from ..params import Experiment, ParameterError, RunSpec, plan
from ..store import catalog, errorlog, folders, place, space
from ..targets.base import TargetError, make_target
from ..workloads.base import StepSpec
from ..registries import executors as registry
from . import loaded_data, resume
from .cleanup import tidy
from .hwsources import HwSources
from .interval_log import IntervalLog, interval_rows
from .executors import LocalExecutor
from .preflight import check_rerun, preflight, resolved_parameters  # noqa: F401 - the API's
from .runrows import RunRows
from .sequence import RunContext, StepLines, steps_keeping_data


@dataclass
class ExperimentResult:
    experiment: str
    path: Path
    runs: dict[str, str] = field(default_factory=dict)   # run_id -> status (ok, failed, skipped …)

    @property
    def ok(self) -> bool:
        return all(s in ("ok", "skipped") for s in self.runs.values())




def _start_meta(exp: Experiment, spec: RunSpec, props: dict, steps: list[StepSpec],
                seed: int) -> schema.RunMeta:
    return folders.base_meta(
        spec.run_id, exp.experiment, config=spec.target.name, workload=exp.workload,
        workload_properties=mask_mapping({k: str(v) for k, v in props.items()}),
        matrix_properties=list(spec.workload_point),   # the axes this experiment sweeps
        target={"name": spec.target.name, "url": mask_url(spec.target.url), "kind": spec.target.kind},
        threads=spec.threads, processes=spec.processes, load_processes=spec.load_processes,
        load_processes_auto=spec.load_processes_auto,
        target_ops_per_s=spec.target_ops_per_s, load_target_ops_per_s=spec.load_target_ops_per_s,
        repetition=spec.repetition, seed=seed, seed_rule=seeds.RULE, planned=[s.name for s in steps],
        parameters=resolved_parameters(exp), host=host_facts(), dbms=None)


def _write_outputs(run: RunRows, workload) -> None:
    """The run's tables and text files beside steps and latency (written after each step)."""
    run_dir = run.run_dir
    run.log.write_table()
    if (hw := resume.hw_table(run_dir, run.hw_frames[run.hw_done:])) is not None:
        folders.write_table(run_dir, "hw", hw)
    if run.driver_rows:
        folders.write_table(run_dir, "drivers", schema.conform("drivers", pd.DataFrame(run.driver_rows)))
    for name, text in workload.text_outputs(run.outcomes, intervals=partial(interval_rows, run_dir)).items():
        folders.write_text(run_dir / name, text)
    for name, df in workload.extra_tables(run.spec.run_id, run.outcomes).items():
        folders.write_table(run_dir, name, df)


def _finish(run: RunRows, workload, data_dir: Path, status: str, error: str | None) -> None:
    """Write what the run measured, whatever happened to it, and record it; a disk that
    is full fails the run, whose status still gets written (the reserve given back)."""
    run_dir, meta = run.run_dir, run.meta
    run.log.close()
    try:
        _write_outputs(run, workload)
    except OSError as e:
        if not space.is_no_space(e):
            raise
        status, error = "failed", error if status == "failed" and error else str(space.no_space(run_dir))
    space.release(run_dir)
    meta.status, meta.error, meta.ended = status, error, folders.utcnow().isoformat()
    paths = sorted({c.driver_path for o in run.outcomes if o.step.phase == "run"
                    for c in o.client_results if c.driver_path})
    meta.driver_path = "+".join(paths) or None
    folders.write_json(run_dir / folders.META, meta)
    if status == "ok":
        resume.drop_parts(run_dir)   # in its tables now; a run that did not end ok keeps them
    if status == "failed" and not (run_dir / errorlog.ERROR_LOG).exists():
        errorlog.write_error_log(run_dir, f"{error}\n")   # every failed run has one, as docs/reliability.md says
    run_rows = [r for r in run.steps_rows if r["phase"] == "run"]
    secs = sum(r["secs"] for r in run_rows)
    catalog.record(data_dir, run_dir, meta, throughput(sum(r["ops"] for r in run_rows), secs) if secs else None)


def run_one(exp: Experiment, spec: RunSpec, exp_dir: Path, data_dir: Path, *, out=sys.stdout,
            progress: bool | None = None, step_lines: StepLines | None = None,
            executor=None, resumed: resume.Resume | None = None) -> str:
    """One run folder; its steps' clients started by ``executor`` (local processes by
    default); ``resumed``: an unfinished run's folder, whose finished steps are kept."""
    run_dir = exp_dir / spec.run_id
    run_dir.mkdir(parents=True, exist_ok=resumed is not None)
    props = {**exp.workload_properties(), **spec.workload_point}
    workload = exp.workload_class()(props)
    target = make_target(spec.target.name, spec.target.url, spec.target.options, data_dir)
    if hasattr(target, "set_run_dir"):
        target.set_run_dir(run_dir)
    steps = workload.steps(exp, spec)
    key = loaded_data.data_key(exp, spec, props, target)   # None: every run loads its own
    reused = key is not None and target.use_loaded(key)
    if reused and resumed is None:   # started on a copy of the data a run before it loaded
        steps = loaded_data.split(steps)[1]
    seed = exp.seed if exp.seed is not None else random.randrange(1 << 30)
    meta = _start_meta(exp, spec, props, steps, seed) if resumed is None else resume.resumed_meta(resumed)
    seed = meta.seed if meta.seed is not None else seed
    workload.run_seed = seed
    meta.target["dialect"] = target.dialect.as_meta()   # summaries read it, never a name
    space.reserve(run_dir)     # NoSpace: not even room to say how it ended
    folders.write_json(run_dir / folders.META, meta)
    catalog.record(data_dir, run_dir, meta)   # listed (running) from now: a kill -9 shows abandoned
    run = RunRows(spec, run_dir, meta, IntervalLog(run_dir, spec.run_id),
               engine_in_clients=target.engine_in_clients)
    steps = steps if resumed is None else resume.restore(run, resumed, steps, workload.insert_ops)
    status, error = "ok", None
    try:
        if steps:   # none left: a run killed in its final write-out writes its tables only
            target.start()
            meta.dbms = target.dbms_info()
            if target.client_library:   # which client library the connections use (MariaDB)
                meta["client_library"] = target.client_library
            folders.write_json(run_dir / folders.META, meta)
            ctx = RunContext(exp, run, workload, target, seed, out, progress, step_lines, executor)
            status, error = steps_keeping_data(ctx, steps, keep=key is not None and not reused)
    except BaseException as e:   # every way a run ends early is said (_ended_by)
        status, error = _ended_by(e, run_dir, spec.run_id, out)
        if not isinstance(e, (Exception, KeyboardInterrupt)):
            raise   # SystemExit, a caller's timeout: the caller's to handle, the run marked first
    finally:
        try:
            target.stop()
        except Exception:
            pass
        _finish(run, workload, data_dir, status, error)
    if status == "interrupted":
        raise KeyboardInterrupt
    return status


def _ended_by(e: BaseException, run_dir: Path, run_id: str, out) -> tuple[str, str]:
    """(status, error) of a run that an exception ended, its line printed where one is due:
    never ``ok`` — SystemExit or a caller's timeout (pytest's) is not finished either."""
    if isinstance(e, TargetError):   # one line, no traceback: an embedded target that could not start
        error = mask_text(str(e))
    elif isinstance(e, OSError) and space.is_no_space(e):   # the disk is full: one line, no traceback
        error = str(space.no_space(run_dir))
    elif isinstance(e, KeyboardInterrupt):
        return "interrupted", f"interrupted ({str(e) or 'Ctrl-C'})"
    elif not isinstance(e, Exception):
        return "interrupted", mask_text(f"interrupted ({type(e).__name__}: {e})"[:300])
    else:   # whatever it was (an OSError: a lost connection of a library's own, Dask's comm)
        return "failed", _error_line(run_dir, run_id, e, out)
    print(f"error  {run_id}: {error}", file=out, flush=True)
    return "failed", error


def _error_line(run_dir: Path, run_id: str, e: BaseException, out) -> str:
    """A run's unforeseen error: its traceback in error.log, one line on the terminal."""
    error = errorlog.log_exception(run_dir, e)
    where = f" (traceback in {run_dir / errorlog.ERROR_LOG})" if (run_dir / errorlog.ERROR_LOG).exists() else ""
    print(f"error  {run_id}: {error}{where}", file=out, flush=True)
    return error


def open_executor(exp) -> LocalExecutor:
    """The executor an experiment asks for (``executor:``, one of :mod:`benchlib.registries.executors`), started."""
    try:
        cls = registry.executor_class(exp.executor)
    except ValueError as e:
        raise ParameterError(str(e)) from None
    return cls.open(exp)


def run_experiment(exp: Experiment, data_dir: Path | str = "data", *, force: bool = False,
                   out=sys.stdout, progress: bool | None = None,
                   step_lines: StepLines | None = None) -> ExperimentResult:
    """Run every point of the experiment's matrix; finished runs are skipped unless force."""
    data_dir = Path(data_dir)
    specs = plan(exp)
    # what must answer comes first: an unreachable scheduler or DBMS host leaves no folder
    executor = open_executor(exp)   # a local cluster, or a scheduler that must answer
    try:
        executor.hw_sources = HwSources(exp, executor)   # the DBMS host's sampler or Prometheus
        # writable, locked; a refusal before any run folder leaves nothing behind
        with place.experiment_folder(data_dir, exp.experiment) as exp_dir:
            place.check_run_places(exp_dir, [s.run_id for s in specs])
            if not force:
                check_rerun(exp, exp_dir, specs)
            folders.write_json(exp_dir / "experiment.json", resolved_parameters(exp))
            loop_s = 0 if exp.run.skip else exp.run.loops * (exp.run.loop_secs or 10)
            if warning := space.warn_if_short(exp_dir, len(specs), loop_s):
                print(warning, file=out, flush=True)
            return _run_all(exp, specs, exp_dir, data_dir, force, out, progress, step_lines, executor)
    finally:
        if getattr(executor, "hw_sources", None) is not None:
            tidy(executor.hw_sources.close)
        tidy(executor.close)


def _run_all(exp, specs, exp_dir, data_dir, force, out, progress, step_lines, executor) -> ExperimentResult:
    res = ExperimentResult(exp.experiment, exp_dir)
    for spec in specs:
        run_dir = exp_dir / spec.run_id
        if run_dir.exists():
            try:
                meta = folders.recover_run(run_dir)
            except folders.ResultsError:  # no or a broken meta.json: run it again
                meta = {"status": "broken"}
            if meta.get("status") == "ok" and not force:
                print(f"skip   {spec.run_id}: finished before (use --force to run it again)", file=out)
                res.runs[spec.run_id] = "skipped"
                continue
            resumed = None if force else resume.decide(exp, spec, run_dir, data_dir, meta, out)
            if resumed is None:
                target = make_target(spec.target.name, spec.target.url, spec.target.options, data_dir)
                resume.set_aside(run_dir, target.files_in(run_dir))
        else:
            resumed = None
        try:
            res.runs[spec.run_id] = run_one(exp, spec, exp_dir, data_dir, out=out, progress=progress,
                                            step_lines=step_lines, executor=executor, resumed=resumed)
        except space.NoSpace as e:   # not even room for its meta.json: nothing ran
            print(f"error  {spec.run_id}: {e}", file=out, flush=True)
            res.runs[spec.run_id] = "failed"
        except KeyboardInterrupt:
            res.runs[spec.run_id] = "interrupted"
            raise
        print(f"run    {spec.run_id}: {res.runs[spec.run_id]} -> {run_dir}", file=out, flush=True)
    return res
