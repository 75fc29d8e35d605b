"""YCSB's statements in SQL, shared by the SQL targets.

The table is YCSB's ``usertable``: ``ycsb_key`` (VARCHAR(255) primary key, as the JDBC
binding creates it) and ``field0 … fieldN-1``. Statements are indexed by field: index
``-1`` is "all fields" (readallfields / writeallfields), ``i`` is field i alone.
"""
from __future__ import annotations


class YcsbStatements:
    def __init__(self, table: str, fields: list[str], ph: str, numbered: bool = False):
        """``ph`` is the driver's placeholder (``?``, ``%s``); ``numbered`` gives $1, $2 …"""
        self.table, self.fields = table, list(fields)

        def p(i: int) -> str:
            return f"${i}" if numbered else ph

        n = len(self.fields)
        cols = ", ".join(self.fields)
        self.read = {-1: f"SELECT ycsb_key, {cols} FROM {table} WHERE ycsb_key = {p(1)}"}
        self.scan = {-1: f"SELECT ycsb_key, {cols} FROM {table} WHERE ycsb_key >= {p(1)} "
                         f"ORDER BY ycsb_key LIMIT {p(2)}"}
        self.update = {-1: f"UPDATE {table} SET "
                           + ", ".join(f"{f} = {p(i + 1)}" for i, f in enumerate(self.fields))
                           + f" WHERE ycsb_key = {p(n + 1)}"}
        for i, f in enumerate(self.fields):
            self.read[i] = f"SELECT ycsb_key, {f} FROM {table} WHERE ycsb_key = {p(1)}"
            self.scan[i] = (f"SELECT ycsb_key, {f} FROM {table} WHERE ycsb_key >= {p(1)} "
                            f"ORDER BY ycsb_key LIMIT {p(2)}")
            self.update[i] = f"UPDATE {table} SET {f} = {p(1)} WHERE ycsb_key = {p(2)}"
        self.insert = (f"INSERT INTO {table} (ycsb_key, {cols}) VALUES ("
                       + ", ".join(p(i + 1) for i in range(n + 1)) + ")")
        self.delete = f"DELETE FROM {table} WHERE ycsb_key = {p(1)}"

    def create_table(self, text_type: str = "TEXT", key_type: str = "VARCHAR(255)") -> str:
        cols = ", ".join(f"{f} {text_type}" for f in self.fields)
        return f"CREATE TABLE {self.table} (ycsb_key {key_type} PRIMARY KEY, {cols})"
