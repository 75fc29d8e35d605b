"""Run an experiment: each point of the matrix into its own run folder, resumably.

For each :class:`~benchlib.params.RunSpec` the runner starts (or checks) the target,
runs the steps — load ``l.pre``, optional index ``l.post``, run loops ``r.L1…`` —
with the hardware sampler beside each, and writes the run folder as it goes: the
interval log line by line, the steps and latency tables after every step, meta.json
at start and end. A run that finished ``ok`` is skipped the next time unless
``force``; a failed or killed one is moved aside to ``.attempts/`` and run again.
"""
from __future__ import annotations

import json
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import catalog, results, ycsb_text
from .controller import StepOutcome, run_step
from .hostinfo import host_facts
from .params import Experiment, RunSpec, mask_url, plan
from .targets.base import TargetError, make_target
from .workloads.base import StepSpec, WorkloadSpec
from .workloads.ycsb import YcsbWorkload


@dataclass
class ExperimentResult:
    experiment: str
    path: Path
    runs: dict[str, str] = field(default_factory=dict)   # run_id -> status (ok, failed, skipped …)

    @property
    def ok(self) -> bool:
        return all(s in ("ok", "skipped") for s in self.runs.values())


class IntervalLog:
    """Appends completed seconds to ``intervals.jsonl`` at once: a killed run keeps them."""

    def __init__(self, run_dir: Path, run_id: str):
        self.path = run_dir / results.INTERVAL_LOG
        self.run_id = run_id
        self.f = self.path.open("a")
        self.step = None
        self.rows: list[dict] = []

    def __call__(self, rows: list[dict]) -> None:
        rows = [{"run_id": self.run_id, "step": self.step, **{k: v for k, v in r.items() if k != "min_us"}}
                for r in rows]
        self.f.write(json.dumps(rows, default=float) + "\n")
        self.f.flush()
        self.rows.extend(rows)

    def close(self) -> None:
        self.f.close()


def _sampler(target, client_pids: list[int]):
    try:
        from .hwmetrics import Sampler
    except ImportError:
        return None
    local_engine = target.kind == "sqlite"  # SQLite's engine runs inside the clients
    return Sampler(1.0,
                   dbms_pids=(lambda: list(client_pids)) if local_engine else target.dbms_pids,
                   client_pids=lambda: list(client_pids),
                   db_size_bytes=target.db_size_bytes)


def planned_steps(exp: Experiment, spec: RunSpec, workload: YcsbWorkload) -> list[StepSpec]:
    steps = []
    core = workload.core
    if not exp.load.skip:
        lt = exp.load.threads
        steps.append(StepSpec("l.pre", "load", None, lt, min(spec.load_processes, lt),
                              spec.load_target_ops_per_s, None, workload.records(),
                              0.0, exp.run.status_interval_s))
    if exp.index.enabled:
        steps.append(StepSpec("l.post", "index", None, 1, 1, None, None, workload.records()))
    if not exp.run.skip:
        duration = exp.run.loop_secs or (float(core.maxexecutiontime) or None)
        ops = None if exp.run.loop_secs else int(core.operationcount)
        for loop in range(1, exp.run.loops + 1):
            steps.append(StepSpec(f"r.L{loop}", "run", loop, spec.threads, spec.processes,
                                  spec.target_ops_per_s, duration, ops, exp.run.warmup_secs,
                                  exp.run.status_interval_s, exp.run.multiplex))
    return steps


def _index_step(step: StepSpec, workload, target, column: str) -> StepOutcome:
    from datetime import datetime, timezone
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    status, error = "ok", None
    try:
        workload.create_index(target, column)
    except Exception as e:
        status, error = "failed", str(e).strip().splitlines()[0]
    secs = time.perf_counter() - t0
    return StepOutcome(step, started, datetime.now(timezone.utc), secs, step.ops_total or 0, 0,
                       status, error)


def _steps_row(run_id: str, o: StepOutcome) -> dict:
    s = o.step
    return {"run_id": run_id, "step": s.name, "phase": s.phase, "loop": s.loop,
            "started": o.started, "ended": o.ended, "secs": o.secs, "ops": o.ops, "errors": o.errors,
            "ops_per_s": o.ops / o.secs if o.secs else None, "threads": s.threads,
            "processes": s.processes, "target_ops_per_s": s.target_ops_per_s, "status": o.status}


