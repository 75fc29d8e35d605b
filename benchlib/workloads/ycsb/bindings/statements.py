"""YCSB on any SQL dialect: its statements, its schema work (create the table, index it,
fresh statistics after the load) and its DB interface on a DB-API connection, through
the target's dialect (:mod:`benchlib.targets.sql`), so that a SQL DBMS needs no YCSB file
of its own; PostgreSQL's and MariaDB's bindings subclass it for their drivers' fast paths
and C loops.

The table is YCSB's ``usertable``: ``ycsb_key`` (VARCHAR(255) primary key, as the JDBC
binding creates it) and ``field0 … fieldN-1``. Statements are indexed by field: index
``-1`` is "all fields" (readallfields / writeallfields), ``i`` is field i alone. Names
are checked and quoted by the target's :class:`~benchlib.targets.dialect.Dialect`,
markers are its own (``?``, ``%s``, ``$1``).
"""
from __future__ import annotations

from ....targets.dialect import Dialect
from ....targets.sql import count_rows, run_statements
from . import KEY_COLUMN, NOT_FOUND, OK, YcsbBinding


class YcsbStatements:
    def __init__(self, table: str, fields: list[str], dialect: Dialect):
        """Table and field names become quoted identifiers of ``dialect``; its markers
        (numbered ones, $1, $2 …, where it has them) the parameters."""
        q, p = dialect.quote_ident, dialect.marker
        self.table = table = q(table)
        self.fields = [q(f) for f in fields]
        self.key = key = q(KEY_COLUMN)
        n = len(self.fields)
        cols = ", ".join(self.fields)
        self.read = {-1: f"SELECT {key}, {cols} FROM {table} WHERE {key} = {p(1)}"}
        self.scan = {-1: f"SELECT {key}, {cols} FROM {table} WHERE {key} >= {p(1)} "
                         f"ORDER BY {key} LIMIT {p(2)}"}
        self.update = {-1: f"UPDATE {table} SET "
                           + ", ".join(f"{f} = {p(i + 1)}" for i, f in enumerate(self.fields))
                           + f" WHERE {key} = {p(n + 1)}"}
        for i, f in enumerate(self.fields):
            self.read[i] = f"SELECT {key}, {f} FROM {table} WHERE {key} = {p(1)}"
            self.scan[i] = (f"SELECT {key}, {f} FROM {table} WHERE {key} >= {p(1)} "
                            f"ORDER BY {key} LIMIT {p(2)}")
            self.update[i] = f"UPDATE {table} SET {f} = {p(1)} WHERE {key} = {p(2)}"
        self.insert = f"INSERT INTO {table} ({key}, {cols}) VALUES ({dialect.markers(n + 1)})"
        self.delete = f"DELETE FROM {table} WHERE {key} = {p(1)}"


class SqlYcsb(YcsbBinding):
    """YCSB's DB interface on one autocommit connection of the driver's own (sqlite3,
    psycopg, mysqlclient, PyMySQL …), and the schema work on ``target.connect()``'s; the
    table's DDL, bulk load, statistics and what a write found are the dialect's."""

    @classmethod
    def create_table(cls, target, cfg) -> None:
        d = target.dialect
        columns = [(KEY_COLUMN, "VARCHAR(255)")] + [(f, d.text_type) for f in cfg.field_names]
        run_statements(target, [d.drop_table(cfg.table), d.create_table(
            cfg.table, columns, (KEY_COLUMN,), engine=getattr(target, "engine", None))])

    @classmethod
    def create_index(cls, target, table: str, column: str) -> None:
        run_statements(target, [target.dialect.create_index(f"{table}_{column}_idx", table,
                                                            [column], text=[column])])

    @classmethod
    def count_rows(cls, target, table: str) -> int | None:
        return count_rows(target, table)

    @classmethod
    def after_load(cls, target, table: str) -> None:
        # fresh statistics, as a DBA would before measuring
        run_statements(target, target.dialect.analyze([table]))

    def __init__(self, endpoint, props):
        self.conn = endpoint.connect()   # the driver's own, autocommit
        self.cur = self.conn.cursor()
        self.dialect = d = endpoint.dialect
        self.st = YcsbStatements(props.table, props.field_names, d)
        self.load_args = (props.table, [KEY_COLUMN, *props.field_names])

    def read(self, key, field):
        cur = self.cur
        cur.execute(self.st.read[field], (key,))
        return OK if cur.fetchone() is not None else NOT_FOUND

    def scan(self, key, count, field):
        cur = self.cur
        cur.execute(self.st.scan[field], (key, count))
        cur.fetchall()
        return OK

    def update(self, key, field, values):
        cur = self.cur
        cur.execute(self.st.update[field], (*values, key))
        return NOT_FOUND if self.dialect.rows_matched(cur, update=True) == 0 else OK

    def insert(self, key, values):
        self.cur.execute(self.st.insert, (key, *values))
        return OK

    def delete(self, key):
        self.cur.execute(self.st.delete, (key,))
        return OK

    def insert_batch(self, rows):
        # keys and values are letters and digits (ycsb.ValuePool): no escaping needed
        d, (table, cols) = self.dialect, self.load_args
        d.bulk_load(self.conn, table, cols, d.bulk_payload(table, cols, rows, plain=True))
        return OK  # the records are counted from the chunk's units

    def insert_copy(self, text):
        """A batch made as COPY's text already (ValuePool.copy_text; a dialect whose
        ``copy_text`` says its bulk load takes it)."""
        table, cols = self.load_args
        self.dialect.bulk_load(self.conn, table, cols, text)
        return OK

    def close(self):
        self.conn.close()
