"""The workload registry: a workload's name → its class.

Only a workload's own folder and the registries name it (``tests/test_names.py`` holds
that): params validates ``workload:`` and its properties through here, the runner asks
the class for its steps, clients and text outputs, the CLI offers the names registered
here, summaries and plots reach its own tables and plots through :func:`own_module`. A
new workload is a folder in ``workloads/`` and one :func:`register` line below (or a
call from a plugin or a test module).

A name may also be given as ``"package.module:Class"`` in an experiment YAML; client
processes always build their workload from such a reference (:func:`ref_of`), so a
workload registered at run time (a test's toy) reaches spawned clients too.
"""
from __future__ import annotations

from types import ModuleType

from .core import Registry, UnknownName, import_module, import_ref
from .core import ref_of as _ref_of

WORKLOADS = Registry("workload")
HOLDS = "benchlib.workloads"     # where its entries live (tests/test_layers.py: none above it)
# what imports an entry (tests/test_layers.py: whoever calls one sits on HOLDS' layer or above)
LOADERS = ("workload_class", "own_modules", "ref_of", "recognize", "resembling")


def register(name: str, ref: str | type, *, default: bool = False) -> None:
    """Make ``name`` a workload: ``ref`` is ``"module:Class"`` or the class itself;
    ``default``: the workload of an experiment (or a property file) that names none."""
    WORKLOADS.register(name, ref, default=default)


register("ycsb", "benchlib.workloads.ycsb:YcsbWorkload", default=True)
register("linkbench", "benchlib.workloads.linkbench:LinkBenchWorkload")
register("ybio", "benchlib.workloads.ybio:YbioWorkload")
register("kv", "benchlib.workloads.kv:KvWorkload")

names = WORKLOADS.names
default = WORKLOADS.default
unregister = WORKLOADS.unregister


def workload_class(name: str) -> type:
    """The class of a registered name or a ``module:Class`` reference;
    :class:`UnknownName` naming the known workloads otherwise."""
    if name not in WORKLOADS and ":" in name:
        try:
            return import_ref(name)
        except (ImportError, AttributeError) as e:
            raise UnknownName("workload", name, names(),
                              f"workload {name!r}: cannot import it ({e})") from None
    try:
        return WORKLOADS.get(name)
    except (ImportError, AttributeError) as e:
        raise UnknownName("workload", name, names(),
                          f"workload {name!r}: cannot import {WORKLOADS.entry(name).ref} ({e})") from None


# a workload's own modules (its Workload hooks, module names as strings) and the layer
# that asks for each: the module sits on that layer (tests/test_layers.py reads this)
OWN_MODULES = {"summary_tables": "summaries", "plots": "plots", "interactive_plots": "plots"}


def own_module(name: str, what: str) -> ModuleType:
    """Workload ``name``'s own module ``what`` (one of :data:`OWN_MODULES`: its
    ``Workload.summary_tables``, ``plots``, ``interactive_plots``), imported by the layer
    that asks; ValueError in one line when it has none."""
    ref = getattr(workload_class(name), what)
    if not ref:
        raise ValueError(f"workload {name!r} has no {what.replace('_', ' ')} of its own")
    return import_module(ref)


def own_modules() -> dict[str, str]:
    """Every registered workload's own modules: module name → the layer that asks for it."""
    out = {}
    for name in names():
        cls = workload_class(name)
        out.update({getattr(cls, what): layer for what, layer in OWN_MODULES.items()
                    if getattr(cls, what)})
    return out


def ref_of(name: str) -> str:
    """A ``module:Class`` reference that a spawned client process can import."""
    return _ref_of(workload_class(name))


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
