"""One client thread's connection, the same few calls on every driver: ``rows`` (a
query's rows), ``run`` (a statement's row count), ``begin``/``commit``/``rollback`` of
one request's transaction, and the load's bulk writes. :class:`Db` is a DB-API
connection's; a dialect's binding (``bindings/<dialect>.py``) subclasses it where its
driver differs, and opens it (``binding.open(endpoint)``)."""
from __future__ import annotations

from ..base import WorkloadClient

LINK_LOAD_COLS = "id1, id2, link_type, visibility, data, time, version"
COUNT_LOAD_COLS = "id, link_type, count, time, version"
NODE_LOAD_COLS = "id, type, version, time, data"


class Db:
    """A DB-API connection with ``execute`` (sqlite3), autocommit: an explicit BEGIN
    (the binding's ``begin_write``) for a write."""

    bulk_text = False   # the load sends rows (True: COPY text)

    def __init__(self, endpoint, st):
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
                                  f"({self.st.markers(len(cols.split(',')))})", rows)
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


class DbClient(WorkloadClient):
    """A LinkBench client thread on one connection (``self.db``): what the load and the
    request clients share. Subclasses set ``endpoint``, ``st`` and ``_bind()``."""

    db: Db

    def is_broken(self) -> bool:
        return self.db.is_broken()

    def reconnect(self) -> None:
        self.db.close()
        self.db = self.st.open(self.endpoint)
        self._bind()

    def close(self) -> None:
        self.db.close()
