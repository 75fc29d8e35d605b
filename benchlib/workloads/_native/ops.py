"""What the driver calls on a binding whose run loop is in C (``benchlib.run.native``):
a chunk's operations run on one connection of the loop's own, the thin Python side of
every loop of this folder. A binding's subclass says how a chunk becomes the loop's
``Plan`` (:meth:`LoopOps.plan`); the rest is the loop's own calls."""
from __future__ import annotations

from types import SimpleNamespace


class LoopOps:
    """A chunk's operations run in C on one connection (``binding.conn``, a ``loop.Conn``).

    ``plan(chunk)`` parses a chunk once; ``run(plan, i, …)`` runs from operation i on the
    binding's connection and ``plan.results(a, b)`` gives their outcomes; ``run_many``
    drives several connections from one thread (``multiplex``). ``loop`` is the extension
    module, whose constants (``F_TICK`` …) say why a call returned. ``compound`` names,
    per operation code, the codes its inner statements are also timed under.
    """

    compound: dict = {}
    mux_auto = True    # whether multiplex: auto takes run_many (False: only multiplex: true)

    def __init__(self, binding, loop, path: str):
        self.binding = binding
        self.loop = loop
        self.path = path
        self.run_many = loop.run_many

    @property
    def conn(self):
        return self.binding.conn

    def plan(self, chunk):
        raise NotImplementedError

    def run(self, plan, i: int, next_tick: int, end: int | None, pacing=(0, 0, 0.0),
            issued: int = 0) -> tuple[int, int, int]:
        start, offset, period = pacing
        return self.binding.conn.run(plan, i, next_tick, end or 0, start, offset, period, issued)

    def one(self, code: int, args: tuple) -> int:
        """One operation, a plan of one (not the hot path: the driver runs chunks): its
        status."""
        plan = self.plan(SimpleNamespace(codes=[code], args=[args]))
        self.run(plan, 0, 1 << 62, None)
        return plan.results(0, 1)[1][0]