def step_line(run_id: str, o: StepOutcome) -> str:
    """A short line as each step ends; the seed-format lines come from summaries."""
    parts = [f"{o.step.name:<6} {run_id}: {o.ops} ops in {o.secs:.2f} s = "
             f"{(o.ops / o.secs if o.secs else 0):,.0f} ops/s, errors {o.errors}"]
    for r in o.latency_rows:
        if not r["op"].startswith("Intended-") and r["count"]:
            parts.append(f"{r['op']} p99={r['p99_us']:.0f}us")
    if o.status != "ok":
        parts.append(f"[{o.status.upper()}: {o.error}]")
    return "  ".join(parts)


def run_one(exp: Experiment, spec: RunSpec, exp_dir: Path, data_dir: Path, *, out=sys.stdout,
            progress: bool | None = None) -> str:
    run_dir = exp_dir / spec.run_id
    run_dir.mkdir(parents=True)
    props = exp.workload_properties()
    workload = YcsbWorkload(props)
    target = make_target(spec.target.name, spec.target.url, spec.target.options, data_dir)
    if hasattr(target, "set_run_dir"):
        target.set_run_dir(run_dir)
    steps = planned_steps(exp, spec, workload)
    seed = exp.seed if exp.seed is not None else random.randrange(1 << 30)
    resolved = exp.model_dump(mode="json")
    for t in resolved["targets"]:
        t["url"] = mask_url(t["url"])
    meta = results.base_meta(
        spec.run_id, exp.experiment, config=spec.target.name, workload="ycsb",
        workload_properties={k: str(v) for k, v in props.items()},
        target={"name": spec.target.name, "url": mask_url(spec.target.url), "kind": spec.target.kind},
        threads=spec.threads, processes=spec.processes, load_processes=spec.load_processes,
        target_ops_per_s=spec.target_ops_per_s, load_target_ops_per_s=spec.load_target_ops_per_s,
        repetition=spec.repetition, seed=seed, planned=[s.name for s in steps],
        parameters=resolved, host=host_facts(), dbms=None)
    results.write_json(run_dir / results.META, meta)
    log = IntervalLog(run_dir, spec.run_id)
    steps_rows, lat_rows, hw_frames, outcomes = [], [], [], []
    status, error = "ok", None
    try:
        target.start()
        meta["dbms"] = target.dbms_info()
        results.write_json(run_dir / results.META, meta)
        wspec = WorkloadSpec("ycsb", props)
        client_pids: list[int] = []

        def set_client_pids(pids: list[int]) -> None:
            client_pids[:] = pids
        for step in steps:
            if step.phase == "load":
                workload.setup(target)
            log.step = step.name
            sampler = _sampler(target, client_pids)
            if sampler:
                sampler.start(spec.run_id, step.name)
            try:
                if step.phase == "index":
                    o = _index_step(step, workload, target, exp.index.column)
                else:
                    o = run_step(step, wspec, target.endpoint(), seed=seed, batch_size=exp.load.batch_size,
                                 on_intervals=log, progress=progress,
                                 on_clients=set_client_pids)
                if step.phase == "load" and o.status == "ok":
                    workload.after_load(target)
            finally:
                if sampler:
                    hw_frames.append(sampler.stop())
            outcomes.append(o)
            steps_rows.append(_steps_row(spec.run_id, o))
            lat_rows.extend({"run_id": spec.run_id, "step": step.name, **r} for r in o.latency_rows)
            results.write_table(run_dir, "steps", pd.DataFrame(steps_rows))
            results.write_table(run_dir, "latency", _latency_df(lat_rows))
            print(step_line(spec.run_id, o), file=out, flush=True)
            print(_seed_lines(spec, step.name, steps_rows, lat_rows, hw_frames), file=out, flush=True)
            if o.status != "ok":
                status, error = o.status, o.error
                break
    except TargetError as e:
        status, error = "failed", str(e)
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted (Ctrl-C)"
    finally:
        log.close()
        try:
            target.stop()
        except Exception:
            pass
        results.write_table(run_dir, "intervals", pd.DataFrame(log.rows) if log.rows else None)
        if hw_frames:
            results.write_table(run_dir, "hw", pd.concat(hw_frames, ignore_index=True))
        for o in outcomes:
            if o.latency_rows:
                name = "ycsb-load.txt" if o.step.phase == "load" else f"ycsb-{o.step.name}.txt"
                results.write_text(run_dir / name, ycsb_text.format_step(o.secs, o.ops, o.latency_rows))
        meta.update(status=status, error=error, ended=results.utcnow().isoformat())
        results.write_json(run_dir / results.META, meta)
        (run_dir / results.INTERVAL_LOG).unlink(missing_ok=True)
        run_rows = [r for r in steps_rows if r["phase"] == "run"]
        secs = sum(r["secs"] for r in run_rows)
        catalog.record(data_dir, run_dir, meta, sum(r["ops"] for r in run_rows) / secs if secs else None)
    if status == "interrupted":
        raise KeyboardInterrupt
    return status


