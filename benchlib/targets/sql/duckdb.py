"""DuckDB's SQL (the ``duckdb`` package): ``?`` markers, VARCHAR compared bytewise, BLOB,
no row locks to take (its transactions are optimistic), a duplicate key as its
ConstraintException. Its driver's ``rowcount`` is −1 wherever it cannot say (DB-API's
rule), which :meth:`SqlDialect.rows_matched` answers as "unknown"; an UPDATE or a DELETE
also returns its count as a row, which is the driver's truth asked here first."""
from __future__ import annotations

from dataclasses import dataclass
from .base import SqlDialect


@dataclass(frozen=True)
class DuckdbDialect(SqlDialect):
    name: str = "duckdb"
    placeholder: str = "?"
    engine_in_clients: bool = True
    text_type = long_text_type = "VARCHAR"
    update_returning, for_update = True, ""    # RETURNING; no row locks to take
    serial_keys = False     # rows numbered by a sequence, not by a column's type

    def key_type(self, size: int) -> str:
        return "VARCHAR"     # compared bytewise (no collation unless one is set)

    def serial_key(self, column: str) -> str:
        raise NotImplementedError("DuckDB numbers rows by a sequence: no serial column here")

    def rows_matched(self, cursor, *, update=False):
        n = cursor.rowcount
        if n is not None and n >= 0:
            return n
        row = cursor.fetchone()   # DuckDB answers an UPDATE/DELETE with its count
        return int(row[0]) if row and isinstance(row[0], int) else None

    def is_duplicate_key(self, exc):
        return type(exc).__name__ == "ConstraintException"
