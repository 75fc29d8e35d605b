"""LinkBench's request phase (``r.L1`` …): one requester's stream of the ten
operations, each one short transaction with LinkBenchRequest / LinkStoreMysql's
semantics.

- ADD_LINK inserts the link, or revives a hidden one, and bumps counttable, in one
  transaction; an add that finds the link visible updates its data instead
  (LinkBench's ``add_to_upd``: status RETRY).
- UPDATE_LINK is LinkBench's updateLink (an add that expects the link): one that
  finds none inserts it (``upd_to_add``: RETRY) and bumps the count.
- DELETE_LINK hides a visible link (LinkBench's default, not expunge) and
  decrements the count (never below 0); a missing or hidden link: EMPTY.
- COUNT_LINK reads counttable; MULTIGET_LINK reads 1 … 128 id2s of (id1, type);
  GET_LINKS_LIST the newest visible links, at most ``range_limit``, and with
  probability ``getlinklist_history`` % pages back into a list that earlier filled a
  page (a history query);
- ADD_NODE inserts a node (auto id), UPDATE_NODE / DELETE_NODE / GET_NODE by id
  (EMPTY when there is none).

Everything random is drawn in :meth:`RequestClient.next_chunk`; times (ms for links,
s for nodes, as LinkBench) are read when the operation runs.
"""
from __future__ import annotations

import random
import time

import numpy as np

from ..base import Chunk
from ..ycsb.workload import ValuePool
from .db import DbClient
from .dists import (
    DEFAULT_LINK_TYPE,
    DEFAULT_NODE_TYPE,
    MAX_LINK_DATA,
    P_ADD_EXIST,
    P_DELETE_EXIST,
    P_GET_EXIST,
    P_UPDATE_EXIST,
    Graph,
    data_sizes,
    link_access,
    multiget_sizes,
    node_access,
)

REQUEST_OPS = ["ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK", "MULTIGET_LINK",
               "GET_LINKS_LIST", "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE"]
(ADD_LINK, DELETE_LINK, UPDATE_LINK, COUNT_LINK, MULTIGET_LINK, GET_LINKS_LIST, ADD_NODE,
 UPDATE_NODE, DELETE_NODE, GET_NODE) = range(10)
OK, ERROR, RETRY, EMPTY = 0, 2, 3, 4
MAX_NODE_DATA = 4096
HISTORY_LIMIT = 2048   # LinkBenchRequest's listTailHistoryLimit
MAX_TIME = 2**62


