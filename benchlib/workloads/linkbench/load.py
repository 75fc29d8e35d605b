"""LinkBench's load phase (``l.pre``): one loader writes the nodes while the others
write links and counts, all in multi-row batches.

Client 0 of the step is the node loader (LinkBench's NodeLoader: ids startid1 …
maxid1-1 in order); clients 1 … ``loaders`` share the id1 range in chunks of
``loader_chunk_size`` ids (the property, 2048), round robin, as LinkBenchLoad's chunks. For each
id1 a link loader writes its links (ID2Chooser.calcLinkCount's per type, the j-th link
of a type to id2 = id1 + j, as ID2Chooser.chooseForLoad) and one counttable row per
link type. Memory stays flat: a loader makes a slice of links (8 batches), hands it
out, and keeps nothing it wrote (the 2017 distribution gives one node 4.18 M links).
A chunk's counts go in one batch after its links (the load's progress counts the id1s
whose counts are written: loadlog.py). ``load.mode java`` (``StepSpec.load_mode``): as
LinkBenchLoad with LinkStoreSql, one multi-row INSERT (``VALUES (…), (…)``, bound values)
of ``bulk_insert_count`` rows (GraphStore's property, 1024) per batch, nodes, links and
counts, into tables the setup made with their index; as LinkBenchLoad's buffers, a
loader's links and counts fill a batch across id1s and chunks, so every batch is full
but a loader's last of each table.
Operations are the batches, named as LinkBench names them —
``LOAD_NODE_BULK``, ``LOAD_LINKS_BULK``, ``LOAD_COUNTS_BULK`` — with the batch's
latency, and each counts its rows (``batch_units``), so that the step's rate is
rows per second as the seed's ``ips``.
"""
from __future__ import annotations

import time

import numpy as np

from ... import seeds
from ...schema import OK
from ..base import Chunk
from .db import COUNT_LOAD_COLS, LINK_LOAD_COLS, NODE_LOAD_COLS, DbClient
from .dists import (
    DEFAULT_LINK_TYPE,
    DEFAULT_NODE_TYPE,
    MAX_LINK_DATA,
    Graph,
    data_sizes,
)
from .payloads import Payloads

LOAD_OPS = ["LOAD_NODE_BULK", "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK"]
NODE_BULK, LINKS_BULK, COUNTS_BULK = range(3)
CHUNK_BATCHES = 8     # batches handed out at a time (a link loader plans 8 batches of links)
MAX_NODE_LOAD_DATA = 4096
MAX_COUNT_BATCH = 16384   # counttable rows in one statement at most (~0.5 MB of values)


