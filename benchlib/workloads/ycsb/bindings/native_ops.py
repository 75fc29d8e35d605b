"""What the YCSB bindings whose run loop is in C share (``postgres_native`` over libpq's
``_pgloop``, ``mysql_native`` over libmariadb's ``_myloop``; the two extensions share
``_ycsbplan.h``): the chunk's operations handed to C (:class:`NativeOps`, what
``benchlib.run.native`` drives) and the single-operation methods of YCSB's DB interface
(:class:`NativeYcsb`), each a plan of one.
"""
from __future__ import annotations

from types import SimpleNamespace

# the kinds of operation the C loops know, by YCSB's operation names (_ycsbplan.h)
KINDS = {"READ": 0, "UPDATE": 1, "INSERT": 2, "SCAN": 3, "READ-MODIFY-WRITE": 4}


class NativeOps:
    """A chunk's operations run in C on one connection.

    ``plan(chunk)`` parses a chunk once (its argument tuples, in the shapes of the
    binding's ``read``/``update``/… methods); ``run(plan, i, …)`` runs from operation i
    on the binding's connection and ``plan.results(a, b)`` gives their outcomes.
    ``compound`` names, per operation code, the codes its inner statements are also
    timed under (YCSB times a read-modify-write's read and update as READ and UPDATE).
    ``run_many`` is there where the extension drives several connections from one
    thread (``multiplex``), else None.
    """

    def __init__(self, binding: NativeYcsb, op_names: list[str]):
        unknown = [n for n in op_names if n not in KINDS]
        if unknown:
            raise ValueError(f"the C loop has no operation {unknown[0]}")
        self.binding = binding
        self.path = binding.path
        self.kinds = bytes(KINDS[n] for n in op_names)
        code = {n: i for i, n in enumerate(op_names)}
        self.compound = {code[n]: (code["READ"], code["UPDATE"]) for n in op_names
                         if n == "READ-MODIFY-WRITE" and "READ" in code and "UPDATE" in code}
        self.run_many = getattr(binding.loop, "run_many", None)
        self.mux_auto = getattr(binding, "mux_auto", True)   # multiplex: auto takes run_many

    @property
    def conn(self):
        return self.binding.conn

    def plan(self, chunk):
        return self.binding.loop.Plan(chunk.codes, chunk.args, self.kinds, self.binding.nfields)

    def run(self, plan, i: int, next_tick: int, end: int | None, pacing=(0, 0, 0.0),
            issued: int = 0) -> tuple[int, int, int]:
        start, offset, period = pacing
        return self.binding.conn.run(plan, i, next_tick, end or 0, start, offset, period, issued)


class NativeYcsb:
    """YCSB's DB interface on a connection of a C loop's own (``loop.Conn``, its
    statements given by the subclass); the single-operation methods run a plan of one
    (for callers that do not drive chunks). Keys and values are bytes."""

    bytes_args = True
    loop = None         # the extension module: Plan, Conn (and run_many where it multiplexes)
    mux_auto = True     # whether multiplex: auto takes run_many (False: only multiplex: true)
    path = "c"          # meta.driver_path
    nfields = 0
    conn = None

    def native(self, op_names: list[str]) -> NativeOps:
        return NativeOps(self, op_names)

    def _single(self, kind: str, args: tuple) -> int:
        one = NativeOps(self, list(KINDS))   # not the hot path: the driver runs chunks
        plan = one.plan(SimpleNamespace(codes=[KINDS[kind]], args=[args]))
        one.run(plan, 0, 1 << 62, None)
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
        if self.conn is not None:
            self.conn.close()
