"""The rules of an experiment's matrix and its numbers, one place for each.

A number is finite (``params.Strict``: ``allow_inf_nan=False``) and a duration or a rate
is bounded (:data:`MAX_SECONDS`, :data:`MAX_RATE`): ``run.loop_secs: inf`` or
``run.target_base: 1e308`` is refused in one line, not met as an overflow in a run. A
list that makes a matrix (``run.threads``, the target factors, the loader processes)
holds each value once, and a plan holds each run id once: ``run.threads: [1, 1]`` would
otherwise plan one run folder twice (``--force`` running it twice, "1/1 runs ok")."""
from __future__ import annotations

import itertools
import re
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


# a target's own axes: the server's version and its settings (a provisioned target's
# options); cpus, also given on the target, is the same in every configuration
TARGET_AXES = ("version", "settings", "cpus")


def _axis(where: str, value) -> list:
    if not isinstance(value, list):
        return [value]
    if not value:
        raise ValueError(f"{where}: an empty list (give at least one value)")
    try:
        return distinct(value)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def _name_part(key: str, value) -> str:
    text = str(value).lower() if isinstance(value, bool) else str(value)   # YAML's yes/no: true/false
    return f"{key}{re.sub(r'[^A-Za-z0-9_.]', '_', text)}"


def target_configurations(targets: Any) -> Any:
    """A target's ``version`` and ``settings`` (given on the target or in its options)
    moved into its options; where one is a list (``version: [15, 16]``, ``settings:
    {shared_buffers: [128MB, 1GB]}``) the target becomes one target per combination,
    each a DBMS configuration of its own (its own server, its own point), named
    ``<name>-v16-shared_buffers1GB`` by the values that vary; a target without a list is
    left as it is. What is not a list of mappings is validation's to refuse."""
    if not isinstance(targets, list):
        return targets
    out = []
    for t in targets:
        if not isinstance(t, dict) or not isinstance(t.get("options", {}), dict):
            out.append(t)
            continue
        t, opts = dict(t), dict(t.get("options") or {})
        for key in TARGET_AXES:
            if key in t:
                if key in opts:
                    raise ValueError(f"targets: {t.get('name')}: {key} given twice (on the target "
                                     "and in its options)")
                opts[key] = t.pop(key)
        if opts:
            t["options"] = opts
        axes: list[tuple[str, str, list]] = []   # (axis, its part of the name, values)
        if isinstance(opts.get("version"), list):
            axes.append(("version", "v", _axis(f"targets: {t.get('name')}: version", opts["version"])))
        settings = opts.get("settings")
        if isinstance(settings, dict):
            axes += [(f"settings.{k}", str(k), _axis(f"targets: {t.get('name')}: settings: {k}", v))
                     for k, v in settings.items() if isinstance(v, list)]
        if not axes:
            out.append(t)
            continue
        for combo in itertools.product(*(values for _, _, values in axes)):
            chosen = {axis: v for (axis, _, _), v in zip(axes, combo)}
            o = dict(opts)
            if "version" in chosen:
                o["version"] = chosen["version"]
            if isinstance(settings, dict):
                o["settings"] = {k: chosen.get(f"settings.{k}", v) for k, v in settings.items()}
            name = "-".join([str(t.get("name")), *(_name_part(part, v) for (_, part, _), v in zip(axes, combo))])
            out.append({**t, "name": name, "options": o})
    return out
