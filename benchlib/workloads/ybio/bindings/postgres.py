"""ybio on PostgreSQL (psycopg; libpq's own calls on the hot path): the update is the
seed's data-modifying CTE, a session's statements are server-side prepared with
``prepared``, keys go to libpq as bytes (encoded before timing); the load (COPY) and the
statistics after it (VACUUM ANALYZE: the visibility map index-only scans need) are the
dialect's.
With run.driver c or auto a session's calls run in C where that is built
(:mod:`.postgres_native`).
"""
from __future__ import annotations

from .sql import SqlYbio


def _failed(res):
    """A failed statement raises, as the other libraries' calls do: the driver counts it an
    ERROR and asks whether the connection was lost (its SQLSTATE, else a ping)."""
    import psycopg
    state = res.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
    try:
        cls = psycopg.errors.lookup(state.decode()) if state else psycopg.OperationalError
    except KeyError:
        cls = psycopg.Error
    raise cls(res.error_message.decode(errors="replace").strip() or "statement failed")


class PostgresYbio(SqlYbio):
    @staticmethod
    def update_sql(dialect, table: str, where: str) -> str:
        return (f"WITH u AS (UPDATE {table} SET scratch = scratch + 1 {where} "
                f"RETURNING 1, scratch) SELECT count(*), max(scratch) FROM u")

    @classmethod
    def native_missing(cls, dialect):
        from .postgres_native import AVAILABLE, MISSING
        return None if AVAILABLE else MISSING

    @staticmethod
    def open_native(endpoint, st):
        """A session whose calls run in C (:mod:`.postgres_native`)."""
        from .postgres_native import PostgresYbioNative
        return PostgresYbioNative(endpoint.params["conninfo"], st)

    @staticmethod
    def key(k: int):
        return b"%d" % k

    def calls(self, st, prepared):
        from psycopg import pq
        pg = self.conn.pgconn
        tok = pq.ExecStatus.TUPLES_OK
        if prepared:
            for name, sql in ((b"ybio_read", st.read), (b"ybio_update", st.update)):
                res = pg.prepare(name, sql.encode())
                if res.status != pq.ExecStatus.COMMAND_OK:
                    raise RuntimeError(res.error_message.decode(errors="replace").strip())
            run = pg.exec_prepared
            r_stmt, u_stmt = b"ybio_read", b"ybio_update"
        else:
            run = pg.exec_params
            r_stmt, u_stmt = st.read.encode(), st.update.encode()

        def read(lo, hi):
            r = run(r_stmt, (lo, hi))
            return int(r.get_value(0, 0)) if r.status == tok else _failed(r)

        def update(lo, hi):
            r = run(u_stmt, (lo, hi))
            return int(r.get_value(0, 0)) if r.status == tok else _failed(r)
        return read, update
