"""The target protocol: what the driver, the sampler and the workloads ask of a DBMS.

A :class:`Target` knows no workload. It lives in the controlling process: it starts
(embedded) or checks (by URL) the server, gives connections of the DB driver's own
(:meth:`Target.connect`), names the server's processes for the sampler and measures the
database size; its :class:`~.dialect.Dialect` says how to speak to it, and is the key
under which each workload finds its binding (``workloads/<w>/bindings/``), which does
the schema work on such a connection. Client processes get a small picklable
:class:`Endpoint` and open their own connections from it — the hot path then calls
the DB driver's own connection (psycopg, sqlite3, mysqlclient or PyMySQL, redis-py),
never SQLAlchemy.

Targets are found by kind in :mod:`benchlib.registries.targets` (``sqlite``,
``postgres``, ``embedded-postgres``, ``mysql``, ``redis``, ``basic``, ``rocksdb``), imported lazily so that a
missing optional driver only matters to whoever uses that target.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .dialect import Dialect
from ..registries.core import import_ref
from ..registries.targets import install_extra, kinds, register, target_class, target_kind


class TargetError(Exception):
    """A target that cannot be reached or used; the message is one line."""


@dataclass(frozen=True)
class Endpoint:
    """Everything a client process needs to connect: picklable, no live objects."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    # the target class as "module:Class": a client process imports it from there, so a
    # target registered at run time (a plugin's, a test's) and its bindings reach it too
    ref: str | None = None

    def target_class(self) -> type:
        if self.ref and self.kind not in kinds():
            register(self.kind, import_ref(self.ref))
        return target_class(self.kind)

    def connect(self):
        """A new connection of the DB driver's own (psycopg, sqlite3, MySQLdb/PyMySQL, redis-py),
        autocommit, for a workload's client thread; None for ``basic``."""
        return self.target_class().connect_endpoint(self)

    @property
    def dialect(self) -> Dialect:
        return self.target_class().dialect


