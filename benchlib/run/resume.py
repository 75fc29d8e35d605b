"""Resume a run at the loop: a rerun of a run that was interrupted, failed or killed
keeps the steps it finished (load, index, the loops that ended ok) and runs only what
is left, on the same loaded database.

After each step the runner saves what a rerun needs to keep it, beside the tables,
in the run folder's ``.steps/``: the step's outcome (its latency rows with their
returns, its drivers rows) as ``<step>.json`` and its hw rows as ``<step>.hw.parquet``
(the run's hw table is made of these at the end: no second of it stays in memory).

A rerun keeps the finished steps when the run planned the same steps under the same
parameters and each loaded table is there holding what the kept steps left
(``Workload.loaded_rows``: the load's count, what the kept loops inserted and removed,
what the loop that did not finish may have removed: :func:`kept_counts`); otherwise one
line says why and the whole run goes again, the old folder set aside in ``.attempts/``.
A run killed once every step had finished (in its final write-out) keeps them all: the
rerun writes its tables from ``.steps/`` and touches no database.
A resumed run's inserts go on past every key the killed run may have claimed
(:func:`.unfinished.key_state`). Its remaining steps draw the requests the first attempt would have
drawn: the seed is the meta's and each step's streams derive from it, the step and the
client (:mod:`..seeds`); a run whose meta names another ``seed_rule`` is not resumed.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema, seeds
from ..filemodes import open_private
from ..params import Experiment, RunSpec
from ..store import folders, parts
from ..targets.base import TargetError, make_target
from ..workloads.base import KeptCounts, StepSpec
from .preflight import changed_keys, resolved_parameters
from . import unfinished
from .step import StepOutcome

PARTS = parts.PARTS


def save_step(run_dir: Path, o: StepOutcome, lat_rows: list[dict], driver_rows: list[dict],
              hw_frames: list, keys: dict | None = None) -> None:
    """What a rerun keeps of a finished step (``keys``: the insert counter after it); its
    hw rows, which the hw table is made of."""
    folder = Path(run_dir) / PARTS
    folder.mkdir(exist_ok=True)
    name = o.step.name
    if hw_frames:
        folders.write_table(folder, f"{name}.hw", schema.conform_hw(pd.concat(hw_frames, ignore_index=True)))
    record = {"step": name, "started": o.started.isoformat(), "ended": o.ended.isoformat(),
              "secs": o.secs, "ops": o.ops, "errors": o.errors, "failed": o.failed,
              "status": o.status, "error": o.error, "reconnects": o.reconnects,
              "outage_s": o.outage_s, "latency": lat_rows, "drivers": driver_rows,
              "keys": keys}
    folders.write_text(folder / f"{name}.json", json.dumps(record, default=_jsonable))


def _jsonable(v):
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if v is pd.NA or v is None:
        return None
    return int(v) if isinstance(v, np.integer) else float(v)


def hw_table(run_dir: Path, more: list) -> pd.DataFrame | None:
    """The run's hw rows: each finished step's from ``.steps/`` in the order they ran,
    then ``more`` (a step's that did not finish)."""
    frames = [f for f in [*(pd.read_parquet(p) for p in parts.hw_parts(run_dir)), *more] if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else None


def drop_parts(run_dir: Path) -> None:
    """A run that ended ok needs no resumption: its parts are in its tables."""
    shutil.rmtree(Path(run_dir) / PARTS, ignore_errors=True)


@dataclass
class Resume:
    """What a rerun keeps of an unfinished run: its meta and finished steps."""

    run_dir: Path
    meta: schema.RunMeta
    kept: list[str]                      # the finished steps, in order
    steps_rows: list[dict]
    records: list[dict]                  # .steps/<step>.json of each kept step
    unfinished: dict[str, int] = field(default_factory=dict)   # op -> at most, the step not finished

    @property
    def load_row(self) -> dict | None:
        return next((r for r in self.steps_rows if r["phase"] == "load"), None)


def plan_resume(exp: Experiment, spec: RunSpec, run_dir: Path, steps: list[StepSpec],
                meta, workload=None) -> Resume | str:
    """What a rerun of ``run_dir`` would keep, or why it keeps nothing (one line). Every
    step kept (killed in the final write-out): the rerun writes the run's tables only."""
    if not meta.get("planned"):
        return "its meta.json cannot be read"
    if list(meta.get("planned") or []) != [s.name for s in steps]:
        return "it planned other steps"
    if meta.get("seed_rule") != seeds.RULE:   # its remaining steps' requests would differ
        return "its requests were drawn by another seed rule (an older benchlib)"
    if changed := changed_keys(meta.get("parameters") or {}, resolved_parameters(exp)):
        return f"its parameters changed ({', '.join(changed[:3])}{' …' if len(changed) > 3 else ''})"
    try:
        table = folders.read_table(run_dir, "steps")
    except folders.ResultsError as e:
        return str(e)
    done = {r["step"]: r for r in table.to_dict("records") if r["status"] == "ok"}
    kept = []
    for s in steps:
        if s.name not in done or not (run_dir / PARTS / f"{s.name}.json").exists():
            break
        kept.append(s.name)
    if not kept:
        return "no step of it finished"
    records = [json.loads((run_dir / PARTS / f"{n}.json").read_text()) for n in kept]
    nxt = steps[len(kept)] if len(kept) < len(steps) else None
    ops = (workload.defined_ops(nxt) if workload is not None and nxt is not None else None) or ()
    return Resume(run_dir, folders.to_run_meta(meta, run_dir), kept, [done[n] for n in kept], records,
                  unfinished.unfinished_ops(run_dir, steps, nxt.name, ops) if nxt else {})


def check_loaded(workload, spec: RunSpec, data_dir: Path, res: Resume, steps: list[StepSpec]) -> str | None:
    """Why the loaded database cannot be trusted (one line), or None: each loaded table is
    there holding what the kept steps left (``Workload.loaded_rows``)."""
    load = res.load_row
    if load is None:
        return None     # no load step (load.skip): the database is the user's
    kept = kept_counts(res, steps)
    target = make_target(spec.target.name, spec.target.url, spec.target.options, data_dir)
    if hasattr(target, "set_run_dir"):
        target.set_run_dir(res.run_dir)
    try:
        reach(target, spec)
        tables = workload.loaded_rows(target, kept)
    except TargetError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever it is, the load cannot be trusted
        return f"its loaded table cannot be counted ({_first_line(e)})"
    finally:
        try:
            target.stop()
        except Exception:  # noqa: BLE001
            pass
    if tables is None:
        return "the workload cannot count its loaded rows"
    return next((why for t in tables if (why := t.why_not())), None)


def reach(target, spec: RunSpec) -> None:
    """The target started and answering; else TargetError (one line): a server that is
    down says nothing about its tables, so the run folder stays as it is, to resume."""
    try:
        target.start()
        conn = target.connect()
        try:
            if callable(getattr(conn, "ping", None)):
                conn.ping()     # Redis connects on its first command
        finally:
            conn.close()
    except Exception as e:  # noqa: BLE001 - whatever it is, the server cannot be asked
        raise TargetError(f"{spec.run_id}: target {spec.target.name} cannot be reached "
                          f"({_first_line(e)}); nothing ran, its run folder is kept: run the "
                          "experiment again once it answers") from None


def _first_line(e: BaseException) -> str:
    first = str(e).strip().splitlines()
    return first[0] if first else type(e).__name__


def kept_counts(res: Resume, steps: list[StepSpec]) -> KeptCounts:
    """What the kept steps did (the load's count per op, the kept loops' per op and
    status) and at most what the step after them did (:func:`.unfinished.unfinished_ops`)."""
    by_name = {s.name: s for s in steps}
    load: dict[str, int] = {}
    runs: dict[str, dict[str, int]] = {}
    for rec in res.records:
        phase = by_name[rec["step"]].phase
        for r in rec["latency"]:
            if phase == "load":   # a batch that keeps its latency counts its rows as units
                load[r["op"]] = load.get(r["op"], 0) + int(r["units"] if "units" in r else r.get("count") or 0)
            elif phase == "run":
                per = runs.setdefault(r["op"], {})
                for status, n in (r.get("returns") or {}).items():
                    per[status] = per.get(status, 0) + int(n)
    nxt = next((s for s in steps if s.name not in set(res.kept)), None)
    return KeptCounts(int(res.load_row["ops"]), load, runs, res.unfinished,
                      nxt.loop if nxt is not None and nxt.phase == "run" else None)


def set_aside(run_dir: Path, database_files: list[Path] = ()) -> None:
    """The run folder moved to ``.attempts/``, without its database's files: a record of
    the attempt, not a copy of its data (a disk it filled is free again for the rerun)."""
    for f in database_files:
        Path(f).unlink(missing_ok=True)
    attempts = run_dir.parent / ".attempts"
    attempts.mkdir(exist_ok=True)
    shutil.move(str(run_dir), attempts / f"{run_dir.name}-{int(time.time())}")


def resumed_meta(res: Resume) -> schema.RunMeta:
    """The old meta, running again in this process, its resumptions one longer."""
    meta, planned = res.meta, list(res.meta.get("planned") or [])
    remaining = planned[len(res.kept):]
    meta.update(status="running", error=None, ended=None, pid=os.getpid(),
                hostname=socket.gethostname())
    meta["resumptions"] = list(meta.get("resumptions") or []) + [
        {"at": folders.utcnow().isoformat(), "pid": os.getpid(), "kept": res.kept,
         "from": remaining[0] if remaining else None}]
    return meta


def restore(run, res: Resume, steps: list[StepSpec], insert_ops: tuple[str, ...]) -> list[StepSpec]:
    """The kept steps back into ``run`` (rows, outcomes); the steps left. ``insert_ops``:
    the workload's ops that claim a key from the run's counter (``Workload.insert_ops``)."""
    by_name = {s.name: s for s in steps}
    for rec in res.records:
        o = StepOutcome(by_name[rec["step"]], pd.Timestamp(rec["started"]).to_pydatetime(),
                        pd.Timestamp(rec["ended"]).to_pydatetime(), rec["secs"], rec["ops"],
                        rec["errors"], rec["status"], rec["error"], failed=rec["failed"],
                        reconnects=rec.get("reconnects", 0), outage_s=rec.get("outage_s", 0.0),
                        latency_rows=[{k: v for k, v in r.items() if k not in ("run_id", "step")}
                                      for r in rec["latency"]])
        run.outcomes.append(o)
        run.lat_rows.extend(rec["latency"])
        run.driver_rows.extend(rec["drivers"])
    run.steps_rows.extend(res.steps_rows)
    run.key_state = ks = unfinished.key_state(res.records, res.unfinished, steps, insert_ops)
    if ks.get("next") is not None and run.meta.get("resumptions"):   # a run with an insert counter
        # the keys skipped, a hole (some the killed loop inserted, none read): what the
        # table holds can be checked against the counter (tests/test_resume_moments.py)
        run.meta["resumptions"][-1]["keys_skipped"] = [ks["next"], ks["next"] + ks["skip"]]
    return [s for s in steps if s.name not in set(res.kept)]


def decide(exp: Experiment, spec: RunSpec, run_dir: Path, data_dir: Path, meta, out) -> Resume | None:
    """What a rerun of an unfinished run keeps (its folder readied: the unfinished steps'
    parts and seconds dropped), or None (one line why): the whole run again."""
    workload = exp.workload_class()({**exp.workload_properties(), **spec.workload_point})
    steps = workload.steps(exp, spec)
    res = plan_resume(exp, spec, run_dir, steps, meta, workload)
    left = [] if isinstance(res, str) else [s.name for s in steps if s.name not in set(res.kept)]
    why = res if isinstance(res, str) else None
    if why is None and left:   # every step finished: nothing runs on the database (write-out only)
        why = check_loaded(workload, spec, data_dir, res, steps)
    if why is not None:
        print(f"rerun  {spec.run_id}: not resumed: {why}; the whole run again", file=out, flush=True)
        return None
    for p in (run_dir / PARTS).glob("*"):   # what the unfinished steps left
        if not any(p.name.startswith(f"{n}.") for n in res.kept):
            p.unlink()
    keep_intervals(run_dir, set(res.kept))
    print(f"resume {spec.run_id}: keeps {', '.join(res.kept)}; "
          + (f"runs {', '.join(left)}" if left else "writes the run's tables"), file=out, flush=True)
    return res


def keep_intervals(run_dir: Path, kept: set[str]) -> None:
    """The interval log rewritten with the kept steps' seconds only (from the table a
    finished-but-failed run wrote, or the log a killed one left), a batch at a time."""
    import pyarrow.parquet as pq
    log, table = run_dir / folders.INTERVAL_LOG, run_dir / "intervals.parquet"
    tmp = run_dir / f".{folders.INTERVAL_LOG}.kept"
    with open_private(tmp, "w") as out:
        if table.exists():
            for batch in pq.ParquetFile(table).iter_batches(batch_size=50_000):
                df = batch.to_pandas()
                df = df[df["step"].isin(kept)]
                if len(df):
                    out.write(json.dumps(df.to_dict("records"), default=_jsonable) + "\n")
        else:
            for line in folders.interval_log_lines(log):
                if rows := [r for r in line if r.get("step") in kept]:
                    out.write(json.dumps(rows) + "\n")
    os.replace(tmp, log)
    table.unlink(missing_ok=True)
