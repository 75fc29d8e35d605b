"""LinkBench on MariaDB (LinkStoreMysql's schema): unsigned ids, varbinary(255) link
payloads and mediumblob node payloads, linktable ``PARTITION BY KEY(id1) PARTITIONS 16``
as the client's README creates it (``link_partitions``; 0: none), getlinklist with
``FORCE INDEX(<linktable>_id1_type)``. The rest is the dialect's (the target's ENGINE,
INSERT … ON DUPLICATE KEY UPDATE, ANALYZE TABLE, the link-write connection with
autocommit off: the server starts a transaction with its first statement, as
Connector/J does) through the generic binding; mysqlclient or PyMySQL, or the requests
in C over libmariadb (:mod:`.mysql_native`, ``run.driver`` auto or c, where it is built)."""
from __future__ import annotations

from ...indexes import index_name
from .base import INDEX_WHAT, LinkBenchSql


class MyLinkBench(LinkBenchSql):
    id_type, small_type, int_type = "bigint unsigned", "tinyint", "int unsigned"
    link_data_type, node_data_type = "varbinary(255)", "mediumblob"
    node_id_column = "id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY"

    def __init__(self, *args):
        self.list_index_hint = f" FORCE INDEX({args[0].quote_ident(index_name(args[1], INDEX_WHAT))})"
        super().__init__(*args)

    def link_table_tail(self, engine, link_partitions=0):
        tail = self.table_tail(engine)
        return tail + (f" PARTITION BY KEY(id1) PARTITIONS {link_partitions}"
                       if link_partitions else "")

    @classmethod
    def native_missing(cls, dialect):
        from .mysql_native import AVAILABLE, MISSING
        return None if AVAILABLE else MISSING

    def open_native(self, endpoint, range_limit: int):
        """A requester's session whose requests run in C (:mod:`.mysql_native`)."""
        from ....targets.mysql import _cannot_connect
        from ....targets.base import TargetError
        from .mysql_native import MyLinkNative
        try:
            return MyLinkNative(endpoint.params["params"], self, range_limit)
        except ConnectionError as e:
            raise TargetError(_cannot_connect(endpoint.params["params"], e)) from None