class Target:
    """Base class; a DBMS family overrides what differs."""

    kind = "base"
    # the language a workload's binding speaks to it (targets/dialect.py): the key of each
    # workload's bindings, markers, quoting, whether the engine runs inside the clients
    dialect = Dialect("base")
    # the target options (``options:`` of the YAML) this family takes: any other is refused
    option_names: tuple[str, ...] = ()
    # the client library the connections go through (meta's client_library), where a
    # family has more than one (MariaDB: mysqlclient or pymysql); run.driver is the loop's
    client_library: str | None = None
    # its server seen from the database host (hw.dbms: dask, prometheus): the names of the
    # programs at the root of its process tree, its default TCP port, and PromQL for its
    # figures no node or process exporter gives (hw column -> query; hw/prometheus.py)
    server_names: tuple[str, ...] = ()
    default_port: int | None = None
    prometheus_queries: dict[str, str] = {}
    # it says what it holds under a table's name and keeps benchlib's mark on the tables a
    # load made (table_facts, mark_table): a load never drops one it did not make
    # (targets/ownership.py); False: nothing to check (no tables, or a plugin's target)
    tracks_tables: bool = False
    # the most client processes a step may have: 1 where one process alone may open the
    # database (RocksDB's directory lock; its threads share it); None: any number
    client_processes: int | None = None
    # the most loaders writing at once that can gain anything (SQLite's one writer): the
    # most processes load.processes auto gives it (loaders.py); None: the cores decide
    load_writers: int | None = None

    def server_marks(self) -> list[str]:
        """What names this server among others of its program on its host, as a monitoring
        setup would put it in a process group's name (hw/prometheus.py: process_group): its
        ``:port``; a family adds its data directory."""
        port = self.server_port()
        return [f":{port}"] if port else []

    def server_port(self) -> int | None:
        """The TCP port of the URL, else the family's default."""
        from urllib.parse import urlsplit
        try:
            return urlsplit(self.url).port or self.default_port
        except ValueError:
            return self.default_port

    def __init__(self, name: str, url: str, options: dict | None = None,
                 data_dir: Path | None = None):
        self.name, self.url, self.options = name, url, dict(options or {})
        self.data_dir = Path(data_dir) if data_dir else Path("data")

    @property
    def engine_in_clients(self) -> bool:
        """The DBMS runs inside the client processes (SQLite): the sampler counts their CPU
        and memory as the DBMS's."""
        return self.dialect.engine_in_clients

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

    def make_endpoint(self, params: dict) -> Endpoint:
        """An Endpoint of this target's kind that names its class for client processes."""
        cls = type(self)
        return Endpoint(self.kind, params, ref=f"{cls.__module__}:{cls.__qualname__}")

    def dbms_info(self) -> dict:
        """{"name": …, "version": …} of the server."""
        return {"name": self.kind, "version": None}

    # --- for the sampler
    def dbms_pids(self) -> list[int] | None:
        """The server's processes on this host; None when none is visible (remote)."""
        return None

    # the cgroup benchlib made for a server it started (hw/cgroup.py: own_cgroup), else None
    own_cgroup = None

    def dbms_cgroup(self):
        """The cgroup whose CPU is the server's (:class:`benchlib.hw.cgroup.CpuCgroup`): the
        one benchlib made for a server it started, else the one the server runs in when
        every process of it is the server's (a systemd unit's, a container's); None."""
        if self.own_cgroup is not None:
            return self.own_cgroup
        from ..hw.cgroup import of_server
        return of_server(self.dbms_pids())

    def db_size_bytes(self) -> int | None:
        return None

    # what session_tasks() holds: "sessions" (the run's own connections' tasks),
    # "database" (the tasks of every connection to the run's database), "process" (the
    # server's one process)
    session_scope = "sessions"

    def session_tasks(self) -> list[tuple[int, int | None]] | None:
        """The server's tasks that serve this run's connections now, for the sampler's
        attribution (hw/sessions.py): ``(pid, None)`` for a process, ``(pid, tid)`` for a
        thread; None when the server cannot say which are this run's (the sampler then
        counts all the server's processes, and says so)."""
        return None

    def other_work(self) -> dict[str, int] | None:
        """Counters of the server's work that is not this run's (each other database's
        commits so far), read at a step's start and end; None when the server cannot say."""
        return None

    def session_note(self) -> str | None:
        """One line on why the run's own sessions cannot be told apart, where they cannot
        on a server this host sees (MariaDB without performance_schema); else None."""
        return None

    def step_figures(self, started) -> dict:
        """The DBMS's own figures over the step that started at ``started`` (a datetime),
        asked after it ended: ``dbms_*`` columns of its steps row (RocksDB's compaction
        bytes); {} where it has none."""
        return {}

    def files_in(self, run_dir: Path) -> list[Path]:
        """Its database's files inside ``run_dir`` (an engine that keeps its data there):
        a failed attempt set aside in ``.attempts/`` keeps none of them."""
        return []

    # --- connections (each workload's bindings write their own statements per dialect)
    def connect(self):
        """A new connection of the driver's own, autocommit, in the controlling process
        (a workload's schema, checks); the caller closes it."""
        return self.connect_endpoint(self.endpoint())

    @classmethod
    def connect_endpoint(cls, endpoint: Endpoint):
        raise NotImplementedError(f"{cls.kind}: no connections")

    @classmethod
    def connection_lost(cls, exc: BaseException) -> bool | None:
        """Whether the driver's error ``exc`` says the connection is lost (True), that the
        server answered (False: it is alive), or neither (None: a ping decides);
        workloads/reconnect.py asks it after an operation raised. A SQL DBMS's dialect
        says (``targets/sql/``)."""
        lost = getattr(cls.dialect, "connection_lost", None)
        return lost(exc) if lost else None

    @classmethod
    def ping(cls, conn) -> None:
        """A round trip on the driver's connection; raises when it fails (a SQL DBMS's
        dialect's way, else the driver's ``ping()``)."""
        ping = getattr(cls.dialect, "ping", None)
        if ping:
            ping(conn)
        else:
            conn.ping()


    # --- what is there under a table's name (targets/ownership.py), where tracks_tables
    def table_facts(self, table: str):
        """An ``ownership.TableFacts`` (its columns, whether benchlib's mark is on it) of
        what the database holds under the name ``table``; None: nothing."""
        raise NotImplementedError

    def mark_table(self, table: str) -> None:
        """Benchlib's mark on ``table``, which a load has just made: a SQL DBMS's dialect
        says its statements (``mark_sql``), run on a connection of its own."""
        if not hasattr(self.dialect, "mark_sql"):
            raise NotImplementedError
        conn = self.connect()
        try:
            for sql in self.dialect.mark_sql(table):
                conn.cursor().execute(sql)
        finally:
            conn.close()

    def inspectable_unstarted(self) -> bool:
        """Its tables can be read before :meth:`start` (an embedded database whose file
        is there already): preflight checks them; a server by URL is checked started."""
        return False

    def quote_ident(self, name: str) -> str:
        """``name`` checked to be a plain name and quoted as an identifier of this DBMS
        (its dialect's way)."""
        return self.dialect.quote_ident(name)

    def index_columns(self, conn, table: str, index: str) -> list[str] | None:
        """The columns, in order, of the index called ``index`` on ``table`` (plain names),
        asked on ``conn`` (one of :meth:`connect`'s); None when ``table`` has no such index
        (an index step checks what it finds: ``workloads/indexes.py``)."""
        raise NotImplementedError(f"{self.kind}: no indexes")


def make_target(name: str, url: str, options: dict | None = None,
                data_dir: Path | None = None) -> Target:
    kind = target_kind(url)
    try:
        cls = target_class(kind)
    except ImportError as e:
        raise TargetError(f"target {name}: the driver for {kind} is not installed ({e.name}); "
                          f"install benchlib[{install_extra(kind)}]") from None
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
