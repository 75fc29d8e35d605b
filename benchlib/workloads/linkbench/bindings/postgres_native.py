"""LinkBench's requests on PostgreSQL with their loop in C (``_lbloop``, over libpq).

The Python path (:mod:`.postgres` over psycopg) spends most of a request's client CPU
in psycopg's layers. Here a chunk of requests (RequestClient.next_chunk's codes and
tuples) goes to C whole, where each is sent, awaited, judged and timed without the
GIL: the same statements, prepared once on the loop's own connection, the link writes'
transactions (BEGIN pipelined with the first statement, COMMIT / ROLLBACK) and their
insert ⇄ update switches (RETRY), the same statuses.

What the requester keeps itself is filled from the plan's outcomes as each run of the
loop returns (:meth:`LinkLoopOps.done`, the driver's ``ops_done``): its RequesterStats
(each request's time, MULTIGET_LINK's found / not found, RANGE_SIZE, history queries)
and its list-tail history. A GET_LINKS_LIST that pages back into a tail
(``getlinklist_history``) is decided when it comes: the loop stops before it, its
arguments are picked from the tails as the Python path picks them, and it goes on.

Optional as every loop: without libpq's headers it is not built, ``run.driver: c`` is
refused with that reason and ``auto`` runs the Python path; where it is built ``auto``
runs it (``python``: psycopg's path). Two connections per requester, as the Python path
and LinkStoreSql open them: reads and node writes in autocommit, link writes' transactions
on the second.
"""
from __future__ import annotations

import itertools
import re

from ..._native import missing
from .native import LinkNativeSession

try:
    from ..._native import _lbloop
except ImportError:   # built without libpq-dev or a C compiler: psycopg runs
    _lbloop = None

AVAILABLE = _lbloop is not None
DRIVER_PATH = "c-libpq"
MISSING = missing("_lbloop", "libpq-dev")


class PgLinkNative(LinkNativeSession):
    """The loop's own libpq connections, LinkBench's statements prepared on both."""

    path, loop = DRIVER_PATH, _lbloop

    def __init__(self, conninfo: str, st, range_limit: int):
        if _lbloop is None:
            raise RuntimeError(MISSING)
        super().__init__(_lbloop.Conn(conninfo), st, range_limit)

    def statement(self, sql: str) -> bytes:
        return numbered(sql)


def numbered(sql: str) -> bytes:
    """A statement with psycopg's ``%s`` markers as libpq's ``$1, $2 …`` (the binding's
    statements bind every value: no other ``%`` in them)."""
    n = itertools.count(1)
    return re.sub(r"%s", lambda _: f"${next(n)}", sql).encode()
