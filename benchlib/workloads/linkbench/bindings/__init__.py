"""LinkBench's bindings: its schema, statements and connections on any SQL dialect
(``base.py``, through the target's dialect: SQLite's, a plugin's SQL DBMS), and what its
own client does otherwise on ``postgres`` (``postgres.py``) and ``mysql`` (``mysql.py``,
MariaDB). A target of a dialect that is not SQL runs LinkBench once a binding is
registered for it (``BINDINGS.register``); without one the run is refused in one line
before anything starts.
"""
from __future__ import annotations

from ...bindings import Bindings

BINDINGS = Bindings("linkbench", {
    "postgres": f"{__name__}.postgres:PgLinkBench",
    "mysql": f"{__name__}.mysql:MyLinkBench",
}, sql=f"{__name__}.base:LinkBenchSql", sql_needs=("serial_keys",))


def binding(dialect, p):
    """The binding for ``dialect`` (a :class:`~benchlib.targets.dialect.Dialect`) on the
    tables that the properties ``p`` name."""
    return BINDINGS.get(dialect)(dialect, p.linktable, p.counttable, p.nodetable)
