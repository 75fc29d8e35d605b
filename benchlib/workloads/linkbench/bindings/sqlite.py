"""LinkBench on SQLite: blobs, no row locks (a link write is BEGIN IMMEDIATE on the one
autocommit connection, the whole file's lock), the load in one transaction per batch."""
from __future__ import annotations

import sqlite3

from ..db import Db
from .base import LinkBenchSql


class SqliteDb(Db):
    """sqlite3: one connection for everything (a second one would wait on the first's lock)."""

    def open_writes(self):
        self.wconn, self.wcur = self.conn, self.cur

    def begin(self):
        self.open_writes()
        self.cur.execute(self.st.begin_write)

    def bulk(self, table, cols, rows):
        self.begin()
        try:
            self.insert_rows(table, cols, rows)
            self.commit()
        except BaseException:
            self.rollback()
            raise


class SqliteLinkBench(LinkBenchSql):
    id_type = small_type = int_type = "INTEGER"
    link_data_type = node_data_type = "BLOB"
    node_id_column = "id INTEGER PRIMARY KEY"
    for_update = ""
    begin_write = "BEGIN IMMEDIATE"

    @staticmethod
    def is_dup_key(exc):
        return isinstance(exc, sqlite3.IntegrityError)

    def open(self, endpoint):
        return SqliteDb(endpoint, self)
