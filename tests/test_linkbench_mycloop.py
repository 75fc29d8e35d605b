"""LinkBench's requests in C over libmariadb (run.driver: c, bindings/mysql_native.py)
against the Python path (run.driver: python: mysqlclient or PyMySQL) on MariaDB, the
same seed, one requester: the same requests with the same outcomes (per operation and
status), the requester's own counts (found / not found, history queries, RANGE_SIZE)
and the same rows left in the three tables; and a requester whose connection is killed
mid-chunk goes on, on a new one, where it stood."""
from __future__ import annotations

import time

import pymysql
import pytest
from test_linkbench import MAXID1, SMALL, Fetch, lb_experiment
from test_linkbench_cloop import ROW_QUERIES, check_paths_agree, check_two_requesters

ERROR = 2   # benchlib.schema's
# MariaDB and the loop; the refusal without the loop needs neither
def needs_loop(test):
    return pytest.mark.mysql(pytest.mark.requires("c-lbmyloop")(test))


def _connect(url):
    return pymysql.connect(host="127.0.0.1", user="root", database=url.rsplit("/", 1)[1])


def _rows(url):
    conn = _connect(url)
    out = {}
    try:
        with conn.cursor() as c:
            for t, q in ROW_QUERIES.items():
                c.execute(q)
                out[t] = c.fetchall()
        return out
    finally:
        conn.close()


@needs_loop
def test_c_and_python_paths_agree(mysql_own_db, data_dir):
    check_paths_agree(mysql_own_db, data_dir, _rows, "c-libmariadb")


@needs_loop
def test_c_path_two_requesters_timed_loops(mysql_own_db, data_dir):
    check_two_requesters(mysql_own_db, data_dir, "c-libmariadb", Fetch("mysql", lambda: _connect(mysql_own_db)))


def _c_client(url):
    """A RequestClient on the C loop over empty tables of its own, the binding's statements,
    an autocommit admin connection."""
    from benchlib.registries.targets import target_class
    from benchlib.targets.base import make_target
    from benchlib.workloads.linkbench.bindings import binding
    from benchlib.workloads.linkbench.properties import from_properties
    from benchlib.workloads.linkbench.requests import RequestClient
    p = from_properties({"maxid1": MAXID1, "data_file": SMALL, "range_limit": 5})
    st = binding(target_class("mysql").dialect, p)
    admin = _connect(url)
    admin.autocommit(True)
    with admin.cursor() as c:
        for sql in st.create_tables():
            c.execute(sql)
        c.execute(st.create_index())
    return RequestClient(p, st, make_target("t", url).endpoint(), 3, None, driver="c"), st, admin


@needs_loop
def test_payloads_of_any_bytes_are_stored_as_they_are(mysql_own_db):
    """Payloads of quotes, backslashes, NULs, %s and bytes of no character set: stored as
    sent by ADD_LINK and ADD_NODE, then replaced by UPDATE_LINK (written as hex literals)."""
    odd = [b"", b"'", b"\\'; DROP TABLE linktable; --", b"\x00\xff\"%s", bytes(range(254))]
    new = [b"x" + d for d in reversed(odd)]   # 255 bytes at most: varbinary(255)
    ADD_LINK, UPDATE_LINK, ADD_NODE = 0, 2, 6   # requests.REQUEST_OPS' codes
    client, st, admin = _c_client(mysql_own_db)
    try:
        conn, loop = client.native.binding.conn, client.native.loop
        for codes, args in (([ADD_LINK] * 5 + [ADD_NODE] * 5, [(1, 7, 100 + k, d) for k, d in enumerate(odd)]
                             + [(d,) for d in odd]),
                            ([UPDATE_LINK] * 5, [(1, 7, 100 + k, d) for k, d in enumerate(new)])):
            plan = loop.Plan(codes, args)
            assert conn.run(plan, 0, len(plan), 1 << 62, 0, 0, 0, 0.0, 0)[0] == len(plan)
            assert list(plan.results(0, len(plan))[1]) == [loop.ST_OK] * len(plan)
        with admin.cursor() as c:
            c.execute("SELECT data FROM linktable WHERE id1 = 1 AND link_type = 7 ORDER BY id2")
            assert [bytes(r[0]) for r in c.fetchall()] == new
            c.execute("SELECT data FROM nodetable ORDER BY id")
            assert [bytes(r[0]) for r in c.fetchall()] == odd
    finally:
        client.close()
        admin.close()


