"""The executor registry: an executor's name (the experiment's ``executor:``) → its class.

A way to start a step's client processes is a class with ``open(exp)`` (a classmethod:
the executor, started, or ParameterError in one line), ``start_clients(tasks)``,
``hosts()`` and ``close()`` (``run/executors.LocalExecutor``), and one :func:`register`
line below (or a call from a plugin or a test module). Names are strings here, so that
params (a lower layer) validates ``executor:`` without importing any executor.
"""
from __future__ import annotations

import importlib.util

from .core import Registry, UnknownName

EXECUTORS = Registry("executor")
HOLDS = "benchlib.run"           # where its entries live (tests/test_layers.py: none above it)
# what imports an entry (tests/test_layers.py: whoever calls one sits on HOLDS' layer or above)
LOADERS = ("executor_class",)


def register(name: str, ref: str | type, *, requires: str | None = None, install: str = "",
             default: bool = False) -> None:
    """Make ``name`` an executor: ``ref`` is ``"module:Class"`` or the class itself;
    ``requires``: a module it needs (an optional extra), checked first; ``install``: what
    it is and how to get it, said when it is missing."""
    EXECUTORS.register(name, ref, default=default, requires=requires, install=install)


register("local", "benchlib.run.executors:LocalExecutor", default=True)
register("dask", "benchlib.run.dask_executor:DaskExecutor", requires="distributed",
         install="Dask distributed: pip install 'benchlib[dask]'")

names = EXECUTORS.names
default = EXECUTORS.default
check = EXECUTORS.check


def executor_class(name: str) -> type:
    """The class of executor ``name``; :class:`UnknownName` when it is unknown, ValueError
    (one line) when what it needs is not installed."""
    facts = EXECUTORS.facts(name)
    if facts["requires"] and importlib.util.find_spec(facts["requires"]) is None:
        raise ValueError(f"executor: {name} needs {facts['install'] or facts['requires']}")
    return EXECUTORS.get(name)


__all__ = ["EXECUTORS", "UnknownName", "check", "default", "executor_class", "names", "register"]