def _seed_lines(spec: RunSpec, step: str, steps_rows, lat_rows, hw_frames) -> str:
    """The step's one-line summaries in every seed format, from what is in memory."""
    from .summaries import step_lines
    mem = {"runs": pd.DataFrame([{"run_id": spec.run_id, "config": spec.target.name}]),
           "steps": pd.DataFrame(steps_rows).assign(config=spec.target.name),
           "latency": _latency_df(lat_rows).assign(config=spec.target.name),
           "hw": (pd.concat(hw_frames, ignore_index=True) if hw_frames
                  else results.schema.empty("hw")).assign(config=spec.target.name)}
    try:
        text = step_lines(mem, spec.run_id, step)
    except Exception as e:  # a summary must never cost a measured run
        return f"       (no summary lines: {type(e).__name__}: {e})"
    return "\n".join("       " + line for line in text.splitlines())


def _latency_df(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{k: v for k, v in r.items() if k != "returns"} for r in rows]) if rows else None


def run_experiment(exp: Experiment, data_dir: Path | str = "data", *, force: bool = False,
                   out=sys.stdout, progress: bool | None = None) -> ExperimentResult:
    """Run every point of the experiment's matrix; finished runs are skipped unless force."""
    data_dir = Path(data_dir)
    exp_dir = data_dir / exp.experiment
    exp_dir.mkdir(parents=True, exist_ok=True)
    results.write_json(exp_dir / "experiment.json", exp.model_dump(mode="json") | {
        "targets": [{**t.model_dump(), "url": mask_url(t.url)} for t in exp.targets]})
    res = ExperimentResult(exp.experiment, exp_dir)
    for spec in plan(exp):
        run_dir = exp_dir / spec.run_id
        if run_dir.exists():
            meta = results.recover_run(run_dir) if results.is_run_dir(run_dir) else {"status": "broken"}
            if meta.get("status") == "ok" and not force:
                print(f"skip   {spec.run_id}: finished before (use --force to run it again)", file=out)
                res.runs[spec.run_id] = "skipped"
                continue
            attempts = exp_dir / ".attempts"
            attempts.mkdir(exist_ok=True)
            shutil.move(str(run_dir), attempts / f"{spec.run_id}-{int(time.time())}")
        try:
            res.runs[spec.run_id] = run_one(exp, spec, exp_dir, data_dir, out=out, progress=progress)
        except KeyboardInterrupt:
            res.runs[spec.run_id] = "interrupted"
            raise
        print(f"run    {spec.run_id}: {res.runs[spec.run_id]} -> {run_dir}", file=out, flush=True)
    return res


def preflight(exp: Experiment, data_dir: Path | str = "data") -> None:
    """Connect to every URL target once before anything runs: an unreachable database
    is one line and exit 2, not a folder of failed runs. (Embedded targets start with
    their run.)"""
    for t in exp.targets:
        if t.url in ("sqlite", "basic", "embedded-postgres") or t.kind == "sqlite":
            continue
        target = make_target(t.name, t.url, t.options, data_dir)
        target.start()
        target.stop()
