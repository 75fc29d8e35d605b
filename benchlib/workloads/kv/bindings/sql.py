"""kv on SQL (sqlite, postgres, mysql): the statements and operations the three share.

A two-column table, ``k`` the primary key, ``v`` the value; a scan is ``k >= ? ORDER BY
k LIMIT n``; the prepare's batches are one transaction each (executemany). Each
dialect's file subclasses :class:`SqlKv` with its ``CREATE TABLE`` (keys in binary
order, as Redis orders its members) and what it does after the load. Names are checked
and quoted by the target's :class:`~benchlib.targets.dialect.Dialect`; values are bound.
"""
from __future__ import annotations

from ....schema import EMPTY as MISS  # a key a remove took away: an outcome, not an error
from ....schema import OK


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
    psycopg, mysqlclient, PyMySQL: all take ``cursor.execute(sql, params)``)."""

    # the table, {t} quoted, {key_size} in bytes: each dialect's own
    create_table = "CREATE TABLE {t} (k TEXT PRIMARY KEY, v TEXT)"

    @classmethod
    def open(cls, endpoint, table: str):
        return cls(endpoint.connect(), table, endpoint.dialect)

    @staticmethod
    def key_prefix(table: str) -> str:
        return ""

    @classmethod
    def clear(cls, target, table: str, key_size: int) -> None:
        """The table made anew."""
        conn = target.connect()
        try:
            cur = conn.cursor()
            cur.execute(SqlStatements(target.dialect, table).drop)
            cur.execute(cls.create_table.format(t=target.dialect.quote_ident(table),
                                                key_size=key_size))
        finally:
            conn.close()

    @classmethod
    def after_load(cls, target, table: str) -> None:
        """Nothing by default (a dialect whose planner wants fresh statistics says so)."""

    @classmethod
    def count_keys(cls, target, table: str) -> int:
        """The table's rows (a rerun's check of its load); the driver's error if it is gone."""
        conn = target.connect()
        try:
            cur = conn.cursor()
            cur.execute(SqlStatements(target.dialect, table).count)
            return int(cur.fetchone()[0])
        finally:
            conn.close()

    @classmethod
    def _statement(cls, target, sql: str) -> None:
        conn = target.connect()
        try:
            conn.cursor().execute(sql)
        finally:
            conn.close()

    def __init__(self, conn, table: str, dialect):
        self.conn = conn
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
        return OK if cur.rowcount else MISS

    def update(self, key, value):
        cur = self.cur
        cur.execute(self.st.update, (value, key))
        return OK if cur.rowcount else MISS

    def scan(self, key, n):
        cur = self.cur
        cur.execute(self.st.scan, (key, n))
        cur.fetchall()
        return OK

    def scan_keys(self, key, n) -> list[str]:
        self.cur.execute(self.st.scan_keys, (key, n))
        return [r[0] for r in self.cur.fetchall()]

    def _batch(self, sql, rows):
        cur = self.cur
        cur.execute("BEGIN")
        try:
            cur.executemany(sql, rows)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
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
