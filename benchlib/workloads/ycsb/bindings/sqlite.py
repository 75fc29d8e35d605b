"""YCSB on SQLite: one sqlite3 connection per client thread (autocommit, statements
cached by sqlite3), the load in one transaction per batch; the schema work of
:class:`.statements.SqlYcsb` (no statistics step: SQLite plans without them)."""
from __future__ import annotations

from . import NOT_FOUND, OK
from .statements import SqlYcsb, YcsbStatements


class SqliteYcsb(SqlYcsb):
    """YCSB's DB interface on one sqlite3 connection (autocommit, cached statements)."""

    def __init__(self, endpoint, props):
        self.conn = endpoint.connect()
        self.st = YcsbStatements(props.table, props.field_names, endpoint.dialect)
        self.nfields = len(props.field_names)

    def read(self, key, field):
        row = self.conn.execute(self.st.read[field], (key,)).fetchone()
        return OK if row is not None else NOT_FOUND

    def scan(self, key, count, field):
        self.conn.execute(self.st.scan[field], (key, count)).fetchall()
        return OK

    def update(self, key, field, values):
        cur = self.conn.execute(self.st.update[field], (*values, key))
        return OK if cur.rowcount else NOT_FOUND

    def insert(self, key, values):
        self.conn.execute(self.st.insert, (key, *values))
        return OK

    def delete(self, key):
        self.conn.execute(self.st.delete, (key,))
        return OK

    def insert_batch(self, rows):
        c = self.conn
        c.execute("BEGIN")
        try:
            c.executemany(self.st.insert, rows)
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return OK  # the records are counted from the chunk's units

    def close(self):
        self.conn.close()
