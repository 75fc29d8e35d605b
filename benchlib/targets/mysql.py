"""MariaDB / MySQL by URL, through mysqlclient (C) or PyMySQL (:mod:`.mysql_driver`).

Neither uses server-side prepared statements; statements are formatted client-side
(the library's escaping). The option ``engine`` (InnoDB) is the storage engine a
workload's tables are created with.
"""
from __future__ import annotations

import re

from sqlalchemy.engine import make_url

from . import mysql_driver
from .base import (
    Target,
    TargetError,
    is_local_host,
    listening_pid,
    process_tree,
    url_query_check,
)
from .sql.mysql import MysqlDialect


def connect_params(url: str) -> dict:
    u = make_url(url)
    # the database the URL names (check_url refuses one without); ?password= as libpq takes it
    params = {"host": u.host or "127.0.0.1", "port": u.port or 3306, "user": u.username or "root",
              "password": u.password or u.query.get("password") or "", "database": u.database}
    if "unix_socket" in u.query:
        params["unix_socket"] = u.query["unix_socket"]
    return params


def _connect(params: dict, library: str):
    try:
        return mysql_driver.connect(params, library)
    except mysql_driver.error_classes(library) as e:
        raise TargetError(_cannot_connect(params, e)) from None


def _cannot_connect(params: dict, e: Exception) -> str:
    return (f"cannot connect to mysql://{params['user']}@{params['host']}:{params['port']}/"
            f"{params['database']}: {mysql_driver.error_text(e)}")


def check_engine(engine) -> str:
    """The ``engine`` option: a storage engine's name (InnoDB, MyISAM, Aria …), which
    CREATE TABLE takes unquoted; ValueError (one line) for anything else."""
    if not isinstance(engine, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,63}", engine):
        raise ValueError(f"options: engine {str(engine)[:60]!r} is not a storage engine's name "
                         "(a letter, then letters, digits or _: InnoDB, MyISAM, Aria, RocksDB)")
    return engine


class MysqlTarget(Target):
    kind = "mysql"
    dialect = MysqlDialect()
    server_names, default_port = ("mariadbd", "mysqld"), 3306
    prometheus_queries = {"db_size_gb": 'sum(mysql_info_schema_table_size{schema="$datname"})'}  # mysqld_exporter
    tracks_tables = True   # benchlib's mark: the table's COMMENT

    @classmethod
    def connect_endpoint(cls, endpoint):
        return _connect(endpoint.params["params"], endpoint.params["library"])

    option_names = ("engine", "library", "driver")
    URL_PARAMETERS = ("unix_socket", "password")

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        super().check_options(url, options)
        if "engine" in options:
            check_engine(options["engine"])
        mysql_driver.choose(url, options)

    @classmethod
    def check_url(cls, url: str) -> None:
        url_query_check(url, cls.URL_PARAMETERS)
        if not make_url(url).database:
            raise ValueError("no database named: end the URL with /dbname")

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        self.params = connect_params(url)
        try:   # pasted into CREATE TABLE … ENGINE=: a name, never SQL
            self.engine = check_engine(self.options.get("engine", "InnoDB"))
        except ValueError as e:
            raise TargetError(f"{name}: {e}") from None
        try:
            self.library = mysql_driver.choose(url, self.options)
        except ValueError as e:
            raise TargetError(f"{name}: {e}") from None
        self.client_library = self.library   # the run's meta says which one ran
        self._admin = None
        self._monitor = None
        self._watcher = None
        self._server_pid = None
        self._perf = None       # performance_schema on (asked once)

    def admin(self):
        if self._admin is None or not self._admin.open:
            self._admin = _connect(self.params, self.library)
        return self._admin

    def _q(self, sql, args=None):
        with self.admin().cursor() as c:
            c.execute(sql, args)
            return c.fetchall()

    def start(self):
        try:
            self.admin()
        except TargetError as e:
            raise TargetError(f"{self.name}: {e}") from None
        if is_local_host(self.params["host"]):
            self._server_pid = listening_pid(int(self.params["port"]))

    def stop(self):
        for conn in (self._admin, self._monitor, self._watcher):
            if conn is not None and conn.open:
                conn.close()
        self._admin = self._monitor = self._watcher = None

    def endpoint(self):
        return self.make_endpoint({"params": self.params, "library": self.library})

    def dbms_info(self):
        version = self._q("SELECT VERSION()")[0][0]
        return {"name": "MariaDB" if "mariadb" in version.lower() else "MySQL", "version": version,
                "client": mysql_driver.version(self.library)}

    def dbms_pids(self):
        return process_tree(self._server_pid)

    def index_columns(self, conn, table, index):
        with conn.cursor() as c:
            c.execute("SELECT column_name FROM information_schema.statistics WHERE table_schema = "
                      "DATABASE() AND table_name = %s AND index_name = %s ORDER BY seq_in_index",
                      (table, index))
            return [r[0] for r in c.fetchall()] or None

    def db_size_bytes(self):
        # the sampler asks from its own thread; a connection is not thread-safe
        if self._monitor is None or not self._monitor.open:
            self._monitor = _connect(self.params, self.library)
        with self._monitor.cursor() as c:
            c.execute("SELECT COALESCE(SUM(data_length + index_length), 0) FROM "
                      "information_schema.tables WHERE table_schema = DATABASE()")
            return int(c.fetchone()[0])

    # the run's own work on the server: the threads of the connections to its database
    # (performance_schema.threads.THREAD_OS_ID -> /proc/<mysqld>/task/<tid>), when
    # performance_schema is on; else the sampler counts the whole server and says why
    session_scope = "database"

    def _watch(self, sql: str):
        if self._watcher is None or not self._watcher.open:
            self._watcher = _connect(self.params, self.library)
        with self._watcher.cursor() as c:
            c.execute(sql)
            return c.fetchall()

    def _perf_on(self) -> bool:
        if self._perf is None:
            self._perf = str(self._watch("SELECT @@performance_schema")[0][0]).upper() in ("1", "ON")
        return self._perf

    def session_tasks(self):
        if self._server_pid is None or not self._perf_on():
            return None
        rows = self._watch("SELECT THREAD_OS_ID FROM performance_schema.threads WHERE TYPE = 'FOREGROUND' "
                           "AND PROCESSLIST_DB = DATABASE() AND PROCESSLIST_ID <> CONNECTION_ID() "
                           "AND THREAD_OS_ID IS NOT NULL")
        return [(self._server_pid, int(tid)) for (tid,) in rows]

    def session_note(self):
        if self._server_pid is None or self._perf_on():
            return None
        return ("MariaDB's performance_schema is off: the DBMS CPU (dsec) is the whole server's, "
                "every database's (performance_schema=ON in the server's configuration attributes "
                "the run's database's threads)")

    def table_facts(self, table: str):
        from .ownership import MARK, TableFacts
        self.quote_ident(table)   # a plain name, as the workloads' statements take it
        conn = self.connect()
        try:
            with conn.cursor() as c:
                c.execute("SELECT table_comment FROM information_schema.tables "
                          "WHERE table_schema = DATABASE() AND table_name = %s", (table,))
                row = c.fetchone()
                if row is None:
                    return None
                c.execute("SELECT column_name FROM information_schema.columns WHERE "
                          "table_schema = DATABASE() AND table_name = %s ORDER BY ordinal_position",
                          (table,))
                cols = tuple(r[0] for r in c.fetchall())
        finally:
            conn.close()
        return TableFacts(cols, row[0] == MARK)

