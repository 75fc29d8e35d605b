"""The target protocol: what the driver, the sampler and the workloads ask of a DBMS.

A :class:`Target` lives in the controlling process: it starts (embedded) or checks
(by URL) the server, creates the schema, names the server's processes for the
sampler and measures the database size. Client processes get a small picklable
:class:`Endpoint` and open their own connections from it — the hot path then calls
the DB driver's own connection (psycopg, sqlite3, mysqlclient or PyMySQL), never
SQLAlchemy.

Targets are found by kind in :mod:`benchlib.targets.registry` (``sqlite``,
``postgres``, ``embedded-postgres``, ``mysql``, ``basic``), imported lazily so that a
missing optional driver only matters to whoever uses that target.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .registry import target_class, target_kind


class TargetError(Exception):
    """A target that cannot be reached or used; the message is one line."""


@dataclass(frozen=True)
class Endpoint:
    """Everything a client process needs to connect: picklable, no live objects."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def ycsb_binding(self, props, driver: str = "python"):
        """A connected YCSB binding (one per client thread) for this endpoint; with
        ``driver`` c or auto, one whose run loop is in C where the target has it."""
        cls = target_class(self.kind)
        if driver != "python" and cls.native_missing() is None:
            return cls.ycsb_native_binding(self, props)
        if driver == "c":
            raise TargetError(f"run.driver c: {cls.native_missing()}")
        return cls.ycsb_binding(self, props)

    def connect(self):
        """A new connection of the DB driver's own (psycopg, sqlite3, MySQLdb/PyMySQL, redis-py),
        autocommit, for a workload's client thread; None for ``basic``."""
        return target_class(self.kind).connect_endpoint(self)

    @property
    def dialect(self) -> str:
        return target_class(self.kind).dialect


class Target:
    """Base class; a DBMS family overrides what differs."""

    kind = "base"
    # the SQL (or protocol) family a workload writes its statements for: sqlite,
    # postgres, mysql, redis, basic (embedded PostgreSQL speaks postgres)
    dialect = "base"
    # the target options (``options:`` of the YAML) this family takes: any other is refused
    option_names: tuple[str, ...] = ()
    # the DBMS runs inside the client processes (SQLite): the sampler counts their CPU
    # and memory as the DBMS's
    engine_in_clients = False
    # the client library the connections go through (meta's client_library), where a
    # family has more than one (MariaDB: mysqlclient or pymysql); run.driver is the loop's
    client_library: str | None = None

    @classmethod
    def native_missing(cls) -> str | None:
        """Why this target's run loop cannot run in C (None: it can; see run.driver)."""
        return f"target kind {cls.kind} has no C loop"

    @classmethod
    def ycsb_native_binding(cls, endpoint, props):
        """A YCSB binding with ``native(op_names)`` ops, a chunk run in C."""
        raise NotImplementedError

    def __init__(self, name: str, url: str, options: dict | None = None,
                 data_dir: Path | None = None):
        self.name, self.url, self.options = name, url, dict(options or {})
        self.data_dir = Path(data_dir) if data_dir else Path("data")

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        """Raise ValueError (one line) for an option of ``options`` this family refuses
        (naming the nearest it takes) or a URL that names no one place
        (:meth:`check_url`); params calls it before anything runs."""
        for key in options:
            if key not in cls.option_names:
                import difflib
                near = difflib.get_close_matches(str(key), cls.option_names, n=1)
                raise ValueError(f"options: {key!r} is not an option of {cls.kind} targets ("
                                 + (f"did you mean {near[0]}? " if near else "")
                                 + f"they take: {', '.join(cls.option_names) or 'none'})")
        cls.check_url(url)

    @classmethod
    def check_url(cls, url: str) -> None:
        """Raise ValueError (one line) for a URL whose database is missing or malformed,
        or with a parameter this family would not use."""

    # --- lifecycle (controlling process)
    def start(self) -> None:
        """Start an embedded server, or check that the server answers."""

    def stop(self) -> None:
        """Stop what start() started."""

    def endpoint(self) -> Endpoint:
        raise NotImplementedError

    def dbms_info(self) -> dict:
        """{"name": …, "version": …} of the server."""
        return {"name": self.kind, "version": None}

    # --- for the sampler
    def dbms_pids(self) -> list[int] | None:
        """The server's processes on this host; None when none is visible (remote)."""
        return None

    def db_size_bytes(self) -> int | None:
        return None

    # --- connections (workloads other than YCSB write their own statements per dialect)
    def connect(self):
        """A new connection of the driver's own, autocommit, in the controlling process
        (a workload's schema, checks); the caller closes it."""
        return self.connect_endpoint(self.endpoint())

    @classmethod
    def connect_endpoint(cls, endpoint: Endpoint):
        raise NotImplementedError(f"{cls.kind}: no connections")

    def quote_ident(self, name: str) -> str:
        """``name`` quoted as an identifier of this DBMS (the driver's own quoting where
        it has one); names are checked by params before they get here."""
        return '"' + name.replace('"', '""') + '"'

    # --- schema
    def ycsb_create_table(self, table: str, fields: list[str]) -> None:
        raise NotImplementedError

    def create_index(self, table: str, column: str) -> None:
        raise NotImplementedError

    # --- client side
    @classmethod
    def ycsb_binding(cls, endpoint: Endpoint, props):
        raise NotImplementedError


def make_target(name: str, url: str, options: dict | None = None,
                data_dir: Path | None = None) -> Target:
    kind = target_kind(url)
    try:
        cls = target_class(kind)
    except ImportError as e:
        raise TargetError(f"target {name}: the driver for {kind} is not installed ({e.name}); "
                          f"install benchlib[{'postgres' if 'postgres' in kind else kind}]") from None
    try:
        cls.check_options(url, options or {})
    except ValueError as e:
        raise TargetError(f"target {name}: {e}") from None
    return cls(name, url, options, data_dir)


def url_query_check(url: str, allowed: tuple[str, ...]) -> dict[str, str]:
    """The URL's query parameters; ValueError naming one this family does not use."""
    from urllib.parse import parse_qsl, urlsplit
    query = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    for key in query:
        if key not in allowed:
            raise ValueError(f"URL parameter {key!r} is not used by this target (it uses: "
                             f"{', '.join(allowed) or 'none'}); drop it")
    return query


def listening_pid(port: int) -> int | None:
    """The pid of the process listening on a local TCP port (root sees all)."""
    import psutil
    try:
        for c in psutil.net_connections(kind="tcp"):
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
                return c.pid
    except (psutil.AccessDenied, OSError):
        return None
    return None


def process_tree(pid: int | None) -> list[int] | None:
    """``pid`` and all its descendants, listed now (backends come and go)."""
    from ..hw.processes import process_tree_pids  # /proc children files: no scan of all
    return process_tree_pids(pid)


def is_local_host(host: str | None) -> bool:
    return host in (None, "", "localhost", "127.0.0.1", "::1") or str(host).startswith(("/", "127."))
