"""LinkBench on MariaDB (LinkStoreMysql's schema): unsigned ids, varbinary(255) link
payloads and mediumblob node payloads, the target's ENGINE, the counts as INSERT …
ON DUPLICATE KEY UPDATE; mysqlclient's or PyMySQL's connection (a cursor kept)."""
from __future__ import annotations

from ..db import Db
from .base import LinkBenchSql


class MyDb(Db):
    """mysqlclient or PyMySQL (autocommit connection; begin/commit around a request)."""

    def __init__(self, endpoint, st):
        super().__init__(endpoint, st)
        self.cur = self.conn.cursor()

    def rows(self, sql, args):
        self.cur.execute(sql, args)
        return self.cur.fetchall()

    def run(self, sql, args):
        return self.cur.execute(sql, args)

    def begin(self):
        self.conn.begin()

    def commit(self):
        self.conn.commit()

    def rollback(self):
        try:
            self.conn.rollback()
        except Exception:
            pass

    def bulk(self, table, cols, rows):
        # both libraries rewrite executemany of INSERT … VALUES into multi-row INSERTs
        self.cur.executemany(f"INSERT INTO {table} ({cols}) VALUES "
                             f"({self.st.markers(len(cols.split(',')))})", rows)

    def is_broken(self):
        return not getattr(self.conn, "open", True)


class MyLinkBench(LinkBenchSql):
    id_type, small_type, int_type = "bigint unsigned", "tinyint", "int unsigned"
    link_data_type, node_data_type = "varbinary(255)", "mediumblob"
    node_id_column = "id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY"
    insert_link_tail = ""   # MariaDB has no ON CONFLICT DO NOTHING

    def count_upserts(self):
        p, count = self.ph, self.count
        ins = (f"INSERT INTO {count} (id, link_type, count, time, version) VALUES ({p}, {p}")
        return (f"{ins}, 1, {p}, 0) ON DUPLICATE KEY UPDATE count = count + 1, "
                "time = VALUES(time), version = version + 1",
                f"{ins}, 0, {p}, 0) ON DUPLICATE KEY UPDATE count = IF(count = 0, 0, count - 1), "
                "time = VALUES(time), version = version + 1")

    def table_tail(self, engine):
        return f" ENGINE={engine}" if engine else ""

    def after_load(self):
        return [f"ANALYZE TABLE {self.link}, {self.count}, {self.node}"]

    def open(self, endpoint):
        return MyDb(endpoint, self)
