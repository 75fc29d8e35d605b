"""LinkBench's requests on MariaDB/MySQL with their loop in C (``_lbmyloop``, over
libmariadb): the twin of :mod:`.postgres_native`, the same plan and requests
(``_lbplan.h``, ``_lbops.h``) over libmariadb's calls.

Each statement goes as the Python path (:mod:`.mysql` over mysqlclient or PyMySQL) sends
it, its text with the values in place (numbers as text, payloads as hex literals); two
connections per requester: reads and node writes in autocommit, link writes with
autocommit off (the server opens the transaction with its first statement), COMMIT or
ROLLBACK; the same statuses, switches (RETRY) and requester counts as that path.

Optional as every loop: without libmariadb's headers it is not built, ``run.driver: c``
is refused with that reason and ``auto`` runs the Python path; where it is built
``auto`` runs it (``python``: mysqlclient's or PyMySQL's path).
"""
from __future__ import annotations

from ..._native import missing
from .native import LinkNativeSession

try:
    from ..._native import _lbmyloop
except ImportError:   # built without libmariadb-dev or a C compiler: the Python path runs
    _lbmyloop = None

AVAILABLE = _lbmyloop is not None
DRIVER_PATH = "c-libmariadb"
MISSING = missing("_lbmyloop", "libmariadb-dev")


class MyLinkNative(LinkNativeSession):
    """The loop's own two libmariadb connections (``params``: the endpoint's host, port,
    user, password, database, unix_socket), LinkBench's statements as templates."""

    path, loop = DRIVER_PATH, _lbmyloop

    def __init__(self, params: dict, st, range_limit: int):
        if _lbmyloop is None:
            raise RuntimeError(MISSING)
        conn = _lbmyloop.Conn(params["host"], params["user"], params["password"], params["database"],
                              int(params["port"]), params.get("unix_socket"), 10)
        super().__init__(conn, st, range_limit)
