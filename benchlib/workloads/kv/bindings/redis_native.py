"""kv on Redis with its run loop in C (``_redisloop.c`` over hiredis, in
``benchlib/workloads/_native/``).

The Python binding (:class:`.redis.RedisKv`) does one interpreter round per operation;
this one hands a whole chunk to C, where each operation's commands (the same as
redis.py's, encoded once per chunk) are sent, awaited and timed without the GIL, and
where one thread drives all of a process's connections with poll() (``run_many``), as
redis-benchmark's event loop does. ``benchlib.run.native`` drives it; the prepare's
batches stay in Python (redis-py pipelines).

The extension is optional: ``pip install`` builds it where hiredis's headers and a C
compiler are (Debian: ``libhiredis-dev``, ``gcc``); without it ``run.driver: auto``
runs the Python path and ``c`` is refused with that reason.
"""
from __future__ import annotations

from ..._native import missing
from ..._native.ops import LoopOps

try:
    from ..._native import _redisloop
except ImportError:   # built without libhiredis-dev or a C compiler: redis-py runs
    _redisloop = None

AVAILABLE = _redisloop is not None
DRIVER_PATH = "c-hiredis"
MISSING = missing("_redisloop", "libhiredis-dev")
# the operations the loop knows, in code order (its KINDS): kv's run operations
RUN_OPS = tuple(_redisloop.KINDS) if AVAILABLE else ()
CONNECT_TIMEOUT_S = 5.0


class KvNativeOps(LoopOps):
    """A chunk's operations run in C on one connection; kv has no compound operation."""

    def __init__(self, binding: RedisKvNative):
        super().__init__(binding, _redisloop, DRIVER_PATH)

    def plan(self, chunk):
        """The chunk's commands. Its args: a tuple per operation, or, from the run client,
        the columns ((prefix, digits, pad, scrambled key numbers), values, scan length)
        from which C makes the keys as :func:`..plan.key_strings` does, cheaper."""
        if isinstance(chunk.args, tuple):
            (prefix, digits, pad, nums), values, scan_n = chunk.args
            return _redisloop.Plan(chunk.codes, None, self.binding.index,
                                   (prefix.encode(), digits, pad, nums), values, scan_n)
        return _redisloop.Plan(chunk.codes, chunk.args, self.binding.index)


class RedisKvNative:
    """kv's run operations on one hiredis connection of the extension's own (the
    dialect's schema work, ``clear`` and ``key_prefix``, and the prepare's batches are
    :class:`.redis.RedisKv`'s). Keys and values as the workload makes them (str)."""

    path = DRIVER_PATH

    @classmethod
    def open(cls, endpoint, table: str):
        return cls(endpoint.params["url"], table)

    def __init__(self, url: str, table: str):
        if _redisloop is None:
            raise RuntimeError(MISSING)
        from redis.connection import parse_url
        u = parse_url(url)
        self.index = f"{table}:index".encode()   # redis.index_key (not imported: redis.py opens this)
        self.conn = _redisloop.Conn(u.get("host", "localhost") if "path" not in u else None,
                                    int(u.get("port", 6379)), u.get("path"), u.get("username"),
                                    u.get("password"), str(u.get("db", 0)), CONNECT_TIMEOUT_S)

    def native(self, op_names) -> KvNativeOps:
        if tuple(op_names) != RUN_OPS:
            raise ValueError(f"the C loop runs {RUN_OPS}, not {tuple(op_names)}")
        return KvNativeOps(self)

    def _single(self, op: str, args: tuple) -> int:
        """One operation, a plan of one (not the hot path: the driver runs chunks)."""
        return KvNativeOps(self).one(_redisloop.KINDS[op], args)

    def read(self, key):
        return self._single("READ", (key,))

    def insert(self, key, value):
        return self._single("INSERT", (key, value))

    def delete(self, key):
        return self._single("DELETE", (key,))

    def update(self, key, value):
        return self._single("UPDATE", (key, value))

    def scan(self, key, n):
        return self._single("SCAN", (key, n))

    def close(self):
        self.conn.close()
