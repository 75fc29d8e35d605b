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

from ..filemodes import create_private
from .base import Endpoint, Target
from .sql.sqlite import SqliteDialect


class SqliteTarget(Target):
    kind = "sqlite"
    dialect = SqliteDialect()
    option_names = ("path", "pragmas", "busy_timeout_ms")
    # benchlib's mark: a row of its registry table (SQLite has no table comments), with
    # the table's CREATE statement then: a table made again by someone else is not marked
    tracks_tables = True
    load_writers = 1   # one writer at a time (the database's lock): more loaders only wait

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

    def files_in(self, run_dir: Path) -> list[Path]:
        """The database and its journals (``-wal``, ``-shm``, ``-journal``), when in ``run_dir``."""
        self.set_run_dir(run_dir)
        if self.path.parent.resolve() != Path(run_dir).resolve():
            return []
        return [self.path] + [Path(f"{self.path}{s}") for s in ("-wal", "-shm", "-journal")]

    def start(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        create_private(self.path)   # 0600 (its -wal, -shm and -journal get its mode)
        _connect(self.endpoint()).close()

    def inspectable_unstarted(self) -> bool:
        """A file named by the URL or the path option that is there (not the embedded
        default's, a new file in each run folder)."""
        named = self.url.startswith("sqlite:///") or "path" in self.options
        return named and self.path.is_file()

    def table_facts(self, table: str):
        from .ownership import REGISTRY, TableFacts
        self.quote_ident(table)
        conn = _connect(self.endpoint())
        try:
            row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND "
                               "name = ? COLLATE NOCASE", (table,)).fetchone()
            if row is None:
                return None
            cols = tuple(r[0] for r in conn.execute("SELECT name FROM pragma_table_info(?)", (table,)))
            has_registry = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                        "name = ?", (REGISTRY,)).fetchone()
            made = has_registry and conn.execute(
                f"SELECT 1 FROM {REGISTRY} WHERE name = ? COLLATE NOCASE AND ddl = ?",
                (table, row[0])).fetchone()
        finally:
            conn.close()
        return TableFacts(cols, bool(made))

    def mark_table(self, table: str) -> None:
        from .ownership import REGISTRY
        conn = _connect(self.endpoint())
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {REGISTRY} (name TEXT PRIMARY KEY "
                         "COLLATE NOCASE, ddl TEXT NOT NULL)")
            conn.execute(f"INSERT OR REPLACE INTO {REGISTRY} (name, ddl) SELECT ?, sql FROM "
                         "sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                         (table, table))
        finally:
            conn.close()

    def endpoint(self) -> Endpoint:
        return self.make_endpoint({"path": str(self.path), "pragmas": self.pragmas,
                                   "busy_timeout_ms": self.busy_timeout_ms})

    def dbms_info(self):
        return {"name": "SQLite", "version": sqlite3.sqlite_version}

    def dbms_pids(self):
        # the engine runs inside the client processes; the runner passes those
        return None

    def index_columns(self, conn, table, index):
        on = conn.execute("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ?",
                          (index,)).fetchone()
        if on is None or on[0] != table:
            return None
        rows = conn.execute(f"PRAGMA index_info({self.quote_ident(index)})").fetchall()
        return [r[2] for r in sorted(rows)] or None

    def db_size_bytes(self):
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal"))
                   if os.path.exists(p))


def _connect(ep: Endpoint) -> sqlite3.Connection:
    conn = sqlite3.connect(ep.params["path"], timeout=ep.params["busy_timeout_ms"] / 1000,
                           isolation_level=None, check_same_thread=False)
    for k, v in ep.params["pragmas"].items():
        conn.execute(f"PRAGMA {k}={v}")
    return conn
