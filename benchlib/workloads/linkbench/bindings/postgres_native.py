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

import numpy as np

import itertools
import re

from ..._native import missing
from ..._native.ops import LoopOps

try:
    from ..._native import _lbloop
except ImportError:   # built without libpq-dev or a C compiler: psycopg runs
    _lbloop = None

AVAILABLE = _lbloop is not None
DRIVER_PATH = "c-libpq"
MISSING = missing("_lbloop", "libpq-dev")
LIST = 5   # GET_LINKS_LIST's code (requests.REQUEST_OPS' order, the loop's KINDS)


class LinkLoopOps(LoopOps):
    """A requester's chunks run in C on its connection; ``client``: the RequestClient
    whose counts, statistics and list tails the outcomes go to."""

    compound: dict = {}
    mux_auto = False

    def __init__(self, binding, client):
        # LoopOps' own attributes; no run_many: a thread per requester, as LinkBench's
        self.binding, self.loop, self.path, self.run_many = binding, _lbloop, DRIVER_PATH, None
        self.client = client
        self.cur = None        # the plan in progress, its chunk's args, the next request to file
        self.args, self.pos, self.history = [], 0, []

    multi: set = frozenset()   # the plan's MULTIGET_LINK IN-list lengths

    def plan(self, chunk):
        self.multi = {len(a[2]) for c, a in zip(chunk.codes, chunk.args) if c == 4}
        self._prepare_multi()
        self.cur, self.args, self.pos = _lbloop.Plan(chunk.codes, chunk.args), chunk.args, 0
        self.history = [i for i, (c, a) in enumerate(zip(chunk.codes, chunk.args)) if c == LIST and a[2]]
        return self.cur

    def take_over(self, old: LinkLoopOps) -> None:
        """The plan in progress on a lost connection, where its requests stood."""
        self.cur, self.args, self.pos, self.history = old.cur, old.args, old.pos, old.history
        self.multi = old.multi
        self._prepare_multi()   # a new connection has none of them: each would fail

    def _prepare_multi(self) -> None:
        st, conn = self.binding.st, self.binding.conn
        for n in self.multi:
            conn.prepare_multiget(n, numbered(st.multiget(0, 0, list(range(n)))[0]))

    def run(self, plan, i, next_tick, end, pacing=(0, 0, 0.0), issued=0):
        start, offset, period = pacing
        stop = len(plan)
        for h in self.history:
            if h == i:
                self.client.native_history(plan, i)
            elif h > i:
                stop = h
                break
        return self.binding.conn.run(plan, i, stop, next_tick, end or 0, start, offset, period, issued)

    def done(self, k: int) -> None:
        """The next k requests of the plan returned: the requester's own counts."""
        a, b = self.pos, self.pos + k
        self.pos = b
        if k:
            self.client.native_done(self.args, a, *(x.tolist() for x in unpack(self.cur, a, b)),
                                    errors=self.cur.errors(a, b))


class PgLinkNative:
    """The loop's own libpq connections (``conn``: both, the autocommit one and the
    link writes'), LinkBench's statements prepared on them."""

    path = DRIVER_PATH

    def __init__(self, conninfo: str, st, range_limit: int):
        if _lbloop is None:
            raise RuntimeError(MISSING)
        self.st, self.dialect = st, st.dialect
        self.conn = _lbloop.Conn(conninfo)
        self.wconn = None
        try:
            self.conn.prepare([numbered(s) for s in (
                st.get_visibility, st.insert_link, st.update_link, st.hide_link, st.count_add,
                st.count_change, st.count_links, st.get_links_list, st.get_node, st.update_node,
                st.add_node, st.delete_node)], range_limit)
        except BaseException:
            self.conn.close()
            raise

    def native(self, client) -> LinkLoopOps:
        """The driver's calls for ``client`` (a RequestClient) on this connection."""
        return LinkLoopOps(self, client)

    def open_writes(self) -> None:
        """The link writes' connection is the loop's second, opened with the first."""

    def close(self) -> None:
        self.conn.close()


def numbered(sql: str) -> bytes:
    """A statement with psycopg's ``%s`` markers as libpq's ``$1, $2 …`` (the binding's
    statements bind every value: no other ``%`` in them)."""
    n = itertools.count(1)
    return re.sub(r"%s", lambda _: f"${next(n)}", sql).encode()


def unpack(plan, a: int, b: int):
    """Requests a..b-1's codes, statuses, service times (ns), rows, last list times, end times."""
    raw, extra = plan.results(a, b), plan.extra(a, b)
    return (np.frombuffer(raw[0], np.int8), np.frombuffer(raw[1], np.int8), np.frombuffer(raw[2], np.int64),
            *(np.frombuffer(x, np.int64) for x in extra))
