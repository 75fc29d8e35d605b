"""What LinkBench's C loops share on the Python side (``_lbloop`` over libpq:
:mod:`.postgres_native`; ``_lbmyloop`` over libmariadb: :mod:`.mysql_native`): a
requester's chunks handed to its session's loop and the outcomes filed back to its
RequestClient as each run of the loop returns (:meth:`LinkLoopOps.done`); a history
GET_LINKS_LIST decided when it comes (the loop stops before it).

A session (``PgLinkNative``, ``MyLinkNative``) has ``loop`` (the extension module),
``path`` (meta's driver_path), ``st`` (the binding's statements), ``conn`` (the loop's
Conn) and ``statement(sql)``: a statement as its loop takes it (bytes).
"""
from __future__ import annotations

import numpy as np

from ..._native.ops import LoopOps

LIST = 5   # GET_LINKS_LIST's code (requests.REQUEST_OPS' order, the loop's KINDS)


class LinkLoopOps(LoopOps):
    """A requester's chunks run in C on its connection (``binding``: a loop's session,
    its ``loop`` module, ``path``, ``st`` and ``conn``); ``client``: the RequestClient
    whose counts, statistics and list tails the outcomes go to."""

    compound: dict = {}
    mux_auto = False

    def __init__(self, binding, client):
        # LoopOps' own attributes; no run_many: a thread per requester, as LinkBench's
        self.binding, self.loop, self.path, self.run_many = binding, binding.loop, binding.path, None
        self.client = client
        self.cur = None        # the plan in progress, its chunk's args, the next request to file
        self.args, self.pos, self.history = [], 0, []

    multi: set = frozenset()   # the plan's MULTIGET_LINK IN-list lengths

    def plan(self, chunk):
        self.multi = {len(a[2]) for c, a in zip(chunk.codes, chunk.args) if c == 4}
        self._prepare_multi()
        self.cur, self.args, self.pos = self.loop.Plan(chunk.codes, chunk.args), chunk.args, 0
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
            conn.prepare_multiget(n, self.binding.statement(st.multiget(0, 0, list(range(n)))[0]))

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


class LinkNativeSession:
    """A requester's session on a C loop: the loop's Conn (``conn``: both connections,
    the autocommit one and the link writes'), LinkBench's statements prepared on it in
    _lbplan.h's STMT order; a subclass names its ``loop``, ``path`` and how a statement
    is written for it (``statement``)."""

    loop = path = None
    wconn = None

    def __init__(self, conn, st, range_limit: int):
        self.st, self.dialect, self.conn = st, st.dialect, conn
        try:
            conn.prepare([self.statement(s) for s in (
                st.get_visibility, st.insert_link, st.update_link, st.hide_link, st.count_add,
                st.count_change, st.count_links, st.get_links_list, st.get_node, st.update_node,
                st.add_node, st.delete_node)], range_limit)
        except BaseException:
            conn.close()
            raise

    def statement(self, sql: str) -> bytes:
        """``sql`` as the loop takes it (the binding's ``%s`` markers kept)."""
        return sql.encode()

    def native(self, client) -> LinkLoopOps:
        """The driver's calls for ``client`` (a RequestClient) on this connection."""
        return LinkLoopOps(self, client)

    def open_writes(self) -> None:
        """The link writes' connection is the loop's second, opened with the first."""

    def close(self) -> None:
        self.conn.close()


def unpack(plan, a: int, b: int):
    """Requests a..b-1's codes, statuses, service times (ns), rows, last list times, end times."""
    raw, extra = plan.results(a, b), plan.extra(a, b)
    return (np.frombuffer(raw[0], np.int8), np.frombuffer(raw[1], np.int8), np.frombuffer(raw[2], np.int64),
            *(np.frombuffer(x, np.int64) for x in extra))
