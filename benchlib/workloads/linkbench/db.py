"""One client thread's connections, the same few calls on every driver, with the
transactions of LinkStoreSql (mdcallag/linkbench): reads and node writes on an
autocommit connection (``rows``, ``run``: one statement each); a link write on a second
connection with autocommit off (``begin`` opens it on first use, then ``tx_rows`` /
``tx_run``, ``commit`` or ``rollback``), where the transaction starts with its first
statement, no BEGIN of its own; the load's bulk writes in autocommit.

:class:`Db` is a DB-API driver's; a dialect's binding (``bindings/<dialect>.py``)
subclasses it where its driver differs, and opens it (``binding.open(endpoint)``).
"""
from __future__ import annotations

from ..base import WorkloadClient
from ..reconnect import Reconnecting, ReconnectingClient

LINK_LOAD_COLS = "id1, id2, link_type, visibility, data, time, version"
COUNT_LOAD_COLS = "id, link_type, count, time, version"
NODE_LOAD_COLS = "id, type, version, time, data"


class Db:
    bulk_text = False   # the load sends rows (True: COPY text)

    def __init__(self, endpoint, st):
        self.endpoint, self.st = endpoint, st
        self.conn = endpoint.connect()      # autocommit
        self.cur = self.conn.cursor()
        self.wconn = self.wcur = None       # link writes, opened by the first begin()

    def rows(self, sql: str, args) -> list:
        self.cur.execute(sql, args)
        return self.cur.fetchall()

    def run(self, sql: str, args) -> int:
        self.cur.execute(sql, args)
        return self.cur.rowcount

    # ------------------------------------------------------------ a link write
    def open_writer(self):
        """A connection with autocommit off (the driver's own way)."""
        raise NotImplementedError

    def open_writes(self) -> None:
        """The link-write connection, opened before the first request (as LinkStoreSql
        opens both at start), so that no request's latency holds a connect."""
        if self.wconn is None:
            self.wconn = self.open_writer()
            self.wcur = self.wconn.cursor()

    def begin(self) -> None:
        self.open_writes()

    def tx_rows(self, sql: str, args) -> list:
        self.wcur.execute(sql, args)
        return self.wcur.fetchall()

    def tx_run(self, sql: str, args) -> int:
        self.wcur.execute(sql, args)
        return self.wcur.rowcount

    def commit(self) -> None:
        self.wconn.commit()

    def rollback(self) -> None:
        try:
            self.wconn.rollback()
        except Exception:
            pass

    # ------------------------------------------------------------ the load
    def bulk(self, table: str, cols: str, rows) -> None:
        """Rows in one transaction: the drivers send executemany of an INSERT as multi-row
        statements, several when the rows pass the driver's statement size (mysqlclient's
        ~500 KB), each committed alone in autocommit; a batch cut by a lost connection
        must leave none of its rows, so that the load sends it again whole (a part left
        behind made the resent batch fail on its first duplicate key)."""
        self.cur.execute("BEGIN")
        try:
            self.insert_rows(table, cols, rows)
            self.cur.execute("COMMIT")
        except BaseException:
            try:
                self.cur.execute("ROLLBACK")
            except Exception:  # noqa: BLE001 - the connection is gone: the server rolled back
                pass
            raise

    def insert_statement(self, table: str, cols: str, rows: list) -> None:
        """load.mode java: the rows as one multi-row INSERT in autocommit, as LinkStoreSql's
        addBulkLinks / addBulkCounts / bulkAddNodes send them (all its rows or none)."""
        one = f"({self.st.markers(len(cols.split(',')))})"
        self.cur.execute(f"INSERT INTO {table} ({cols}) VALUES " + ", ".join([one] * len(rows)),
                         [v for r in rows for v in r])

    def insert_rows(self, table: str, cols: str, rows) -> None:
        self.cur.executemany(f"INSERT INTO {table} ({cols}) VALUES "
                             f"({self.st.markers(len(cols.split(',')))})", rows)

    def close(self) -> None:
        for c in (self.conn, self.wconn):
            try:
                if c is not None:
                    c.close()
            except Exception:
                pass


class DbClient(ReconnectingClient, WorkloadClient):
    """A LinkBench client thread on its connections (``self.db``, both reopened by the
    reconnection policy when either is lost): what the load and the request clients share.
    Subclasses set ``endpoint``, ``st`` and ``_bind()``; a write transaction open on a
    lost connection was rolled back by its server, so none is half-counted."""

    def _connect(self, what: str) -> None:
        self.link = Reconnecting(lambda: self.st.open(self.endpoint), what,
                                 self.endpoint.target_class(), conn_of=_conns)

    @property
    def db(self) -> Db:
        return self.link.session


def _conns(db: Db) -> tuple:
    return tuple(c for c in (db.conn, db.wconn) if c is not None)
