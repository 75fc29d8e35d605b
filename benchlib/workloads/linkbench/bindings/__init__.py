"""LinkBench's bindings, one file per dialect: its schema, statements and connections.

``sqlite`` (``sqlite.py``), ``postgres`` (``postgres.py``) and ``mysql`` (``mysql.py``,
MariaDB) subclass the standard SQL of ``base.py``. A target of another dialect runs
LinkBench once a binding is registered for it (``BINDINGS.register``: a plugin's,
a test's toy); without one the run is refused in one line before anything starts.
"""
from __future__ import annotations

from ...bindings import Bindings

BINDINGS = Bindings("linkbench", {
    "sqlite": f"{__name__}.sqlite:SqliteLinkBench",
    "postgres": f"{__name__}.postgres:PgLinkBench",
    "mysql": f"{__name__}.mysql:MyLinkBench",
})


def binding(dialect, p):
    """The binding for ``dialect`` (a :class:`~benchlib.targets.dialect.Dialect`) on the
    tables that the properties ``p`` name."""
    return BINDINGS.get(dialect.name)(dialect, p.linktable, p.counttable, p.nodetable)