def test_c_refused_in_one_line_where_the_loop_is_not_built(monkeypatch):
    from benchlib.errors import ParameterError
    from benchlib.params import validate
    from benchlib.workloads.linkbench.bindings import mysql_native
    monkeypatch.setattr(mysql_native, "AVAILABLE", False)
    with pytest.raises(ParameterError) as e:
        validate(lb_experiment("lbmyno", "mysql://root@127.0.0.1:3306/test", run={"driver": "c"}), "t")
    assert str(e.value).endswith(f"run.driver: c: target lbmyno: {mysql_native.MISSING}")
    assert "\n" not in str(e.value)


def _run_plan(client, plan, i):
    """The plan's requests from i on, the loop called again where it stops before a
    history GET_LINKS_LIST, until the plan's end or a lost connection: (where, flags)."""
    flags = 0
    while i < len(plan) and not flags:
        i2, _, flags = client.native.run(plan, i, 1 << 62, None, (0, 0, 0.0), 0)
        client.ops_done(plan.results(i, i2)[0])
        i = i2
    return i, flags


@needs_loop
def test_c_requester_goes_on_after_its_connection_is_killed(mysql_own_db):
    """Either connection killed mid-chunk (the reads' one, then the link writes'): the loop
    returns (F_BROKEN), the one reconnection policy opens new ones, whose statements are
    made again, and the plan goes on there where it stood, every request counted once."""
    from benchlib.run.recording import reopen
    client, st, admin = _c_client(mysql_own_db)
    try:
        assert client.native.path == "c-libmariadb"
        assert _run_plan(client, client.native.plan(client.next_chunk(200)), 0) == (200, 0)
        for which in ("thread_id", "write_thread_id"):
            plan = client.native.plan(client.next_chunk(200))
            tid = getattr(client.native.binding.conn, which)
            with admin.cursor() as c:
                c.execute(f"KILL {int(tid)}")
                while c.execute("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = %s", (tid,)):
                    time.sleep(0.01)   # until the connection is gone
            i1, flags = _run_plan(client, plan, 0)
            assert flags == client.native.loop.F_BROKEN and 1 <= i1 < 200, which
            reopen(client, "test")
            assert _run_plan(client, plan, i1) == (200, 0), which
            status = plan.results(0, 200)[1]
            # the request the kill cut is the one ERROR: the new connections have every
            # statement the plan needs (a MULTIGET_LINK's IN list of any length too)
            assert [k for k in range(200) if status[k] == ERROR] == [i1 - 1], which
        assert client.counters()["requests"] == 600
        with admin.cursor() as c:
            assert c.execute(st.count_mismatches()) == 0   # no write half-done
    finally:
        client.close()
        admin.close()


@needs_loop
def test_a_failed_requests_server_message_is_in_the_log(mysql_own_db, data_dir):
    """LinkBenchRequest's ``oneRequest error: OP error <message>`` line per failed request,
    from the C loop over libmariadb: a trigger refuses every link insert after the load,
    each ERROR counted has its line with the server's message (mysql_error)."""
    import re

    from test_linkbench import run_lb
    from test_linkbench_cloop import PROPS, _outcome

    def run(name, **over):
        exp = {"experiment": f"lbmyerr{name}", "workload": "linkbench",
               "properties": {**PROPS, "requests": 300},
               "targets": [{"name": "my", "url": mysql_own_db}], "load": {"batch_size": 512},
               "run": {"processes": 1, "loops": 1, "status_interval_s": 60, "driver": "c",
                       "max_error_ratio": 1.0}, "seed": 11, **over}
        return run_lb(exp, data_dir)
    run("load", run={"skip": True})
    conn = _connect(mysql_own_db)
    try:
        with conn.cursor() as c:
            c.execute("CREATE TRIGGER lbmy_no_links BEFORE INSERT ON linktable FOR EACH ROW "
                      "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'lbmy: no link inserts here'")
    finally:
        conn.close()
    rd = run("c", load={"skip": True})
    errors = sum(n for (op, st), n in _outcome(rd)[0].items() if st == "ERROR")
    lines = re.findall(r"^ERROR \S+ \S+ \[Thread-0\]: oneRequest error: (\w+) error (.*)$",
                       (rd / "linkbench.log").read_text(), re.M)
    assert 0 < len(lines) == min(errors, 100), (errors, lines[:3])
    assert {m for _, m in lines} == {"lbmy: no link inserts here"}
    assert {op for op, _ in lines} <= {"ADD_LINK", "UPDATE_LINK"}
