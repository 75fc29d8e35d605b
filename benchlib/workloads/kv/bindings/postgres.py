"""kv on PostgreSQL: the shared SQL binding, keys in the "C" collation (byte order, as
Redis orders its members), and VACUUM ANALYZE after the load, as a DBA would before
measuring."""
from __future__ import annotations

from .sql import SqlKv


class PostgresKv(SqlKv):
    create_table = 'CREATE TABLE {t} (k VARCHAR({key_size}) COLLATE "C" PRIMARY KEY, v TEXT)'

    @classmethod
    def after_load(cls, target, table: str) -> None:
        cls._statement(target, f"VACUUM ANALYZE {target.dialect.quote_ident(table)}")
