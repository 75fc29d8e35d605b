"""LinkBench on PostgreSQL (LinkStorePgsql's schema and statements): bytea payloads, a
bigserial node id set past the loaded ids after the load, the added link's count as
INSERT … ON CONFLICT DO UPDATE, ADD_NODE returning the new id; psycopg 3, the load as
COPY text.

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

    bulk_text = True   # the load sends COPY text

    def open_writer(self):
        return self.endpoint.connect()   # autocommit: BEGIN is sent by _tx

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
        return self._tx(sql, args).rowcount

    def commit(self):
        self.wcur.execute("COMMIT")

    def rollback(self):
        try:
            if self.wconn.info.transaction_status != IDLE:
                self.wcur.execute("ROLLBACK")
        except Exception:
            pass

    def bulk(self, table, cols, text):
        with self.cur.copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
            cp.write(text)

    def insert_statement(self, table, cols, rows):
        """load.mode java: the rows as one INSERT of a column array each (unnest): the same
        rows into the same indexed tables in one statement as LinkStoreSql's multi-row
        VALUES, at a third of the client CPU of its 7,168 bound values (maxid1 100,001:
        20 µs a row of client CPU with those, 6 with these; the server's 7-8)."""
        names = [c.strip() for c in cols.split(",")]
        arrays = ", ".join(f"%s::{'bytea' if c == 'data' else 'bigint'}[]" for c in names)
        self.cur.execute(f"INSERT INTO {table} ({cols}) SELECT * FROM unnest({arrays})",
                         [list(col) for col in zip(*rows)])

    def is_broken(self):
        return bool(self.conn.closed or (self.wconn is not None and self.wconn.closed))


class PgLinkBench(LinkBenchSql):
    link_data_type = node_data_type = "bytea"
    node_id_column = "id bigserial PRIMARY KEY"
    add_node_tail = " RETURNING id"   # pgjdbc's getGeneratedKeys adds RETURNING

    @staticmethod
    def is_dup_key(exc):
        return getattr(exc, "sqlstate", None) == "23505"   # unique_violation

    def after_load(self):
        """The node id sequence past the loaded ids, then statistics."""
        return [f"SELECT setval(pg_get_serial_sequence('{self.node}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {self.node}), false)",
                f"ANALYZE {self.link}", f"ANALYZE {self.count}", f"ANALYZE {self.node}"]

    def open(self, endpoint):
        return PgDb(endpoint, self)
