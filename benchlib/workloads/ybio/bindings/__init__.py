"""ybio's bindings: one class per dialect, found through :data:`BINDINGS`.

A binding is one connection of the driver's own (``open(endpoint)``, ``conn``) and what
ybio does on it: ``calls(st, prepared)`` gives the run session's ``read(lo, hi)`` and
``update(lo, hi)`` (each returning the rows the statement counted), ``key(k)`` a key as
those calls take it, ``rows_data`` / ``insert_batch`` the load's batches, ``count(st)``.
In the controlling process its class gives the statements' dialect parts (filler type,
table options, the update, the after-load ``analyze``) through :mod:`..sql`.

postgres, sqlite and mysql subclass the DB-API code they share (:mod:`.sql`). A target
registered elsewhere (a plugin, the tests' ``toy``) registers its own binding with
``BINDINGS.register(dialect, "module:Class")``.
"""
from __future__ import annotations

from ...bindings import Bindings

BINDINGS = Bindings("ybio", {
    d: f"{__name__}.{d}:{cls}" for d, cls in (
        ("postgres", "PostgresYbio"), ("sqlite", "SqliteYbio"), ("mysql", "MysqlYbio"))})


def binding(dialect) -> type:
    """The binding class for a target's (or an endpoint's) dialect."""
    return BINDINGS.get(dialect.name)
