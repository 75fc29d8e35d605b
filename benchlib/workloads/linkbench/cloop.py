"""A requester whose requests run in C (``run.driver: c`` on PostgreSQL or MariaDB: the
loop of ``bindings/postgres_native.py`` or ``bindings/mysql_native.py``, both through
``bindings/native.py``): what it keeps itself, filled from the loop's outcomes
in the order the requests ran, as the Python path fills it per request (requests.py):
RequesterStats (MULTIGET_LINK's found / not found, RANGE_SIZE and the history queries
before each request's time, as there) and the list-tail history; and a history
GET_LINKS_LIST's arguments picked from the tails when it comes (the loop stops before
it), with the same draws as the Python path's.

The choice of loop is ``run.driver``'s (:func:`benchlib.workloads.bindings.use_c_loop`):
``auto`` (the default) and ``c`` run this where the binding has a loop built (PostgreSQL's,
MariaDB's; ``c`` is refused in one line elsewhere), ``python`` the binding's Python path
(psycopg; mysqlclient or PyMySQL): on one requester and one seed both give the same
statuses, requester counts and rows (tests/test_linkbench_cloop.py,
tests/test_linkbench_mycloop.py).
"""
from __future__ import annotations

from ..bindings import use_c_loop

GET_LINKS_LIST, MULTIGET_LINK = 5, 4   # requests.REQUEST_OPS' codes
ERROR = 2                              # benchlib.schema's


def native_missing(dialect: str) -> str | None:
    """Why LinkBench's requests cannot run in C on ``dialect`` (its name; None: they can):
    its binding's word (``native_missing``)."""
    from .bindings import BINDINGS
    if not BINDINGS.supports(dialect):
        return f"workload linkbench does not run on dialect {dialect}"
    return BINDINGS.get(dialect).native_missing(dialect)


def open_requester(endpoint, st, p, driver: str):
    """A requester's session: the C loop's (run.driver c) or the binding's Db."""
    missing = native_missing(endpoint.dialect.name) if driver != "python" else None
    if use_c_loop(driver, missing):
        return st.open_native(endpoint, p.range_limit)
    return st.open(endpoint)


class NativeRequests:
    """RequestClient's part when its session is the C loop's (``self.native``)."""

    native = None

    def bind_native(self) -> bool:
        session, old = self.link.session, self.native
        self.native = session.native(self) if hasattr(session, "native") else None
        if self.native is not None:
            self.fns = []
            if old is not None:   # a reopened connection goes on with the plan in progress
                self.native.take_over(old)
        return self.native is not None

    def ops_done(self, codes) -> None:
        """The driver's acknowledgement: these requests of the chunk ran (in order)."""
        self.native.done(len(codes))

    def native_history(self, plan, i: int) -> None:
        """GET_LINKS_LIST i (drawn as a history one) pages back into a tail, if any."""
        tails = self.tails
        if not tails.items:
            return
        self._picked[i] = j = tails.pick()
        id1, ltype, last_time = tails.items[j]
        plan.set_list(i, id1, ltype, last_time, 1)

    def native_done(self, args, a: int, codes, st, svc, rows, last, tend, errors=()) -> None:
        """Requests a, a+1 … of the chunk (``args``: its tuples) returned: their codes,
        statuses, service times (ns), rows returned, a full list's last link time, end
        times (ns), as lists; ``errors``: (i, the server's message) of those that failed."""
        names = self.op_names   # REQUEST_OPS, by code
        stats, tails, limit = self.stats, self.tails, self.p.range_limit
        said = dict(errors)
        for k, code in enumerate(codes):
            i = a + k
            j = self._picked.pop(i, None) if code == GET_LINKS_LIST else None
            if st[k] != ERROR:
                if code == GET_LINKS_LIST:
                    if j is not None:   # a history request: its tail moved back or dropped
                        id1, ltype, _ = tails.items[j]
                        tails.replace(j, (id1, ltype, last[k]) if rows[k] == limit else None)
                    elif rows[k] >= limit:
                        tails.add((args[i][0], args[i][1], last[k]))
                    stats.links_list(rows[k], j is not None)
                elif code == MULTIGET_LINK:
                    stats.multiget(len(args[i][2]), rows[k])
            if i in said:
                stats.error(names[code], tend[k], said[i])
            stats.done(names[code], tend[k] - svc[k], tend[k], st[k] == ERROR)
