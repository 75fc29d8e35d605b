"""MariaDB's / MySQL's SQL (mysqlclient or PyMySQL): backquoted names, a table's storage
engine, ascii_bin keys, LONGTEXT, text indexed by a prefix, ANALYZE TABLE, INSERT … ON
DUPLICATE KEY UPDATE; the bulk load as one multi-row INSERT; an UPDATE's ``rowcount``
counts rows *changed* (a row set to the value it had counts 0), so a 0 is asked again
of the server's own count of the rows it matched."""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import starmap
from typing import ClassVar

from .base import SqlDialect

ER_DUP_ENTRY = 1062
_MATCHED = re.compile(rb"Rows matched: (\d+)")


def _info(cursor) -> bytes:
    """The server's info line of the cursor's last statement (mysqlclient: the
    connection's ``info()``; PyMySQL: the result's message)."""
    result = getattr(cursor, "_result", None)
    message = getattr(result, "message", None)
    if message is not None:
        return bytes(message)
    info = getattr(cursor.connection, "info", None)
    text = info() if callable(info) else None
    return text.encode() if isinstance(text, str) else (text or b"")


@dataclass(frozen=True)
class MysqlDialect(SqlDialect):
    name: str = "mysql"
    placeholder: str = "%s"
    ident_quote: str = "`"
    long_text_type: ClassVar[str] = "LONGTEXT"
    text_index_prefix: ClassVar[int | None] = 32
    writer_autocommit: ClassVar[bool] = False

    def serial_key(self, column: str) -> str:
        return f"{column} bigint NOT NULL AUTO_INCREMENT PRIMARY KEY" if self.quote_ident(column) else ""

    def key_type(self, size: int) -> str:
        return f"VARCHAR({size}) CHARACTER SET ascii COLLATE ascii_bin"

    def table_options(self, clustered=False, engine=None) -> str:
        if engine is None:
            return ""
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", str(engine)):
            raise ValueError(f"engine {str(engine)[:60]!r} is not a storage engine's name")
        return f" ENGINE={engine}"

    def analyze(self, tables, *, vacuum=True) -> list[str]:
        return [f"ANALYZE TABLE {', '.join(self.quote_ident(t) for t in tables)}"]

    def upsert(self, table, columns, key, update, values=None):
        q = self.quote_ident
        return (f"INSERT INTO {q(table)} ({', '.join(q(c) for c in columns)}) VALUES "
                f"({values or self.markers(len(columns))}) ON DUPLICATE KEY UPDATE {update}")

    def old(self, table, column):
        return self.quote_ident(column)

    def rows_matched(self, cursor, *, update=False):
        n = cursor.rowcount
        if n is None or n < 0:
            return None
        if update and n == 0:   # changed none: matched none, or set what was there
            m = _MATCHED.search(_info(cursor))
            return int(m.group(1)) if m else n   # no such line: not an UPDATE
        return n

    def connection_lost(self, exc):
        # the client library's "gone away" (2006), "lost connection" (2013, 2055), the
        # server's "connection was killed" (1927), shutdown (1053), inactivity (4031);
        # any other server code (1000-1999): the server answered
        if type(exc).__module__.split(".")[0] not in ("MySQLdb", "pymysql"):
            return None
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        if code in (2006, 2013, 2055, 1927, 1053, 4031):
            return True
        return False if code is not None and 1000 <= code < 2000 else None

    def ping(self, conn):
        if type(conn).__module__.startswith("pymysql"):
            conn.ping(reconnect=False)
        else:
            conn.ping()

    def mark_sql(self, table):
        from ..ownership import MARK
        # metadata only: the table is not copied
        return [f"ALTER TABLE {self.quote_ident(table)} COMMENT = '{MARK}'"]

    def is_duplicate_key(self, exc):
        return bool(getattr(exc, "args", None)) and exc.args[0] == ER_DUP_ENTRY

    def open_writer(self, connect):
        """Autocommit off: the server opens a transaction with its first statement, no
        BEGIN sent (as Connector/J with autocommit off)."""
        conn = connect()
        conn.autocommit(False)
        return conn

    def bulk_payload(self, table, columns, rows, *, plain=False):
        """``plain``: the rows as one INSERT's VALUES text, each value in quotes as it is
        (what JDBC's rewriteBatchedStatements sends); else the rows, which the library's
        executemany sends as multi-row INSERTs, values escaped."""
        if not plain:
            return rows
        head = self.insert_sql(table, columns).split(" VALUES ")[0] + " VALUES "
        try:
            return head + ",".join("('" + "','".join(r) + "')" for r in rows)
        except TypeError:   # numbers among the values: written as numbers (str.format: C)
            row = "(" + ",".join("{}" if isinstance(v, int) else "'{}'" for v in rows[0]) + ")"
            return head + ",".join(starmap(row.format, rows))

    def bulk_load(self, conn, table, columns, payload) -> None:
        if isinstance(payload, str):
            with conn.cursor() as cur:   # one statement: all its rows or none
                cur.execute(payload)
            return
        super().bulk_load(conn, table, columns, payload)
