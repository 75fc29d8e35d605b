"""A toy target registered from the tests, as a plugin would register one: SQLite's file
under another name and another dialect, ``toy``, so that no workload's own bindings
apply to it. Each other module of this package registers one workload's binding for
the ``toy`` dialect; a workload without one must refuse the target in one line.

Importing this package registers everything; client processes import it through the
target's reference (``Endpoint.ref``), so they see the same registrations.
"""
from __future__ import annotations

import importlib
import pkgutil

from benchlib.registries import targets as registry
from benchlib.targets.dialect import Dialect
from benchlib.targets.sqlite import SqliteTarget

DIALECT = Dialect("toy", placeholder="?", engine_in_clients=True)


class ToyTarget(SqliteTarget):
    kind = "toy"
    dialect = DIALECT


registry.register("toy", ToyTarget, embedded=True)

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
