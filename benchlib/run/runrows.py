"""What one run keeps in its controller while its steps go by: the rows of its tables,
and no more than those need.

A long run (a day of one-hour loops) must not grow its controller beyond its tables
(issue 25). Per step the controller keeps its steps row, its latency rows (with their
encoded histograms and return counts: the latency table and the workloads' text
outputs are made of them), its drivers rows and, in the outcome, what the run's end
still reads (the driver path); the clients' own histograms and the hw frames are
dropped once the step's rows are written (:meth:`RunRows.add`). A step's summary
lines are made of that step's rows alone (:meth:`RunRows.tables` with ``step``).

Memory given back: arrow's default pool (mimalloc, which the parquet reader and
writer use whatever ``pa.set_memory_pool`` says) kept the pages of the steps' parquet
writes, 2 MB at a time; the controller asks it to give back what it does not use after
each step, and the C allocator likewise (:func:`give_back`; BENCHMARKS.md, "The cost
of length").
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import pyarrow as pa

from .. import schema
from ..measure import throughput
from ..store import folders
from . import resume
from .interval_log import IntervalLog
from .step import StepOutcome


def give_back() -> None:
    """What arrow's default pool and the C allocator hold unused, back to the system
    (mimalloc's collect, glibc's malloc_trim; elsewhere what the platform has)."""
    pa.default_memory_pool().release_unused()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass


def steps_row(run_id: str, o: StepOutcome, engine_in_clients: bool = False) -> dict:
    s = o.step
    row = {"run_id": run_id, "step": s.name, "phase": s.phase, "loop": s.loop, "pid": os.getpid(),
           "started": o.started, "ended": o.ended, "secs": o.secs, "ops": o.ops, "errors": o.errors,
           "failed": o.failed,
           "ops_per_s": throughput(o.ops, o.secs) if o.secs else None, "threads": s.threads,
           "processes": s.processes, "target_ops_per_s": s.target_ops_per_s, "status": o.status,
           "reconnects": o.reconnects, "outage_s": o.outage_s,
           # the client processes' own CPU over the step (getrusage), exact at any length
           "client_cpu_s": o.clients_sum("cpu_s")}
    if not engine_in_clients:   # the server's work over the step's window (hw/sampler.py)
        row.update(o.dbms_window)
    row.update(o.dbms_figures)   # the DBMS's own (RocksDB's compaction bytes …)
    if o.controller_cpu_s is not None:      # a step the controller ran itself
        row["client_cpu_s"] = 0.0
        if engine_in_clients:
            row["dbms_cpu_s"] = o.controller_cpu_s
        return row
    if engine_in_clients:  # SQLite: the DBMS is the clients, its memory theirs at the end
        rss, vsz = o.clients_sum("rss_bytes"), o.clients_sum("vsz_bytes")
        row.update(dbms_cpu_s=row["client_cpu_s"], dbms_rss_gb=rss / 2**30 if rss else None,
                   dbms_vsz_gb=vsz / 2**30 if vsz else None)
    return row


# what a step's latency rows carry for its text outputs and reruns, not latency columns
ROW_ONLY = ("returns", "units", "not_ok_hdr", "not_ok_intended_hdr")


def latency_df(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{k: v for k, v in r.items() if k not in ROW_ONLY} for r in rows]) if rows else None


def compact(o: StepOutcome) -> None:
    """What the run's end no longer needs of a step whose rows are written: the clients'
    histograms (merged into its latency rows) and its other hosts' hw frames (on disk)."""
    o.client_results = [replace(c, ops={}) for c in o.client_results]
    o.hw_frames = []


@dataclass
class RunRows:
    """What one run accumulates while its steps go by: the rows of its tables."""

    spec: object            # params.RunSpec
    run_dir: Path
    meta: schema.RunMeta
    log: IntervalLog
    steps_rows: list[dict] = field(default_factory=list)
    lat_rows: list[dict] = field(default_factory=list)
    hw_frames: list = field(default_factory=list)
    driver_rows: list[dict] = field(default_factory=list)
    outcomes: list[StepOutcome] = field(default_factory=list)
    engine_in_clients: bool = False
    key_state: dict | None = None   # a resumed run's insert counter: next key, holes (resume.restore)
    hw_done: int = 0        # hw_frames: the last step's only (the earlier ones' on disk) and these

    def add(self, o: StepOutcome, keys: dict | None = None) -> None:
        run_id = self.spec.run_id
        self.outcomes.append(o)
        self.steps_rows.append(steps_row(run_id, o, self.engine_in_clients))
        lat = [{"run_id": run_id, "step": o.step.name, **r} for r in o.latency_rows]
        drivers = [{"run_id": run_id, **r} for r in o.driver_rows]
        self.lat_rows.extend(lat)
        self.driver_rows.extend(drivers)
        self.hw_frames[:] = self.hw_frames[self.hw_done:] + [
            f.assign(run_id=run_id, step=o.step.name) for f in o.hw_frames if len(f)]
        self.hw_done = len(self.hw_frames)
        folders.write_table(self.run_dir, "steps", pd.DataFrame(self.steps_rows))
        folders.write_table(self.run_dir, "latency", latency_df(self.lat_rows))
        resume.save_step(self.run_dir, o, lat, drivers, self.hw_frames, keys)
        compact(o)

    def tables(self, step: str | None = None) -> dict:
        """The run's tables as they are now, as load_results would give them; with
        ``step``, its latency rows those of that step only (a step's summary lines)."""
        cnf = self.spec.target.name
        lat = [r for r in self.lat_rows if step is None or r["step"] == step]
        # meta rides along: the step lines' hw figures are those of its host (a Dask
        # worker host's rows are the drivers')
        return {"runs": pd.DataFrame([{"run_id": self.spec.run_id, "config": cnf, "meta": self.meta.to_dict()}]),
                "steps": pd.DataFrame(self.steps_rows).assign(config=cnf),
                "latency": (latency_df(lat) if lat  # a step of 0 ops has none
                            else schema.empty("latency")).assign(config=cnf),
                "hw": (pd.concat(self.hw_frames, ignore_index=True) if self.hw_frames
                       else schema.empty("hw")).assign(config=cnf)}
