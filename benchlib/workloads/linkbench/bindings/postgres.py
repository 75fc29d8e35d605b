"""LinkBench on PostgreSQL (LinkStorePgsql's schema): bytea payloads, a bigserial node
id set past the loaded ids after the load, MULTIGET_LINK as one statement with
``= ANY(array)``; psycopg 3's connection, the load as COPY text."""
from __future__ import annotations

from ..db import Db
from .base import LINK_COLS, LinkBenchSql


class PgDb(Db):
    """psycopg 3 (statements prepared by the driver after a few uses)."""

    bulk_text = True   # the load sends COPY text

    def bulk(self, table, cols, text):
        with self.conn.cursor().copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
            cp.write(text)

    def is_broken(self):
        return bool(self.conn.closed)


class PgLinkBench(LinkBenchSql):
    link_data_type = node_data_type = "bytea"
    node_id_column = "id bigserial PRIMARY KEY"

    def __init__(self, *args):
        super().__init__(*args)
        p = self.ph
        self.multiget_any = (f"SELECT {LINK_COLS} FROM {self.link} WHERE id1 = {p} AND "
                             f"link_type = {p} AND id2 = ANY({p})")

    def multiget(self, id1, ltype, id2s):
        return self.multiget_any, (id1, ltype, id2s)

    def after_load(self):
        """The node id sequence past the loaded ids, then statistics."""
        return [f"SELECT setval(pg_get_serial_sequence('{self.node}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {self.node}), false)",
                f"ANALYZE {self.link}", f"ANALYZE {self.count}", f"ANALYZE {self.node}"]

    def open(self, endpoint):
        return PgDb(endpoint, self)
