"""YCSB on MariaDB / MySQL through the target's client library (mysqlclient or PyMySQL),
and the choice of its run loop in C.

Neither library uses server-side prepared statements; statements are formatted
client-side (the library's escaping), and the load sends multi-row INSERTs of
``batch_size`` rows — what the JDBC binding's ``rewriteBatchedStatements`` does. The
table is created with the target's ``engine``; ANALYZE TABLE after the load. Where the
extension over libmariadb is built (:mod:`.mysql_native`), run.driver c or auto runs
the run loops' chunks in C.
"""
from __future__ import annotations

from ....targets.base import TargetError
from ....targets.dialect import IDENTIFIER
from . import ERROR, NOT_FOUND, OK
from .statements import SqlYcsb, YcsbStatements


class MysqlYcsb(SqlYcsb):
    index_prefix_len = 32
    index_if_not_exists = False
    analyze = "ANALYZE TABLE {table}"

    @classmethod
    def table_options(cls, target) -> str:
        engine = getattr(target, "engine", None)
        if engine is None:
            return ""
        if not IDENTIFIER.match(str(engine)):
            raise TargetError(f"{target.name}: engine {engine!r} is not a storage engine's name")
        return f" ENGINE={engine}"

    @classmethod
    def native_missing(cls, dialect):
        from . import mysql_native
        return None if mysql_native.AVAILABLE else mysql_native.MISSING

    @classmethod
    def open_native(cls, endpoint, cfg):
        from ....targets.mysql import _cannot_connect
        from .mysql_native import MysqlYcsbNative
        try:
            return MysqlYcsbNative(endpoint.params["params"], cfg)
        except ConnectionError as e:
            raise TargetError(_cannot_connect(endpoint.params["params"], e)) from None

    def __init__(self, endpoint, props):
        self.conn = endpoint.connect()   # the target's library, autocommit
        self.cur = self.conn.cursor()
        self.st = YcsbStatements(props.table, props.field_names, endpoint.dialect)
        self.insert_prefix = self.st.insert.split(" VALUES ")[0] + " VALUES "
        if endpoint.params.get("library") == "mysqlclient":
            self.read, self.scan = self._c_read_scan()

    def _c_read_scan(self):
        """Reads and scans through mysqlclient's connection itself (query, store_result,
        fetch_row: C calls), not its cursor's Python: the same statement text, escaped by
        the same string_literal, the same errors; a few µs less client CPU per read."""
        query, store, lit = self.conn.query, self.conn.store_result, self.conn.string_literal
        reads = {f: sql.encode() for f, sql in self.st.read.items()}
        scans = {f: sql.encode() for f, sql in self.st.scan.items()}

        def read(key, field):
            query(reads[field] % (lit(key.encode()),))
            return OK if store().fetch_row(0) else NOT_FOUND

        def scan(key, count, field):
            query(scans[field] % (lit(key.encode()), b"%d" % count))
            store().fetch_row(0)
            return OK
        return read, scan

    def read(self, key, field):
        n = self.cur.execute(self.st.read[field], (key,))
        self.cur.fetchall()
        return OK if n else NOT_FOUND

    def scan(self, key, count, field):
        self.cur.execute(self.st.scan[field], (key, count))
        self.cur.fetchall()
        return OK

    def update(self, key, field, values):
        n = self.cur.execute(self.st.update[field], (*values, key))
        # MariaDB reports rows *changed*; an identical value counts 0 — not an error
        return OK if n >= 0 else ERROR

    def insert(self, key, values):
        self.cur.execute(self.st.insert, (key, *values))
        return OK

    def delete(self, key):
        self.cur.execute(self.st.delete, (key,))
        return OK

    def insert_batch(self, rows):
        # keys and values are alphanumeric (ycsb.ValuePool): quoting is enough
        body = ",".join("('" + "','".join(r) + "')" for r in rows)
        self.cur.execute(self.insert_prefix + body)
        return OK  # the records are counted from the chunk's units

    def close(self):
        self.conn.close()
