"""ybio's bindings: one class per dialect, found through :data:`BINDINGS`.

A binding is one connection of the driver's own (``open(endpoint)``, ``conn``) and what
ybio does on it: ``calls(st, prepared)`` gives the run session's ``read(lo, hi)`` and
``update(lo, hi)`` (each returning the rows the statement counted), ``key(k)`` a key as
those calls take it, ``rows_data`` / ``insert_batch`` the load's batches, ``count(st)``.
In the controlling process its class gives the update statement (``update_sql``); the
rest of a dialect's part (types, table options, the load, the statistics) is the
target's dialect's (:mod:`benchlib.targets.sql`).

Every SQL dialect runs the generic binding (:mod:`.sql`: SQLite, MariaDB, a plugin's SQL
DBMS) unless it has its own: PostgreSQL's (its CTE, libpq's calls) runs a chunk of calls
at a time in C where that is built (:mod:`.postgres_native`, run.driver:
``native_missing``, ``open_native``). A target of another kind registered elsewhere
registers its own binding with ``BINDINGS.register(dialect, "module:Class")``.
"""
from __future__ import annotations

from ...bindings import Bindings, use_c_loop

BINDINGS = Bindings("ybio", {"postgres": f"{__name__}.postgres:PostgresYbio"},
                    sql=f"{__name__}.sql:SqlYbio")


def binding(dialect) -> type:
    """The binding class for a target's (or an endpoint's) dialect."""
    return BINDINGS.get(dialect)


def native_missing(dialect) -> str | None:
    """Why ybio's sessions cannot run in C on ``dialect`` (or its name; None: they can;
    run.driver)."""
    name = dialect if isinstance(dialect, str) else dialect.name
    if not BINDINGS.supports(dialect):
        return f"workload ybio does not run on dialect {name}"
    return BINDINGS.get(dialect).native_missing(name)


def open_session(endpoint, st, params, driver: str = "python"):
    """A run session's connected binding: with ``driver`` c or auto, the one whose calls
    run in C where the dialect has it built (prepared statements only)."""
    cls = binding(endpoint.dialect)
    missing = cls.native_missing(endpoint.dialect.name) if driver != "python" else None
    if missing is None and driver != "python" and not params.prepared:
        missing = "ybio's C loop sends prepared statements only (prepared: false runs in Python)"
    if use_c_loop(driver, missing):
        return cls.open_native(endpoint, st)
    return cls.open(endpoint)
