"""The statements each LinkBench request type sends, counted by the server, against
what the maintained client sends (mdcallag/linkbench: LinkStoreSql, LinkStorePgsql,
LinkStoreMysql, as LinkBenchRequest calls them).

LinkStoreSql runs node requests and link reads on an autocommit connection (one
statement each) and link writes on a second connection with autocommit off: addLink
inserts first and becomes an update on a duplicate key (after a ROLLBACK), updateLink
and deleteLink lock the link first (SELECT … FOR UPDATE) and ROLLBACK when there is
nothing to do. PostgreSQL: the server's own log of each session (``log_statement``,
sent to the session as LOG messages), which also shows the BEGIN that the JDBC driver
(and benchlib) sends with a transaction's first statement. MariaDB: the sessions'
``Com_*`` counters (performance_schema is off on this server, and the general log is
server-wide), which show that no BEGIN is sent at all."""
from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import driver_url

from benchlib.targets.base import make_target
from benchlib.workloads.linkbench import requests as R
from benchlib.workloads.linkbench.bindings import binding
from benchlib.workloads.linkbench.dists import DEFAULT_LINK_TYPE as T
from benchlib.workloads.linkbench.properties import from_properties

# what LinkStoreSql sends per request type and path ("w:" on the link-write connection)
LINKSTORESQL = {
    "ADD_LINK new": ["w:INSERT link", "w:INSERT count", "w:COMMIT"],
    "ADD_LINK there (add_to_upd)": ["w:INSERT link", "w:ROLLBACK", "w:SELECT link FOR UPDATE",
                                    "w:UPDATE link", "w:COMMIT"],
    "UPDATE_LINK there": ["w:SELECT link FOR UPDATE", "w:UPDATE link", "w:COMMIT"],
    "UPDATE_LINK hidden": ["w:SELECT link FOR UPDATE", "w:UPDATE link", "w:UPDATE count",
                           "w:COMMIT"],
    "UPDATE_LINK missing (upd_to_add)": ["w:SELECT link FOR UPDATE", "w:ROLLBACK",
                                         "w:INSERT link", "w:INSERT count", "w:COMMIT"],
    "DELETE_LINK visible": ["w:SELECT link FOR UPDATE", "w:UPDATE link", "w:UPDATE count",
                            "w:COMMIT"],
    "DELETE_LINK missing": ["w:SELECT link FOR UPDATE", "w:ROLLBACK"],
    "COUNT_LINK": ["SELECT count"],
    "MULTIGET_LINK": ["SELECT link"],
    "GET_LINKS_LIST": ["SELECT link"],
    "ADD_NODE": ["INSERT node"],
    "UPDATE_NODE": ["UPDATE node"],
    "DELETE_NODE": ["DELETE node"],
    "GET_NODE": ["SELECT node"],
}


def requests(c: R.RequestClient) -> dict:
    """One call per entry of LINKSTORESQL, on the graph that ``setup`` loads."""
    d = b"x" * 20
    return {
        "ADD_LINK new": lambda: c.add_link(1, T, 50, d),
        "ADD_LINK there (add_to_upd)": lambda: c.add_link(1, T, 2, d),
        "UPDATE_LINK there": lambda: c.update_link(1, T, 2, d),
        "UPDATE_LINK hidden": lambda: c.update_link(1, T, 3, d),
        "UPDATE_LINK missing (upd_to_add)": lambda: c.update_link(1, T, 60, d),
        "DELETE_LINK visible": lambda: c.delete_link(1, T, 4),
        "DELETE_LINK missing": lambda: c.delete_link(1, T, 70),
        "COUNT_LINK": lambda: c.count_link(1, T),
        "MULTIGET_LINK": lambda: c.multiget_link(1, T, [2, 3, 9]),
        "GET_LINKS_LIST": lambda: c.get_links_list(1, T, False),
        "ADD_NODE": lambda: c.add_node(d),
        "UPDATE_NODE": lambda: c.update_node(2, d),
        "DELETE_NODE": lambda: c.delete_node(3),
        "GET_NODE": lambda: c.get_node(1),
    }


STATUS = {"ADD_LINK new": R.OK, "ADD_LINK there (add_to_upd)": R.RETRY,
          "UPDATE_LINK missing (upd_to_add)": R.RETRY, "DELETE_LINK missing": R.EMPTY}


def setup(url: str, tmp_path):
    """Tables and a few rows: nodes 1-5, links 1→2 and 1→4 visible, 1→3 hidden; a client."""
    target = make_target("t", url, None, tmp_path)
    target.start()
    p = from_properties({"maxid1": 11})
    st = binding(target.dialect, p)
    conn = target.connect()
    cur = conn.cursor()
    for sql in st.drop_tables() + st.create_tables() + [st.create_index()]:
        cur.execute(sql)
    ph = st.ph
    for i in range(1, 6):
        cur.execute(f"INSERT INTO {st.node} (id, type, version, time, data) VALUES "
                    f"({ph}, 2048, 1, 0, {ph})", (i, b"n"))
    for id2, vis in ((2, 1), (3, 0), (4, 1)):
        cur.execute(st.insert_link, (1, id2, T, vis, b"l", 0, 1000 + id2))
    cur.execute(st.count_add, (1, T, 2, 0, 2, 0))
    if hasattr(st, "after_load"):
        for sql in st.after_load():
            cur.execute(sql)
    conn.close()
    return target, R.RequestClient(p, st, target.endpoint(), 1, None)   # both connections open


