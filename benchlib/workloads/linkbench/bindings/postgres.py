"""LinkBench on PostgreSQL (LinkStorePgsql's statements): ADD_NODE returning the new id
(as pgjdbc's getGeneratedKeys adds RETURNING), the link writes' BEGIN pipelined with their
first statement, load.mode java's INSERT of column arrays; psycopg 3. The schema's types
(bytea, a bigserial node id set past the loaded ids after the load), the upsert (INSERT …
ON CONFLICT DO UPDATE), the load (COPY) and the statistics are the dialect's.

A link write's connection is autocommit, as every connection of a target: the binding
sends BEGIN itself, in one pipeline with the transaction's first statement (one round
trip for both, as the JDBC driver LinkStorePgsql uses sends them), then COMMIT or
ROLLBACK. (psycopg's own transactions, autocommit off, wait for BEGIN's answer.)"""
from __future__ import annotations

from ..db import Db
from .base import LinkBenchSql

IDLE = 0   # libpq's PQTRANS_IDLE: no transaction open


class PgDb(Db):
    """psycopg 3 (statements prepared by the driver after a few uses)."""

    def begin(self):
        self.open_writes()   # autocommit: BEGIN is sent by _tx, with the first statement

    def _tx(self, sql, args):
        if self.wconn.info.transaction_status == IDLE:   # the transaction's first statement
            with self.wconn.pipeline():
                self.wcur.execute("BEGIN")
                self.wcur.execute(sql, args)
        else:
            self.wcur.execute(sql, args)
        return self.wcur

    def tx_rows(self, sql, args):
        return self._tx(sql, args).fetchall()

    def tx_run(self, sql, args):
        return self.st.dialect.rows_matched(self._tx(sql, args), update=True)

    def commit(self):
        self.wcur.execute("COMMIT")

    def rollback(self):
        try:
            if self.wconn.info.transaction_status != IDLE:
                self.wcur.execute("ROLLBACK")
        except Exception:
            pass

    def insert_statement(self, table, cols, rows):
        """load.mode java: the rows as one INSERT of a column array each (unnest): the same
        rows into the same indexed tables in one statement as LinkStoreSql's multi-row
        VALUES, at a third of the client CPU of its 7,168 bound values (maxid1 100,001:
        20 µs a row of client CPU with those, 6 with these; the server's 7-8)."""
        names = [c.strip() for c in cols.split(",")]
        arrays = ", ".join(f"%s::{'bytea' if c == 'data' else 'bigint'}[]" for c in names)
        self.cur.execute(f"INSERT INTO {table} ({cols}) SELECT * FROM unnest({arrays})",
                         [list(col) for col in zip(*rows)])


class PgLinkBench(LinkBenchSql):
    add_node_tail = " RETURNING id"   # pgjdbc's getGeneratedKeys adds RETURNING

    def open(self, endpoint):
        return PgDb(endpoint, self)

    @classmethod
    def native_missing(cls, dialect):
        from .postgres_native import AVAILABLE, MISSING
        return None if AVAILABLE else MISSING

    def open_native(self, endpoint, range_limit: int):
        """A requester's session whose requests run in C (:mod:`.postgres_native`)."""
        from .postgres_native import PgLinkNative
        return PgLinkNative(endpoint.params["conninfo"], self, range_limit)
