"""kv on any SQL dialect: one binding, which speaks to the DBMS through the target's
dialect (:mod:`benchlib.targets.sql`), so a SQL DBMS needs no kv file of its own.

A two-column table, ``k`` the primary key (the dialect's key type: keys in byte order, as
Redis orders its members; stored in key order where the DBMS chooses), ``v`` the value (a
long text); a scan is ``k >= ? ORDER BY k LIMIT n``; the prepare's batches are one
transaction each (executemany); after the load, the dialect's statistics. An update or
delete that found no row is a miss by the driver's count (``Dialect.rows_matched``);
where the driver cannot say (rowcount −1), it counts OK. Names are checked and quoted by
the dialect; values are bound.
"""
from __future__ import annotations

from ....schema import EMPTY as MISS  # a key a remove took away: an outcome, not an error
from ....schema import OK
from ....targets.sql import count_rows, run_statements
from . import COLUMNS


class SqlStatements:
    def __init__(self, dialect, table: str):
        t = dialect.quote_ident(table)
        ph = dialect.placeholder
        self.read = f"SELECT v FROM {t} WHERE k = {ph}"
        self.insert = f"INSERT INTO {t} (k, v) VALUES ({ph}, {ph})"
        self.delete = f"DELETE FROM {t} WHERE k = {ph}"
        self.update = f"UPDATE {t} SET v = {ph} WHERE k = {ph}"
        self.scan = f"SELECT k, v FROM {t} WHERE k >= {ph} ORDER BY k LIMIT {ph}"
        self.scan_keys = f"SELECT k FROM {t} WHERE k >= {ph} ORDER BY k LIMIT {ph}"
        self.drop = f"DROP TABLE IF EXISTS {t}"
        self.count = f"SELECT count(*) FROM {t}"


class SqlKv:
    """The operations on one autocommit connection of the driver's own (sqlite3,
    psycopg, mysqlclient, PyMySQL …: all take ``cursor.execute(sql, params)``)."""

    @classmethod
    def open(cls, endpoint, table: str):
        return cls(endpoint.connect(), table, endpoint.dialect)

    @staticmethod
    def key_prefix(table: str) -> str:
        return ""

    @classmethod
    def clear(cls, target, table: str, key_size: int) -> None:
        """The table made anew."""
        d = target.dialect
        run_statements(target, [d.drop_table(table), d.create_table(
            table, [(COLUMNS[0], d.key_type(key_size)), (COLUMNS[1], d.long_text_type)],
            COLUMNS[:1], clustered=True)])

    @classmethod
    def after_load(cls, target, table: str) -> None:
        """Fresh statistics, as a DBA would before measuring (the dialect's)."""
        run_statements(target, target.dialect.analyze([table]))

    @classmethod
    def count_keys(cls, target, table: str) -> int:
        """The table's rows (a rerun's check of its load); the driver's error if it is gone."""
        return count_rows(target, table)

    def __init__(self, conn, table: str, dialect):
        self.conn = conn
        self.dialect = dialect
        self.st = SqlStatements(dialect, table)
        self.cur = conn.cursor()

    def read(self, key):
        cur = self.cur
        cur.execute(self.st.read, (key,))
        return OK if cur.fetchone() is not None else MISS

    def insert(self, key, value):
        self.cur.execute(self.st.insert, (key, value))
        return OK

    def delete(self, key):
        cur = self.cur
        cur.execute(self.st.delete, (key,))
        return MISS if self.dialect.rows_matched(cur) == 0 else OK

    def update(self, key, value):
        cur = self.cur
        cur.execute(self.st.update, (value, key))
        return MISS if self.dialect.rows_matched(cur, update=True) == 0 else OK

    def scan(self, key, n):
        cur = self.cur
        cur.execute(self.st.scan, (key, n))
        cur.fetchall()
        return OK

    def scan_keys(self, key, n) -> list[str]:
        self.cur.execute(self.st.scan_keys, (key, n))
        return [r[0] for r in self.cur.fetchall()]

    def _batch(self, sql, rows):
        self.dialect.execute_many(self.cur, sql, rows)
        return OK

    def load(self, pairs):
        return self._batch(self.st.insert, pairs)

    def remove(self, keys):
        return self._batch(self.st.delete, [(k,) for k in keys])

    def count(self) -> int:
        self.cur.execute(self.st.count)
        return int(self.cur.fetchone()[0])

    def close(self):
        self.conn.close()