def check(seen: dict, expected: dict, statuses: dict) -> None:
    for name, want in expected.items():
        assert seen[name] == want, (name, seen[name], want)
    for name, status in STATUS.items():
        assert statuses[name] == status, name


# ------------------------------------------------------------------ PostgreSQL
def _label(sql: str) -> str:
    m = re.match(r"\s*(\w+)", sql)
    verb = m.group(1).upper()
    table = re.search(r'(linktable|counttable|nodetable)', sql)
    out = verb + (" " + table.group(1).replace("table", "") if table else "")
    return out + (" FOR UPDATE" if "FOR UPDATE" in sql else "")


def _pg_expected() -> dict:
    """LinkStoreSql's statements plus the BEGIN that opens each transaction on the
    write connection (pgjdbc sends it in the same message as the first statement)."""
    out = {}
    for name, sts in LINKSTORESQL.items():
        seq, open_ = [], False
        for s in sts:
            if s.startswith("w:") and not open_:
                seq.append("w:BEGIN")
                open_ = True
            seq.append(s)
            if s in ("w:COMMIT", "w:ROLLBACK"):
                open_ = False
        out[name] = seq
    return out


@pytest.mark.postgres
def test_postgres_statements_per_request_are_linkstoresql_s(pg_own_db, tmp_path):
    target, c = setup(pg_own_db, tmp_path)
    log: list[str] = []
    for conn, tag in ((c.db.conn, ""), (c.db.wconn, "w:")):
        conn.add_notice_handler(lambda d, tag=tag: log.append(tag + d.message_primary))
        conn.execute("SET client_min_messages = log")
        conn.execute("SET log_statement = 'all'")
    seen, statuses = {}, {}
    try:
        for name, fn in requests(c).items():
            log.clear()
            statuses[name] = fn()
            seen[name] = [tag + _label(m.split(": ", 1)[1]) for m in log
                          for tag in [m[:2] if m.startswith("w:") else ""]]
    finally:
        c.close()
        target.stop()
    check(seen, _pg_expected(), statuses)


# ------------------------------------------------------------------ MariaDB
COM = ("Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit", "Com_rollback",
       "Com_begin")


def _com(conn) -> Counter:
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS WHERE Variable_name IN (" + ", ".join(["%s"] * len(COM))
                + ")", COM)
    return Counter({k: int(v) for k, v in cur.fetchall()})


def _com_expected(sts: list[str]) -> tuple[Counter, Counter]:
    auto, write = Counter(), Counter()
    for s in sts:
        verb = s.removeprefix("w:").split()[0].lower()
        (write if s.startswith("w:") else auto)[f"Com_{verb}"] += 1
    return auto, write


@pytest.mark.mysql
def test_mariadb_statements_per_request_are_linkstoresql_s(mysql_own_db, mysql_driver, tmp_path):
    target, c = setup(driver_url(mysql_own_db, mysql_driver), tmp_path)
    seen, statuses, expected = {}, {}, {}
    try:
        for name, fn in requests(c).items():
            a0, w0 = _com(c.db.conn), _com(c.db.wconn)
            statuses[name] = fn()
            a1, w1 = _com(c.db.conn), _com(c.db.wconn)
            seen[name] = (+(a1 - a0), +(w1 - w0))
            expected[name] = _com_expected(LINKSTORESQL[name])
    finally:
        c.close()
        target.stop()
    check(seen, expected, statuses)
    assert all(w["Com_begin"] == 0 for _, w in seen.values())   # no BEGIN sent


def test_list_tail_history_keeps_one_entry_per_list():
    """LinkBenchRequest's list-tail cache: one entry per (id1, link_type), a random one
    replaced when full, an entry removed when its list has no further page."""
    import random
    tails = R.ListTails(random.Random(3))
    for i in range(R.HISTORY_LIMIT + 50):
        tails.add((i, T, 100))
        tails.add((i, T, 99))                  # the same list again: kept once
    assert len(tails.items) == R.HISTORY_LIMIT
    assert all(tails.index[e[:2]] == k for k, e in enumerate(tails.items))
    tails.replace(0, (tails.items[0][0], T, 5))    # a further page: its last time
    assert tails.items[0][2] == 5
    for _ in range(R.HISTORY_LIMIT):
        tails.replace(tails.pick(), None)          # no further page: removed
    assert tails.items == [] and tails.index == {}
