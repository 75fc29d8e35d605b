"""PostgreSQL's SQL (psycopg 3): bytea, keys in the "C" collation, COPY for the bulk
load, VACUUM ANALYZE after it, INSERT … ON CONFLICT, UPDATE … RETURNING, a duplicate key
by its SQLSTATE; libpq's numbered markers understood ($1 …) beside psycopg's ``%s``."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import starmap
from typing import ClassVar

from .base import SqlDialect

UNIQUE_VIOLATION = "23505"


def _copy_value(v) -> str:
    """A value in COPY's text format: NULL as \\N, bytes as bytea's hex, text escaped."""
    if v is None:
        return "\\N"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\\\x" + bytes(v).hex()
    s = str(v)
    if any(c in s for c in "\\\t\n\r"):
        s = s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s


@dataclass(frozen=True)
class PostgresDialect(SqlDialect):
    name: str = "postgres"
    placeholder: str = "%s"
    numbered: bool = True
    bytes_type: ClassVar[str] = "bytea"
    update_returning: ClassVar[bool] = True
    copy_text: ClassVar[bool] = True

    def key_type(self, size: int) -> str:
        return f'VARCHAR({size}) COLLATE "C"'

    def serial_key(self, column: str) -> str:
        return f"{column} bigserial PRIMARY KEY" if self.quote_ident(column) else ""

    def serial_after_load(self, table: str, column: str) -> list[str]:
        """The column's sequence set past the loaded values."""
        t, c = self.quote_ident(table), self.quote_ident(column)
        return [f"SELECT setval(pg_get_serial_sequence('{t}', '{column}'), "
                f"(SELECT COALESCE(MAX({c}), 0) + 1 FROM {t}), false)"]

    def analyze(self, tables, *, vacuum: bool = True) -> list[str]:
        # VACUUM: the visibility map that index-only scans need, set before measuring
        verb = "VACUUM ANALYZE" if vacuum else "ANALYZE"
        return [f"{verb} {self.quote_ident(t)}" for t in tables]

    def connection_lost(self, exc):
        # SQLSTATE class 08 (connection exceptions), admin_shutdown (pg_terminate_backend),
        # crash_shutdown, cannot_connect_now; any other SQLSTATE: the server answered
        state = getattr(exc, "sqlstate", None) if type(exc).__module__.startswith("psycopg") else None
        return (state.startswith("08") or state in ("57P01", "57P02", "57P03")) if state else None

    def ping(self, conn):
        if conn.closed or conn.broken:
            raise ConnectionError("the connection is closed")
        conn.execute("SELECT 1")

    def is_duplicate_key(self, exc):
        return getattr(exc, "sqlstate", None) == UNIQUE_VIOLATION

    def copy_sql(self, table: str, columns) -> str:
        q = self.quote_ident
        return f"COPY {q(table)} ({', '.join(q(c) for c in columns)}) FROM STDIN"

    def bulk_payload(self, table, columns, rows, *, plain=False):
        """COPY text: with ``plain`` the values joined as they are (bytes, or anything
        ``str`` writes), else each escaped (:func:`_copy_value`)."""
        if not rows:
            return b""
        if plain:
            if isinstance(rows[0][0], bytes):
                return b"".join(b"\t".join(r) + b"\n" for r in rows)
            line = "\t".join(["{}"] * len(rows[0])) + "\n"     # str.format: C, no call per value
            return "".join(starmap(line.format, rows)).encode()
        # numbers and bytes inline (a load's values), anything else escaped
        return "".join("\t".join("\\\\x" + v.hex() if type(v) is bytes else str(v) if type(v) is int
                                 else _copy_value(v) for v in r) + "\n" for r in rows).encode()

    def bulk_load(self, conn, table, columns, payload) -> None:
        """One COPY: one statement, so all its rows or none."""
        with conn.cursor() as cur, cur.copy(self.copy_sql(table, columns)) as cp:
            cp.write(payload)
