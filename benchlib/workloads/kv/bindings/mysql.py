"""kv on MariaDB/MySQL (mysqlclient or PyMySQL): the shared SQL binding, keys in ASCII's
binary collation (byte order, as Redis orders its members)."""
from __future__ import annotations

from .sql import SqlKv


class MysqlKv(SqlKv):
    create_table = ("CREATE TABLE {t} (k VARCHAR({key_size}) CHARACTER SET ascii "
                    "COLLATE ascii_bin PRIMARY KEY, v LONGTEXT)")
