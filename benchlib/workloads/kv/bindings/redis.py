"""kv on Redis: ``GET`` / ``SET … XX`` (update) on the keys, and a sorted set
``<table>:index`` (every member scored 0, so ordered by the key's bytes) beside them for
scans: ``ZRANGEBYLEX [key + LIMIT 0 n`` then ``MGET`` of those keys (two round trips).
An insert is ``MULTI; SET … NX; ZADD; EXEC`` and a remove ``MULTI; DEL; ZREM; EXEC``
(one round trip each), so the index never drifts from the keys. The prepare's batches
are one pipeline each (``MSET`` + ``ZADD``). Keys live under the prefix ``<table>:``;
the prepare removes those and the index, and leaves the database's other keys alone.
"""
from __future__ import annotations

from ....schema import EMPTY as MISS  # a key a remove took away: an outcome, not an error
from ....schema import ERROR, OK


def index_key(table: str) -> str:
    """The sorted set of a table's keys (never a data key: those are longer hex strings
    after the same prefix)."""
    return f"{table}:index"


def resp(*args) -> bytes:
    """One command in RESP, the Redis protocol: ``*<n>`` then ``$<len>`` and each
    argument (bytes, or str made UTF-8)."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


MULTI, EXEC = resp(b"MULTI"), resp(b"EXEC")


class RedisKv:
    """The operations on one connection held for the binding's life: each command is
    packed and sent, and its reply read, on redis-py's ``Connection`` (hiredis parses
    when installed) — not through ``Redis.get``, whose per-call pool checkout and
    command dispatch halve a single client's op/s (BENCHMARKS.md, "kv on Redis")."""

    @classmethod
    def open(cls, endpoint, table: str):
        return cls(endpoint.connect(), table)

    @staticmethod
    def native_missing() -> str | None:
        """Why the run loop cannot run in C over hiredis (None: it can; run.driver)."""
        from . import redis_native
        return None if redis_native.AVAILABLE else redis_native.MISSING

    @staticmethod
    def open_native(endpoint, table: str):
        """A binding whose run loop is in C (:mod:`.redis_native`)."""
        from .redis_native import RedisKvNative
        return RedisKvNative.open(endpoint, table)

    @staticmethod
    def key_prefix(table: str) -> str:
        return f"{table}:"

    @classmethod
    def clear(cls, target, table: str, key_size: int) -> None:
        """The table's keys and index removed (other keys of the database left alone)."""
        conn = target.connect()
        try:
            batch = []
            for k in conn.scan_iter(match=cls.key_prefix(table) + "*", count=5000):
                batch.append(k)
                if len(batch) >= 5000:
                    conn.unlink(*batch)
                    batch = []
            conn.unlink(index_key(table), *batch)
        finally:
            conn.close()

    @classmethod
    def after_load(cls, target, table: str) -> None:
        pass

    @classmethod
    def count_keys(cls, target, table: str) -> int:
        """The data keys under the table's prefix (its index aside), counted by SCAN:
        what a rerun checks its load by (the index alone would miss keys deleted by hand)."""
        conn = target.connect()
        try:
            index = {index_key(table), index_key(table).encode()}   # str or bytes replies
            return sum(1 for k in conn.scan_iter(match=cls.key_prefix(table) + "*", count=5000)
                       if k not in index)
        finally:
            conn.close()

    def __init__(self, r, table: str):
        self.r, self.index = r, index_key(table)
        self.conn = r.connection_pool.get_connection()
        self.conn.connect()
        c = self.conn
        self._pack, self._packs = c.pack_command, c.pack_commands
        self._send, self._recv = c.send_packed_command, c.read_response

    def _call(self, *args):
        self._send(self._pack(*args), False)
        return self._recv()

    def prepare(self, codes, args) -> list[tuple]:
        """The chunk's commands encoded before they are timed (as redis-benchmark
        builds its buffers once): the timed call only sends and reads. RESP by
        :func:`resp`, 5x cheaper than redis-py's general ``pack_command`` (7 µs a
        command here: a fifth of a GET's round trip)."""
        idx = self.index.encode()
        out = []
        for c, a in zip(codes, args):
            k = a[0].encode()
            if c == 0:
                cmd = b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k)
            elif c == 1:
                cmd = MULTI + resp(b"SET", k, a[1], b"NX") + resp(b"ZADD", idx, b"0", k) + EXEC
            elif c == 2:
                cmd = MULTI + resp(b"DEL", k) + resp(b"ZREM", idx, k) + EXEC
            elif c == 3:
                cmd = resp(b"SET", k, a[1], b"XX")
            else:
                cmd = resp(b"ZRANGEBYLEX", idx, b"[" + k, b"+", b"LIMIT", b"0", b"%d" % a[1])
            out.append(([cmd],))  # send_packed_command sends each item of a list
        return out

    def _exec(self, packed, n_queued: int):
        """Send MULTI … EXEC; the replies of the queued commands."""
        self._send(packed, False)
        recv = self._recv
        for _ in range(n_queued + 1):
            recv()  # OK, QUEUED …
        return recv()

    # the timed operations: each takes its packed command (see prepare)
    def read(self, packed):
        self._send(packed, False)
        return OK if self._recv() is not None else MISS

    def insert(self, packed):
        set_ok, _ = self._exec(packed, 2)
        return OK if set_ok else ERROR  # a fresh key was there already

    def delete(self, packed):
        n, _ = self._exec(packed, 2)
        return OK if n else MISS

    def update(self, packed):
        self._send(packed, False)
        return OK if self._recv() is not None else MISS

    def scan(self, packed):
        self._send(packed, False)
        keys = self._recv()
        if keys:
            self._call("MGET", *keys)
        return OK

    def scan_keys(self, key, n) -> list[str]:
        keys = self._call("ZRANGEBYLEX", self.index, "[" + key, "+", "LIMIT", 0, n)
        return [k.decode() for k in keys]

    def load(self, pairs):
        p = self.r.pipeline(transaction=False)
        p.mset(dict(pairs))
        p.zadd(self.index, {k: 0 for k, _ in pairs})
        p.execute()
        return OK

    def remove(self, keys):
        p = self.r.pipeline(transaction=False)
        p.delete(*keys)
        p.zrem(self.index, *keys)
        p.execute()
        return OK

    def count(self) -> int:
        return int(self.r.zcard(self.index))

    def close(self):
        try:
            self.conn.disconnect()
        finally:
            self.r.close()
