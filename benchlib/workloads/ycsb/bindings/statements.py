"""YCSB's statements in SQL, shared by the SQL dialects' bindings, and the schema work
they share (create the table, index it, fresh statistics after the load).

The table is YCSB's ``usertable``: ``ycsb_key`` (VARCHAR(255) primary key, as the JDBC
binding creates it) and ``field0 … fieldN-1``. Statements are indexed by field: index
``-1`` is "all fields" (readallfields / writeallfields), ``i`` is field i alone. Names
are checked and quoted by the target's :class:`~benchlib.targets.dialect.Dialect`,
markers are its own (``?``, ``%s``, ``$1``).
"""
from __future__ import annotations

from ....targets.dialect import Dialect
from . import KEY_COLUMN, YcsbBinding


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

    def create_table(self, text_type: str = "TEXT", key_type: str = "VARCHAR(255)") -> str:
        cols = ", ".join(f"{f} {text_type}" for f in self.fields)
        return f"CREATE TABLE {self.table} ({self.key} {key_type} PRIMARY KEY, {cols})"


def index_sql(table: str, column: str, dialect: Dialect, prefix_len: int | None = None,
              if_not_exists: bool = True) -> str:
    """CREATE INDEX <table>_<column>_idx ON <table> (<column>[(prefix)]), quoted."""
    q = dialect.quote_ident
    col = q(column) + (f"({prefix_len})" if prefix_len else "")
    ine = "IF NOT EXISTS " if if_not_exists else ""
    return f"CREATE INDEX {ine}{q(f'{table}_{column}_idx'[:63])} ON {q(table)} ({col})"


def execute(target, *sqls: str) -> None:
    """Run ``sqls`` in order on a connection of the target's own (autocommit), then close it."""
    conn = target.connect()
    try:
        cur = conn.cursor()
        for sql in sqls:
            cur.execute(sql)
        cur.close()
    finally:
        conn.close()


def count_rows(target, table: str) -> int:
    """``SELECT COUNT(*)`` of ``table`` (quoted) on a connection of the target's own."""
    conn = target.connect()
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT COUNT(*) FROM {target.dialect.quote_ident(table)}")
        n = int(cur.fetchone()[0])
        cur.close()
        return n
    finally:
        conn.close()


class SqlYcsb(YcsbBinding):
    """The schema work of a SQL dialect's binding, on a connection from ``target.connect()``:
    what differs between dialects is said by the class attributes below."""

    text_type = "TEXT"
    index_prefix_len: int | None = None     # MySQL indexes a TEXT column by a prefix
    index_if_not_exists = True
    analyze: str | None = None               # after the load, "{table}" quoted

    @classmethod
    def table_options(cls, target) -> str:
        """What follows CREATE TABLE's parentheses (MySQL's ENGINE=…)."""
        return ""

    @classmethod
    def create_table(cls, target, cfg) -> None:
        st = YcsbStatements(cfg.table, cfg.field_names, target.dialect)
        execute(target, f"DROP TABLE IF EXISTS {st.table}",
                st.create_table(cls.text_type) + cls.table_options(target))

    @classmethod
    def create_index(cls, target, table: str, column: str) -> None:
        execute(target, index_sql(table, column, target.dialect, cls.index_prefix_len,
                                  cls.index_if_not_exists))

    @classmethod
    def count_rows(cls, target, table: str) -> int | None:
        return count_rows(target, table)

    @classmethod
    def after_load(cls, target, table: str) -> None:
        if cls.analyze:   # fresh statistics, as a DBA would before measuring
            execute(target, cls.analyze.format(table=target.dialect.quote_ident(table)))