class LoadClient(DbClient):
    op_names = LOAD_OPS
    batch_units = {op: None for op in LOAD_OPS}   # rows counted; no per-row op

    def __init__(self, p, st, endpoint, index: int, total: int, seed: int, batch_size: int,
                 mode: str = "fast"):
        self.p, self.st, self.endpoint = p, st, endpoint
        self.index, self.loaders = index, max(total - 1, 1)
        self.java = mode == "java"   # LinkBench's: INSERTs of bulk_insert_count rows, indexed tables
        self.batch = p.bulk_insert_count if self.java else max(batch_size, 1)
        self.rng = seeds.generator(seed, "linkbench load")
        self.link_data = Payloads(p.datagen, "link_add", self.rng)
        self.node_data = Payloads(p.datagen, "node_add", self.rng)
        self.graph = Graph(p)
        self._connect(f"linkbench load client {index}")
        self.next_id = p.startid1                       # node loader
        self.chunk_no = index - 1                       # link loader: its next id1 chunk
        self.cur = None                                  # (id1s, links' running sum, done)
        self.pending: list = []                          # (code, payload, rows) not yet handed out
        self.sending = None                              # the batch being sent (code, payload, rows)
        self.carry = {LINKS_BULK: [], COUNTS_BULK: []}   # load.mode java: rows short of a batch
        self._bind()

    def _bind(self):
        st, db = self.st, self.db
        self.fns = [lambda rows: self._bulk(NODE_BULK, st.node, NODE_LOAD_COLS, rows),
                    lambda rows: self._bulk(LINKS_BULK, st.link, LINK_LOAD_COLS, rows),
                    lambda rows: self._bulk(COUNTS_BULK, st.count, COUNT_LOAD_COLS, rows)]
        self._db = db

    def _bulk(self, code, table, cols, rows) -> int:
        self.sending = (code, rows)
        if self.java:
            self._db.insert_statement(table, cols, rows)
        else:
            self._db.bulk(table, cols, rows)   # one statement: all its rows or none
        self.sending = None
        return OK

    def reconnect(self) -> None:
        """The batch the lost connection failed (an ERROR, its rows not counted) is sent
        again on the new one, so that the graph loads whole: nodes, links and their counts."""
        super().reconnect()
        if self.sending is not None:
            code, rows = self.sending
            n = rows.count("\n") if isinstance(rows, str) else len(rows)
            self.pending.insert(0, (code, rows, n))
            self.sending = None

    # ------------------------------------------------------------ planning
    def next_chunk(self, max_ops):
        """At most CHUNK_BATCHES batches: what is planned is written before more is made,
        so a loader holds a few batches, whatever the graph (a node's millions of links)."""
        max_ops, out = min(max_ops, CHUNK_BATCHES), []
        while len(out) < max_ops:
            while not self.pending:   # a plan may queue nothing yet (load.mode java's buffers)
                if not self._plan_more():
                    break
            if not self.pending:
                break
            out.append(self.pending.pop(0))
        if not out:
            return None
        return Chunk([c for c, _, _ in out], [(a,) for _, a, _ in out], [n for _, _, n in out])

    def _plan_more(self) -> bool:
        if self.index == 0:
            return self._plan_nodes()
        return self._plan_links() or self._flush_carry()

    def _flush_carry(self) -> bool:
        """load.mode java, the loader's last chunk done: the rows short of a batch, as
        LinkBenchLoad's loadLinks / loadCounts at its end (links first)."""
        out = False
        for code in (LINKS_BULK, COUNTS_BULK):
            rows, self.carry[code] = self.carry[code], []
            if rows:
                self.pending.append((code, rows, len(rows)))
                out = True
        return out

    def _plan_nodes(self) -> bool:
        p = self.p
        if self.next_id >= p.maxid1:
            return False
        ids = np.arange(self.next_id, min(self.next_id + self.batch * 8, p.maxid1), dtype=np.int64)
        self.next_id = int(ids[-1]) + 1
        data = self.node_data.fill(data_sizes(p.node_datasize, MAX_NODE_LOAD_DATA, self.rng, len(ids)))
        now = int(time.time())
        rows = [(i, DEFAULT_NODE_TYPE, 1, now, d) for i, d in zip(ids.tolist(), data)]
        self._queue(NODE_BULK, rows)
        return True

    def _plan_links(self) -> bool:
        """The next slice of at most ``batch`` × 8 links of the current id1 chunk (a node
        with millions of links is written a slice at a time: nothing is kept once queued),
        then the chunk's counts; False when no chunk is left."""
        if self.cur is None and not self._next_id_chunk():
            return False
        id1, per_type, done = self.cur
        total = int(per_type[-1]) if len(per_type) else 0   # per_type holds the running sum
        n = min(total - done, self.batch * 8)
        if n > 0:
            self._queue(LINKS_BULK, self._links(id1, per_type, done, n))
            self.cur = (id1, per_type, done + n)
        if done + n >= total:   # the chunk's counts in one batch (a few at most): when it is
            # written, the chunk's id1s are done — the load's progress counts them (loadlog.py)
            self._queue(COUNTS_BULK, self._counts(id1, per_type), count_batch_rows(self.p, self.java))
            self.cur = None
        return True

    def _next_id_chunk(self) -> bool:
        p = self.p
        lo = p.startid1 + self.chunk_no * p.loader_chunk_size
        if lo >= p.maxid1:
            return False
        self.chunk_no += self.loaders
        id1 = np.arange(lo, min(lo + p.loader_chunk_size, p.maxid1), dtype=np.int64)
        each = self.graph.nlinks_of_type(id1)   # the same for every type (ID2Chooser)
        self.cur = (id1, np.cumsum(np.repeat(each, p.link_type_count)), 0)
        return True

    def _links(self, id1, cum, start: int, n: int) -> list:
        """Links start … start+n-1 of the chunk, (id1, type) after (id1, type), the j-th of
        a type to id2 = id1 + j (ID2Chooser.chooseForLoad), at a random time of the last
        ~50 days as LinkBenchLoad.chooseInitialTimestamp."""
        k = np.arange(start, start + n)
        row = np.searchsorted(cum, k, side="right")              # (id1, type) of each link
        j = k - (cum[row] - np.diff(cum, prepend=0)[row])        # its index within the type
        types = self.p.link_type_count
        a = id1[row // types]
        ltype = DEFAULT_LINK_TYPE + row % types
        data = self.link_data.fill(data_sizes(self.p.link_datasize, MAX_LINK_DATA, self.rng, n))
        now_ms = int(time.time() * 1000)
        when = now_ms - 2**31 + self.rng.integers(-2**31, 2**31, n)
        return list(zip(a.tolist(), (a + j).tolist(), ltype.tolist(), [1] * n, data,
                        when.tolist(), [0] * n))

    def _counts(self, id1, cum) -> list:
        """One counttable row per id1 and type, zero links included."""
        types = self.p.link_type_count
        each = np.diff(cum, prepend=0).tolist()
        now_ms = int(time.time() * 1000)
        return [(int(id1[r // types]), DEFAULT_LINK_TYPE + r % types, c, now_ms, 0)
                for r, c in enumerate(each)]

    def _queue(self, code: int, rows: list, size: int | None = None) -> None:
        if self.java and code in self.carry:   # LinkBenchLoad's buffers: full batches only
            rows = self.carry[code] + rows
            cut = len(rows) - len(rows) % self.batch
            rows, self.carry[code] = rows[:cut], rows[cut:]
            size = self.batch
        b = size or self.batch
        for i in range(0, len(rows), b):
            part = rows[i:i + b]
            self.pending.append((code, part if self.java else self.st.dialect.bulk_payload("", (), part), len(part)))


def count_batch_rows(p, java: bool = False) -> int:
    """The rows of a full LOAD_COUNTS_BULK batch: an id1 chunk's counts
    (loader_chunk_size × link_type_count rows), at most MAX_COUNT_BATCH (a chunk of many
    types: a few batches); load.mode java: bulk_insert_count, as LinkBenchLoad's count
    buffer (every batch full but each loader's last)."""
    if java:
        return p.bulk_insert_count
    return min(p.loader_chunk_size * p.link_type_count, MAX_COUNT_BATCH)
