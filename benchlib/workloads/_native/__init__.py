"""The C loops, owned by no workload: each built once (setup.py) and used by every
workload whose binding hands its chunks of operations to C.

- ``_pgloop`` over libpq: YCSB's operations and ybio's ranges counted (``COUNT``),
- ``_lbloop`` over libpq: LinkBench's ten requests, their transactions in C (``_lbops.h``),
- ``_myloop`` over libmariadb: YCSB's operations,
- ``_lbmyloop`` over libmariadb: LinkBench's ten requests (``_lbops.h``, as ``_lbloop``),
- ``_redisloop`` over hiredis: kv's operations on a table as Redis holds it.

Their shared C: ``_loop.h`` (the clock, the statuses, a plan's outcomes, the paced
loop of ``Conn.run``, the module's constants), ``_sqlplan.h`` (the op plan of the two
SQL loops), ``_muxconn.h`` (one thread driving many connections: ``run_many``),
``_lbplan.h`` and ``_lbops.h`` (LinkBench's plan and requests, over a few calls that each
of its two loops defines on its library), ``_mylib.h`` (the libmariadb loops' connection, its
loss and a statement's text template). Each
module exports ``Plan``, ``Conn``, ``run_many``, ``KINDS`` (its operations by name, in
code order) and the reasons its calls return (``F_TICK`` …) and the statuses
(``ST_OK`` …), which Python reads there instead of restating them.

A workload's binding imports the loop it runs (``from ..._native import _pgloop``, in
a ``try``: a loop is optional) and wraps it thinly: :class:`.ops.LoopOps` is what the
driver (``benchlib.run.native``) calls, the binding's subclass says how a chunk becomes
the loop's plan.
"""
from __future__ import annotations


def missing(loop: str, headers: str) -> str:
    """Why the loop ``loop`` (``"_pgloop"``) is not there, where it could not be built: the
    line ``run.driver: c`` is refused with and the tests of that loop skip with."""
    return (f"the C extension {__name__}.{loop} is not built (it needs {headers} and a C compiler "
            "when benchlib is installed; see docs/install.md, The C loops)")
