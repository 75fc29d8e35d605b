"""ybio on any SQL dialect, through a DB-API connection (sqlite3, mysqlclient, PyMySQL …)
and the target's dialect (:mod:`benchlib.targets.sql`): its types, its bulk load, its
transactions; the update ``UPDATE … RETURNING`` where the dialect has it (SQLite), else
the UPDATE, then the range's count, in one transaction (MariaDB/MySQL). PostgreSQL's
binding subclasses it for its data-modifying CTE, libpq's calls and its C loop."""
from __future__ import annotations

from ..sql import COLUMNS


class SqlYbio:
    @staticmethod
    def update_sql(dialect, table: str, where: str) -> str:
        """``UPDATE … RETURNING`` where the dialect has it (the rows it returns are the
        count), else a plain UPDATE; the session counts the range after it (``update_check``)."""
        sql = f"UPDATE {table} SET scratch = scratch + 1 {where}"
        return sql + " RETURNING scratch" if dialect.update_returning else sql

    @classmethod
    def open(cls, endpoint):
        return cls(endpoint.connect(), endpoint.dialect)

    @classmethod
    def native_missing(cls, dialect: str) -> str | None:
        """Why the session's calls cannot run in C on ``dialect`` (None: they can)."""
        return f"ybio has no C loop for dialect {dialect}"

    def __init__(self, conn, dialect=None):
        self.conn, self.dialect = conn, dialect   # the dialect: for the load and the update

    @staticmethod
    def key(k: int):
        """A key as the session's calls take it (bound as it is)."""
        return k

    def calls(self, st, prepared: bool):
        """``read(lo, hi)`` and ``update(lo, hi)``: the rows each counted (statements
        cached by the driver, where it caches them, either way)."""
        cur, d = self.conn.cursor(), self.dialect
        r_sql, u_sql, check = st.read, st.update, st.update_check

        def read(lo, hi):
            cur.execute(r_sql, (lo, hi))
            return int(cur.fetchone()[0])

        def update_returning(lo, hi):
            cur.execute(u_sql, (lo, hi))
            return len(cur.fetchall())

        def update_counted(lo, hi):
            with d.transaction(cur):
                cur.execute(u_sql, (lo, hi))
                cur.execute(check, (lo, hi))
                return int(cur.fetchone()[0])
        return read, (update_returning if d.update_returning else update_counted)

    @staticmethod
    def rows_data(dialect, table: str, keys, scratch, filler):
        """A load batch as :meth:`insert_batch` takes it (built before it is timed: the
        dialect's, keys and numbers and hex filler needing no escaping)."""
        return dialect.bulk_payload(table, COLUMNS, list(zip(keys, scratch, filler)),
                                         plain=True)

    def insert_batch(self, st, data) -> None:
        """The batch's rows in one transaction (the dialect's fastest load)."""
        self.dialect.bulk_load(self.conn, st.name, COLUMNS, data)

    def count(self, st) -> int:
        cur = self.conn.cursor()
        try:
            cur.execute(st.count)
            return int(cur.fetchone()[0] or 0)
        finally:
            cur.close()

    def close(self) -> None:
        self.conn.close()
