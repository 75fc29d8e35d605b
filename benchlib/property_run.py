"""A tool's property file run as it is (``benchlib run workloada``, like ``bin/ycsb run … -P
workloada``): the experiment it stands for, its threads, target rate and time limit from
the file's own keys (the workload that recognizes it says which key holds the threads)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .params import Experiment, ParameterError, apply_overrides, target_kind_safe, validate
from .registries.targets import embedded_names
from .registries import workloads as workload_registry
from .workloads.properties_file import PropertyFileError


def experiment_from_property_file(path: str | Path, target: str, threads: int | None,
                                  overrides: list[str] | None = None,
                                  workload: str | None = None) -> Experiment:
    """A YCSB user's workload file run as it is, like ``bin/ycsb run … -P workloada``;
    or another workload's config that its class recognizes (a LinkBench config)."""
    from .workloads.properties_file import read_property_file
    path = Path(path)
    try:
        props = read_property_file(path)
    except FileNotFoundError:
        raise ParameterError(f"{path}: no such file") from None
    except PropertyFileError as e:
        raise ParameterError(str(e)) from None
    guessed = workload is None
    workload = workload or workload_registry.recognize(props) or workload_registry.default()
    try:
        cls = workload_registry.workload_class(workload)
        key, as_property = cls.threads_property, cls.threads_from_property
    except ValueError:
        key, as_property = "threadcount", False   # an unknown workload is reported by validate below
    given = _overridden(overrides or [], key)   # -p requesters=2 is --threads 2
    named = threads is not None or bool(given) or key in props
    if threads is not None and given and _number(path, given, key, int) != threads:
        # two counts of the same threads: the run would say one and run the other
        raise ParameterError(f"{path}: --threads {threads} and -p {key}={str(given[key])[:20]}: "
                             f"{key} is the run's threads; give one of them")
    if threads is None:   # a count given as 0 stays 0: validate refuses it, never a silent 1
        n = int(_number(path, {**props, **given}, key, int))
        threads = n if given or key in props else 1
    name = target if target in embedded_names() else target_kind_safe(target)
    data: dict[str, Any] = {
        "experiment": re.sub(r"[^A-Za-z0-9_.\-]", "_", path.stem),
        "workload": workload,
        "workload_file": str(path.resolve()),
        "targets": [{"name": name, "url": target}],
        "run": {"threads": [threads]},
    }
    if _number(path, props, "target", float) > 0:
        data["run"]["target_base"] = float(props["target"])
        data["run"]["target_factors"] = [1]
    if _number(path, props, "maxexecutiontime", float) > 0:
        data["run"]["loop_secs"] = float(props["maxexecutiontime"])
    data = apply_overrides(data, overrides or [])
    if as_property and named:
        data.setdefault("properties", {})[key] = threads   # the workload runs what the name says
    try:
        return validate(data, str(path))
    except ParameterError:
        from .registries.workloads import resembling
        if guessed and (hint := resembling(props)):
            raise ParameterError(f"{path}: {hint}") from None
        raise


def _overridden(overrides: list[str], key: str) -> dict:
    """The last ``-p key=…`` (``properties.key`` too) of the overrides, as {key: value}."""
    from .overrides import parse_override
    out: dict = {}
    for item in overrides:
        k, v = parse_override(item)
        if k.removeprefix("properties.") == key:
            out[key] = v
    return out


def _number(path: Path, props: dict, key: str, kind: type) -> float:
    """A property file's number (0 when absent); ParameterError naming a value that is none."""
    try:
        return kind(props.get(key) or 0)
    except ValueError:
        raise ParameterError(f"{path}: {key}: a number, got {str(props[key])[:40]!r}") from None
