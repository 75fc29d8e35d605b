"""PostgreSQL by URL, through psycopg 3.

The hot path calls libpq through psycopg's low-level ``pgconn.exec_prepared`` with
statements prepared once per connection: measured on this machine it does 23.5k
point selects/s on one connection against 15.4k through a cursor with
``prepare=True`` (pgbench -S: 22.2k), because no Python row objects are built. The
load streams rows with COPY.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from .base import Endpoint, Target, TargetError, is_local_host, process_tree
from .sql import YcsbStatements, index_sql, quote_ident

OK, NOT_FOUND, ERROR = 0, 1, 2


def conninfo(url: str) -> str:
    """A libpq URL from a SQLAlchemy one (drop the ``+driver`` part)."""
    scheme, rest = url.split("://", 1)
    return "postgresql://" + rest


class PostgresTarget(Target):
    kind = "postgres"
    dialect = "postgres"

    @classmethod
    def connect_endpoint(cls, endpoint):
        import psycopg
        return psycopg.connect(endpoint.params["conninfo"], autocommit=True)

    def quote_ident(self, name: str) -> str:
        from psycopg import sql
        return sql.Identifier(name).as_string(self.admin())  # libpq's own quoting

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

    def _connect(self):
        import psycopg
        try:
            return psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10)
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
        for conn in (self._admin, self._monitor):
            if conn is not None:
                conn.close()
        self._admin = self._monitor = None

    def admin(self):
        if self._admin is None or self._admin.closed:
            self._admin = self._connect()
        return self._admin

    def endpoint(self):
        return Endpoint("postgres", {"conninfo": self.conninfo})

    def dbms_info(self):
        v = self.admin().execute("SHOW server_version").fetchone()[0]
        return {"name": "PostgreSQL", "version": v}

    def dbms_pids(self):
        return process_tree(self._postmaster)

    def db_size_bytes(self):
        # the sampler asks from its own thread: a connection of its own, so a size query
        # never waits behind (or interleaves with) the admin connection's CREATE INDEX
        if self._monitor is None or self._monitor.closed:
            self._monitor = self._connect()
        return self._monitor.execute("SELECT pg_database_size(current_database())").fetchone()[0]

    def ycsb_create_table(self, table, fields):
        st = YcsbStatements(table, fields, "%s")
        a = self.admin()
        a.execute(f"DROP TABLE IF EXISTS {st.table}")
        a.execute(st.create_table("TEXT"))

    def create_index(self, table, column):
        self.admin().execute(index_sql(table, column, "postgres"))

    def after_load(self, table):
        # fresh statistics, as a DBA would before measuring
        self.admin().execute(f"VACUUM ANALYZE {quote_ident(table)}")

    @classmethod
    def ycsb_binding(cls, endpoint, props):
        return PostgresYcsb(endpoint.params["conninfo"], props)

    @classmethod
    def native_missing(cls) -> str | None:
        from . import pg_native
        return None if pg_native.AVAILABLE else pg_native.MISSING

    @classmethod
    def ycsb_native_binding(cls, endpoint, props):
        from .pg_native import PostgresYcsbNative
        return PostgresYcsbNative(endpoint.params["conninfo"], props)


class PostgresYcsb:
    """YCSB's DB interface on one connection, prepared statements via libpq."""

    def __init__(self, conninfo_: str, props):
        import psycopg
        from psycopg import pq
        self.conn = psycopg.connect(conninfo_, autocommit=True)
        self.pg = self.conn.pgconn
        self._tuples_ok = pq.ExecStatus.TUPLES_OK
        self._command_ok = pq.ExecStatus.COMMAND_OK
        self.st = YcsbStatements(props.table, props.field_names, "", numbered=True)
        self.copy_sql = f"COPY {self.st.table} ({self.st.key}, {', '.join(self.st.fields)}) FROM STDIN"
        # prepare every statement once; names are bytes as libpq wants them
        self.read_names, self.scan_names, self.update_names = {}, {}, {}
        for kind, stmts, names in (("r", self.st.read, self.read_names),
                                   ("s", self.st.scan, self.scan_names),
                                   ("u", self.st.update, self.update_names)):
            for f, sql in stmts.items():
                names[f] = self._prepare(f"{kind}{f}".encode(), sql)
        self.insert_name = self._prepare(b"i", self.st.insert)
        self.delete_name = self._prepare(b"d", self.st.delete)
        self._exec = self.pg.exec_prepared

        self._make_ops()

    def _prepare(self, name: bytes, sql: str) -> bytes:
        res = self.pg.prepare(name, sql.encode())
        if res.status != self._command_ok:
            raise TargetError(f"prepare {sql!r}: {res.error_message.decode(errors='replace').strip()}")
        return name

    # Keys and values arrive as bytes (bytes_args): the workload encodes them while it
    # prepares a chunk, so the timed call is libpq and two attribute reads.
    bytes_args = True

    def _make_ops(self):
        # closures over locals: no attribute lookups on the hot path
        exec_ = self.pg.exec_prepared
        tok, cok = self._tuples_ok, self._command_ok
        rn, sn, un = self.read_names, self.scan_names, self.update_names
        ins, dele = self.insert_name, self.delete_name

        def read(key, field):
            r = exec_(rn[field], (key,))
            if r.status != tok:
                return ERROR
            return OK if r.ntuples else NOT_FOUND

        def scan(key, count, field):
            r = exec_(sn[field], (key, b"%d" % count))
            return OK if r.status == tok else ERROR

        def update(key, field, values):
            r = exec_(un[field], (*values, key))
            if r.status != cok:
                return ERROR
            return OK if r.command_tuples else NOT_FOUND

        def insert(key, values):
            r = exec_(ins, (key, *values))
            return OK if r.status == cok else ERROR

        def delete(key):
            r = exec_(dele, (key,))
            return OK if r.status == cok else ERROR

        self.read, self.scan, self.update, self.insert, self.delete = read, scan, update, insert, delete
        self._make_async_ops()

    def _make_async_ops(self):
        """The same operations for the multiplexed client (benchlib.run.mux): each sends its
        statement and yields; the client resumes it with the result once it is complete."""
        send = self.pg.send_query_prepared
        tok, cok = self._tuples_ok, self._command_ok
        rn, sn, un = self.read_names, self.scan_names, self.update_names
        ins = self.insert_name

        def a_read(key, field):
            send(rn[field], (key,))
            r = yield
            if r.status != tok:
                return ERROR
            return OK if r.ntuples else NOT_FOUND

        def a_scan(key, count, field):
            send(sn[field], (key, b"%d" % count))
            r = yield
            return OK if r.status == tok else ERROR

        def a_update(key, field, values):
            send(un[field], (*values, key))
            r = yield
            if r.status != cok:
                return ERROR
            return OK if r.command_tuples else NOT_FOUND

        def a_insert(key, values):
            send(ins, (key, *values))
            r = yield
            return OK if r.status == cok else ERROR

        self.a_read, self.a_scan, self.a_update, self.a_insert = a_read, a_scan, a_update, a_insert

    def insert_batch(self, rows):
        # COPY text format; keys and values are alphanumeric bytes (see ycsb.ValuePool),
        # so no escaping is needed
        data = b"".join(b"\t".join(r) + b"\n" for r in rows)
        with self.conn.cursor() as cur:
            with cur.copy(self.copy_sql) as cp:
                cp.write(data)
        return OK  # the records are counted from the chunk's units

    def close(self):
        self.conn.close()
