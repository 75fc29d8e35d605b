"""A chunk of YCSB operations as packed columns, for the C loops over SQL databases.

The Python run paths take one argument tuple per operation, its key and each value a
string or bytes object (:meth:`.workload.YcsbRunClient.next_chunk`); a C loop needs none
of them: :class:`ChunkColumns` keeps the chunk's arrays (codes, key numbers, fields,
scan lengths) and its values as offsets into the client's value pool, and the loop's
``Plan.columns`` writes each key and value as the statement's parameter itself
(``workloads/_native/_sqlcols.h``). The keys, the values, their alphabet and lengths,
and the random draws behind them are the tuples' own: indexing the columns gives the
tuple the Python path would have made (what the tests compare).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..generators import fnvhash64
from .plan import INSERT, READ, SCAN, UPDATE, OpChunk

KEY_PREFIX = b"user"   # CoreWorkload.buildKeyName's, as generators.build_key_names
MAX_PADDING = 64       # zeropadding the C side writes (past it, the tuples are made)


class ChunkColumns(Sequence):
    """A chunk's operations (``OpChunk``) with their keys' numbers and their values'
    places in ``pool`` (bytes): ``offsets`` and ``lengths``, ``chunk.n_values`` of them
    per operation, in operation order."""

    def __init__(self, chunk: OpChunk, hashed: bool, zeropadding: int, pool: bytes,
                 offsets: np.ndarray, lengths: np.ndarray):
        self.chunk = chunk
        self.keys = np.ascontiguousarray(fnvhash64(chunk.keynum) if hashed else chunk.keynum, np.int64)
        self.pad = max(int(zeropadding), 0)
        self.pool = pool
        self.offsets = np.ascontiguousarray(offsets, np.int64)
        self.lengths = np.ascontiguousarray(lengths, np.int64)
        self.first = np.concatenate(([0], np.cumsum(chunk.n_values, dtype=np.int64)))

    def packed(self, kinds: bytes, nfields: int) -> tuple:
        """``Plan.columns``' arguments, for a loop whose kinds by code are ``kinds``."""
        c = self.chunk
        return (np.ascontiguousarray(c.op, np.uint8), kinds, nfields, KEY_PREFIX, self.pad, self.keys,
                np.ascontiguousarray(c.field, np.int16), np.ascontiguousarray(c.write_field, np.int16),
                np.ascontiguousarray(c.scan_len, np.int32), np.ascontiguousarray(c.n_values, np.int16),
                self.pool, self.offsets, self.lengths)

    def __len__(self) -> int:
        return len(self.chunk)

    def __getitem__(self, i):
        """Operation i's argument tuple, in the binding's shapes (bytes keys and values)."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        c = self.chunk
        o = int(c.op[i])
        key = KEY_PREFIX + str(int(self.keys[i])).rjust(self.pad, "0").encode()
        if o == READ:
            return key, int(c.field[i])
        if o == SCAN:
            return key, int(c.scan_len[i]), int(c.field[i])
        a, b = int(self.first[i]), int(self.first[i + 1])
        values = [self.pool[x:x + n] for x, n in zip(self.offsets[a:b].tolist(), self.lengths[a:b].tolist())]
        if o == INSERT:
            return key, values
        if o == UPDATE:
            return key, int(c.write_field[i]), values
        return key, int(c.field[i]), int(c.write_field[i]), values   # READ-MODIFY-WRITE
