"""One client thread's connection, the same few calls on every driver: ``rows`` (a
query's rows), ``run`` (a statement's row count), ``begin``/``commit``/``rollback`` of
one request's transaction, and the load's bulk writes (PostgreSQL COPY, else a
multi-row INSERT)."""
from __future__ import annotations

from ..base import WorkloadClient
from .sql import Statements

LINK_LOAD_COLS = "id1, id2, link_type, visibility, data, time, version"
COUNT_LOAD_COLS = "id, link_type, count, time, version"
NODE_LOAD_COLS = "id, type, version, time, data"


class Db:
    """sqlite3 (autocommit connection: explicit BEGIN IMMEDIATE for writes)."""

    def __init__(self, endpoint, st: Statements):
        self.endpoint, self.st = endpoint, st
        self.conn = endpoint.connect()

    def rows(self, sql: str, args) -> list:
        return self.conn.execute(sql, args).fetchall()

    def run(self, sql: str, args) -> int:
        return self.conn.execute(sql, args).rowcount

    def begin(self) -> None:
        self.conn.execute(self.st.begin_write)

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except Exception:
            pass

    def bulk(self, table: str, cols: str, rows) -> None:
        """Rows (tuples, or a COPY text on PostgreSQL) in one transaction."""
        self.begin()
        try:
            self.conn.executemany(f"INSERT INTO {table} ({cols}) VALUES "
                                  f"({', '.join(['?'] * len(cols.split(',')))})", rows)
            self.commit()
        except BaseException:
            self.rollback()
            raise

    def is_broken(self) -> bool:
        return False

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


class PgDb(Db):
    """psycopg 3 (statements prepared by the driver after a few uses)."""

    bulk_text = True   # the load sends COPY text

    def rows(self, sql, args):
        return self.conn.execute(sql, args).fetchall()

    def run(self, sql, args):
        return self.conn.execute(sql, args).rowcount

    def begin(self):
        self.conn.execute("BEGIN")

    def bulk(self, table, cols, text):
        with self.conn.cursor().copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
            cp.write(text)

    def is_broken(self):
        return bool(self.conn.closed)


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
                             f"({', '.join(['%s'] * len(cols.split(',')))})", rows)

    def is_broken(self):
        return not getattr(self.conn, "open", True)


def open_db(endpoint, st: Statements) -> Db:
    return {"postgres": PgDb, "mysql": MyDb}.get(st.dialect, Db)(endpoint, st)


class DbClient(WorkloadClient):
    """A LinkBench client thread on one connection (``self.db``): what the load and the
    request clients share. Subclasses set ``endpoint``, ``st`` and ``_bind()``."""

    db: Db

    def is_broken(self) -> bool:
        return self.db.is_broken()

    def reconnect(self) -> None:
        self.db.close()
        self.db = open_db(self.endpoint, self.st)
        self._bind()

    def close(self) -> None:
        self.db.close()
