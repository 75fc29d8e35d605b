"""ybio on SQLite: the filler as TEXT, the update as ``UPDATE … RETURNING`` (3.35+;
before it, the UPDATE and the range's count in one transaction)."""
from __future__ import annotations

import sqlite3

from .sql import SqlYbio


class SqliteYbio(SqlYbio):
    @staticmethod
    def filler_type(filler: int) -> str:
        return "TEXT"

    @staticmethod
    def update_sql(table: str, where: str) -> str:
        return f"UPDATE {table} SET scratch = scratch + 1 {where} RETURNING scratch"

    def calls(self, st, prepared):
        ex = self.conn.execute   # sqlite3 caches its prepared statements either way
        r_sql, u_sql, check = st.read, st.update, st.update_check
        returning = sqlite3.sqlite_version_info >= (3, 35)

        def read(lo, hi):
            return ex(r_sql, (lo, hi)).fetchone()[0]

        def update(lo, hi):
            if returning:
                return len(ex(u_sql, (lo, hi)).fetchall())
            ex("BEGIN")
            try:
                ex(u_sql.split(" RETURNING ")[0], (lo, hi))
                n = ex(check, (lo, hi)).fetchone()[0]
                ex("COMMIT")
            except BaseException:
                ex("ROLLBACK")
                raise
            return n
        return read, update
