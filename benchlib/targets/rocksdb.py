"""RocksDB, embedded (``rocksdict``): a database directory, opened inside the clients.

``url: rocksdb`` keeps the database in the run folder (``<run>/rocksdb``);
``rocksdb:///relative/dir`` and ``rocksdb:////absolute/dir`` name a directory (as
``sqlite:///`` names a file), or the ``path`` option does. A table is a column family
of its name (RocksDB's own kind of table, each with its options); the settings
(:mod:`.rocksdb_settings`) are given as options or in the URL's query.

RocksDB lets one process open the directory at a time: a step's clients are one process
whose threads share it (``client_processes = 1``; :mod:`.rocksdb_handle`), the
controller opens it between steps only. The engine runs in that process, so the
sampler counts the clients' CPU and memory as the DBMS's (``engine_in_clients``), as for
SQLite. Its own figures: the directory's size on disk (``db_size_gb``, the information
logs aside) and RocksDB's statistics over each step (``step_figures``: compaction and
flush bytes, stalls, block cache hits, in the steps row).

Benchlib's mark: the key ``benchlib.made`` in the default column family of a database it
created, and ``benchlib.table.<name>`` for each table a load made. A directory with a
RocksDB benchlib did not make is refused for a load, in one line, unless ``load.replace``
(its other column families are left alone then); a directory of other files is refused.
"""
from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

from .base import Endpoint, Target, TargetError, url_query_check
from .dialect import Dialect
from .rocksdb_handle import open_db, read_statistics
from .rocksdb_settings import SETTINGS, check_value, resolve

SCHEME = "rocksdb:///"
MADE_KEY = b"benchlib.made"
TABLE_KEY = "benchlib.table.{}"
PRIVATE_DIR_MODE = 0o700   # its files are its owner's alone, as a run's (filemodes.py)
INFO_LOG = re.compile(r"^LOG(\.old\.\d+)?$")   # RocksDB's information log, not data


def _driver_missing() -> str | None:
    import importlib.util
    if importlib.util.find_spec("rocksdict") is None:
        return "the driver for rocksdb is not installed (rocksdict); install benchlib[rocksdb]"
    return None


