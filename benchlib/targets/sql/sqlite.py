"""SQLite's SQL (sqlite3): ``?`` markers, WITHOUT ROWID for a table stored in key order,
UPDATE … RETURNING (3.35+), no row locks (a write transaction is BEGIN IMMEDIATE, the
file's lock, on the thread's one connection), a duplicate key as IntegrityError."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import ClassVar

from .base import SqlDialect


@dataclass(frozen=True)
class SqliteDialect(SqlDialect):
    name: str = "sqlite"
    placeholder: str = "?"
    engine_in_clients: bool = True
    update_returning: ClassVar[bool] = sqlite3.sqlite_version_info >= (3, 35)
    for_update: ClassVar[str] = ""
    begin_write: ClassVar[str] = "BEGIN IMMEDIATE"
    one_connection: ClassVar[bool] = True
    bigint_type = int_type = smallint_type = "INTEGER"   # one integer type, 1 to 8 bytes
    bytes_type = "BLOB"

    def serial_key(self, column: str) -> str:
        # the rowid itself: numbered by SQLite, past the largest there
        return f"{column} INTEGER PRIMARY KEY" if self.quote_ident(column) else ""

    def key_type(self, size: int) -> str:
        return "TEXT"     # compared bytewise (BINARY collation) whatever its length

    def char_type(self, length: int) -> str:
        return "TEXT"     # no width: SQLite stores the text as it is

    def table_options(self, clustered=False, engine=None) -> str:
        return " WITHOUT ROWID" if clustered else ""

    def is_duplicate_key(self, exc):
        return isinstance(exc, sqlite3.IntegrityError)
