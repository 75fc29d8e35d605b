"""DuckDB, embedded (the ``duckdb`` package): a database file in the run folder (or the
URL's ``duckdb:///path``), opened by one process at a time — its threads share it, each
with a connection of its own (``client_processes = 1``) — and counted, like SQLite, as
an engine inside the client processes. Its SQL is :mod:`.sql.duckdb`'s; no workload has
a binding of its own for it (issue 36: a SQL DBMS is a target and a dialect). Benchlib's
mark on a table it made is the table's comment (COMMENT ON TABLE).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from .base import Endpoint, Target, TargetError
from .sql.duckdb import DuckdbDialect

SCHEME = "duckdb:///"
LOCK_WAIT_S = 10.0      # an open that finds the file locked (a step's clients exiting) waits


def _duckdb():
    import duckdb
    return duckdb


class DuckdbTarget(Target):
    kind = "duckdb"
    dialect = DuckdbDialect()
    option_names = ("path",)
    client_processes = 1     # one process opens the file for writing (DuckDB's lock)
    tracks_tables = True     # benchlib's mark: the table's comment

    @classmethod
    def check_url(cls, url: str) -> None:
        if url != "duckdb" and not (url.startswith(SCHEME) and len(url) > len(SCHEME)):
            raise ValueError(f"{url!r}: duckdb, duckdb:///relative/file or duckdb:////absolute/file")

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        if url.startswith(SCHEME):
            self.path = Path(url[len(SCHEME):])
        else:   # the embedded default: a file in the run folder, set by the runner
            self.path = Path(self.options.get("path", self.data_dir / f"{name}.duckdb"))

    def _named(self) -> bool:
        return self.url.startswith(SCHEME) or "path" in self.options

    def set_run_dir(self, run_dir: Path) -> None:
        if not self._named():
            self.path = Path(run_dir) / "db.duckdb"

    def files_in(self, run_dir: Path) -> list[Path]:
        self.set_run_dir(run_dir)
        if self.path.parent.resolve() != Path(run_dir).resolve():
            return []
        return [self.path, Path(f"{self.path}.wal")]

    def inspectable_unstarted(self) -> bool:
        return self._named() and self.path.is_file()

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.connect().close()

    def endpoint(self) -> Endpoint:
        return self.make_endpoint({"path": str(self.path)})

    @classmethod
    def connect_endpoint(cls, endpoint):
        return _open(endpoint.params["path"])

    def connect(self):
        return _open(str(self.path))

    def dbms_info(self) -> dict:
        return {"name": "DuckDB", "version": _duckdb().__version__}

    def db_size_bytes(self) -> int | None:
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}.wal"))
                   if os.path.exists(p))

    def table_facts(self, table: str):
        from .ownership import MARK, TableFacts
        self.quote_ident(table)
        conn = self.connect()
        try:
            row = conn.execute("SELECT comment FROM duckdb_tables() WHERE lower(table_name) = "
                               "lower(?)", [table]).fetchone()
            if row is None:
                return None
            cols = tuple(r[0] for r in conn.execute(
                "SELECT column_name FROM duckdb_columns() WHERE lower(table_name) = lower(?) "
                "ORDER BY column_index", [table]).fetchall())
        finally:
            conn.close()
        return TableFacts(cols, row[0] == MARK)

    def index_columns(self, conn, table, index):
        row = conn.execute("SELECT table_name, expressions FROM duckdb_indexes() WHERE "
                           "index_name = ?", [index]).fetchone()
        if row is None or row[0] != table:
            return None
        return [c.strip().strip('"') for c in row[1].strip("[]").split(",")] or None


def _open(path: str):
    """A connection of its own to the process's open database (DuckDB shares one
    database among a process's connections to the same file)."""
    duckdb = _duckdb()
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            return duckdb.connect(path)
        except duckdb.IOException as e:
            if "lock" not in str(e).lower() or time.monotonic() > deadline:
                raise TargetError(f"cannot open the DuckDB file {path}: "
                                  f"{str(e).splitlines()[0]}") from None
            time.sleep(0.05)   # another process holds it: poll until it lets go
