"""kv's binding for the toy dialect: SQLite's, whose statements take the dialect's own
markers and quoting from the endpoint."""
from __future__ import annotations

from benchlib.workloads.kv.bindings import BINDINGS
from benchlib.workloads.kv.bindings.sqlite import SqliteKv


class ToyKv(SqliteKv):
    pass


BINDINGS.register("toy", ToyKv)
