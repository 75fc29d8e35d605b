"""LinkBench's request phase (``r.L1`` …): one requester's stream of the ten
operations, with LinkBenchRequest's semantics and LinkStoreSql's statements and
transactions (mdcallag/linkbench, the maintained client):

- node requests, COUNT_LINK, MULTIGET_LINK and GET_LINKS_LIST: one statement each in
  autocommit;
- link writes: one transaction on the link-write connection (autocommit off; the
  transaction starts with its first statement). ADD_LINK inserts the link and adds 1
  to its count (INSERT … ON CONFLICT / ON DUPLICATE KEY), then COMMIT; a link already
  there fails the insert (ROLLBACK) and the add becomes an update (LinkBench's
  ``add_to_upd``: status RETRY). UPDATE_LINK locks the link (SELECT … FOR UPDATE),
  updates it visible and adds 1 to the count if it was hidden, then COMMIT; no link:
  ROLLBACK and an insert (``upd_to_add``: RETRY). DELETE_LINK locks the link, hides it
  and takes 1 from the count, COMMIT; a missing or hidden link: ROLLBACK, EMPTY;
- GET_LINKS_LIST: the newest visible links, at most ``range_limit``; with probability
  ``getlinklist_history`` % it pages back (OFFSET 1, up to the time of the last link
  seen) into a list that filled a page before (LinkBenchRequest's list-tail history).

Everything random is drawn in :meth:`RequestClient.next_chunk`; times (ms for links,
s for nodes, as LinkBench) are read when the operation runs.
"""
from __future__ import annotations

import random
import time

import numpy as np

from ... import seeds
from ...schema import EMPTY, ERROR, OK, RETRY
from ..base import Chunk
from .cloop import NativeRequests, open_requester
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
from .payloads import Payloads
from .reqstats import RequesterStats

REQUEST_OPS = ["ADD_LINK", "DELETE_LINK", "UPDATE_LINK", "COUNT_LINK", "MULTIGET_LINK",
               "GET_LINKS_LIST", "ADD_NODE", "UPDATE_NODE", "DELETE_NODE", "GET_NODE"]
(ADD_LINK, DELETE_LINK, UPDATE_LINK, COUNT_LINK, MULTIGET_LINK, GET_LINKS_LIST, ADD_NODE,
 UPDATE_NODE, DELETE_NODE, GET_NODE) = range(10)
MAX_NODE_DATA = 4096
HISTORY_LIMIT = 2048   # LinkBenchRequest's listTailHistoryLimit
MAX_TIME = 2**63 - 1   # Java's Long.MAX_VALUE, getLinkList's upper time bound
LINK_TIME = 6          # the time column of a link row (bindings' LINK_COLS)
MAX_SWITCHES = 4       # an insert that finds the link, an update that finds none …


