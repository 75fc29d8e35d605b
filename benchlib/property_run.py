"""A tool's property file run as it is (``benchlib run workloada``, like ``bin/ycsb run … -P
workloada``): the experiment it stands for, its threads, target rate and time limit from
the file's own keys (the workload that recognizes it says which key holds the threads)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .params import Experiment, ParameterError, apply_overrides, target_kind_safe, validate
from .targets.registry import embedded_names
from .workloads import registry as workload_registry
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
        key = workload_registry.workload_class(workload).threads_property
    except ValueError:
        key = "threadcount"   # an unknown workload is reported by validate below
    threads = threads or int(_number(path, props, key, int) or 1)
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
    try:
        return validate(data, str(path))
    except ParameterError:
        from .workloads.registry import resembling
        if guessed and (hint := resembling(props)):
            raise ParameterError(f"{path}: {hint}") from None
        raise


def _number(path: Path, props: dict, key: str, kind: type) -> float:
    """A property file's number (0 when absent); ParameterError naming a value that is none."""
    try:
        return kind(props.get(key) or 0)
    except ValueError:
        raise ParameterError(f"{path}: {key}: a number, got {str(props[key])[:40]!r}") from None
