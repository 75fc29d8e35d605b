"""The executor registry: an executor's name (the experiment's ``executor:``) → its class.

A way to start a step's client processes is a class with ``open(exp)`` (a classmethod:
the executor, started, or ParameterError in one line), ``start_clients(tasks)``,
``hosts()`` and ``close()`` (``run/executors.LocalExecutor``), and one :func:`register`
line below (or a call from a plugin or a test module). Names are strings here, so that
params (a lower layer) validates ``executor:`` without importing any executor.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class ExecutorRef:
    ref: str | type                 # "module:Class" or the class
    requires: str | None = None     # a module it needs (an optional extra), checked first
    install: str = ""               # what it is and how to get it, said when it is missing


_EXECUTORS: dict[str, ExecutorRef] = {}
_DEFAULT: list[str] = []


def register(name: str, ref: str | type, *, requires: str | None = None, install: str = "",
             default: bool = False) -> None:
    """Make ``name`` an executor: ``ref`` is ``"module:Class"`` or the class itself."""
    _EXECUTORS[name] = ExecutorRef(ref, requires, install)
    if default:
        _DEFAULT[:] = [name]


register("local", "benchlib.run.executors:LocalExecutor", default=True)
register("dask", "benchlib.run.dask_executor:DaskExecutor", requires="distributed",
         install="Dask distributed: pip install 'benchlib[dask]'")


def names() -> list[str]:
    return list(_EXECUTORS)


def default() -> str:
    """The executor an experiment that names none uses."""
    return _DEFAULT[0]


def check(name: str) -> str:
    """``name`` if it is an executor; ValueError naming the known ones otherwise."""
    if name not in _EXECUTORS:
        raise ValueError(f"unknown executor {name!r} (known: {', '.join(names())})")
    return name


def executor_class(name: str) -> type:
    """The class of executor ``name``; ValueError (one line) when it is unknown or what it
    needs is not installed."""
    entry = _EXECUTORS[check(name)]
    if entry.requires and importlib.util.find_spec(entry.requires) is None:
        raise ValueError(f"executor: {name} needs {entry.install or entry.requires}")
    if isinstance(entry.ref, str):
        mod, _, attr = entry.ref.partition(":")
        cls = getattr(importlib.import_module(mod), attr)
        _EXECUTORS[name] = ExecutorRef(cls, entry.requires, entry.install)
        return cls
    return entry.ref
