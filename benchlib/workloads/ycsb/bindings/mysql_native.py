"""MariaDB/MySQL's YCSB binding with its run loop in C (``_myloop.c`` over libmariadb, in
``benchlib/workloads/_native/``).

The twin of :mod:`.postgres_native`: a whole chunk of operations goes into C, where each
statement is built (keys and values escaped by the connection and quoted, as
mysqlclient and PyMySQL format them), sent, fetched whole and timed without the GIL;
from 2 connections per process one thread drives them all (``run_many``, libmariadb's
non-blocking calls and poll) with ``run.multiplex: true`` (``auto`` keeps a thread per
connection here: BENCHMARKS.md).
It is used for YCSB's run loops when the extension is built (``run.driver: auto``, the
default, or ``c``); the load and the other workloads keep the target's client library
(mysqlclient or PyMySQL, the target's ``library``: :mod:`.mysql`), and meta.json says both.

The extension is optional: ``pip install`` builds it where libmariadb's headers and a
C compiler are (Debian: ``libmariadb-dev``, ``gcc``); without it ``run.driver: auto``
runs the Python path and ``c`` is refused with that reason.
"""
from __future__ import annotations

from ....targets.mysql import MysqlTarget
from ..._native import missing
from .native_ops import NativeYcsb
from .statements import YcsbStatements

try:
    from ..._native import _myloop
except ImportError:   # built without libmariadb-dev or a C compiler: the Python path runs
    _myloop = None

AVAILABLE = _myloop is not None
DRIVER_PATH = "c-libmariadb"
MISSING = missing("_myloop", "libmariadb-dev")


class MysqlYcsbNative(NativeYcsb):
    """YCSB's DB interface on one libmariadb connection of the extension's own."""

    loop = _myloop
    # one thread for all of a process's connections measured 0.82x a thread per connection at
    # 16 clients on a loaded 2-core machine (BENCHMARKS.md): multiplex: true asks for it
    mux_auto = False
    path = DRIVER_PATH

    def __init__(self, params: dict, props):
        if _myloop is None:
            raise RuntimeError(MISSING)
        st = YcsbStatements(props.table, props.field_names, MysqlTarget.dialect)
        self.nfields = len(st.fields)
        fields = range(-1, self.nfields)
        self.conn = _myloop.Conn(params["host"], params["user"], params["password"], params["database"],
                                 int(params["port"]), params.get("unix_socket"), 10)
        self.conn.prepare_ycsb([st.read[f].encode() for f in fields],
                               [st.scan[f].encode() for f in fields],
                               [st.update[f].encode() for f in fields], st.insert.encode())
