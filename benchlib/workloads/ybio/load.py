"""ybio's load (the seed's ``setup()``): the table's rows, inserted by benchlib's clients.

The table gets the keys 1..tab_rows in ``nb = ceil(tab_rows / batch rows)`` batches;
batch ``b`` holds the keys ``k`` with ``(k - 1) % nb == b`` (keys spread over the whole
range, as the seed's ``generate_series * batches + i``), each row with a random
``scratch`` in [0, tab_rows) and ``filler`` random hex characters; with ``orderby:
scratch`` (the default) a batch is inserted in scratch order, so rows land in the
table in random key order — reads through the index on mykey hit scattered rows.

Each batch is one INSERT-BATCH operation of its rows (INSERT units): COPY on
PostgreSQL, ``executemany`` in one transaction on SQLite, PyMySQL's multi-row INSERT
on MariaDB/MySQL. The loaders share the batches round-robin; after each batch a
loader prints the seed's NOTICE line (at most one per ``status_every_s``, and the
last one of each table).
"""
from __future__ import annotations

import sys

import numpy as np

from ... import seeds
from ...schema import OK
from ..base import Chunk, WorkloadClient
from ..reconnect import Reconnecting, ReconnectingClient
from .bindings import binding
from .sql import table_statements


def batch_count(tab_rows: int, batch_rows: int) -> int:
    return max(1, -(-tab_rows // max(1, batch_rows)))


class YbioLoadClient(ReconnectingClient, WorkloadClient):
    """Loader ``index`` of ``total``: its share of every table's batches."""

    op_names = ["INSERT-BATCH", "INSERT"]
    batch_units = {"INSERT-BATCH": "INSERT"}

    def __init__(self, params, endpoint, tables: list[str], index: int, total: int,
                 seed: int, batch_rows: int):
        self.params = params
        self.rng = seeds.generator(seed, f"ybio load {index}")
        self.nb = batch_count(params.tab_rows, batch_rows)
        self.kind, self.dialect = binding(endpoint.dialect), endpoint.dialect
        self.link = Reconnecting(lambda: self.kind.open(endpoint),
                                 f"ybio loader {index + 1} ({endpoint.dialect.name})",
                                 endpoint.target_class())
        self.sts = {t: table_statements(self.kind, endpoint.dialect, t, params) for t in tables}
        # the loaders share the batches of the tables to load round-robin: loader
        # ``index`` takes the batches index, index + total, … of them (numbers, not a list)
        self.todo = [t for t in tables if not self._loaded(t)]
        self.index, self.total = index, total
        self.n_batches = len(range(index, len(self.todo) * self.nb, total))
        self.per_table = {t: len(range(index, self.nb * (i + 1), total))
                          - len(range(index, self.nb * i, total)) for i, t in enumerate(self.todo)}
        self.done_rows = {t: 0 for t in tables}
        self.done_batches = {t: 0 for t in tables}
        self.pos = 0
        self.prefix = f" (loader {index + 1}/{total})" if total > 1 else ""
        self.every_s = params.status_every_s
        self.last_print = 0.0
        self._bind()
        self._hex = HexPool(self.rng, params.filler)

    def _loaded(self, table: str) -> bool:
        """With recreate false a table that holds its rows already is not loaded again."""
        if self.params.recreate:
            return False
        return self.link.session.count(self.sts[table]) >= self.params.tab_rows

    def _rows(self, b: int):
        p = self.params
        keys = np.arange(b + 1, p.tab_rows + 1, self.nb, dtype=np.int64)
        scratch = self.rng.integers(0, p.tab_rows, len(keys), dtype=np.int64)
        if p.orderby == "scratch":
            order = np.argsort(scratch, kind="stable")
            keys, scratch = keys[order], scratch[order]
        return keys.tolist(), scratch.tolist(), self._hex.values(len(keys))

    def next_chunk(self, max_ops):
        if self.pos:  # the previous batch is in: the seed's progress line
            self._progress(*self.last)
        if self.pos >= self.n_batches:
            return None
        table, b = divmod(self.index + self.pos * self.total, self.nb)
        table = self.todo[table]
        self.pos += 1
        keys, scratch, filler = self._rows(b)
        data = self.kind.rows_data(self.dialect, table, keys, scratch, filler)
        self.last = (table, len(keys))
        return Chunk([0], [(table, data)], [len(keys)])

    def _progress(self, table: str, n: int) -> None:
        import time
        self.done_rows[table] += n
        self.done_batches[table] += 1
        last = self.done_batches[table] == self.per_table[table]
        now = time.monotonic()
        if not self.every_s or (not last and now - self.last_print < self.every_s):
            return
        self.last_print = now
        pct = 100 * self.done_batches[table] / self.per_table[table]
        print(f"Table {table} Progress: {pct:7.2f} % ({self.done_rows[table]} rows){self.prefix}",
              file=sys.stderr, flush=True)

    def _bind(self) -> None:
        self.fns = [self.insert_batch]

    def insert_batch(self, table, data) -> int:
        self.link.session.insert_batch(self.sts[table], data)
        return OK  # the rows are counted from the chunk's units


class HexPool:
    """Random hex filler values cut from one random string (the seed's md5 text)."""

    def __init__(self, rng: np.random.Generator, length: int, size: int = 1 << 16):
        self.length, self.size, self.rng = length, size, rng
        self.text = HEX[rng.integers(0, 16, size + length)].tobytes().decode()

    def values(self, n: int) -> list[str]:
        if self.length == 0:
            return [""] * n
        L, t = self.length, self.text
        return [t[o:o + L] for o in self.rng.integers(0, self.size, n).tolist()]


HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