class RequestClient(NativeRequests, DbClient):
    op_names = REQUEST_OPS
    # next_chunk draws from rng alone (the list tails and stats have streams of their
    # own, drawn as requests run): made ahead by the driver, no requester waits on it
    chunks_ahead = True

    def __init__(self, p, st, endpoint, seed: int, ops_limit: int | None, index: int = 0,
                 warmup_s: float = 0.0, driver: str = "python"):
        self.p, self.st, self.endpoint = p, st, endpoint
        self.stats = RequesterStats(index, seed, p.progressfreq, p.displayfreq, warmup_s)
        self.rng = seeds.generator(seed, "linkbench requests")
        self.py_rng = seeds.python_random(seed, "linkbench list tails")
        self.graph = Graph(p)
        self.reads, self.writes = link_access(p, self.rng, "read"), link_access(p, self.rng, "write")
        self.node_dists = {UPDATE_NODE: node_access(p, self.rng, "node_update"),
                           DELETE_NODE: node_access(p, self.rng, "node_delete"),
                           GET_NODE: node_access(p, self.rng, "node_read")}
        mix = p.mix
        self.cum = np.cumsum([mix[o] for o in REQUEST_OPS])
        self.cum /= self.cum[-1]
        self.gens = [(code, Payloads(p.datagen, prefix, self.rng), code >= ADD_NODE)
                     for code, prefix in ((ADD_LINK, "link_add"), (UPDATE_LINK, "link_up"),
                                          (ADD_NODE, "node_add"), (UPDATE_NODE, "node_up"))]
        self.remaining = ops_limit
        self.tails = ListTails(self.py_rng)
        self._picked: dict[int, int] = {}   # the C loop's history requests: their tails
        self._connect(f"linkbench request client (seed {seed})",
                      lambda: open_requester(endpoint, st, p, driver))
        self._bind()

    def _bind(self):
        if self.bind_native():   # run.driver c: the chunks run in C (cloop.py)
            return
        self.db.open_writes()
        self.fns = [self._counted(f, op) for f, op in zip((
            self.add_link, self.delete_link, self.update_link, self.count_link,
            self.multiget_link, self.get_links_list, self.add_node, self.update_node,
            self.delete_node, self.get_node), REQUEST_OPS)]

    def _counted(self, fn, op: str):
        """``fn`` counted and timed by the requester (LinkBenchRequest's requestsDone, each
        request tried, failed too; its SampledStats: reqstats.py)."""
        stats, clock = self.stats, time.perf_counter_ns

        def request(*args):
            t0 = clock()
            try:
                status = fn(*args)
            except BaseException as e:
                t1 = clock()
                if isinstance(e, Exception):
                    stats.error(op, t1, str(e) or type(e).__name__)
                stats.done(op, t0, t1, True)
                raise
            stats.done(op, t0, clock(), status == ERROR)
            return status
        return request

    def counters(self) -> dict:
        """The requester's own counts (reqstats.py), handed to the controller."""
        return self.stats.as_dict()

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
        nl = g.nlinks_of_type(id1)
        id2 = g.choose_id2(rng, id1, nl, p_exist)
        lsize = data_sizes(p.link_datasize, MAX_LINK_DATA, rng, n)
        nsize = data_sizes(p.node_datasize, MAX_NODE_DATA, rng, n)
        data = self._payloads(ops, lsize, nsize)
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
                more = g.choose_id2(rng, np.full(k, a), np.full(k, nl[i]), P_GET_EXIST)
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

    def _payloads(self, ops, lsize, nsize) -> list:
        """Each write's payload from its generator (link_add, link_up, node_add, node_up)."""
        data: list = [None] * len(ops)
        for code, gen, node in self.gens:
            sel = np.flatnonzero(ops == code)
            for i, d in zip(sel.tolist(), gen.fill((nsize if node else lsize)[sel])):
                data[i] = d
        return data

    # ------------------------------------------------------------ link writes
    def _insert(self, id1, ltype, id2, data) -> bool:
        """addLinkImpl: INSERT the link, add 1 to its count, COMMIT; False (rolled back)
        when the link is there already."""
        db, st = self.db, self.st
        now = int(time.time() * 1000)
        db.begin()
        try:
            db.tx_run(st.insert_link, (id1, id2, ltype, 1, data, 0, now))
        except Exception as e:
            db.rollback()
            if st.is_dup_key(e):
                return False
            raise
        try:
            db.tx_run(st.count_add, (id1, ltype, 1, now, 1, now))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return True

    def _update(self, id1, ltype, id2, data) -> bool:
        """updateLinkImpl: lock the link (none: ROLLBACK, False), update it visible, add 1
        to the count if it was hidden, COMMIT (ROLLBACK if nothing changed)."""
        db, st = self.db, self.st
        db.begin()
        try:
            row = db.tx_rows(st.get_visibility, (id1, id2, ltype))
            if not row:
                db.rollback()
                return False
            now = int(time.time() * 1000)
            if db.tx_run(st.update_link, (1, data, 0, now, id1, id2, ltype)) == 0:
                db.rollback()   # MariaDB's affected rows: the same values, nothing to commit
                return True
            if row[0][0] != 1:
                db.tx_run(st.count_change, (1, now, id1, ltype))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return True

    def _write(self, id1, ltype, id2, data, insert_first: bool) -> int:
        """newLinkLoop: insert (ADD_LINK) or update (UPDATE_LINK) first, the other when
        the first finds it needed (RETRY)."""
        insert = insert_first
        for _ in range(MAX_SWITCHES):
            if (self._insert if insert else self._update)(id1, ltype, id2, data):
                return OK if insert == insert_first else RETRY
            insert = not insert
        return ERROR

    def add_link(self, id1, ltype, id2, data):
        return self._write(id1, ltype, id2, data, True)

    def update_link(self, id1, ltype, id2, data):
        return self._write(id1, ltype, id2, data, False)

    def delete_link(self, id1, ltype, id2):
        """deleteLinkImpl: lock the link (missing or hidden: ROLLBACK, EMPTY), hide it,
        take 1 from its count, COMMIT."""
        db, st = self.db, self.st
        db.begin()
        try:
            row = db.tx_rows(st.get_visibility, (id1, id2, ltype))
            if not row or row[0][0] != 1:
                db.rollback()
                return EMPTY
            db.tx_run(st.hide_link, (id1, id2, ltype))
            db.tx_run(st.count_change, (-1, int(time.time() * 1000), id1, ltype))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        return OK

    # ------------------------------------------------------------ link reads
    def count_link(self, id1, ltype):
        return OK if self.db.rows(self.st.count_links, (id1, ltype)) else EMPTY

    def multiget_link(self, id1, ltype, id2s):
        rows = self.db.rows(*self.st.multiget(id1, ltype, id2s))
        self.stats.multiget(len(id2s), len(rows))
        return OK if rows else EMPTY

    def get_links_list(self, id1, ltype, history):
        limit, tails, st = self.p.range_limit, self.tails, self.st
        history = history and bool(tails.items)
        if history:   # page back into a list that filled a page before
            i = tails.pick()
            id1, ltype, last_time = tails.items[i]
            rows = self.db.rows(st.get_links_list, (id1, ltype, 0, last_time, limit, 1))
            tails.replace(i, (id1, ltype, rows[-1][LINK_TIME]) if len(rows) == limit else None)
        else:
            rows = self.db.rows(st.get_links_list, (id1, ltype, 0, MAX_TIME, limit, 0))
            if len(rows) >= limit:
                tails.add((id1, ltype, rows[-1][LINK_TIME]))
        self.stats.links_list(len(rows), history)   # RANGE_SIZE: the links returned
        return OK if rows else EMPTY

    # ------------------------------------------------------------ nodes
    def add_node(self, data):
        self.db.run(self.st.add_node, (DEFAULT_NODE_TYPE, 1, int(time.time()), data))
        return OK

    def update_node(self, id_, data):
        n = self.db.run(self.st.update_node, (2, int(time.time()), data, id_, DEFAULT_NODE_TYPE))
        return EMPTY if n == 0 else OK    # None: the driver cannot say, so it did

    def delete_node(self, id_):
        return EMPTY if self.db.run(self.st.delete_node, (id_, DEFAULT_NODE_TYPE)) == 0 else OK

    def get_node(self, id_):
        rows = self.db.rows(self.st.get_node, (id_,))
        return OK if rows and rows[0][1] == DEFAULT_NODE_TYPE else EMPTY



class ListTails:
    """LinkBenchRequest's list-tail history: (id1, link_type, time of the last link) of
    lists that filled a page, one per (id1, link_type), at most HISTORY_LIMIT (a random
    one replaced when full)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.items: list[tuple[int, int, int]] = []
        self.index: dict[tuple[int, int], int] = {}

    def pick(self) -> int:
        return self.rng.randrange(len(self.items))

    def add(self, entry: tuple[int, int, int]) -> None:
        if entry[:2] in self.index:
            return
        if len(self.items) < HISTORY_LIMIT:
            self.index[entry[:2]] = len(self.items)
            self.items.append(entry)
        else:
            self.replace(self.pick(), entry)

    def replace(self, i: int, entry: tuple[int, int, int] | None) -> None:
        """The i-th entry replaced by ``entry``, or removed (None; the last fills its place)."""
        old = self.items[i]
        if entry is not None and entry[:2] == old[:2]:
            self.items[i] = entry
            return
        del self.index[old[:2]]
        if entry is not None:
            self.items[i] = entry
            self.index[entry[:2]] = i
            return
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.index[last[:2]] = i
