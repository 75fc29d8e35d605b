"""kv on SQLite: the shared SQL binding, the table without rowid (keys in byte order)."""
from __future__ import annotations

from .sql import SqlKv


class SqliteKv(SqlKv):
    create_table = "CREATE TABLE {t} (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID"
