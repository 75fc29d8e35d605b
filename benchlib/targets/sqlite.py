"""SQLite: the zero-setup default, a database file in the run folder.

WAL journal and ``synchronous=NORMAL`` (the usual setting for a server-like SQLite)
so that readers and the one writer do not block each other; several client
processes share the file, and a busy writer makes the others wait up to
``busy_timeout_ms`` before an operation counts as an error.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .base import Endpoint, Target
from .sql import YcsbStatements, index_sql

OK, NOT_FOUND, ERROR = 0, 1, 2


class SqliteTarget(Target):
    kind = "sqlite"
    dialect = "sqlite"
    option_names = ("path", "pragmas", "busy_timeout_ms")
    engine_in_clients = True

    @classmethod
    def connect_endpoint(cls, endpoint):
        return _connect(endpoint)

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        if url.startswith("sqlite:///"):
            self.path = Path(url[len("sqlite:///"):])
        else:  # the embedded default: a file in the run folder, set by the runner
            self.path = Path(self.options.get("path", self.data_dir / f"{name}.sqlite"))
        self.pragmas = {"journal_mode": "wal", "synchronous": "normal",
                        **self.options.get("pragmas", {})}
        self.busy_timeout_ms = int(self.options.get("busy_timeout_ms", 30000))

    def set_run_dir(self, run_dir: Path) -> None:
        """The embedded default keeps its database in the run folder."""
        if not self.url.startswith("sqlite:///") and "path" not in self.options:
            self.path = Path(run_dir) / "db.sqlite"

    def start(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _connect(self.endpoint()).close()

    def endpoint(self) -> Endpoint:
        return Endpoint("sqlite", {"path": str(self.path), "pragmas": self.pragmas,
                                   "busy_timeout_ms": self.busy_timeout_ms})

    def dbms_info(self):
        return {"name": "SQLite", "version": sqlite3.sqlite_version}

    def dbms_pids(self):
        # the engine runs inside the client processes; the runner passes those
        return None

    def db_size_bytes(self):
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal"))
                   if os.path.exists(p))

    def _exec(self, *sqls):
        conn = _connect(self.endpoint())
        try:
            for sql in sqls:
                conn.execute(sql)
            conn.commit()
        finally:
            conn.close()

    def ycsb_create_table(self, table, fields):
        st = YcsbStatements(table, fields, "?", dialect="sqlite")
        self._exec(f"DROP TABLE IF EXISTS {st.table}", st.create_table("TEXT"))

    def create_index(self, table, column):
        self._exec(index_sql(table, column, "sqlite"))

    @classmethod
    def ycsb_binding(cls, endpoint, props):
        return SqliteYcsb(endpoint, props)


def _connect(ep: Endpoint) -> sqlite3.Connection:
    conn = sqlite3.connect(ep.params["path"], timeout=ep.params["busy_timeout_ms"] / 1000,
                           isolation_level=None, check_same_thread=False)
    for k, v in ep.params["pragmas"].items():
        conn.execute(f"PRAGMA {k}={v}")
    return conn


class SqliteYcsb:
    """YCSB's DB interface on one sqlite3 connection (autocommit, cached statements)."""

    def __init__(self, ep: Endpoint, props):
        self.conn = _connect(ep)
        self.st = YcsbStatements(props.table, props.field_names, "?", dialect="sqlite")
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
