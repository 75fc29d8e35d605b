"""LinkBench's schema and statements per SQL dialect (sqlite, postgres, mysql).

The tables as LinkBench creates them (``LinkStoreMysql`` / ``LinkStorePgsql``'s DDL):
``linktable`` (primary key link_type, id1, id2), ``counttable`` (id, link_type) and
``nodetable`` (id, auto-numbered); the load creates primary keys only, and the index
step adds ``id1_type`` on linktable (id1, link_type, visibility, time, id2, version,
data). Payloads are PostgreSQL ``bytea``, MariaDB ``varbinary(255)`` / ``mediumblob``,
SQLite blobs. Table names come checked from the properties and are quoted by the
target; every value is a bound parameter.
"""
from __future__ import annotations

LINK_COLS = "id1, id2, link_type, visibility, data, time, version"
INDEX_COLS = "id1, link_type, visibility, time, id2, version, data"

_TYPES = {  # dialect -> (id, small int, int, link data, node data, node id column)
    "postgres": ("bigint", "smallint", "integer", "bytea", "bytea", "id bigserial PRIMARY KEY"),
    "mysql": ("bigint unsigned", "tinyint", "int unsigned", "varbinary(255)", "mediumblob",
              "id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY"),
    "sqlite": ("INTEGER", "INTEGER", "INTEGER", "BLOB", "BLOB", "id INTEGER PRIMARY KEY"),
}


