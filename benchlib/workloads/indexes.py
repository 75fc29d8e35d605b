"""An index step that can run twice: the index created if absent, checked if present.

A run killed as its index appeared, rerun, finds the index there; a second graph with
other table names in one database finds its own name free, since every index's name is
derived from its table's (``<table>_<what>``). ``CREATE INDEX IF NOT EXISTS`` (SQLite,
PostgreSQL, MariaDB) makes it when absent; then the target says which columns the index
of that name on that table has (``Target.index_columns``): the ones asked for, or one
line naming the index, the table and what differs.
"""
from __future__ import annotations

from ..targets.base import TargetError


def index_name(table: str, what: str) -> str:
    """``<table>_<what>``, cut to 63 characters (PostgreSQL's limit): a plain name when
    ``table`` is one."""
    return f"{table}_{what}"[:63]


def ensure_index(target, conn, table: str, index: str, columns: list[str], create: str) -> None:
    """Run ``create`` (a ``CREATE INDEX IF NOT EXISTS`` of ``index`` on ``table``) on
    ``conn``, then check the index has ``columns``; TargetError (one line) when not."""
    cur = conn.cursor()
    try:
        cur.execute(create)
    finally:
        close = getattr(cur, "close", None)
        if close is not None:
            close()
    got = target.index_columns(conn, table, index)
    if got is None:
        raise TargetError(f"index {index}: the name is taken by another table's index; "
                          f"drop it or give {table} another name")
    if [c.lower() for c in got] != [c.lower() for c in columns]:
        raise TargetError(f"index {index} on {table} has columns ({', '.join(got)}), not "
                          f"({', '.join(columns)}): drop it, or give {table} another name")
