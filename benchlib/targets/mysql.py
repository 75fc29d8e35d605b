"""MariaDB / MySQL by URL, through mysqlclient (C) or PyMySQL (:mod:`.mysql_driver`).

Neither uses server-side prepared statements; statements are formatted client-side
(the library's escaping), and the load sends multi-row INSERTs of ``batch_size`` rows —
what the JDBC binding's ``rewriteBatchedStatements`` does.
"""
from __future__ import annotations

from sqlalchemy.engine import make_url

from . import mysql_driver
from .base import (
    Endpoint,
    Target,
    TargetError,
    is_local_host,
    listening_pid,
    process_tree,
    url_query_check,
)
from .sql import YcsbStatements, index_sql, quote_ident

OK, NOT_FOUND, ERROR = 0, 1, 2


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


class MysqlTarget(Target):
    kind = "mysql"
    dialect = "mysql"

    @classmethod
    def connect_endpoint(cls, endpoint):
        return _connect(endpoint.params["params"], endpoint.params["library"])

    option_names = ("engine", "library", "driver")
    URL_PARAMETERS = ("unix_socket", "password")

    @classmethod
    def check_options(cls, url: str, options: dict) -> None:
        super().check_options(url, options)
        mysql_driver.choose(url, options)

    @classmethod
    def check_url(cls, url: str) -> None:
        url_query_check(url, cls.URL_PARAMETERS)
        if not make_url(url).database:
            raise ValueError("no database named: end the URL with /dbname")

    def quote_ident(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def __init__(self, name, url, options=None, data_dir=None):
        super().__init__(name, url, options, data_dir)
        self.params = connect_params(url)
        self.engine = self.options.get("engine", "InnoDB")
        try:
            self.library = mysql_driver.choose(url, self.options)
        except ValueError as e:
            raise TargetError(f"{name}: {e}") from None
        self.client_library = self.library   # the run's meta says which one ran
        self._admin = None
        self._monitor = None
        self._server_pid = None

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
        for conn in (self._admin, self._monitor):
            if conn is not None and conn.open:
                conn.close()
        self._admin = self._monitor = None

    def endpoint(self):
        return Endpoint("mysql", {"params": self.params, "library": self.library})

    def dbms_info(self):
        version = self._q("SELECT VERSION()")[0][0]
        return {"name": "MariaDB" if "mariadb" in version.lower() else "MySQL", "version": version,
                "client": mysql_driver.version(self.library)}

    def dbms_pids(self):
        return process_tree(self._server_pid)

    def db_size_bytes(self):
        # the sampler asks from its own thread; a connection is not thread-safe
        if self._monitor is None or not self._monitor.open:
            self._monitor = _connect(self.params, self.library)
        with self._monitor.cursor() as c:
            c.execute("SELECT COALESCE(SUM(data_length + index_length), 0) FROM "
                      "information_schema.tables WHERE table_schema = DATABASE()")
            return int(c.fetchone()[0])

    def ycsb_create_table(self, table, fields):
        st = YcsbStatements(table, fields, "%s", dialect="mysql")
        self._q(f"DROP TABLE IF EXISTS {st.table}")
        self._q(st.create_table("TEXT") + f" ENGINE={self.engine}")

    def create_index(self, table, column):
        self._q(index_sql(table, column, "mysql", prefix_len=32, if_not_exists=False))

    def after_load(self, table):
        self._q(f"ANALYZE TABLE {quote_ident(table, 'mysql')}")

    @classmethod
    def ycsb_binding(cls, endpoint, props):
        return MysqlYcsb(endpoint.params["params"], endpoint.params["library"], props)

    @classmethod
    def native_missing(cls) -> str | None:
        from . import mysql_native
        return None if mysql_native.AVAILABLE else mysql_native.MISSING

    @classmethod
    def ycsb_native_binding(cls, endpoint, props):
        from .mysql_native import MysqlYcsbNative
        try:
            return MysqlYcsbNative(endpoint.params["params"], props)
        except ConnectionError as e:
            raise TargetError(_cannot_connect(endpoint.params["params"], e)) from None


class MysqlYcsb:
    def __init__(self, params: dict, library: str, props):
        self.conn = _connect(params, library)
        self.cur = self.conn.cursor()
        self.st = YcsbStatements(props.table, props.field_names, "%s", dialect="mysql")
        self.insert_prefix = self.st.insert.split(" VALUES ")[0] + " VALUES "
        if library == "mysqlclient":
            self.read, self.scan = self._c_read_scan()

    def _c_read_scan(self):
        """Reads and scans through mysqlclient's connection itself (query, store_result,
        fetch_row: C calls), not its cursor's Python: the same statement text, escaped by
        the same string_literal, the same errors; a few µs less client CPU per read."""
        query, store, lit = self.conn.query, self.conn.store_result, self.conn.string_literal
        reads = {f: sql.encode() for f, sql in self.st.read.items()}
        scans = {f: sql.encode() for f, sql in self.st.scan.items()}

        def read(key, field):
            query(reads[field] % (lit(key.encode()),))
            return OK if store().fetch_row(0) else NOT_FOUND

        def scan(key, count, field):
            query(scans[field] % (lit(key.encode()), b"%d" % count))
            store().fetch_row(0)
            return OK
        return read, scan

    def read(self, key, field):
        n = self.cur.execute(self.st.read[field], (key,))
        self.cur.fetchall()
        return OK if n else NOT_FOUND

    def scan(self, key, count, field):
        self.cur.execute(self.st.scan[field], (key, count))
        self.cur.fetchall()
        return OK

    def update(self, key, field, values):
        n = self.cur.execute(self.st.update[field], (*values, key))
        # MariaDB reports rows *changed*; an identical value counts 0 — not an error
        return OK if n >= 0 else ERROR

    def insert(self, key, values):
        self.cur.execute(self.st.insert, (key, *values))
        return OK

    def delete(self, key):
        self.cur.execute(self.st.delete, (key,))
        return OK

    def insert_batch(self, rows):
        # keys and values are alphanumeric (ycsb.ValuePool): quoting is enough
        body = ",".join("('" + "','".join(r) + "')" for r in rows)
        self.cur.execute(self.insert_prefix + body)
        return OK  # the records are counted from the chunk's units

    def close(self):
        self.conn.close()
