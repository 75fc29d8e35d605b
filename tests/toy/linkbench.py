"""LinkBench's binding for the toy dialect: SQLite's schema, statements and connection,
registered under ``toy`` as a plugin would register its own."""
from __future__ import annotations

from benchlib.workloads.linkbench.bindings import BINDINGS
from benchlib.workloads.linkbench.bindings.sqlite import SqliteLinkBench


class ToyLinkBench(SqliteLinkBench):
    """SQLite's, unchanged: the toy target is a SQLite file under another dialect."""


BINDINGS.register("toy", ToyLinkBench)
