"""LinkBench on SQLite: blobs, no row locks (a write transaction is BEGIN IMMEDIATE,
the whole file's lock), MAX for the count's floor; sqlite3's connection as it is."""
from __future__ import annotations

from .base import LinkBenchSql


class SqliteLinkBench(LinkBenchSql):
    id_type = small_type = int_type = "INTEGER"
    link_data_type = node_data_type = "BLOB"
    node_id_column = "id INTEGER PRIMARY KEY"
    for_update = ""
    floor_function = "MAX"
    begin_write = "BEGIN IMMEDIATE"
