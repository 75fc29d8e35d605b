"""A real fault for the trials and tests: the server ends a run's client connections
mid-run (MariaDB's KILL CONNECTION, PostgreSQL's pg_terminate_backend, Redis's CLIENT
KILL). The one set of killers of tests/faults (the kill tests, the run-fault tests,
trials.py); ``KILLERS[kind](url, pattern, want, wait_s, ready=…)`` for each kind of server.

``kill_mysql(db)`` waits until ``want`` connections to database ``db`` are in the
processlist at once, or, given a ``pattern``, until ``want`` connections have been seen
running a statement that starts with it (a run loop's clients, not the load's: the surer
way into the loop on a busy machine), lets them work ``settle_s``, then kills them and
every connection of the database that still matches; it keeps killing the ones that come back
for ``keep_killing_s`` (a client that reconnects is killed again: the run then is mostly
errors whatever the library does). It returns the ids it killed.
``ready``: a function that says the run's loop is at work (its intervals on disk): only
then are connections counted, so that the controller's, preflight's and the sampler's
connections before the loop cannot make up the count.
``kill_clients_later(db, …)`` does the same in a thread: (the thread, the ids killed).
"""
from __future__ import annotations

import threading
import time

# a statement only a run loop's clients send (not the load, not the controller): the
# ``pattern`` that waits for the loop
RUN_STATEMENT = {"kv": "SELECT v FROM", "ybio": "SELECT count(*), sum(scratch) FROM",
                 "ycsb": "SELECT %{name}"}


def kill_mysql(db: str, *, pattern: str | None = None, want: int = 2, wait_s: float = 60,
               poll_s: float = 0.2, settle_s: float = 0.3, keep_killing_s: float = 0.0,
               ready=None, over=None) -> list[int]:
    import pymysql
    killed: list[int] = []
    gathering = Gathering(wait_s, ready, over)
    c = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    try:
        with c.cursor() as cur:
            seen: set[int] = set()
            while gathering.more(seen, want):
                time.sleep(poll_s)
                now = set(_ids(cur, db, pattern))
                seen = seen | now if pattern else now   # statements are brief: gathered
            time.sleep(settle_s)          # into the run loop
            until = time.monotonic() + keep_killing_s
            while True:
                for cid in sorted(seen | set(_ids(cur, db, pattern))):
                    try:
                        cur.execute(f"KILL CONNECTION {int(cid)}")
                        killed.append(cid)
                    except pymysql.err.OperationalError:   # it ended meanwhile
                        pass
                seen = set()
                if time.monotonic() >= until:
                    break
                time.sleep(0.05)
    finally:
        c.close()
    return killed


def kill_clients_later(db: str, *, min_conns: int = 2, settle_s: float = 0.8,
                       keep_killing_s: float = 0.0, **kw) -> tuple[threading.Thread, list[int]]:
    killed: list[int] = []
    t = threading.Thread(target=lambda: killed.extend(kill_mysql(
        db, want=min_conns, settle_s=settle_s, keep_killing_s=keep_killing_s, **kw)), daemon=True)
    t.start()
    return t, killed


def kill_mysql_url(url: str, pattern: str, want: int = 4, wait_s: float = 120, *,
                   ready=None, over=None) -> list:
    """:func:`kill_mysql` of the URL's database, as the PostgreSQL and Redis killers are
    called; an empty ``pattern``: any ``want`` connections of the database at once."""
    return kill_mysql(url.rsplit("/", 1)[1].split("?")[0], pattern=pattern or None, want=want,
                      wait_s=wait_s, poll_s=0.02, ready=ready, over=over)


GATHER_S = 1.0   # once the loop is at work: how long the killer gathers its connections


class Gathering:
    """When a killer stops looking for the run's connections and kills what it saw.

    It first waits until ``ready()`` says the run's loop is at work (its seconds in the
    run's own folder): before it, the controller's, preflight's, the load's and the
    sampler's connections are not the loop's, and a killer that counted them fired before
    the loop began. Then it gathers until it has seen ``want`` of them, or ``GATHER_S``
    has passed and it has seen at least one (it kills what it saw while the loop still
    runs, rather than wait for a count a loaded machine may not show before the loop
    ends), or ``wait_s`` is over. Without ``ready``: until ``want`` or ``wait_s``.
    ``over()`` true (the run has returned): no more to gather, it kills what it saw."""

    def __init__(self, wait_s: float, ready=None, over=None):
        self.hard = time.monotonic() + wait_s
        self.over = over or (lambda: False)
        while ready is not None and not ready() and not self.over() and time.monotonic() < self.hard:
            time.sleep(0.05)
        self.soft = self.hard if ready is None else min(self.hard, time.monotonic() + GATHER_S)

    def more(self, seen, want: int) -> bool:
        now = time.monotonic()
        return (len(seen) < want and now < self.hard and (now < self.soft or not seen)
                and not self.over())


def kill_pg(url: str, pattern: str, want: int = 4, wait_s: float = 120, *, ready=None,
            over=None) -> list:
    """pg_terminate_backend of ``want`` client backends of the URL's database seen running a
    statement that starts with ``pattern``; the pids it ended."""
    import psycopg
    mine = ("FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'")
    gathering = Gathering(wait_s, ready, over)
    with psycopg.connect(url, autocommit=True) as c:
        seen = set()
        while gathering.more(seen, want):
            seen |= {r[0] for r in c.execute(f"SELECT pid {mine} AND query LIKE %s", (pattern + "%",))}
            time.sleep(0.05)
        time.sleep(0.3)
        return [pid for pid in seen if c.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]]


def kill_redis(url: str, pattern: str = "", want: int = 4, wait_s: float = 120, *,
               ready=None, over=None) -> list:
    """CLIENT KILL of ``want`` clients of the URL's database number (no one else's: the
    server is shared) seen running a workload's command (``pattern`` unused: Redis shows
    commands, not statements); the ids it killed."""
    import redis
    gathering = Gathering(wait_s, ready, over)
    r = redis.Redis.from_url(url)
    try:
        seen = set()
        me, db = r.client_id(), r.connection_pool.connection_kwargs.get("db", 0)
        while gathering.more(seen, want):
            seen |= {c["id"] for c in r.client_list(_type="normal")
                     if c["cmd"] in ("get", "exec", "set", "zrangebylex", "mget") and int(c["id"]) != me
                     and int(c.get("db", -1)) == int(db)}
            time.sleep(0.02)
        time.sleep(0.3)
        return [cid for cid in seen if r.client_kill_filter(_id=cid)]
    finally:
        r.close()


KILLERS = {"postgres": kill_pg, "mysql": kill_mysql_url, "redis": kill_redis}


def _ids(cur, db: str, pattern: str | None) -> list[int]:
    sql = "SELECT id FROM information_schema.processlist WHERE db = %s AND id <> CONNECTION_ID()"
    if pattern is None:
        cur.execute(sql, (db,))
    else:
        cur.execute(sql + " AND info LIKE %s", (db, pattern + "%"))
    return [r[0] for r in cur.fetchall()]
