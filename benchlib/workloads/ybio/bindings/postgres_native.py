"""ybio's sessions on PostgreSQL with their loop in C (``_pgloop``, over libpq).

The Python session (:class:`.postgres.PostgresYbio`) pays the interpreter for every
call: the driver's loop, the session's closures, psycopg's wrapping of libpq, the
result's value made a Python int. Here a whole chunk of calls goes to C, where each is
sent, awaited, judged and timed without the GIL — the loop over libpq of
``benchlib/workloads/_native/`` (built once, YCSB's PostgreSQL binding runs it too; its
plan ``_sqlplan.h``, its paced loop ``_loop.h``, one thread driving several connections
``_muxconn.h``). A call is the loop's ``COUNT`` operation: the read's or the update's
prepared statement over the range ``lo .. hi``, OK when the first column of its row
counts the ``batch_size`` rows, else NOT_FOUND, as :mod:`.postgres` judges it.

The extension is optional: ``pip install`` builds it where libpq's headers and a C
compiler are; without it ``run.driver: auto`` runs the Python path and ``c`` is
refused with that reason. ``prepared: false`` runs in Python (the loop sends prepared
statements only).
"""
from __future__ import annotations

from ..._native import missing
from ..._native.ops import LoopOps

try:
    from ..._native import _pgloop
except ImportError:   # built without libpq-dev or a C compiler: psycopg runs
    _pgloop = None

AVAILABLE = _pgloop is not None
DRIVER_PATH = "c-libpq"
MISSING = missing("_pgloop", "libpq-dev")


class YbioNativeOps(LoopOps):
    """A chunk's calls run in C on one connection: ``plan(chunk)`` (its args
    ``(statement, lo, hi, rows)`` per call, statement 0 the read, 1 the update)."""

    def __init__(self, binding: PostgresYbioNative, nops: int):
        super().__init__(binding, _pgloop, DRIVER_PATH)
        self.kinds = bytes([_pgloop.KINDS["COUNT"]] * nops)

    def plan(self, chunk):
        return _pgloop.Plan(chunk.codes, chunk.args, self.kinds, 0)


class PostgresYbioNative:
    """One libpq connection of the extension's own with the session's read and update
    prepared (``n0``, ``n1``)."""

    path = DRIVER_PATH

    def __init__(self, conninfo: str, st):
        if _pgloop is None:
            raise RuntimeError(MISSING)
        self.conn = _pgloop.Conn(conninfo)
        try:
            self.conn.prepare_counts([st.read.encode(), st.update.encode()])
        except BaseException:
            self.conn.close()
            raise

    def native(self, nops: int) -> YbioNativeOps:
        return YbioNativeOps(self, nops)

    def close(self) -> None:
        self.conn.close()
