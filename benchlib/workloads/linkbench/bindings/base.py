"""LinkBench's schema and statements on any SQL dialect: its column types, auto-numbered
node id, row locks, upsert, statistics and duplicate-key errors are the target's
dialect's (:mod:`benchlib.targets.sql`), so that SQLite (or a plugin's SQL DBMS) runs it
with no file of its own; ``postgres.py`` and ``mysql.py`` hold what LinkBench's own
LinkStorePgsql / LinkStoreMysql do there (pgjdbc's pipelined BEGIN and RETURNING, the
unsigned types, partitions and index hint of its MySQL schema).

The tables as LinkBench creates them (``LinkStoreMysql`` / ``LinkStorePgsql``'s DDL):
``linktable`` (primary key link_type, id1, id2), ``counttable`` (id, link_type) and
``nodetable`` (id, auto-numbered); the load creates primary keys only, and the index
step adds ``<linktable>_id1_type`` on linktable (id1, link_type, visibility, time, id2,
version, data): LinkBench's ``id1_type``, named after its table so that two graphs of
other table names share a database, created if absent and checked if present. Table names come from the properties, checked and quoted by the target's
:class:`~benchlib.targets.dialect.Dialect`; every value is a bound parameter.

A binding also opens a client thread's connection (:meth:`LinkBenchSql.open`): the
driver's calls made the same few (``rows``, ``run``, ``begin`` …, see ``db.py``).
"""
from __future__ import annotations

from ....targets.dialect import Dialect
from ...indexes import index_name

LINK_COLS = "id1, id2, link_type, visibility, data, version, time"   # LinkStoreSql's order
INDEX_COLS = "id1, link_type, visibility, time, id2, version, data"
INDEX_WHAT = "id1_type"     # LinkBench's index name, after the table's: <linktable>_id1_type
# each table's columns as create_tables makes them, by the property that names the table
TABLE_COLUMNS = {"linktable": tuple(LINK_COLS.split(", ")),
                 "counttable": ("id", "link_type", "count", "time", "version"),
                 "nodetable": ("id", "type", "version", "time", "data")}


