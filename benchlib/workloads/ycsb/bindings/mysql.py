"""YCSB on MariaDB / MySQL through the target's client library (mysqlclient or PyMySQL),
and the choice of its run loop in C.

Neither library uses server-side prepared statements; statements are formatted
client-side (the library's escaping). The schema work, the load (one multi-row INSERT of
``batch_size`` rows — what the JDBC binding's ``rewriteBatchedStatements`` does) and the
statistics are the dialect's, through :class:`.statements.SqlYcsb`; this file holds
mysqlclient's reads and scans by its connection's own calls, and the choice of the run
loop in C where the extension over libmariadb is built (:mod:`.mysql_native`).
"""
from __future__ import annotations

from ....targets.base import TargetError
from . import NOT_FOUND, OK
from .statements import SqlYcsb


class MysqlYcsb(SqlYcsb):
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
        super().__init__(endpoint, props)   # the target's library, autocommit
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

    def update(self, key, field, values):
        # OK whatever it matched, as the C loop over libmariadb judges an update (it reads
        # no count: _myloop.c), so that both paths count the same statuses
        self.cur.execute(self.st.update[field], (*values, key))
        return OK
