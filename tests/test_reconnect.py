"""The reconnection policy (workloads/reconnect.py) on real servers: a connection the
server ended is lost, one whose statement failed is not, a lost one is reopened, and one
that cannot be reopened is given up with the reason after the bound."""
from __future__ import annotations

import sqlite3

import pytest

from benchlib.workloads.reconnect import Backoff, ConnectionGone, Reconnecting


def _verdict(link, sql: str) -> bool:
    try:
        link.session.execute(sql)
    except Exception:
        return link.lost()
    return False


@pytest.mark.postgres
def test_a_terminated_postgres_session_is_lost_and_reopened(pg_own_db):
    import psycopg
    from benchlib.targets.postgres import PostgresTarget
    link = Reconnecting(lambda: psycopg.connect(pg_own_db, autocommit=True), "test client",
                        PostgresTarget)
    try:
        assert _verdict(link, "SELEC 1") is False            # the server answered: alive
        pid = link.session.info.backend_pid
        with psycopg.connect(pg_own_db, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert _verdict(link, "SELECT 1") is True
        link.reopen()
        assert link.session.execute("SELECT 1").fetchone() == (1,)
        assert (link.lost_count, link.reopened) == (1, 1)
    finally:
        link.close()


@pytest.mark.mysql
@pytest.mark.parametrize("library", ["MySQLdb", "pymysql"])
def test_a_killed_mariadb_connection_is_lost(mysql_url, library):
    lib = pytest.importorskip(library)
    kw = {"db" if library == "MySQLdb" else "database": "test"}

    def open_():
        return lib.connect(host="127.0.0.1", port=3306, user="root", autocommit=True, **kw)
    from benchlib.targets.mysql import MysqlTarget
    link = Reconnecting(open_, "test client", MysqlTarget)
    admin = open_()
    try:
        cur = link.session.cursor()
        cid = link.session.thread_id()
        admin.cursor().execute(f"KILL CONNECTION {int(cid)}")
        with pytest.raises(lib.OperationalError):
            cur.execute("SELECT 1")
        assert link.lost(lib.OperationalError(2013, "x")) and not link.lost(lib.ProgrammingError(1064, "x"))
    finally:
        admin.close()


def test_a_connection_that_cannot_be_reopened_is_given_up_with_the_reason(tmp_path):
    opens = iter([sqlite3.connect(":memory:")])

    def open_():
        return next(opens, None) or sqlite3.connect(tmp_path / "no" / "such" / "dir.db")
    link = Reconnecting(open_, "kv client 2 (toy)", backoff=Backoff(first_s=0.01, give_up_s=0.3))
    with pytest.raises(ConnectionGone, match=r"kv client 2 \(toy\): connection lost and not "
                                             r"reopened in \d+ attempts over 0\.\d s \(OperationalError"):
        link.reopen()
    assert link.failed_attempts >= 3


def test_the_loops_reopen_through_the_policy_alone(tmp_path):
    """run/clients.py, run/mux.py and run/native.py reopen through recording.reopen: the
    policy's bounded attempts, no retry loop of their own; what it gives up is one line."""
    from benchlib.run.recording import reopen
    from benchlib.workloads.reconnect import ReconnectingClient
    opens = iter([sqlite3.connect(":memory:")])

    class Toy(ReconnectingClient):
        binds = 0

        def __init__(self):
            self.link = Reconnecting(lambda: next(opens, None) or sqlite3.connect(tmp_path / "no" / "x.db"),
                                     "toy client", backoff=Backoff(first_s=0.01, give_up_s=0.2))

        def _bind(self):
            self.binds += 1
    toy = Toy()
    with pytest.raises(ConnectionGone, match=r"^toy client: connection lost and not reopened in \d+ attempts"):
        reopen(toy, "client 0")
    assert toy.binds == 0 and toy.link.failed_attempts >= 2

    class Unbindable(Toy):
        def _bind(self):
            raise ValueError("no statement prepared")
    opens = iter([sqlite3.connect(":memory:"), sqlite3.connect(":memory:")])
    with pytest.raises(ConnectionGone, match=r"^client 3: connection lost and not reopened: "
                                             r"ValueError: no statement prepared$"):
        reopen(Unbindable(), "client 3")


@pytest.mark.postgres
def test_a_session_of_two_connections_is_lost_when_either_is(pg_own_db):
    """LinkBench's client: reads and node writes on one connection, link writes on another;
    an error no code judges, then either one gone, is a lost session."""
    import psycopg
    from benchlib.targets.postgres import PostgresTarget

    def open_():
        return tuple(psycopg.connect(pg_own_db, autocommit=True) for _ in range(2))
    link = Reconnecting(open_, "linkbench client", PostgresTarget, conn_of=lambda s: s)
    try:
        assert link.lost(RuntimeError("no code")) is False     # both answer a ping
        with psycopg.connect(pg_own_db, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (link.session[1].info.backend_pid,))
        assert link.lost(RuntimeError("no code")) is True
    finally:
        for c in link.session:
            c.close()
