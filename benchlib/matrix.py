"""The rules of an experiment's matrix and its numbers, one place for each.

A number is finite (``params.Strict``: ``allow_inf_nan=False``) and a duration or a rate
is bounded (:data:`MAX_SECONDS`, :data:`MAX_RATE`): ``run.loop_secs: inf`` or
``run.target_base: 1e308`` is refused in one line, not met as an overflow in a run. A
list that makes a matrix (``run.threads``, the target factors, the loader processes)
holds each value once, and a plan holds each run id once: ``run.threads: [1, 1]`` would
otherwise plan one run folder twice (``--force`` running it twice, "1/1 runs ok")."""
from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from .overrides import ParameterError

MAX_SECONDS = 30 * 86400    # a duration (a loop, a warm-up, an interval): at most 30 days
MAX_RATE = 1e9              # a rate in operations per second
MAX_FACTOR = 1000.0         # a target-throughput factor (× run.target_base)


def distinct(values: list) -> list:
    """A matrix list: each value once; ValueError naming the value given twice."""
    dup = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if dup is not None:
        raise ValueError(f"{dup!r} given twice: each value makes its own runs (repetitions: N "
                         "repeats a run)")
    return values


Factors = Annotated[list[Annotated[float, Field(ge=0, le=MAX_FACTOR)]], AfterValidator(distinct)]


def check_run_ids(runs: list[Any], source: str) -> list[Any]:
    """``runs`` (RunSpecs) when each run id is planned once; else ParameterError naming
    it (two factors that round to one target rate, a workload value given twice)."""
    twice = [rid for rid, n in Counter(r.run_id for r in runs).items() if n > 1]
    if twice:
        raise ParameterError(f"{source}: run {twice[0]} is planned {sum(r.run_id == twice[0] for r in runs)} "
                             "times: two values of the matrix make the same run (give distinct values; "
                             "repetitions: N repeats a run)")
    return runs
