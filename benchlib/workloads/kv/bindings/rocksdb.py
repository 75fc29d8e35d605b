"""kv on RocksDB: the table is a column family, a key its key, the value its value.

``READ`` is ``Get``; ``INSERT`` a ``Put`` (blind: RocksDB does not look whether the key is
there, and kv's keys are fresh by its plan); ``UPDATE`` and ``DELETE`` ``Get`` first, so that
a key that is not there is a miss (EMPTY) as on the other stores, then ``Put`` /
``Delete``; ``SCAN`` an iterator from a ``Seek`` to the key, ``n`` entries on in key
order (bytewise, as Redis orders its index). The prepare's batches are one
``WriteBatch`` each. Every thread of a client process shares the process's open
database (``targets/rocksdb_handle.py``).
"""
from __future__ import annotations

from ....schema import EMPTY as MISS  # a key a remove took away: an outcome, not an error
from ....schema import OK


class RocksdbKv:
    @classmethod
    def open(cls, endpoint, table: str):
        return cls(endpoint.connect(), table)

    @staticmethod
    def key_prefix(table: str) -> str:
        return ""   # the column family is the table

    @classmethod
    def clear(cls, target, table: str, key_size: int) -> None:
        """The column family made anew (a table dropped and created)."""
        h = target.connect()
        try:
            h.recreate_family(table)
        finally:
            h.close()

    @classmethod
    def after_load(cls, target, table: str) -> None:
        pass

    @classmethod
    def count_keys(cls, target, table: str) -> int:
        """The column family's keys, counted by iterating it (a rerun's check of its load)."""
        h = target.connect()
        try:
            return h.count(table)
        finally:
            h.close()

    def __init__(self, handle, table: str):
        self.conn = handle
        self.table = table
        self.cf = cf = handle.family(table)
        self._get, self._put, self._del = cf.get, cf.put, cf.delete

    def read(self, key):
        return OK if self._get(key.encode()) is not None else MISS

    def insert(self, key, value):
        self._put(key.encode(), value.encode())
        return OK

    def delete(self, key):
        k = key.encode()
        if self._get(k) is None:
            return MISS
        self._del(k)
        return OK

    def update(self, key, value):
        k = key.encode()
        if self._get(k) is None:
            return MISS
        self._put(k, value.encode())
        return OK

    def scan(self, key, n):
        it = self.cf.iter()
        it.seek(key.encode())
        got = 0
        while got < n and it.valid():
            it.value()
            it.next()
            got += 1
        return OK

    def scan_keys(self, key, n) -> list[str]:
        it = self.cf.iter()
        it.seek(key.encode())
        out = []
        while len(out) < n and it.valid():
            out.append(it.key().decode())
            it.next()
        return out

    def load(self, pairs):
        wb = self.conn.batch(self.table)
        for k, v in pairs:
            wb.put(k.encode(), v.encode())
        self.conn.write(wb)
        return OK

    def remove(self, keys):
        wb = self.conn.batch(self.table)
        for k in keys:
            wb.delete(k.encode())
        self.conn.write(wb)
        return OK

    def count(self) -> int:
        return self.conn.count(self.table)

    def close(self):
        self.cf = self._get = self._put = self._del = None   # a family's object holds the database
        self.conn.close()

