"""ybio's bindings: one class per dialect, found through :data:`BINDINGS`.

A binding is one connection of the driver's own (``open(endpoint)``, ``conn``) and what
ybio does on it: ``calls(st, prepared)`` gives the run session's ``read(lo, hi)`` and
``update(lo, hi)`` (each returning the rows the statement counted), ``key(k)`` a key as
those calls take it, ``rows_data`` / ``insert_batch`` the load's batches, ``count(st)``.
In the controlling process its class gives the statements' dialect parts (filler type,
table options, the update, the after-load ``analyze``) through :mod:`..sql`.

postgres, sqlite and mysql subclass the DB-API code they share (:mod:`.sql`); PostgreSQL's
sessions run a chunk of calls at a time in C where that is built (:mod:`.postgres_native`,
run.driver: ``native_missing``, ``open_native``). A target
registered elsewhere (a plugin, the tests' ``toy``) registers its own binding with
``BINDINGS.register(dialect, "module:Class")``.
"""
from __future__ import annotations

from ....targets.base import TargetError
from ...bindings import Bindings

BINDINGS = Bindings("ybio", {
    d: f"{__name__}.{d}:{cls}" for d, cls in (
        ("postgres", "PostgresYbio"), ("sqlite", "SqliteYbio"), ("mysql", "MysqlYbio"))})


def binding(dialect) -> type:
    """The binding class for a target's (or an endpoint's) dialect."""
    return BINDINGS.get(dialect.name)


def native_missing(dialect: str) -> str | None:
    """Why ybio's sessions cannot run in C on ``dialect`` (None: they can; run.driver)."""
    if not BINDINGS.supports(dialect):
        return f"workload ybio does not run on dialect {dialect}"
    return BINDINGS.get(dialect).native_missing(dialect)


def open_session(endpoint, st, params, driver: str = "python"):
    """A run session's connected binding: with ``driver`` c or auto, the one whose calls
    run in C where the dialect has it built (prepared statements only)."""
    cls = binding(endpoint.dialect)
    missing = cls.native_missing(endpoint.dialect.name) if driver != "python" else None
    if missing is None and driver != "python" and not params.prepared:
        missing = "ybio's C loop sends prepared statements only (prepared: false runs in Python)"
    if driver != "python" and missing is None:
        return cls.open_native(endpoint, st)
    if driver == "c":
        raise TargetError(f"run.driver c: {missing}")
    return cls.open(endpoint)
