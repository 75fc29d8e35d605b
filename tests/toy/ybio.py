"""ybio's binding for the toy dialect: SQLite's, whose statements take the dialect's own
markers and quoting from the target."""
from __future__ import annotations

from benchlib.workloads.ybio.bindings import BINDINGS
from benchlib.workloads.ybio.bindings.sqlite import SqliteYbio


class ToyYbio(SqliteYbio):
    pass


BINDINGS.register("toy", ToyYbio)
