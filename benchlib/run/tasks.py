"""What each client process of a step is given: its share of the step's threads, their
global indexes and their seeds (each thread's own stream, :mod:`..seeds`)."""
from __future__ import annotations

from .. import seeds
from ..workloads.base import StepSpec, WorkloadSpec


def split(n: int, parts: int) -> list[int]:
    """``n`` threads among ``parts`` processes, the remainder to the first."""
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def step_tasks(step: StepSpec, workload: WorkloadSpec, endpoint, seed: int, batch_size: int = 1000,
               repetition: int = 1) -> list[dict]:
    """One task per client process, the step's threads split among them: each knows its
    threads' global indexes (``thread_offset``) of ``step.threads``, from which the
    workload splits the keyspace and the pacing splits the target — wherever it runs —
    and their seeds (``seeds``: each thread's stream of the run's ``seed``, this step
    and ``repetition``, :func:`..seeds.client_seed`; of the step's own master seed
    ``step.seed`` where the workload names one, a Java long taken as its 64 bits)."""
    tasks, offset = [], 0
    seed = seed if step.seed is None else step.seed & ((1 << 64) - 1)
    for p, nthreads in enumerate(split(step.threads, step.processes)):
        own = [seeds.client_seed(seed, step.name, g, repetition) for g in range(offset, offset + nthreads)]
        tasks.append({"proc_index": p, "step": step, "workload": vars(workload) | {},
                      "endpoint": endpoint, "threads": nthreads, "thread_offset": offset,
                      "seeds": own, "batch_size": batch_size})
        offset += nthreads
    return tasks
