"""PostgreSQL by URL, through psycopg 3: the server checked at start, connections for the
controlling process and the clients (autocommit), the postmaster's processes and the
database's size for the sampler.

Every connection of a run's clients and controller carries the run's own
``application_name`` (``benchlib-<12 hex>``, made per target, one target per run;
a URL's own ``application_name`` is replaced), so the sampler finds the run's backends
in ``pg_stat_activity`` (:meth:`PostgresTarget.session_tasks`) and counts their CPU
alone; the other databases' commits (``pg_stat_database.xact_commit``) say when other
work ran on the server beside the run (:meth:`PostgresTarget.other_work`).
"""
from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from .base import Target, TargetError, is_local_host, process_tree
from .sql.postgres import PostgresDialect


def conninfo(url: str) -> str:
    """A libpq URL from a SQLAlchemy one (drop the ``+driver`` part)."""
    scheme, rest = url.split("://", 1)
    return "postgresql://" + rest


class PostgresTarget(Target):
    kind = "postgres"
    dialect = PostgresDialect()
    server_names, default_port = ("postgres",), 5432
    # postgres_exporter; its ``server`` label (host:port of the cluster it watches, 0.11) when it has one
    prometheus_queries = {"db_size_gb": 'pg_database_size_bytes{datname="$datname",server=~"(.*:$port)?"}'}
    tracks_tables = True   # benchlib's mark: the table's comment (COMMENT ON TABLE)

    @classmethod
    def connect_endpoint(cls, endpoint):
        import psycopg
        return psycopg.connect(endpoint.params["conninfo"], autocommit=True)

    @classmethod
    def check_url(cls, url: str) -> None:
        """libpq's own reading: its parameters, and a database named (``dbname``)."""
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
        try:
            if not conninfo_to_dict(conninfo(url)).get("dbname"):
                raise ValueError("no database named: end the URL with /dbname")
        except ProgrammingError as e:
            raise ValueError(f"libpq refuses the URL: {str(e).strip().splitlines()[0]}") from None

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        self.conninfo = conninfo(url)
        self._postmaster = None
        self._admin = None
        self._monitor = None
        self._watcher = None     # the sampler's listing of the run's sessions
        self.app_name = f"benchlib-{secrets.token_hex(6)}"   # NAMEDATALEN: at most 63 bytes

    def session_conninfo(self, app_name: str | None = None) -> str:
        """The connection string of the run's sessions: its application_name set."""
        from psycopg.conninfo import make_conninfo
        return make_conninfo(self.conninfo, application_name=app_name or self.app_name)

    def _connect(self, app_name: str | None = None):
        import psycopg
        try:
            return psycopg.connect(self.session_conninfo(app_name), autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as e:
            from ..masking import mask_url
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise TargetError(f"{self.name}: cannot connect to {mask_url(self.url)}: {first}") from None

    def start(self):
        self._admin = self._connect()
        host = urlsplit(self.conninfo).hostname
        if is_local_host(host):
            import psutil
            backend = self._admin.execute("SELECT pg_backend_pid()").fetchone()[0]
            try:
                self._postmaster = psutil.Process(backend).parent().pid
            except psutil.Error:
                self._postmaster = None

    def stop(self):
        for conn in (self._admin, self._monitor, self._watcher):
            if conn is not None:
                conn.close()
        self._admin = self._monitor = self._watcher = None

    def admin(self):
        if self._admin is None or self._admin.closed:
            self._admin = self._connect()
        return self._admin

    def endpoint(self):
        return self.make_endpoint({"conninfo": self.session_conninfo()})

    def dbms_info(self):
        v = self.admin().execute("SHOW server_version").fetchone()[0]
        return {"name": "PostgreSQL", "version": v}

    def server_marks(self):
        try:   # superuser or pg_read_all_settings; else the port alone
            return [self.admin().execute("SHOW data_directory").fetchone()[0], *super().server_marks()]
        except Exception:  # noqa: BLE001 - a mark that cannot be had is no mark
            return super().server_marks()

    def dbms_pids(self):
        return process_tree(self._postmaster)

    def index_columns(self, conn, table, index):
        rows = conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, pos) "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            "WHERE c.relname = %s AND c.relnamespace = to_regnamespace(current_schema())::oid "
            "AND i.indrelid = to_regclass(%s) ORDER BY k.pos",
            (index, self.quote_ident(table))).fetchall()
        return [r[0] for r in rows] or None

    def db_size_bytes(self):
        # the sampler asks from its own thread: a connection of its own, so a size query
        # never waits behind (or interleaves with) the admin connection's CREATE INDEX
        if self._monitor is None or self._monitor.closed:
            self._monitor = self._connect(f"{self.app_name}-monitor")   # not the run's work
        return self._monitor.execute("SELECT pg_database_size(current_database())").fetchone()[0]

    def _watch(self):
        # the sampler's thread: a connection of its own, named apart from the run's
        if self._watcher is None or self._watcher.closed:
            self._watcher = self._connect(f"{self.app_name}-monitor")
        return self._watcher

    def session_tasks(self):
        """The backends of the run's connections now (their application_name), where
        the server is on this host; None elsewhere."""
        if self._postmaster is None:
            return None
        rows = self._watch().execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                                     (self.app_name,)).fetchall()
        return [(int(pid), None) for (pid,) in rows]

    def other_work(self):
        """Transactions committed so far in each of the server's other databases (by oid:
        a database dropped or made meanwhile is not a fall or a jump of a sum)."""
        rows = self._watch().execute(
            "SELECT datid, xact_commit FROM pg_stat_database "
            "WHERE datname IS DISTINCT FROM current_database()").fetchall()
        return {int(oid): int(n) for oid, n in rows}

    def table_facts(self, table: str):
        from .ownership import MARK, TableFacts
        name = self.quote_ident(table)   # as the workloads' statements name it (search_path)
        conn = self.connect()
        try:
            row = conn.execute("SELECT obj_description(c.oid, 'pg_class') FROM pg_class c "
                               "WHERE c.oid = to_regclass(%s)", (name,)).fetchone()
            if row is None:
                return None
            cols = conn.execute("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) "
                                "AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (name,)).fetchall()
        finally:
            conn.close()
        return TableFacts(tuple(c[0] for c in cols), row[0] == MARK)