class Statements:
    """LinkBench's statements for one dialect and one set of (quoted) table names."""

    def __init__(self, dialect: str, link: str, count: str, node: str):
        if dialect not in _TYPES:
            raise ValueError(f"linkbench runs on sqlite, postgres and mysql targets, not {dialect}")
        self.dialect, self.link, self.count, self.node = dialect, link, count, node
        p = "?" if dialect == "sqlite" else "%s"
        self.ph = p
        sel = f"SELECT {LINK_COLS} FROM {link}"
        self.get_visibility = (f"SELECT visibility FROM {link} WHERE id1 = {p} AND id2 = {p} "
                               f"AND link_type = {p}" + ("" if dialect == "sqlite" else " FOR UPDATE"))
        # a link another requester inserts meanwhile: no error, 0 rows (the caller updates it)
        self.insert_link = (f"INSERT INTO {link} ({LINK_COLS}) VALUES ({', '.join([p] * 7)})"
                            + ("" if dialect == "mysql" else " ON CONFLICT DO NOTHING"))
        self.update_link = (f"UPDATE {link} SET visibility = {p}, data = {p}, time = {p}, "
                            f"version = version + 1 WHERE id1 = {p} AND id2 = {p} AND link_type = {p}")
        self.hide_link = (f"UPDATE {link} SET visibility = 0 WHERE id1 = {p} AND id2 = {p} "
                          f"AND link_type = {p}")
        if dialect == "mysql":
            self.count_inc = (f"INSERT INTO {count} (id, link_type, count, time, version) VALUES "
                              f"({p}, {p}, 1, {p}, 0) ON DUPLICATE KEY UPDATE count = count + 1, "
                              "time = VALUES(time), version = version + 1")
            self.count_dec = (f"INSERT INTO {count} (id, link_type, count, time, version) VALUES "
                              f"({p}, {p}, 0, {p}, 0) ON DUPLICATE KEY UPDATE "
                              "count = IF(count = 0, 0, count - 1), time = VALUES(time), "
                              "version = version + 1")
        else:
            up = f"ON CONFLICT (id, link_type) DO UPDATE SET time = excluded.time, version = {count}.version + 1"
            floor = "GREATEST" if dialect == "postgres" else "MAX"
            self.count_inc = (f"INSERT INTO {count} (id, link_type, count, time, version) VALUES "
                              f"({p}, {p}, 1, {p}, 0) {up}, count = {count}.count + 1")
            self.count_dec = (f"INSERT INTO {count} (id, link_type, count, time, version) VALUES "
                              f"({p}, {p}, 0, {p}, 0) {up}, count = {floor}({count}.count - 1, 0)")
        self.count_links = f"SELECT count FROM {count} WHERE id = {p} AND link_type = {p}"
        self.get_links_list = (f"{sel} WHERE id1 = {p} AND link_type = {p} AND time >= {p} AND "
                               f"time <= {p} AND visibility = 1 ORDER BY time DESC LIMIT {p}")
        self.multiget_any = f"{sel} WHERE id1 = %s AND link_type = %s AND id2 = ANY(%s)"
        self._multiget: dict[int, str] = {}
        self.get_node = f"SELECT id, type, version, time, data FROM {node} WHERE id = {p}"
        self.update_node = (f"UPDATE {node} SET version = version + 1, time = {p}, data = {p} "
                            f"WHERE id = {p} AND type = {p}")
        self.add_node = f"INSERT INTO {node} (type, version, time, data) VALUES ({p}, 0, {p}, {p})"
        self.delete_node = f"DELETE FROM {node} WHERE id = {p} AND type = {p}"
        self.begin_write = "BEGIN IMMEDIATE" if dialect == "sqlite" else "BEGIN"

    def multiget(self, n: int) -> str:
        """The MULTIGET_LINK statement for n id2s (PostgreSQL: one, with ANY)."""
        if self.dialect == "postgres":
            return self.multiget_any
        st = self._multiget.get(n)
        if st is None:
            p = self.ph
            st = self._multiget[n] = (f"SELECT {LINK_COLS} FROM {self.link} WHERE id1 = {p} AND "
                                      f"link_type = {p} AND id2 IN ({', '.join([p] * n)})")
        return st

    # ---------------------------------------------------------------- schema
    def create_tables(self, engine: str | None = None) -> list[str]:
        idt, small, integer, ldata, ndata, nid = _TYPES[self.dialect]
        tail = f" ENGINE={engine}" if self.dialect == "mysql" and engine else ""
        return [
            f"CREATE TABLE {self.link} (id1 {idt} NOT NULL DEFAULT 0, id2 {idt} NOT NULL DEFAULT 0, "
            f"link_type {idt} NOT NULL DEFAULT 0, visibility {small} NOT NULL DEFAULT 0, "
            f"data {ldata} NOT NULL, time {idt} NOT NULL DEFAULT 0, "
            f"version {integer} NOT NULL DEFAULT 0, PRIMARY KEY (link_type, id1, id2)){tail}",
            f"CREATE TABLE {self.count} (id {idt} NOT NULL DEFAULT 0, link_type {idt} NOT NULL "
            f"DEFAULT 0, count {integer} NOT NULL DEFAULT 0, time {idt} NOT NULL DEFAULT 0, "
            f"version {idt} NOT NULL DEFAULT 0, PRIMARY KEY (id, link_type)){tail}",
            f"CREATE TABLE {self.node} ({nid}, type {integer} NOT NULL, version {idt} NOT NULL, "
            f"time {integer} NOT NULL, data {ndata} NOT NULL){tail}",
        ]

    def drop_tables(self) -> list[str]:
        return [f"DROP TABLE IF EXISTS {t}" for t in (self.link, self.count, self.node)]

    def create_index(self, index_name: str) -> str:
        return f"CREATE INDEX {index_name} ON {self.link} ({INDEX_COLS})"

    def after_load(self) -> list[str]:
        """Statistics after the load, and PostgreSQL's node id sequence past the loaded ids."""
        if self.dialect == "postgres":
            return [f"SELECT setval(pg_get_serial_sequence('{self.node}', 'id'), "
                    f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {self.node}), false)",
                    f"ANALYZE {self.link}", f"ANALYZE {self.count}", f"ANALYZE {self.node}"]
        if self.dialect == "mysql":
            return [f"ANALYZE TABLE {self.link}, {self.count}, {self.node}"]
        return ["ANALYZE"]

    def count_mismatches(self) -> str:
        """(id1, link_type) pairs whose counttable count differs from their visible links."""
        return (f"SELECT c.id, c.link_type, c.count, COALESCE(v.n, 0) FROM {self.count} c "
                f"LEFT JOIN (SELECT id1, link_type, COUNT(*) AS n FROM {self.link} "
                f"WHERE visibility = 1 GROUP BY id1, link_type) v "
                f"ON v.id1 = c.id AND v.link_type = c.link_type WHERE c.count <> COALESCE(v.n, 0) "
                f"UNION ALL SELECT v.id1, v.link_type, NULL, v.n FROM (SELECT id1, link_type, "
                f"COUNT(*) AS n FROM {self.link} WHERE visibility = 1 GROUP BY id1, link_type) v "
                f"LEFT JOIN {self.count} c ON c.id = v.id1 AND c.link_type = v.link_type "
                f"WHERE c.id IS NULL")
