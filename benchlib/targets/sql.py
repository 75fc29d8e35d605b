"""YCSB's statements in SQL, shared by the SQL targets.

The table is YCSB's ``usertable``: ``ycsb_key`` (VARCHAR(255) primary key, as the JDBC
binding creates it) and ``field0 … fieldN-1``. Statements are indexed by field: index
``-1`` is "all fields" (readallfields / writeallfields), ``i`` is field i alone.
"""
from __future__ import annotations

import re

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def quote_ident(name: str, dialect: str = "postgres") -> str:
    """``name`` as a quoted SQL identifier: checked to be a plain name (params checks
    every name a user gives; this is the last guard), then quoted in the dialect's way."""
    if not IDENTIFIER.match(name):
        raise ValueError(f"{name!r} is not a plain SQL name (letters, digits, _; at most 63)")
    return f"`{name}`" if dialect == "mysql" else f'"{name}"'


class YcsbStatements:
    def __init__(self, table: str, fields: list[str], ph: str, numbered: bool = False,
                 dialect: str = "postgres"):
        """``ph`` is the driver's placeholder (``?``, ``%s``); ``numbered`` gives $1, $2 …
        Table and field names are quoted identifiers."""
        self.table = table = quote_ident(table, dialect)
        self.fields = [quote_ident(f, dialect) for f in fields]
        self.key = key = quote_ident("ycsb_key", dialect)

        def p(i: int) -> str:
            return f"${i}" if numbered else ph

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
        self.insert = (f"INSERT INTO {table} ({key}, {cols}) VALUES ("
                       + ", ".join(p(i + 1) for i in range(n + 1)) + ")")
        self.delete = f"DELETE FROM {table} WHERE {key} = {p(1)}"

    def create_table(self, text_type: str = "TEXT", key_type: str = "VARCHAR(255)") -> str:
        cols = ", ".join(f"{f} {text_type}" for f in self.fields)
        return f"CREATE TABLE {self.table} ({self.key} {key_type} PRIMARY KEY, {cols})"


def index_sql(table: str, column: str, dialect: str, prefix_len: int | None = None,
              if_not_exists: bool = True) -> str:
    """CREATE INDEX <table>_<column>_idx ON <table> (<column>[(prefix)]), quoted."""
    name = quote_ident(f"{table}_{column}_idx"[:63], dialect)
    col = quote_ident(column, dialect) + (f"({prefix_len})" if prefix_len else "")
    ine = "IF NOT EXISTS " if if_not_exists else ""
    return f"CREATE INDEX {ine}{name} ON {quote_ident(table, dialect)} ({col})"
