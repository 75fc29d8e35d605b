"""One client thread's connections, the same few calls on every driver, with the
transactions of LinkStoreSql (mdcallag/linkbench): reads and node writes on an
autocommit connection (``rows``, ``run``: one statement each, ``run`` the rows it found
by the driver's truth, None where the driver cannot say); a link write on a second
connection (``begin`` opens it on first use, then ``tx_rows`` / ``tx_run``, ``commit``
or ``rollback``) as the dialect opens a writer: autocommit off where the transaction
starts with its first statement (MariaDB), else its BEGIN (SQLite's BEGIN IMMEDIATE, on
the one connection a thread has there); the load's batches by the dialect's bulk load.

:class:`Db` is a DB-API driver's; a dialect's binding (``bindings/<dialect>.py``)
subclasses it where LinkBench's own client does otherwise (PostgreSQL's pipelined BEGIN).
"""
from __future__ import annotations

from ..base import WorkloadClient
from ..reconnect import Reconnecting, ReconnectingClient

LINK_LOAD_COLS = "id1, id2, link_type, visibility, data, time, version"
COUNT_LOAD_COLS = "id, link_type, count, time, version"
NODE_LOAD_COLS = "id, type, version, time, data"


class Db:
    def __init__(self, endpoint, st):
        self.endpoint, self.st, self.dialect = endpoint, st, st.dialect
        self.conn = endpoint.connect()      # autocommit
        self.cur = self.conn.cursor()
        self.wconn = self.wcur = None       # link writes, opened by the first begin()

    def rows(self, sql: str, args) -> list:
        self.cur.execute(sql, args)
        return self.cur.fetchall()

    def run(self, sql: str, args) -> int | None:
        self.cur.execute(sql, args)
        return self.dialect.rows_matched(self.cur, update=True)

    # ------------------------------------------------------------ a link write
    def open_writes(self) -> None:
        """The link-write connection, opened before the first request (as LinkStoreSql
        opens both at start), so that no request's latency holds a connect; where the
        DBMS has one writer per database, the thread's one connection."""
        if self.wconn is None:
            if self.dialect.one_connection:
                self.wconn, self.wcur = self.conn, self.cur
            else:
                self.wconn = self.dialect.open_writer(self.endpoint.connect)
                self.wcur = self.wconn.cursor()

    def begin(self) -> None:
        self.open_writes()
        if self.dialect.writer_autocommit:
            self.wcur.execute(self.dialect.begin_write)

    def tx_rows(self, sql: str, args) -> list:
        self.wcur.execute(sql, args)
        return self.wcur.fetchall()

    def tx_run(self, sql: str, args) -> int | None:
        self.wcur.execute(sql, args)
        return self.dialect.rows_matched(self.wcur, update=True)

    def commit(self) -> None:
        if self.dialect.writer_autocommit:
            self.wcur.execute("COMMIT")
        else:
            self.wconn.commit()

    def rollback(self) -> None:
        try:
            if self.dialect.writer_autocommit:
                self.wcur.execute("ROLLBACK")
            else:
                self.wconn.rollback()
        except Exception:
            pass

    # ------------------------------------------------------------ the load
    def bulk(self, table: str, cols: str, payload) -> None:
        """A batch (``Dialect.bulk_payload``'s, made before it is timed) into ``table``
        (quoted) in one transaction, the dialect's fastest way (COPY, executemany): a
        batch cut by a lost connection must leave none of its rows, so that the load sends
        it again whole (a part left behind made the resent batch fail on its first
        duplicate key)."""
        self.dialect.bulk_load(self.conn, self.st.unquoted[table],
                               [c.strip() for c in cols.split(",")], payload)

    def insert_statement(self, table: str, cols: str, rows: list) -> None:
        """load.mode java: the rows as one multi-row INSERT in autocommit, as LinkStoreSql's
        addBulkLinks / addBulkCounts / bulkAddNodes send them (all its rows or none)."""
        one = f"({self.st.markers(len(cols.split(',')))})"
        self.cur.execute(f"INSERT INTO {table} ({cols}) VALUES " + ", ".join([one] * len(rows)),
                         [v for r in rows for v in r])

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

    def _connect(self, what: str, open_session=None) -> None:
        """The thread's session: ``open_session()``'s (a C loop's), else the binding's Db."""
        self.link = Reconnecting(open_session or (lambda: self.st.open(self.endpoint)), what,
                                 self.endpoint.target_class(), conn_of=_conns)

    @property
    def db(self) -> Db:
        return self.link.session


def _conns(db: Db) -> tuple:
    return tuple(c for c in (db.conn, db.wconn) if c is not None)
