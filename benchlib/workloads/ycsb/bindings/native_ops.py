"""What the YCSB bindings whose run loop is in C share (``postgres_native`` over libpq's
``_pgloop``, ``mysql_native`` over libmariadb's ``_myloop``: the loops of
``benchlib/workloads/_native/``, owned by no workload): the chunk's operations handed to C
(:class:`NativeOps`, what ``benchlib.run.native`` drives) and the single-operation
methods of YCSB's DB interface (:class:`NativeYcsb`), each a plan of one. YCSB's
operation names are the loops' kinds (``loop.KINDS``: READ, UPDATE, INSERT, SCAN,
READ-MODIFY-WRITE).
"""
from __future__ import annotations

from ..._native.ops import LoopOps


class NativeOps(LoopOps):
    """A chunk's operations run in C on one connection: ``plan(chunk)`` parses a chunk
    once (its argument tuples, in the shapes of the binding's ``read``/``update``/…
    methods; or its packed columns, ``ycsb/columns.py``, where the run client made them). YCSB times a read-modify-write's read and update also as READ and UPDATE
    (``compound``)."""

    def __init__(self, binding: NativeYcsb, op_names: list[str]):
        kinds = binding.loop.KINDS
        unknown = [n for n in op_names if n not in kinds]
        if unknown:
            raise ValueError(f"the C loop has no operation {unknown[0]}")
        super().__init__(binding, binding.loop, binding.path)
        self.mux_auto = binding.mux_auto
        self.kinds = bytes(kinds[n] for n in op_names)
        code = {n: i for i, n in enumerate(op_names)}
        self.compound = {code[n]: (code["READ"], code["UPDATE"]) for n in op_names
                         if n == "READ-MODIFY-WRITE" and "READ" in code and "UPDATE" in code}

    def plan(self, chunk):
        packed = getattr(chunk.args, "packed", None)   # ycsb/columns.py's: the chunk's columns
        if packed is not None:
            return self.loop.Plan.columns(*packed(self.kinds, self.binding.nfields))
        return self.loop.Plan(chunk.codes, chunk.args, self.kinds, self.binding.nfields)


class NativeYcsb:
    """YCSB's DB interface on a connection of a C loop's own (``loop.Conn``, its
    statements given by the subclass); the single-operation methods run a plan of one
    (for callers that do not drive chunks). Keys and values are bytes."""

    bytes_args = True
    loop = None         # the extension module: Plan, Conn, run_many, KINDS
    mux_auto = True     # whether multiplex: auto takes run_many (False: only multiplex: true)
    path = "c"          # meta.driver_path
    nfields = 0
    conn = None

    def native(self, op_names: list[str]) -> NativeOps:
        return NativeOps(self, op_names)

    def _single(self, kind: str, args: tuple) -> int:
        kinds = self.loop.KINDS            # in code order: an operation's code is its kind
        return NativeOps(self, list(kinds)).one(kinds[kind], args)

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
