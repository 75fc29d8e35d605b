"""LinkBench on MariaDB (LinkStoreMysql's schema and statements): unsigned ids,
varbinary(255) link payloads and mediumblob node payloads, the target's ENGINE,
linktable ``PARTITION BY KEY(id1) PARTITIONS 16`` as the client's README creates it
(``link_partitions``; 0: none), the added link's count as INSERT … ON DUPLICATE KEY
UPDATE, getlinklist with ``FORCE INDEX(<linktable>_id1_type)``; mysqlclient or PyMySQL.

The link-write connection has autocommit off: the server starts a transaction with its
first statement, no BEGIN is sent (as Connector/J with autocommit off)."""
from __future__ import annotations

from ..db import Db
from ...indexes import index_name
from .base import INDEX_WHAT, LinkBenchSql

ER_DUP_ENTRY = 1062


class MyDb(Db):
    def open_writer(self):
        conn = self.endpoint.connect()
        conn.autocommit(False)
        return conn

    def is_broken(self):
        return not all(getattr(c, "open", True) for c in (self.conn, self.wconn) if c is not None)


class MyLinkBench(LinkBenchSql):
    id_type, small_type, int_type = "bigint unsigned", "tinyint", "int unsigned"
    link_data_type, node_data_type = "varbinary(255)", "mediumblob"
    node_id_column = "id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY"

    def __init__(self, *args):
        self.list_index_hint = f" FORCE INDEX({args[0].quote_ident(index_name(args[1], INDEX_WHAT))})"
        super().__init__(*args)

    def count_upsert(self):
        p = self.ph
        return (f"INSERT INTO {self.count} (id, link_type, count, time, version) VALUES "
                f"({p}, {p}, {p}, {p}, 0) ON DUPLICATE KEY UPDATE count = count + {p}, "
                f"version = version + 1, time = {p}")

    @staticmethod
    def is_dup_key(exc):
        return bool(getattr(exc, "args", None)) and exc.args[0] == ER_DUP_ENTRY

    def table_tail(self, engine):
        return f" ENGINE={engine}" if engine else ""

    def link_table_tail(self, engine, link_partitions=0):
        tail = self.table_tail(engine)
        return tail + (f" PARTITION BY KEY(id1) PARTITIONS {link_partitions}"
                       if link_partitions else "")

    def after_load(self):
        return [f"ANALYZE TABLE {self.link}, {self.count}, {self.node}"]

    def open(self, endpoint):
        return MyDb(endpoint, self)
