"""Redis by URL, through redis-py: ``redis://[:password@]host:port/db`` or the Unix
socket form ``unix:///path/to/redis.sock?db=0``.

Redis has no tables: a workload writes its own commands (``dialect = "redis"``,
e.g. :mod:`benchlib.workloads.kv`); a workload with no binding for the dialect is
refused before anything runs.

For the sampler: the DBMS process is the ``redis-server`` listening on the URL's
port (or, for a Unix socket, the ``process_id`` of ``INFO server``); the database
size is ``INFO memory`` ``used_memory`` — the server's whole data set in memory, not
only the keys of this experiment (Redis keeps no per-key-space size).
"""
from __future__ import annotations

from urllib.parse import urlsplit

from .base import Endpoint, Target, TargetError, is_local_host, listening_pid, url_query_check
from .dialect import Dialect

DEFAULT_PORT = 6379
CONNECT_TIMEOUT_S = 5.0


class RedisTarget(Target):
    kind = "redis"
    dialect = Dialect("redis", placeholder="", ident_quote="", sql=False)
    server_names, default_port = ("redis-server",), 6379
    prometheus_queries = {"db_size_gb": "sum(redis_memory_used_bytes)"}   # redis_exporter
    # a "table" is the key prefix ``<table>:``; benchlib's mark: the key ``<table>`` itself
    # (no ':', so never one of the table's keys) holding ownership.MARK, inside what an ACL
    # user of the prefix (``~<table>*``) may write
    tracks_tables = True

    @classmethod
    def check_url(cls, url: str) -> None:
        """One database number: the path's (``/9``) or, for a socket, ``?db=9``."""
        query = url_query_check(url, ("db", "password", "username"))
        socket = url.startswith("unix:")
        if socket and not urlsplit(url).path:
            raise ValueError("no socket path: unix:///path/to/redis.sock?db=0")
        if not socket and "db" in query:
            raise ValueError("?db= on a redis:// URL: give the database as its path (…:6379/0)")
        db = query.get("db", "") if socket else urlsplit(url).path.lstrip("/")
        if not db.isdigit() or len(db) > 6:
            where = "?db=" if socket else "the URL's path"
            raise ValueError(f"{where}: a database number is needed (0, 1, … 15), got {db!r}")

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        self._admin = None
        self._monitor = None
        self._pid = None

    @classmethod
    def connect_endpoint(cls, endpoint):
        import redis
        return redis.Redis.from_url(endpoint.params["url"],
                                    socket_connect_timeout=CONNECT_TIMEOUT_S)

    @classmethod
    def connection_lost(cls, exc):
        names = {c.__name__ for c in type(exc).__mro__}
        return True if type(exc).__module__.startswith("redis") and \
            names & {"ConnectionError", "TimeoutError"} else None

    @classmethod
    def ping(cls, conn):
        if hasattr(conn, "send_command"):   # one Connection of redis-py's pool
            conn.send_command("PING")
            conn.read_response()
        else:
            conn.ping()

    def quote_ident(self, name: str) -> str:
        return name  # Redis has no identifiers: names become key prefixes as they are

    def endpoint(self) -> Endpoint:
        return self.make_endpoint({"url": self.url})

    def _where(self) -> str:
        from ..masking import mask_url
        return mask_url(self.url)

    def _connect(self):
        import redis
        conn = self.connect_endpoint(self.endpoint())
        try:
            conn.ping()
        except redis.RedisError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise TargetError(f"{self.name}: cannot connect to Redis at {self._where()}: "
                              f"{first}") from None
        return conn

    def start(self) -> None:
        self._admin = self._connect()
        self._pid = self._server_pid()

    def stop(self) -> None:
        for conn in (self._admin, self._monitor):
            if conn is not None:
                conn.close()
        self._admin = self._monitor = None

    def admin(self):
        if self._admin is None:
            self._admin = self._connect()
        return self._admin

    def table_facts(self, table: str):
        from .ownership import MARK, TableFacts
        conn = self.connect()
        try:
            mark = conn.get(table)
            if mark is not None and mark != MARK.encode():   # a key of that name is someone's
                return TableFacts(None, False, f"key {table}")
            keys = conn.scan_iter(match=f"{table}:*", count=5000)
            if next(keys, None) is None:
                return None
            return TableFacts(None, mark is not None, f"keys {table}:*")
        finally:
            conn.close()

    def mark_table(self, table: str) -> None:
        from .ownership import MARK
        conn = self.connect()
        try:
            conn.set(table, MARK)
        finally:
            conn.close()

    def dbms_info(self) -> dict:
        info = self.admin().info("server")
        return {"name": "Redis", "version": info.get("redis_version")}

    def _server_pid(self) -> int | None:
        parts = urlsplit(self.url)
        if parts.scheme == "unix" or parts.hostname is None:
            host, port = "/", None   # a Unix socket is always on this host
        else:
            host, port = parts.hostname, parts.port or DEFAULT_PORT
        if not is_local_host(host):
            return None
        pid = listening_pid(port) if port else None
        if pid is None:  # not root (net_connections sees only our own) or a Unix socket
            pid = _checked_pid(self.admin().info("server").get("process_id"))
        return pid

    def dbms_pids(self) -> list[int] | None:
        return [self._pid] if self._pid else None

    # the run's work on the server: its one process (every client's, every db number's)
    session_scope = "process"

    def session_tasks(self):
        return [(self._pid, None)] if self._pid else None

    def db_size_bytes(self) -> int | None:
        # the sampler asks from its own thread: a connection of its own
        if self._monitor is None:
            self._monitor = self._connect()
        return int(self._monitor.info("memory")["used_memory"])


def _checked_pid(pid) -> int | None:
    """``pid`` if it is a redis-server process visible here (not another namespace's)."""
    import psutil
    try:
        return int(pid) if pid and "redis" in psutil.Process(int(pid)).name() else None
    except (psutil.Error, ValueError):
        return None
