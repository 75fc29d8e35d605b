"""Load once, copy per configuration: a target that starts its own server from a data
directory (a provisioned PostgreSQL) keeps the data a run's load made, and the runs after
it that would load the same data start from a copy of it instead of loading again.

The same data: the same experiment, workload and properties (the run's workload point
included), the same load (its processes, its target rate, its batch size) and seed; the
target adds its server version (its on-disk format), so a sweep of versions × settings
loads once per version. Repetitions, client threads, run-loop settings and the workload's
``load_free_properties`` (YCSB's ``mix``) do not change what is loaded. The first run of a key runs its load (and index) steps, then the target
stops its server, keeps the stopped data directory, and starts it again on it: its run
loops, like every later run's, begin on a freshly started server over the same files. The
copy's seconds are in meta.json (``data_copy``), in no step. ``load.fresh: true`` loads
in every run.

A target takes part by two methods: ``use_loaded(key)`` (before it starts: True when it
will start from that key's kept data) and ``keep_loaded()`` (after the load steps: the
server stopped, its data kept, started again; what it did, for meta).
"""
from __future__ import annotations

import hashlib
import json

from ..params import Experiment, RunSpec
from ..workloads.base import StepSpec


def data_key(exp: Experiment, spec: RunSpec, props: dict, target) -> str | None:
    """The key of the data this run's load makes; None when the target keeps no data or
    the experiment asks for a load in every run (or none: ``load.skip``)."""
    if not hasattr(target, "use_loaded") or exp.load.fresh or exp.load.skip:
        return None
    free = set(exp.workload_class().load_free_properties)   # a YCSB mix: the same load
    what = {"workload": exp.workload,
            "properties": {k: str(v) for k, v in sorted(props.items()) if k not in free},
            "load": exp.load.model_dump(mode="json", exclude={"processes", "target_factors", "replace"}),
            "load_processes": spec.load_processes, "load_target": spec.load_target_ops_per_s,
            "seed": exp.seed, "index": exp.index.model_dump(mode="json")}
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{exp.experiment}/{digest}"


def split(steps: list[StepSpec]) -> tuple[list[StepSpec], list[StepSpec]]:
    """The steps that make the data (every step before the first run loop) and the rest."""
    first = next((i for i, s in enumerate(steps) if s.phase == "run"), len(steps))
    return steps[:first], steps[first:]
