"""ybio on a DB-API connection (sqlite3, mysqlclient, PyMySQL): what the SQL bindings
share; each dialect's file overrides what its DBMS does its own way."""
from __future__ import annotations


class SqlYbio:
    table_options = ""               # after CREATE TABLE (…)
    analyze = "ANALYZE {t}"          # after the load, {t} the quoted table

    @staticmethod
    def filler_type(filler: int) -> str:
        return f"CHAR({max(filler, 1)})" if filler <= 255 else f"VARCHAR({filler})"

    @staticmethod
    def update_sql(table: str, where: str) -> str:
        """A plain UPDATE; the session counts the range after it (``update_check``)."""
        return f"UPDATE {table} SET scratch = scratch + 1 {where}"

    @classmethod
    def open(cls, endpoint):
        return cls(endpoint.connect())

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        """Why the session's calls cannot run in C on ``dialect`` (None: they can)."""
        return f"ybio has no C loop for dialect {dialect}"

    def __init__(self, conn):
        self.conn = conn

    @staticmethod
    def key(k: int):
        """A key as the session's calls take it (bound as it is)."""
        return k

    def calls(self, st, prepared: bool):
        """``read(lo, hi)`` and ``update(lo, hi)``: the rows each counted."""
        raise NotImplementedError

    @staticmethod
    def rows_data(keys, scratch, filler):
        """A load batch as :meth:`insert_batch` takes it (built before it is timed)."""
        return list(zip(keys, scratch, filler))

    def insert_batch(self, st, data) -> None:
        """The batch's rows in one transaction."""
        cur = self.conn.cursor()
        cur.execute("BEGIN")
        try:
            cur.executemany(st.insert, data)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    def count(self, st) -> int:
        cur = self.conn.cursor()
        try:
            cur.execute(st.count)
            return int(cur.fetchone()[0] or 0)
        finally:
            cur.close()

    def close(self) -> None:
        self.conn.close()
