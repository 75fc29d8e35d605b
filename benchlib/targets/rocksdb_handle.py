"""An open RocksDB, shared by the threads of one process.

RocksDB lets one process open a database directory at a time (its ``LOCK`` file); in
that process every thread may use the one open database. So a step's client threads
share it (:func:`open_db` counts them, the last :meth:`RocksHandle.close` closes it), the
controller opens it only between steps, and an open that finds the lock held (a step's
client process still exiting) waits for it a few seconds before it gives up in one line.

A client's handle (``record``) writes, as the database closes, RocksDB's statistics over
its opening — the step's, since a step's clients open it at their start — into
:data:`STATS_FILE` in the directory, where the controller reads them
(``RocksdbTarget.step_figures``).
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from .base import TargetError
from .rocksdb_settings import db_options, write_options

STATS_FILE = "benchlib-step-statistics.json"
LOCK_WAIT_S = 10.0
# RocksDB's tickers (Options.get_statistics) -> the steps row's column and its scale
TICKERS = {
    "rocksdb.bytes.written": ("dbms_user_write_kb", 1 / 1024),   # what the operations wrote
    "rocksdb.wal.bytes": ("dbms_wal_write_kb", 1 / 1024),
    "rocksdb.flush.write.bytes": ("dbms_flush_write_kb", 1 / 1024),
    "rocksdb.compact.read.bytes": ("dbms_compact_read_kb", 1 / 1024),
    "rocksdb.compact.write.bytes": ("dbms_compact_write_kb", 1 / 1024),
    "rocksdb.stall.micros": ("dbms_stall_s", 1e-6),
    "rocksdb.block.cache.hit": ("dbms_cache_hits", 1),
    "rocksdb.block.cache.miss": ("dbms_cache_misses", 1),
}

_OPEN: dict[str, _Shared] = {}
_GUARD = threading.Lock()


class _Shared:
    """One open database of this process and the column families asked for so far."""

    def __init__(self, path: str, settings: dict):
        self.path, self.settings = path, settings
        self.options = db_options(settings)
        self.writes = write_options(settings)
        self.db = _open_waiting(path, self.options)
        self.db.set_write_options(self.writes)
        self.cfs: dict[str, object] = {}
        self.refs, self.record = 0, False

    def close(self) -> None:
        if self.record and self.settings.get("statistics", True):
            write_statistics(Path(self.path), self.options.get_statistics() or "")
        self.cfs.clear()    # a column family's object holds the database open
        self.db.close()


def _open_waiting(path: str, options):
    import rocksdict as r
    from .rocksdb_settings import db_options as fresh
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            families = r.Rdict.list_cf(path, fresh({"statistics": False})) \
                if (Path(path) / "CURRENT").exists() else []
            return r.Rdict(path, options, column_families={
                f: options for f in families if f != "default"} or None)
        except Exception as e:  # noqa: BLE001 - rocksdict raises plain Exception
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if "lock" not in first.lower() or time.monotonic() > deadline:
                raise TargetError(f"RocksDB {path}: {first}") from None
            time.sleep(0.05)


class RocksHandle:
    """One user's share of the open database: ``db``, ``family(name)``; ``close()``."""

    def __init__(self, shared: _Shared):
        self.shared = shared
        self.db = shared.db
        self.closed = False

    def family(self, name: str):
        """The column family ``name`` (a table); TargetError (one line) where there is none."""
        s = self.shared
        cf = s.cfs.get(name)
        if cf is None:
            with _GUARD:
                if name not in s.cfs:
                    try:
                        s.cfs[name] = s.db.get_column_family(name)
                    except Exception:  # noqa: BLE001 - rocksdict raises plain Exception
                        raise TargetError(f"RocksDB {s.path}: no column family {name!r} "
                                          "(the table is not loaded)") from None
                    s.cfs[name].set_write_options(s.writes)
                cf = s.cfs[name]
        return cf

    def families(self) -> list[str]:
        import rocksdict as r
        return list(r.Rdict.list_cf(self.shared.path, self.shared.options))

    def drop_family(self, name: str) -> None:
        """The column family ``name`` dropped, if there is one (a table dropped)."""
        with _GUARD:
            self.shared.cfs.pop(name, None)
        if name in self.families():
            self.db.drop_column_family(name)

    def create_family(self, name: str) -> None:
        cf = self.db.create_column_family(name, self.shared.options)
        cf.set_write_options(self.shared.writes)
        with _GUARD:
            self.shared.cfs[name] = cf

    def recreate_family(self, name: str) -> None:
        """The column family ``name`` made anew, empty (a table dropped and created)."""
        self.drop_family(name)
        self.create_family(name)

    def count(self, name: str) -> int:
        """The keys of the column family ``name``, counted by iterating it."""
        it = self.family(name).iter()
        it.seek_to_first()
        n = 0
        while it.valid():
            n += 1
            it.next()
        return n

    def batch(self, name: str):
        """A ``WriteBatch`` into the column family ``name``; ``write(batch)`` writes it."""
        import rocksdict
        wb = rocksdict.WriteBatch(raw_mode=True)
        wb.set_default_column_family(self.db.get_column_family_handle(name))
        return wb

    def write(self, batch) -> None:
        self.db.write(batch)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with _GUARD:
            s = self.shared
            s.refs -= 1
            if s.refs > 0:
                return
            _OPEN.pop(s.path, None)
            s.close()


def open_db(path: str | Path, settings: dict, *, record: bool = False) -> RocksHandle:
    """A handle on the database in ``path`` (created if missing), opened once per process
    with ``settings``; ``record``: a client's, whose statistics are written at the close."""
    key = str(Path(path).resolve())
    with _GUARD:
        shared = _OPEN.get(key)
        if shared is None:
            shared = _OPEN[key] = _Shared(key, settings)
        shared.refs += 1
        shared.record = shared.record or record
    return RocksHandle(shared)


def write_statistics(path: Path, text: str) -> None:
    """The tickers of :data:`TICKERS` in ``text`` (``name COUNT : n`` lines) into the
    directory's :data:`STATS_FILE`, with the time of the close."""
    figures = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" COUNT : ")
        if name in TICKERS and rest.strip().isdigit():
            col, scale = TICKERS[name]
            figures[col] = int(rest) * scale
    tmp = path / f".{STATS_FILE}.{os.getpid()}"
    tmp.write_text(json.dumps({"closed_at": time.time(), "pid": os.getpid(), "figures": figures}))
    os.replace(tmp, path / STATS_FILE)


def read_statistics(path: Path, since: float) -> dict:
    """The figures a client wrote at a close after ``since`` (epoch s); {} where none did."""
    f = Path(path) / STATS_FILE
    try:
        rec = json.loads(f.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(rec, dict) or float(rec.get("closed_at", 0)) < since:
        return {}
    return dict(rec.get("figures") or {})
