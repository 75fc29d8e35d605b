"""PostgreSQL's YCSB binding with its run loop in C (``_pgloop.c``, over libpq).

The Python binding (:class:`.postgres.PostgresYcsb`) does one interpreter round per
operation; this one takes a whole chunk of operations into C, where each is sent,
awaited and timed without the GIL (:class:`NativeOps`, what ``benchlib.run.native``
drives). It is used for the run loops when the extension is built (``run.driver:
auto``, the default, or ``c``); the load keeps psycopg's COPY.

The extension is optional: it is built by ``pip install`` where libpq's headers and a
C compiler are (Debian: ``libpq-dev``, ``gcc``); without it ``run.driver: auto`` runs
the Python path and ``c`` is refused with that reason.
"""
from __future__ import annotations

from .sql import YcsbStatements

try:
    from . import _pgloop
except ImportError:   # built without libpq-dev or a C compiler: the Python path runs
    _pgloop = None

AVAILABLE = _pgloop is not None
DRIVER_PATH = "c-libpq"
MISSING = ("the C extension benchlib.targets._pgloop is not built (it needs libpq-dev and a "
           "C compiler when benchlib is installed; see README)")

# the kinds of operation the C loop knows, by YCSB's operation names
KINDS = {"READ": 0, "UPDATE": 1, "INSERT": 2, "SCAN": 3, "READ-MODIFY-WRITE": 4}


class NativeOps:
    """A chunk's operations run in C on one connection.

    ``plan(chunk)`` parses a chunk once (its argument tuples, in the shapes of the
    binding's ``read``/``update``/… methods); ``conn.run(plan, i, …)`` runs from
    operation i (see ``_pgloop.c``) and ``plan.results(a, b)`` gives their outcomes.
    ``compound`` names, per operation code, the codes its inner statements are also
    timed under (YCSB times a read-modify-write's read and update as READ and UPDATE).
    """

    path = DRIVER_PATH

    def __init__(self, binding: PostgresYcsbNative, op_names: list[str]):
        unknown = [n for n in op_names if n not in KINDS]
        if unknown:
            raise ValueError(f"the C loop has no operation {unknown[0]}")
        self.binding = binding
        self.kinds = bytes(KINDS[n] for n in op_names)
        code = {n: i for i, n in enumerate(op_names)}
        self.compound = {code[n]: (code["READ"], code["UPDATE"]) for n in op_names
                         if n == "READ-MODIFY-WRITE" and "READ" in code and "UPDATE" in code}

    @property
    def conn(self):
        return self.binding.conn

    @staticmethod
    def run_many(conns: list, next_tick: int, end: int, sending: int) -> tuple[int, int, int]:
        """Several connections' closed loops from one thread (see ``_pgloop.c``)."""
        return _pgloop.run_many(conns, next_tick, end, sending)

    def plan(self, chunk):
        return _pgloop.Plan(chunk.codes, chunk.args, self.kinds, self.binding.nfields)

    def run(self, plan, i: int, next_tick: int, end: int | None, pacing=(0, 0, 0.0),
            issued: int = 0) -> tuple[int, int, int]:
        start, offset, period = pacing
        return self.binding.conn.run(plan, i, next_tick, end or 0, start, offset, period, issued)


class PostgresYcsbNative:
    """YCSB's DB interface on one libpq connection of the extension's own, statements
    prepared once; the single-operation methods run a plan of one (for callers that
    do not drive chunks)."""

    bytes_args = True

    def __init__(self, conninfo_: str, props):
        if _pgloop is None:
            raise RuntimeError(MISSING)
        st = YcsbStatements(props.table, props.field_names, "", numbered=True)
        self.nfields = len(st.fields)
        fields = range(-1, self.nfields)
        self.conn = _pgloop.Conn(conninfo_)
        try:
            self.conn.prepare_ycsb([st.read[f].encode() for f in fields],
                                   [st.scan[f].encode() for f in fields],
                                   [st.update[f].encode() for f in fields], st.insert.encode())
        except BaseException:
            self.conn.close()
            raise
        self._one = NativeOps(self, list(KINDS))

    def native(self, op_names: list[str]) -> NativeOps:
        return NativeOps(self, op_names)

    def _single(self, kind: str, args: tuple) -> int:
        from types import SimpleNamespace
        plan = self._one.plan(SimpleNamespace(codes=[KINDS[kind]], args=[args]))
        self._one.run(plan, 0, 1 << 62, None)
        return plan.results(0, 1)[1][0]

    def read(self, key, field):
        return self._single("READ", (key, field))

    def scan(self, key, count, field):
        return self._single("SCAN", (key, count, field))

    def update(self, key, field, values):
        return self._single("UPDATE", (key, field, values))

    def insert(self, key, values):
        return self._single("INSERT", (key, values))

    def close(self):
        self.conn.close()
