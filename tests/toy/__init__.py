"""A toy target registered from the tests, as a plugin would register one: SQLite's file
under another name and another dialect, ``toy``, so that no workload's own bindings
apply to it. It registers no binding at all: a SQL dialect (SQLite's services under
the name ``toy``) runs every workload through the workload's generic SQL binding
(issue 36); a dialect that is not SQL is refused in one line.

Importing this package registers it; client processes import it through the target's
reference (``Endpoint.ref``), so they see the same registration.
"""
from __future__ import annotations

from benchlib.registries import targets as registry
from benchlib.targets.sql.sqlite import SqliteDialect
from benchlib.targets.sqlite import SqliteTarget

DIALECT = SqliteDialect(name="toy")


class ToyTarget(SqliteTarget):
    kind = "toy"
    dialect = DIALECT


registry.register("toy", ToyTarget, embedded=True)
