"""Experiment parameters a workload decides: its threads when they are one of its
properties (LinkBench's ``requesters``) and the load modes it has (``load.mode``);
``params.validate`` applies them after the experiment's own checks."""
from __future__ import annotations

import difflib


def threads_as_property(exp):
    """A workload whose threads are a property (LinkBench's ``requesters``), set: the run's
    threads are that count — run.threads becomes it, or, given as another, ValueError — so
    that the run's name, meta, steps and log say the threads that ran."""
    cls = exp.workload_class()
    if not cls.threads_from_property:
        return exp
    key = cls.threads_property
    raw = exp.workload_properties().get(key)
    if raw is None or str(raw).strip() == "":
        return exp
    try:
        n = int(str(raw).strip())
    except ValueError:
        raise ValueError(f"{key}: a count of threads, got {str(raw)[:40]!r}") from None
    if n < 1:
        return exp   # the workload's own check names the property and what it takes
    if "threads" in exp.run.model_fields_set and exp.run.threads != [n]:
        raise ValueError(f"{key} = {n} and run.threads = {exp.run.threads}: {key} is the run's "
                         f"threads; give one of them (-p {key}=N or --threads N alone)")
    run = exp.run.model_copy(update={"threads": [n]})
    return exp.model_copy(update={"run": run})


def check_load_mode(exp) -> None:
    """``load.mode`` one of the workload's (``Workload.load_modes``); else ValueError."""
    modes = exp.workload_class().load_modes
    if exp.load.mode not in modes:
        near = difflib.get_close_matches(str(exp.load.mode).lower(), modes, n=1, cutoff=0.5)
        hint = f"did you mean {near[0]}? " if near and len(modes) > 1 else ""
        raise ValueError(f"load.mode {exp.load.mode}: {hint}{exp.workload} loads as {' or '.join(modes)}")
