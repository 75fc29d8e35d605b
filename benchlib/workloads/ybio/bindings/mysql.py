"""ybio on MariaDB/MySQL (mysqlclient or PyMySQL): InnoDB tables; no data-modifying CTE
and no UPDATE … RETURNING, so an update is the UPDATE, then the range's count, in one
transaction; the load's batch is one multi-row INSERT (the library's executemany, values
escaped)."""
from __future__ import annotations

from .sql import SqlYbio


class MysqlYbio(SqlYbio):
    table_options = " ENGINE=InnoDB"
    analyze = "ANALYZE TABLE {t}"

    def calls(self, st, prepared):
        conn = self.conn          # no server-side prepared statements on MariaDB here
        cur = conn.cursor()
        r_sql, u_sql, check = st.read, st.update, st.update_check

        def read(lo, hi):
            cur.execute(r_sql, (lo, hi))
            return int(cur.fetchone()[0])

        def update(lo, hi):
            conn.begin()
            try:
                cur.execute(u_sql, (lo, hi))
                cur.execute(check, (lo, hi))
                n = int(cur.fetchone()[0])
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
            return n
        return read, update

    def insert_batch(self, st, data) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(st.insert, data)
