"""YCSB's bindings: YCSB's DB interface (read, scan, update, insert, delete, insert_batch)
and its schema work, one module per dialect, found by the target's dialect name.

A target knows no workload: the workload asks :data:`BINDINGS` for the class of
``target.dialect.name`` (``endpoint.dialect.name`` in a client process). A class has
the schema work as classmethods on a connection from ``target.connect()``
(:meth:`YcsbBinding.create_table`, ``create_index``, ``after_load``), its instances are
connected bindings, one per client thread; where a dialect has a run loop in C
(``postgres_native`` over libpq, ``mysql_native`` over libmariadb) the class says whether it
is built (:meth:`YcsbBinding.native_missing`) and opens it (``open_native``).

Every SQL dialect without a file here runs :class:`.statements.SqlYcsb`, which speaks
through the target's dialect (SQLite's, a plugin's SQL DBMS); PostgreSQL's and MariaDB's
files add their drivers' fast paths and C loops. A target of another kind registered
from a plugin adds its line with ``BINDINGS.register(dialect, "module:Class")``; a
dialect without one (``redis``: no tables of fields there) is refused in one line
before anything runs.
"""
from __future__ import annotations

from ....schema import ERROR, NOT_FOUND, OK  # noqa: F401 - the bindings' statuses
from ...bindings import Bindings, use_c_loop

KEY_COLUMN = "ycsb_key"   # the primary key, as the JDBC binding names it
_HERE = __name__
BINDINGS = Bindings("ycsb", {
    "postgres": f"{_HERE}.postgres:PostgresYcsb",
    "mysql": f"{_HERE}.mysql:MysqlYcsb",
    "basic": f"{_HERE}.basic:BasicYcsb",
    "rocksdb": f"{_HERE}.rocksdb:RocksdbYcsb",
}, sql=f"{_HERE}.statements:SqlYcsb")


class YcsbBinding:
    """What every dialect's binding class answers; the schema work does nothing here
    (``basic`` has no database)."""

    bytes_args = False   # keys and values handed over as bytes (the workload encodes them)

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        """Why the run loop cannot run in C on ``dialect`` (None: it can; run.driver)."""
        return f"ycsb has no C loop for dialect {dialect}"

    @classmethod
    def open_native(cls, endpoint, cfg):
        """A connected binding with ``native(op_names)`` ops, a chunk run in C."""
        raise NotImplementedError

    @classmethod
    def create_table(cls, target, cfg) -> None:
        """Drop and create the table of ``cfg`` (table, field names) before the load."""

    @classmethod
    def create_index(cls, target, table: str, column: str) -> None:
        """The index step's index on ``column``."""

    @classmethod
    def after_load(cls, target, table: str) -> None:
        """After a load that ended ok (fresh statistics)."""

    @classmethod
    def count_rows(cls, target, table: str) -> int | None:
        """The rows of ``table`` now (a rerun's check of its load); None: no table to count."""
        return None


def binding_class(dialect) -> type:
    """The binding class for a dialect (or its name); ValueError (one line) where there is none."""
    return BINDINGS.get(dialect)


def native_missing(dialect) -> str | None:
    name = dialect if isinstance(dialect, str) else dialect.name
    if not BINDINGS.supports(dialect):
        return f"workload ycsb does not run on dialect {name}"
    return binding_class(dialect).native_missing(name)


def open_binding(endpoint, cfg, driver: str = "python"):
    """A connected binding (one per client thread) for the endpoint's dialect; with
    ``driver`` c or auto, one whose run loop is in C where the dialect has it built."""
    cls = binding_class(endpoint.dialect)
    if use_c_loop(driver, cls.native_missing(endpoint.dialect.name)):
        return cls.open_native(endpoint, cfg)
    return cls(endpoint, cfg)
