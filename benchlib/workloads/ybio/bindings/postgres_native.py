"""ybio's sessions on PostgreSQL with their loop in C (``_pgloop``, over libpq).

The Python session (:class:`.postgres.PostgresYbio`) pays the interpreter for every
call: the driver's loop, the session's closures, psycopg's wrapping of libpq, the
result's value made a Python int. Here a whole chunk of calls goes to C, where each is
sent, awaited, judged and timed without the GIL — the loop YCSB's PostgreSQL binding
runs (its plan and run loop, ``_ycsbplan.h``; one thread driving several connections,
``_muxconn.h``), built a second time into this folder (setup.py). A call is a
``K_COUNT`` operation: the read's or the update's prepared statement over the range
``lo .. hi``, OK when the first column of its row counts the ``batch_size`` rows, else
NOT_FOUND, as :mod:`.postgres` judges it.

The extension is optional: ``pip install`` builds it where libpq's headers and a C
compiler are; without it ``run.driver: auto`` runs the Python path and ``c`` is
refused with that reason. ``prepared: false`` runs in Python (the loop sends prepared
statements only).
"""
from __future__ import annotations

try:
    from . import _pgloop
except ImportError:   # built without libpq-dev or a C compiler: psycopg runs
    _pgloop = None

AVAILABLE = _pgloop is not None
DRIVER_PATH = "c-libpq"
MISSING = ("the C extension benchlib.workloads.ybio.bindings._pgloop is not built (it needs libpq-dev "
           "and a C compiler when benchlib is installed; see README)")
K_COUNT = 5          # _ycsbplan.h's kind: a statement counting the rows of a range


class YbioNativeOps:
    """A chunk's calls run in C on one connection, as ``benchlib.run.native`` drives
    them: ``plan(chunk)`` (its args ``(statement, lo, hi, rows)`` per call, statement 0
    the read, 1 the update), ``run(plan, i, …)``, ``run_many``."""

    path = DRIVER_PATH
    compound: dict = {}

    def __init__(self, binding: PostgresYbioNative, nops: int):
        self.binding = binding
        self.kinds = bytes([K_COUNT] * nops)
        self.run_many = _pgloop.run_many

    @property
    def conn(self):
        return self.binding.conn

    def plan(self, chunk):
        return _pgloop.Plan(chunk.codes, chunk.args, self.kinds, 0)

    def run(self, plan, i: int, next_tick: int, end: int | None, pacing=(0, 0, 0.0),
            issued: int = 0) -> tuple[int, int, int]:
        start, offset, period = pacing
        return self.binding.conn.run(plan, i, next_tick, end or 0, start, offset, period, issued)


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