class RequestClient(DbClient):
    op_names = REQUEST_OPS

    def __init__(self, p, st, endpoint, seed: int, ops_limit: int | None):
        self.p, self.st, self.endpoint = p, st, endpoint
        self.rng = np.random.default_rng(seed)
        self.py_rng = random.Random(seed)
        self.graph = Graph(p)
        self.reads, self.writes = link_access(p, self.rng, "read"), link_access(p, self.rng, "write")
        self.node_dists = {UPDATE_NODE: node_access(p, self.rng, "node_update"),
                           DELETE_NODE: node_access(p, self.rng, "node_delete"),
                           GET_NODE: node_access(p, self.rng, "node_read")}
        mix = p.mix
        self.cum = np.cumsum([mix[o] for o in REQUEST_OPS])
        self.cum /= self.cum[-1]
        self.pool = ValuePool(self.rng, MAX_NODE_DATA, as_bytes=True)
        self.remaining = ops_limit
        self.history: list[tuple[int, int, int]] = []   # (id1, type, oldest time) of full pages
        self.db = st.open(endpoint)
        self._bind()

    def _bind(self):
        self.fns = [self.add_link, self.delete_link, self.update_link, self.count_link,
                    self.multiget_link, self.get_links_list, self.add_node, self.update_node,
                    self.delete_node, self.get_node]

    # ------------------------------------------------------------ planning
    def next_chunk(self, max_ops):
        n = max_ops if self.remaining is None else min(max_ops, self.remaining)
        if n <= 0:
            return None
        if self.remaining is not None:
            self.remaining -= n
        p, rng, g = self.p, self.rng, self.graph
        ops = np.minimum(np.searchsorted(self.cum, rng.random(n), side="right"), 9)
        id1 = np.zeros(n, dtype=np.int64)
        is_w = ops <= UPDATE_LINK
        is_r = (ops >= COUNT_LINK) & (ops <= GET_LINKS_LIST)
        id1[is_w] = self.writes.next(int(is_w.sum()))
        id1[is_r] = self.reads.next(int(is_r.sum()))
        for code, dist in self.node_dists.items():
            sel = ops == code
            id1[sel] = dist.next(int(sel.sum()))
        tix = rng.integers(0, p.link_type_count, n)
        p_exist = np.select([ops == ADD_LINK, ops == MULTIGET_LINK], [P_ADD_EXIST, P_GET_EXIST],
                            np.where(ops == DELETE_LINK, P_DELETE_EXIST, P_UPDATE_EXIST))
        rng_size = np.maximum(np.ceil(g.nlinks_of_type(id1, tix) / p_exist), 1)
        id2 = id1 + np.floor(rng.random(n) * rng_size).astype(np.int64)
        lsize = data_sizes(p.link_datasize, MAX_LINK_DATA, rng, n)
        nsize = data_sizes(p.node_datasize, MAX_NODE_DATA, rng, n)
        data = self.pool.values(np.where(ops >= ADD_NODE, nsize, lsize))
        mget = multiget_sizes(p, rng, n)
        hist = rng.random(n) < p.getlinklist_history / 100.0
        ltype = (DEFAULT_LINK_TYPE + tix).tolist()
        args = []
        for i, (o, a, t, b) in enumerate(zip(ops.tolist(), id1.tolist(), ltype, id2.tolist())):
            if o <= UPDATE_LINK:
                args.append((a, t, b, data[i]) if o != DELETE_LINK else (a, t, b))
            elif o == COUNT_LINK:
                args.append((a, t))
            elif o == MULTIGET_LINK:
                k = int(mget[i])
                more = (a + np.floor(rng.random(k) * rng_size[i])).astype(np.int64)
                args.append((a, t, sorted(set(more.tolist()))))
            elif o == GET_LINKS_LIST:
                args.append((a, t, bool(hist[i])))
            elif o in (ADD_NODE,):
                args.append((data[i],))
            elif o == UPDATE_NODE:
                args.append((a, data[i]))
            else:
                args.append((a,))
        return Chunk(ops.tolist(), args)

    # ------------------------------------------------------------ link writes
    def _write(self, id1, ltype, id2, data, expect: bool) -> int:
        """ADD_LINK (expect False) and UPDATE_LINK (expect True): upsert the link visible."""
        db, st = self.db, self.st
        now = int(time.time() * 1000)
        db.begin()
        try:
            row = db.rows(st.get_visibility, (id1, id2, ltype))
            if not row and db.run(st.insert_link, (id1, id2, ltype, 1, data, now, 0)) == 1:
                db.run(st.count_inc, (id1, ltype, now))
                status = RETRY if expect else OK
            else:
                # found, or inserted by another requester since the read: read it again
                row = row or db.rows(st.get_visibility, (id1, id2, ltype))
                db.run(st.update_link, (1, data, now, id1, id2, ltype))
                if row[0][0] != 1:   # hidden → visible
                    db.run(st.count_inc, (id1, ltype, now))
                status = OK if expect else RETRY
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return status

    def add_link(self, id1, ltype, id2, data):
        return self._write(id1, ltype, id2, data, False)

    def update_link(self, id1, ltype, id2, data):
        return self._write(id1, ltype, id2, data, True)

    def delete_link(self, id1, ltype, id2):
        db, st = self.db, self.st
        db.begin()
        try:
            row = db.rows(st.get_visibility, (id1, id2, ltype))
            status = EMPTY
            if row and row[0][0] == 1:
                db.run(st.hide_link, (id1, id2, ltype))
                db.run(st.count_dec, (id1, ltype, int(time.time() * 1000)))
                status = OK
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return status

    # ------------------------------------------------------------ link reads
    def count_link(self, id1, ltype):
        return OK if self.db.rows(self.st.count_links, (id1, ltype)) else EMPTY

    def multiget_link(self, id1, ltype, id2s):
        return OK if self.db.rows(*self.st.multiget(id1, ltype, id2s)) else EMPTY

    def get_links_list(self, id1, ltype, history):
        limit, max_t = self.p.range_limit, MAX_TIME
        if history and self.history:   # page back into a list that filled a page before
            id1, ltype, oldest = self.history.pop(self.py_rng.randrange(len(self.history)))
            max_t = oldest - 1
        rows = self.db.rows(self.st.get_links_list, (id1, ltype, 0, max_t, limit))
        if len(rows) >= limit and len(self.history) < HISTORY_LIMIT:
            self.history.append((id1, ltype, rows[-1][5]))
        return OK if rows else EMPTY

    # ------------------------------------------------------------ nodes
    def add_node(self, data):
        self.db.run(self.st.add_node, (DEFAULT_NODE_TYPE, int(time.time()), data))
        return OK

    def update_node(self, id_, data):
        n = self.db.run(self.st.update_node, (int(time.time()), data, id_, DEFAULT_NODE_TYPE))
        return OK if n else EMPTY

    def delete_node(self, id_):
        return OK if self.db.run(self.st.delete_node, (id_, DEFAULT_NODE_TYPE)) else EMPTY

    def get_node(self, id_):
        rows = self.db.rows(self.st.get_node, (id_,))
        return OK if rows and rows[0][1] == DEFAULT_NODE_TYPE else EMPTY

