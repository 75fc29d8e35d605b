"""YCSB on RocksDB, as YCSB's own ``rocksdb`` binding stores it: the table is a column
family of its name, a record is one value under its key — its fields serialized one
after the other as ``[name length][name][value length][value]`` (lengths 4-byte
big-endian), RocksDBClient's layout, so a database either loaded reads in the other.

One value per record, not a key per field: a read of all fields is one ``Get`` and an
insert one ``Put``, as YCSB's binding does; a scan of n records is n entries of the
iterator, not n × fieldcount. The price is YCSB's too: an update reads the record,
changes its fields and writes it whole (``Get`` then ``Put``; NOT_FOUND if it is not
there). A scan is an iterator from a ``Seek`` to the key, in key order (bytewise).
A delete is a blind ``Delete``. No secondary index: the index step is refused.
"""
from __future__ import annotations

import struct

from ....targets.base import TargetError
from . import NOT_FOUND, OK, YcsbBinding

_LEN = struct.Struct(">I")


def encode_record(names: list[bytes], values) -> bytes:
    """``names`` (each with its length header already) and their values, one value."""
    pack = _LEN.pack
    return b"".join(n + pack(len(v)) + v for n, v in zip(names, values))


def decode_record(data: bytes, only: bytes | None = None) -> dict[bytes, bytes]:
    """The fields of a record (``only``: that field alone, if there)."""
    out, i, end, unpack = {}, 0, len(data), _LEN.unpack_from
    while i < end:
        (n,) = unpack(data, i)
        name = data[i + 4:i + 4 + n]
        i += 4 + n
        (m,) = unpack(data, i)
        if only is None or name == only:
            out[name] = data[i + 4:i + 4 + m]
        i += 4 + m
    return out


class RocksdbYcsb(YcsbBinding):
    bytes_args = True   # keys and values as bytes, as RocksDB takes them

    def __init__(self, endpoint, props):
        self.conn = endpoint.connect()
        self.cf = cf = self.conn.family(props.table)
        self.table = props.table
        self.fields = [f.encode() for f in props.field_names]
        self.headers = [_LEN.pack(len(f)) + f for f in self.fields]
        self._get, self._put, self._del = cf.get, cf.put, cf.delete

    # --- schema work, in the controlling process
    @classmethod
    def create_table(cls, target, cfg) -> None:
        h = target.connect()
        try:
            h.recreate_family(cfg.table)
        finally:
            h.close()

    @classmethod
    def create_index(cls, target, table: str, column: str) -> None:
        raise TargetError(f"target {target.name}: RocksDB has no secondary index on {column}; "
                          "index.enabled: false")

    @classmethod
    def count_rows(cls, target, table: str) -> int | None:
        h = target.connect()
        try:
            return h.count(table)
        finally:
            h.close()

    # --- YCSB's DB interface
    def read(self, key, field):
        data = self._get(key)
        if data is None:
            return NOT_FOUND
        decode_record(data, None if field < 0 else self.fields[field])
        return OK

    def scan(self, key, count, field):
        only = None if field < 0 else self.fields[field]
        it = self.cf.iter()
        it.seek(key)
        n = 0
        while n < count and it.valid():
            decode_record(it.value(), only)
            it.next()
            n += 1
        return OK

    def update(self, key, field, values):
        data = self._get(key)
        if data is None:
            return NOT_FOUND
        record = decode_record(data)
        names = self.fields if field < 0 else [self.fields[field]]
        record.update(zip(names, values))
        self._put(key, b"".join(_LEN.pack(len(n)) + n + _LEN.pack(len(v)) + v
                                for n, v in record.items()))
        return OK

    def insert(self, key, values):
        self._put(key, encode_record(self.headers, values))
        return OK

    def delete(self, key):
        self._del(key)
        return OK

    def insert_batch(self, rows):
        wb = self.conn.batch(self.table)
        headers = self.headers
        for r in rows:
            wb.put(r[0], encode_record(headers, r[1:]))
        self.conn.write(wb)
        return OK  # the records are counted from the chunk's units

    def close(self):
        self.cf = self._get = self._put = self._del = None   # a family's object holds the database
        self.conn.close()