class RocksdbTarget(Target):
    kind = "rocksdb"
    dialect = Dialect("rocksdb", placeholder="", ident_quote="", sql=False, engine_in_clients=True)
    option_names = ("path", *SETTINGS)
    tracks_tables = True
    client_processes = 1    # one process opens the directory (RocksDB's LOCK)

    @classmethod
    def check_url(cls, url: str) -> None:
        if url != "rocksdb" and not url.startswith(SCHEME):
            raise ValueError(f"{url!r}: rocksdb, rocksdb:///relative/dir or rocksdb:////absolute/dir")
        if url.startswith(SCHEME) and not _url_path(url):
            raise ValueError(f"{url!r}: no directory (rocksdb:///relative/dir, rocksdb:////absolute/dir)")
        for name, value in _url_query(url).items():
            check_value(name, value)   # a misspelled one: the setting meant
        url_query_check(url, tuple(SETTINGS))
        if missing := _driver_missing():
            raise ValueError(missing)

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        super().check_options(url, options)
        resolve({k: v for k, v in options.items() if k != "path"})
        both = set(options) & set(_url_query(url))
        if both:
            raise ValueError(f"{sorted(both)[0]}: given both in the URL and in options; give it once")

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        if url.startswith(SCHEME):
            self.path = Path(_url_path(url))
        else:  # the embedded default: a directory in the run folder, set by the runner
            self.path = Path(self.options.get("path", self.data_dir / f"{name}.rocksdb"))
        self.settings = resolve({**_url_query(url),
                                 **{k: v for k, v in self.options.items() if k != "path"}})

    def _named(self) -> bool:
        return self.url.startswith(SCHEME) or "path" in self.options

    def set_run_dir(self, run_dir: Path) -> None:
        if not self._named():
            self.path = Path(run_dir) / "rocksdb"

    def files_in(self, run_dir: Path) -> list[Path]:
        """The database's files, when its directory is in ``run_dir``."""
        self.set_run_dir(run_dir)
        if not self.path.is_dir() or self.path.parent.resolve() != Path(run_dir).resolve():
            return []
        return [p for p in self.path.iterdir() if p.is_file()]

    def inspectable_unstarted(self) -> bool:
        """A directory named by the URL or the path option that is there: preflight
        reads it (a file, a directory of other files and a RocksDB benchlib did not
        make are refused before anything runs)."""
        return self._named() and self.path.exists()

    def _check_place(self) -> None:
        p = self.path
        if p.exists() and not p.is_dir():
            raise TargetError(f"target {self.name}: {p} is a file, not a RocksDB directory")
        if p.is_dir() and not (p / "CURRENT").exists() and any(p.iterdir()):
            raise TargetError(f"target {self.name}: {p} holds files and no RocksDB: name an empty "
                              "or new directory")

    # --- lifecycle
    def start(self) -> None:
        """The directory made (0700) or checked: a RocksDB there, or nothing; a new
        database gets benchlib's mark."""
        p = self.path
        self._check_place()
        new = not (p / "CURRENT").exists()
        try:
            p.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
            probe = p / ".benchlib-write-check"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            raise TargetError(f"target {self.name}: cannot write the RocksDB directory {p}: "
                              f"{e.strerror or e}") from None
        h = self.connect()
        try:
            if new:
                h.db.put(MADE_KEY, b"made by benchlib")
        finally:
            h.close()

    def endpoint(self) -> Endpoint:
        return self.make_endpoint({"path": str(self.path), "settings": self.settings})

    @classmethod
    def connect_endpoint(cls, endpoint):
        """A client's share of the process's open database (its statistics recorded)."""
        return open_db(endpoint.params["path"], endpoint.params["settings"], record=True)

    def connect(self):
        """The controller's handle: the database opened until closed (between steps)."""
        return open_db(self.path, self.settings)

    @classmethod
    def connection_lost(cls, exc):
        return False    # a directory in this process: there is no connection to lose

    @classmethod
    def ping(cls, conn):
        pass

    # --- what it is
    def dbms_info(self) -> dict:
        from importlib.metadata import version
        return {"name": "RocksDB", "version": self._version(),
                "driver": f"rocksdict {version('rocksdict')}", "settings": dict(self.settings)}

    def _version(self) -> str | None:
        """RocksDB's version, as its information log's head says it."""
        try:
            with open(self.path / "LOG", encoding="utf-8", errors="replace") as f:
                for line in f.readlines(64 * 1024):
                    if m := re.search(r"RocksDB version: (\S+)", line):
                        return m.group(1)
        except OSError:
            pass
        return None

    def db_size_bytes(self) -> int | None:
        """The database's files in its directory (SST, WAL, MANIFEST …), the information
        logs aside: what the data takes on disk."""
        total = 0
        try:
            entries = list(os.scandir(self.path))
        except OSError:
            return None
        for e in entries:
            try:   # a compaction may delete a file between the listing and its size
                if e.is_file(follow_symlinks=False) and not INFO_LOG.match(e.name):
                    total += e.stat(follow_symlinks=False).st_size
            except FileNotFoundError:
                pass
        return total

    def step_figures(self, started: datetime) -> dict:
        """RocksDB's statistics over the step that started at ``started``: what its
        clients wrote as the database closed (:mod:`.rocksdb_handle`)."""
        return read_statistics(self.path, started.timestamp())

    # --- benchlib's mark (targets/ownership.py)
    def table_facts(self, table: str):
        from .ownership import TableFacts
        self._check_place()
        if not (self.path / "CURRENT").exists():
            return None
        h = self.connect()
        try:
            made = h.db.get(MADE_KEY) is not None
            here = table in h.families()
            marked = h.db.get(TABLE_KEY.format(table).encode()) is not None
        finally:
            h.close()
        if not made:
            return TableFacts(None, False, f"the RocksDB in {self.path}")
        return TableFacts(None, marked, f"column family {table} in {self.path}") if here else None

    def mark_table(self, table: str) -> None:
        from .ownership import MARK
        h = self.connect()
        try:
            h.db.put(TABLE_KEY.format(table).encode(), MARK.encode())
        finally:
            h.close()


def _url_path(url: str) -> str:
    return url[len(SCHEME):].split("?", 1)[0]


def _url_query(url: str) -> dict:
    from urllib.parse import parse_qsl, urlsplit
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True)) if url.startswith(SCHEME) else {}