class LinkBenchSql:
    """LinkBench's statements for one dialect and one set of table names: LinkStoreSql's
    (mdcallag/linkbench), each a bound statement where it sends one."""

    # column types: id, small int, int, link data, node data; the node id column (None:
    # the dialect's, as LinkStoreSql leaves them to the DBMS)
    id_type = small_type = int_type = link_data_type = node_data_type = None
    node_id_column = None
    list_index_hint = ""                # getlinklist's index hint (MariaDB: FORCE INDEX)
    add_node_tail = ""                  # what returns the new node's id (PostgreSQL: RETURNING)

    def __init__(self, dialect: Dialect, linktable: str, counttable: str, nodetable: str):
        self.dialect = d = dialect
        self.id_type = self.id_type or d.bigint_type
        self.small_type = self.small_type or d.smallint_type
        self.int_type = self.int_type or d.int_type
        self.link_data_type = self.link_data_type or d.bytes_type
        self.node_data_type = self.node_data_type or d.bytes_type
        self.node_id_column = self.node_id_column or d.serial_key("id")
        self.for_update = d.for_update      # the link read that a write then changes
        self.begin_write = d.begin_write
        self.names = (linktable, counttable, nodetable)
        q = dialect.quote_ident
        self.link, self.count, self.node = q(linktable), q(counttable), q(nodetable)
        self.unquoted = dict(zip((self.link, self.count, self.node), self.names))
        self.index_plain = index_name(linktable, INDEX_WHAT)
        self.index_name = q(self.index_plain)
        p = self.ph = dialect.placeholder
        link, count, node = self.link, self.count, self.node
        # link writes, on the connection in a transaction
        self.get_visibility = (f"SELECT visibility FROM {link} WHERE id1 = {p} AND id2 = {p} "
                               f"AND link_type = {p}{self.for_update}")
        self.insert_link = f"INSERT INTO {link} ({LINK_COLS}) VALUES ({self.markers(7)})"
        self.update_link = (f"UPDATE {link} SET visibility = {p}, data = {p}, version = {p}, "
                            f"time = {p} WHERE id1 = {p} AND id2 = {p} AND link_type = {p}")
        self.hide_link = (f"UPDATE {link} SET visibility = 0 WHERE id1 = {p} AND id2 = {p} "
                          f"AND link_type = {p}")
        # an added link's count (the row made if none): count + n, version + 1, time;
        # args (id, link_type, n, time, n, time)
        old = lambda c: d.old(counttable, c)  # noqa: E731
        self.count_add = d.upsert(counttable, ("id", "link_type", "count", "time", "version"),
                                  ("id", "link_type"), f"count = {old('count')} + {p}, version = "
                                  f"{old('version')} + 1, time = {p}", values=f"{p}, {p}, {p}, {p}, 0")
        # an updated or deleted link's: count + n (n = 1 or -1), version + 1, time
        self.count_change = (f"UPDATE {count} SET count = count + {p}, version = version + 1, "
                             f"time = {p} WHERE id = {p} AND link_type = {p}")
        # reads and node writes, in autocommit
        self.count_links = f"SELECT count FROM {count} WHERE id = {p} AND link_type = {p}"
        self.get_links_list = (f"SELECT {LINK_COLS} FROM {link}{self.list_index_hint} WHERE "
                               f"id1 = {p} AND link_type = {p} AND time >= {p} AND time <= {p} "
                               f"AND visibility = 1 ORDER BY time DESC LIMIT {p} OFFSET {p}")
        self._multiget: dict[int, str] = {}
        self.get_node = f"SELECT id, type, version, time, data FROM {node} WHERE id = {p}"
        self.update_node = (f"UPDATE {node} SET version = {p}, time = {p}, data = {p} "
                            f"WHERE id = {p} AND type = {p}")
        self.add_node = (f"INSERT INTO {node} (type, version, time, data) VALUES "
                         f"({self.markers(4)}){self.add_node_tail}")
        self.delete_node = f"DELETE FROM {node} WHERE id = {p} AND type = {p}"

    def markers(self, n: int) -> str:
        return ", ".join([self.ph] * n)

    def is_dup_key(self, exc: BaseException) -> bool:
        """The insert met a link already there (LinkStoreSql's isDupKeyError)."""
        return self.dialect.is_duplicate_key(exc)

    def multiget(self, id1: int, ltype: int, id2s: list[int]) -> tuple[str, tuple]:
        """MULTIGET_LINK's statement and arguments for these id2s (one IN list)."""
        n = len(id2s)
        st = self._multiget.get(n)
        if st is None:
            p = self.ph
            st = self._multiget[n] = (f"SELECT {LINK_COLS} FROM {self.link} WHERE id1 = {p} AND "
                                      f"link_type = {p} AND id2 IN ({self.markers(n)})")
        return st, (id1, ltype, *id2s)

    # ---------------------------------------------------------------- schema
    def table_tail(self, engine: str | None) -> str:
        """What follows a CREATE TABLE's columns (MariaDB's ENGINE=…)."""
        return self.dialect.table_options(engine=engine)

    def link_table_tail(self, engine: str | None, link_partitions: int = 0) -> str:
        """linktable's (MariaDB's partitions: ``link_partitions``; elsewhere ignored)."""
        return self.table_tail(engine)

    def create_tables(self, engine: str | None = None, link_partitions: int = 0) -> list[str]:
        idt, small, integer = self.id_type, self.small_type, self.int_type
        tail = self.table_tail(engine)
        return [
            f"CREATE TABLE {self.link} (id1 {idt} NOT NULL DEFAULT 0, id2 {idt} NOT NULL DEFAULT 0, "
            f"link_type {idt} NOT NULL DEFAULT 0, visibility {small} NOT NULL DEFAULT 0, "
            f"data {self.link_data_type} NOT NULL, time {idt} NOT NULL DEFAULT 0, "
            f"version {integer} NOT NULL DEFAULT 0, PRIMARY KEY (link_type, id1, id2))"
            f"{self.link_table_tail(engine, link_partitions)}",
            f"CREATE TABLE {self.count} (id {idt} NOT NULL DEFAULT 0, link_type {idt} NOT NULL "
            f"DEFAULT 0, count {integer} NOT NULL DEFAULT 0, time {idt} NOT NULL DEFAULT 0, "
            f"version {idt} NOT NULL DEFAULT 0, PRIMARY KEY (id, link_type)){tail}",
            f"CREATE TABLE {self.node} ({self.node_id_column}, type {integer} NOT NULL, "
            f"version {idt} NOT NULL, time {integer} NOT NULL, data {self.node_data_type} "
            f"NOT NULL){tail}",
        ]

    def drop_tables(self) -> list[str]:
        return [f"DROP TABLE IF EXISTS {t}" for t in (self.link, self.count, self.node)]

    def create_index(self) -> str:
        return f"CREATE INDEX IF NOT EXISTS {self.index_name} ON {self.link} ({INDEX_COLS})"

    def after_load(self) -> list[str]:
        """The node id numbered past the loaded ids where the DBMS needs it told, then
        statistics (no VACUUM: LinkBench's tables are read as the load leaves them)."""
        d = self.dialect
        return d.serial_after_load(self.names[2], "id") + d.analyze(self.names, vacuum=False)

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

    # ---------------------------------------------------------------- connections
    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        """Why the requests cannot run in C on ``dialect`` (None: they can; cloop.py)."""
        return f"LinkBench's requests have no C loop on {dialect}"

    def open(self, endpoint):
        """A client thread's connections (``db.Db``, or a dialect's subclass)."""
        from ..db import Db
        return Db(endpoint, self)
