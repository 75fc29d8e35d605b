"""LinkBench's load phase (``l.pre``): one loader writes the nodes while the others
write links and counts, all in multi-row batches.

Client 0 of the step is the node loader (LinkBench's NodeLoader: ids startid1 …
maxid1-1 in order); clients 1 … ``loaders`` share the id1 range in chunks of
``LOADER_CHUNK`` ids, round robin, as LinkBenchLoad's chunks are shared. For each
id1 a link loader writes its ``nlinks`` links (split evenly among the link types,
the i-th link of a type to id2 = id1 + i, as ID2Chooser.chooseForLoad) and one
counttable row per link type (LinkBench writes a count row for every type, zero
included). Operations are the batches, named as LinkBench names them —
``LOAD_NODE_BULK``, ``LOAD_LINKS_BULK``, ``LOAD_COUNTS_BULK`` — with the batch's
latency, and each counts its rows (``batch_units``), so that the step's rate is
rows per second as the seed's ``ips``.
"""
from __future__ import annotations

import time

import numpy as np

from ...schema import OK
from ..base import Chunk
from ..generators import ValuePool
from .db import COUNT_LOAD_COLS, LINK_LOAD_COLS, NODE_LOAD_COLS, DbClient
from .dists import (
    DEFAULT_LINK_TYPE,
    DEFAULT_NODE_TYPE,
    MAX_LINK_DATA,
    Graph,
    data_sizes,
)

LOAD_OPS = ["LOAD_NODE_BULK", "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK"]
NODE_BULK, LINKS_BULK, COUNTS_BULK = range(3)
LOADER_CHUNK = 2048   # LinkBench's loader_chunk_size
MAX_NODE_LOAD_DATA = 4096


class LoadClient(DbClient):
    op_names = LOAD_OPS
    batch_units = {op: None for op in LOAD_OPS}   # rows counted; no per-row op

    def __init__(self, p, st, endpoint, index: int, total: int, seed: int, batch_size: int):
        self.p, self.st, self.endpoint = p, st, endpoint
        self.index, self.loaders = index, max(total - 1, 1)
        self.batch = max(batch_size, 1)
        self.rng = np.random.default_rng(seed)
        self.pool = ValuePool(self.rng, max(MAX_NODE_LOAD_DATA, MAX_LINK_DATA), as_bytes=True)
        self.graph = Graph(p)
        self._connect(f"linkbench load client {index}")
        self.text = self.db.bulk_text
        self.next_id = p.startid1                       # node loader
        self.chunk_no = index - 1                       # link loader: its next id1 chunk
        self.pending: list = []                          # (code, payload, rows) not yet handed out
        self.sending = None                              # the batch being sent (code, payload, rows)
        self._bind()

    def _bind(self):
        st, db = self.st, self.db
        self.fns = [lambda rows: self._bulk(NODE_BULK, st.node, NODE_LOAD_COLS, rows),
                    lambda rows: self._bulk(LINKS_BULK, st.link, LINK_LOAD_COLS, rows),
                    lambda rows: self._bulk(COUNTS_BULK, st.count, COUNT_LOAD_COLS, rows)]
        self._db = db

    def _bulk(self, code, table, cols, rows) -> int:
        self.sending = (code, rows)
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
        out = []
        while len(out) < max_ops:
            if not self.pending and not self._plan_more():
                break
            out.append(self.pending.pop(0))
        if not out:
            return None
        return Chunk([c for c, _, _ in out], [(a,) for _, a, _ in out], [n for _, _, n in out])

    def _plan_more(self) -> bool:
        if self.index == 0:
            return self._plan_nodes()
        return self._plan_links()

    def _plan_nodes(self) -> bool:
        p = self.p
        if self.next_id >= p.maxid1:
            return False
        ids = np.arange(self.next_id, min(self.next_id + self.batch * 8, p.maxid1), dtype=np.int64)
        self.next_id = int(ids[-1]) + 1
        data = self.pool.values(data_sizes(p.node_datasize, MAX_NODE_LOAD_DATA, self.rng, len(ids)))
        now = int(time.time())
        rows = [(i, DEFAULT_NODE_TYPE, 1, now, d) for i, d in zip(ids.tolist(), data)]
        self._queue(NODE_BULK, rows)
        return True

    def _plan_links(self) -> bool:
        p, g = self.p, self.graph
        lo = p.startid1 + self.chunk_no * LOADER_CHUNK
        if lo >= p.maxid1:
            return False
        self.chunk_no += self.loaders
        id1 = np.arange(lo, min(lo + LOADER_CHUNK, p.maxid1), dtype=np.int64)
        types = np.arange(p.link_type_count)
        per_type = g.nlinks_of_type(np.repeat(id1, len(types)), np.tile(types, len(id1)))
        now_ms = int(time.time() * 1000)
        cid = np.repeat(id1, len(types)).tolist()
        ctype = (DEFAULT_LINK_TYPE + np.tile(types, len(id1))).tolist()
        counts = [(a, b, int(c), now_ms, 0) for a, b, c in zip(cid, ctype, per_type.tolist())]
        n = int(per_type.sum())
        if n:
            lid1 = np.repeat(np.repeat(id1, len(types)), per_type)
            starts = np.cumsum(per_type) - per_type
            ix = np.arange(n) - np.repeat(starts, per_type)       # i-th link of its type
            ltype = np.repeat(DEFAULT_LINK_TYPE + np.tile(types, len(id1)), per_type)
            data = self.pool.values(data_sizes(p.link_datasize, MAX_LINK_DATA, self.rng, n))
            links = list(zip(lid1.tolist(), (lid1 + ix).tolist(), ltype.tolist(), [1] * n, data,
                             [now_ms] * n, [0] * n))
            self._queue(LINKS_BULK, links)
        self._queue(COUNTS_BULK, counts)
        return True

    def _queue(self, code: int, rows: list) -> None:
        b = self.batch
        for i in range(0, len(rows), b):
            part = rows[i:i + b]
            self.pending.append((code, _copy_text(part) if self.text else part, len(part)))



def _copy_text(rows: list) -> str:
    """Rows as COPY text: numbers as they are, payloads (alphanumeric bytes) literally."""
    return "".join("\t".join(v.decode() if isinstance(v, bytes) else str(v) for v in r) + "\n"
                   for r in rows)
