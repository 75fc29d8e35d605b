"""The requests a step of a finished run asked for, made as the run made them: the run's
own seed and repetition from its meta.json, the step as the workload planned it, the
tasks and clients made by the runner's own functions (``run.tasks.step_tasks``,
``run.clients.workload_clients``), and the clients' ``next_chunk`` — no copy of the
derivation, no mock: on the run's own database."""
from __future__ import annotations

import json
from pathlib import Path

from benchlib.params import Experiment, plan
from benchlib.run.clients import workload_clients
from benchlib.run.tasks import step_tasks
from benchlib.targets.base import make_target
from benchlib.workloads.base import WorkloadSpec
from benchlib.registries.workloads import ref_of


def first_requests(exp: Experiment, run_dir: Path, step_name: str, key, n: int = 1000,
                   client: int = 0) -> list:
    """``key(code, args)`` of the first ``n`` requests of ``client`` in ``step_name``."""
    meta = json.loads((Path(run_dir) / "meta.json").read_text())
    spec = next(s for s in plan(exp) if s.run_id == meta["run_id"])
    props = {**exp.workload_properties(), **spec.workload_point}
    workload = exp.workload_class()(props)
    step = next(s for s in workload.steps(exp, spec) if s.name == step_name)
    target = make_target(spec.target.name, spec.target.url, spec.target.options, Path(run_dir).parent.parent)
    if hasattr(target, "set_run_dir"):
        target.set_run_dir(run_dir)
    target.start()
    try:
        tasks = step_tasks(step, WorkloadSpec(ref_of(exp.workload), workload.properties),
                           target.endpoint(), meta["seed"], exp.load.batch_size, meta["repetition"])
        task = next(t for t in tasks if t["thread_offset"] <= client < t["thread_offset"] + t["threads"])
        clients = workload_clients(task, step)
        try:
            c, out = clients[client - task["thread_offset"]], []
            while len(out) < n:
                chunk = c.next_chunk(n - len(out))
                out += [key(code, args) for code, args in zip(chunk.codes, chunk.args)]
            return out[:n]
        finally:
            for c in clients:
                c.close()
    finally:
        target.stop()


def shared(a: list, b: list) -> float:
    """The share of positions at which two request streams ask for the same thing."""
    return sum(x == y for x, y in zip(a, b)) / max(min(len(a), len(b)), 1)
