"""The workload registry: a workload's name → its class.

Only a workload's own folder and this registry name it (``tests/test_names.py`` holds
that): params validates ``workload:`` and its properties through here, the runner asks
the class for its steps, clients and text outputs, the CLI offers the names registered
here, summaries and plots reach its own tables and plots through :func:`own_module`. A new workload is a folder in ``workloads/``
and one :func:`register` line below (or a call from a plugin or a test module).

A name may also be given as ``"package.module:Class"`` in an experiment YAML; client
processes always build their workload from such a reference (:func:`ref_of`), so a
workload registered at run time (a test's toy) reaches spawned clients too.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ..targets.registry import import_ref

_WORKLOADS: dict[str, str | type] = {}   # name -> "module:Class" or the class
_DEFAULT: list[str] = []                  # the workload of an experiment that names none


def register(name: str, ref: str | type, *, default: bool = False) -> None:
    """Make ``name`` a workload: ``ref`` is ``"module:Class"`` or the class itself;
    ``default``: the workload of an experiment (or a property file) that names none."""
    _WORKLOADS[name] = ref
    if default:
        _DEFAULT[:] = [name]


register("ycsb", "benchlib.workloads.ycsb:YcsbWorkload", default=True)
register("linkbench", "benchlib.workloads.linkbench:LinkBenchWorkload")
register("ybio", "benchlib.workloads.ybio:YbioWorkload")
register("kv", "benchlib.workloads.kv:KvWorkload")


def names() -> list[str]:
    return list(_WORKLOADS)


def default() -> str:
    return _DEFAULT[0]


def workload_class(name: str) -> type:
    """The class of a registered name or a ``module:Class`` reference; ValueError
    naming the known workloads otherwise."""
    ref = _WORKLOADS.get(name, name if ":" in name else None)
    if ref is None:
        raise ValueError(f"unknown workload {name!r} (known: {', '.join(names())})")
    if isinstance(ref, str):
        try:
            ref = import_ref(ref)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"workload {name!r}: cannot import {ref} ({e})") from None
        if name in _WORKLOADS:
            _WORKLOADS[name] = ref
    return ref


OWN_MODULES = ("summary_tables", "plots", "interactive_plots")   # Workload's hooks


def own_module(name: str, what: str) -> ModuleType:
    """Workload ``name``'s own module ``what`` (one of :data:`OWN_MODULES`: its
    ``Workload.summary_tables``, ``plots``, ``interactive_plots``), imported by the layer
    that asks; ValueError in one line when it has none."""
    ref = getattr(workload_class(name), what)
    if not ref:
        raise ValueError(f"workload {name!r} has no {what.replace('_', ' ')} of its own")
    return importlib.import_module(ref)


def ref_of(name: str) -> str:
    """A ``module:Class`` reference that a spawned client process can import."""
    cls = workload_class(name)
    return f"{cls.__module__}:{cls.__qualname__}"


def recognize(properties: dict) -> str | None:
    """The registered workload that claims a property file's properties, if any."""
    for name in names():
        try:
            if workload_class(name).recognizes(properties):
                return name
        except ValueError:
            continue
    return None


def resembling(properties: dict) -> str | None:
    """A line from the first workload that finds its own keys in a property file no
    workload claimed (LinkBench keys in a file without ``linkstore``)."""
    for name in names():
        try:
            line = workload_class(name).resembles(properties)
        except ValueError:
            continue
        if line:
            return line
    return None
