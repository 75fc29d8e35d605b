"""Never drop what benchlib did not make (issue 41): a table a load creates carries
benchlib's mark, and a load refuses, before anything is written, an existing table
of the name it would create that has no mark.

How a DBMS keeps the mark is its target's (:meth:`Target.table_facts`,
:meth:`Target.mark_table`, where ``tracks_tables``): a table comment where the DBMS has
one (PostgreSQL's ``COMMENT ON TABLE``, MariaDB's table ``COMMENT``), else a registry
of benchlib's own named :data:`REGISTRY` (SQLite's table); on Redis, whose "table" is a
key prefix ``<table>:``, the key ``<table>`` holding :data:`MARK` (within what an ACL user
of the prefix may write). A workload names the tables its load makes
(``Workload.load_tables``: name, columns, the property that names it); the runner
checks them in preflight and again before the load step's schema work, and marks them
right after it.

A table benchlib made (marked) is replaced by the next load, as reruns need. One it
did not make is refused, unless the experiment says ``load.replace: true`` (replace it
on purpose) or ``load.skip: true`` (no load: run against it as it is, if its columns are
the workload's).
"""
from __future__ import annotations

from dataclasses import dataclass

from .base import TargetError

MARK = "made by benchlib"     # the comment (no quote in it: SQL literals where none bind)
REGISTRY = "benchlib_tables"  # where a DBMS without table comments keeps the names


@dataclass(frozen=True)
class TableShape:
    """A table a workload's load makes."""

    name: str
    columns: tuple[str, ...]   # as the workload creates them (a key prefix: ignored)
    key: str                   # the property naming it (``table``, ``nodetable`` …)


@dataclass(frozen=True)
class TableFacts:
    """What a DBMS holds under a table's name."""

    columns: tuple[str, ...] | None   # None: nothing with columns (a key prefix)
    marked: bool                      # benchlib's mark is on it
    label: str = ""                   # how a line names it ("keys t:*"; "": "table t")


def _cols(columns) -> str:
    cols = list(columns)
    return ", ".join(cols[:3]) + (f" … ({len(cols)} columns)" if len(cols) > 3 else "")


def same_columns(facts: TableFacts, shape: TableShape) -> bool:
    if facts.columns is None:
        return True
    return sorted(c.lower() for c in facts.columns) == sorted(c.lower() for c in shape.columns)


def refusal(target_name: str, shape: TableShape, facts: TableFacts | None, *, skip: bool) -> str | None:
    """One line why a load (or with ``skip`` a run without one) must not use the table
    as it is; None: it may."""
    if facts is None:
        return (f"target {target_name}: no {shape.name} there ({shape.key}): load.skip: true "
                "runs against a loaded table; load it first") if skip else None
    what = f"target {target_name}: {facts.label or 'table ' + shape.name}"
    theirs = f" (columns {_cols(facts.columns)})" if facts.columns is not None else ""
    if skip:
        if same_columns(facts, shape):
            return None
        return (f"{what}{theirs} is not the table this workload reads (columns "
                f"{_cols(shape.columns)}): choose another name ({shape.key}) or replace it "
                "(load.replace: true)")
    if facts.marked:
        return None
    if same_columns(facts, shape):
        return (f"{what} exists and benchlib did not make it{theirs}: a load would drop it; "
                f"choose another name ({shape.key}), run against it as it is (load.skip: true) "
                "or replace it on purpose (load.replace: true)")
    return (f"{what} exists and benchlib did not make it{theirs}: a load would drop it; "
            f"choose another name ({shape.key}) or replace it on purpose (load.replace: true)")


def check(target, tables: list[TableShape], *, skip: bool = False, replace: bool = False) -> None:
    """TargetError (one line) for the first of ``tables`` a load (``skip``: a run with no
    load) must not use on ``target``, which is started; nothing is written."""
    if replace or not getattr(target, "tracks_tables", False):
        return
    for shape in tables:
        line = refusal(target.name, shape, target.table_facts(shape.name), skip=skip)
        if line:
            raise TargetError(line)


def claim(target, tables: list[TableShape]) -> None:
    """Benchlib's mark on ``tables``, which its load has just made."""
    if getattr(target, "tracks_tables", False):
        for shape in tables:
            target.mark_table(shape.name)
