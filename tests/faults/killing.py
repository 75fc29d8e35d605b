"""A real fault for the trials and tests: KILL CONNECTION of a run's clients on MariaDB.

``kill_clients_later(db)`` starts a thread that waits until the run's client connections
show in the processlist of database ``db``, lets them work a moment, then kills every
connection of that database (clients and controller), and keeps killing the ones that
come back for ``keep_killing_s`` (a client that reconnects is killed again: the run then
is mostly errors whatever the library does). It returns the thread and the list of the
ids it killed.
"""
from __future__ import annotations

import threading
import time


def kill_clients_later(db: str, *, min_conns: int = 2, settle_s: float = 0.8,
                       keep_killing_s: float = 0.0) -> tuple[threading.Thread, list[int]]:
    killed: list[int] = []

    def body() -> None:
        import pymysql
        c = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
        try:
            with c.cursor() as cur:
                ids, end = [], time.monotonic() + 60
                while len(ids) < min_conns and time.monotonic() < end:
                    time.sleep(0.2)
                    ids = _ids(cur, db)
                time.sleep(settle_s)          # into the run loop
                until = time.monotonic() + keep_killing_s
                while True:
                    for cid in _ids(cur, db):
                        try:
                            cur.execute(f"KILL CONNECTION {int(cid)}")
                            killed.append(cid)
                        except pymysql.err.OperationalError:   # it ended meanwhile
                            pass
                    if time.monotonic() >= until:
                        break
                    time.sleep(0.05)
        finally:
            c.close()
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t, killed


def _ids(cur, db: str) -> list[int]:
    cur.execute("SELECT id FROM information_schema.processlist WHERE db = %s "
                "AND id <> CONNECTION_ID()", (db,))
    return [r[0] for r in cur.fetchall()]
