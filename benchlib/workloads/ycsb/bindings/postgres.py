"""YCSB on PostgreSQL through psycopg 3, and the choice of its run loop in C.

The hot path calls libpq through psycopg's low-level ``pgconn.exec_prepared`` with
statements prepared once per connection: measured on this machine it does 23.5k
point selects/s on one connection against 15.4k through a cursor with
``prepare=True`` (pgbench -S: 22.2k), because no Python row objects are built. The
load is the dialect's (COPY), and so are the statistics after it (VACUUM ANALYZE).
Where the extension over libpq is built (:mod:`.postgres_native`), run.driver c or auto
runs the run loops' chunks in C.
"""
from __future__ import annotations

from ....targets.base import TargetError
from . import ERROR, KEY_COLUMN, NOT_FOUND, OK
from .statements import SqlYcsb, YcsbStatements


class PostgresYcsb(SqlYcsb):
    """YCSB's DB interface on one connection, prepared statements via libpq."""

    @classmethod
    def native_missing(cls, dialect):
        from . import postgres_native
        return None if postgres_native.AVAILABLE else postgres_native.MISSING

    @classmethod
    def open_native(cls, endpoint, cfg):
        from .postgres_native import PostgresYcsbNative
        return PostgresYcsbNative(endpoint.params["conninfo"], cfg)

    def __init__(self, endpoint, props):
        from psycopg import pq
        self.conn = endpoint.connect()   # psycopg, autocommit
        self.pg = self.conn.pgconn
        self._tuples_ok = pq.ExecStatus.TUPLES_OK
        self._command_ok = pq.ExecStatus.COMMAND_OK
        self.dialect = endpoint.dialect
        self.st = YcsbStatements(props.table, props.field_names, endpoint.dialect)
        self.load_args = (props.table, [KEY_COLUMN, *props.field_names])
        # prepare every statement once; names are bytes as libpq wants them
        self.read_names, self.scan_names, self.update_names = {}, {}, {}
        for kind, stmts, names in (("r", self.st.read, self.read_names),
                                   ("s", self.st.scan, self.scan_names),
                                   ("u", self.st.update, self.update_names)):
            for f, sql in stmts.items():
                names[f] = self._prepare(f"{kind}{f}".encode(), sql)
        self.insert_name = self._prepare(b"i", self.st.insert)
        self.delete_name = self._prepare(b"d", self.st.delete)
        self._exec = self.pg.exec_prepared

        self._make_ops()

    def _prepare(self, name: bytes, sql: str) -> bytes:
        res = self.pg.prepare(name, sql.encode())
        if res.status != self._command_ok:
            raise TargetError(f"prepare {sql!r}: {res.error_message.decode(errors='replace').strip()}")
        return name

    # Keys and values arrive as bytes (bytes_args): the workload encodes them while it
    # prepares a chunk, so the timed call is libpq and two attribute reads.
    bytes_args = True

    def _make_ops(self):
        # closures over locals: no attribute lookups on the hot path
        exec_ = self.pg.exec_prepared
        tok, cok = self._tuples_ok, self._command_ok
        rn, sn, un = self.read_names, self.scan_names, self.update_names
        ins, dele = self.insert_name, self.delete_name

        def read(key, field):
            r = exec_(rn[field], (key,))
            if r.status != tok:
                return ERROR
            return OK if r.ntuples else NOT_FOUND

        def scan(key, count, field):
            r = exec_(sn[field], (key, b"%d" % count))
            return OK if r.status == tok else ERROR

        def update(key, field, values):
            r = exec_(un[field], (*values, key))
            if r.status != cok:
                return ERROR
            return OK if r.command_tuples else NOT_FOUND

        def insert(key, values):
            r = exec_(ins, (key, *values))
            return OK if r.status == cok else ERROR

        def delete(key):
            r = exec_(dele, (key,))
            return OK if r.status == cok else ERROR

        self.read, self.scan, self.update, self.insert, self.delete = read, scan, update, insert, delete
        self._make_async_ops()

    def _make_async_ops(self):
        """The same operations for the multiplexed client (benchlib.run.mux): each sends its
        statement and yields; the client resumes it with the result once it is complete."""
        send = self.pg.send_query_prepared
        tok, cok = self._tuples_ok, self._command_ok
        rn, sn, un = self.read_names, self.scan_names, self.update_names
        ins = self.insert_name

        def a_read(key, field):
            send(rn[field], (key,))
            r = yield
            if r.status != tok:
                return ERROR
            return OK if r.ntuples else NOT_FOUND

        def a_scan(key, count, field):
            send(sn[field], (key, b"%d" % count))
            r = yield
            return OK if r.status == tok else ERROR

        def a_update(key, field, values):
            send(un[field], (*values, key))
            r = yield
            if r.status != cok:
                return ERROR
            return OK if r.command_tuples else NOT_FOUND

        def a_insert(key, values):
            send(ins, (key, *values))
            r = yield
            return OK if r.status == cok else ERROR

        self.a_read, self.a_scan, self.a_update, self.a_insert = a_read, a_scan, a_update, a_insert

