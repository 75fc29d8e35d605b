"""PostgreSQL's YCSB binding with its run loop in C (``_pgloop.c`` over libpq, in
``benchlib/workloads/_native/``: the loop ybio's sessions run too).

The Python binding (:class:`.postgres.PostgresYcsb`) does one interpreter round per
operation; this one takes a whole chunk of operations into C, where each is sent,
awaited and timed without the GIL (:class:`.native_ops.NativeOps`, what
``benchlib.run.native`` drives). It is used for the run loops when the extension is
built (``run.driver: auto``, the default, or ``c``); the load keeps psycopg's COPY.

The extension is optional: it is built by ``pip install`` where libpq's headers and a
C compiler are (Debian: ``libpq-dev``, ``gcc``); without it ``run.driver: auto`` runs
the Python path and ``c`` is refused with that reason.
"""
from __future__ import annotations

from ....targets.postgres import PostgresTarget
from ..._native import missing
from .native_ops import NativeYcsb
from .statements import YcsbStatements

try:
    from ..._native import _pgloop
except ImportError:   # built without libpq-dev or a C compiler: the Python path runs
    _pgloop = None

AVAILABLE = _pgloop is not None
DRIVER_PATH = "c-libpq"
MISSING = missing("_pgloop", "libpq-dev")


class PostgresYcsbNative(NativeYcsb):
    """YCSB's DB interface on one libpq connection of the extension's own, statements
    prepared once."""

    loop = _pgloop
    path = DRIVER_PATH

    def __init__(self, conninfo_: str, props):
        if _pgloop is None:
            raise RuntimeError(MISSING)
        st = YcsbStatements(props.table, props.field_names, PostgresTarget.dialect)  # $1 …
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
