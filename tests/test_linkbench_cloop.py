"""LinkBench's requests in C over libpq (run.driver: c, bindings/postgres_native.py)
against the psycopg path (run.driver: python) on the same seed, one requester: the same
requests with the same outcomes (per operation and status), the requester's own counts
(found / not found, history queries, RANGE_SIZE) and the same rows left in the database."""
from __future__ import annotations

import json
import time
import re

import pandas as pd
import psycopg
import pytest
from test_linkbench import MAXID1, SMALL, Fetch, check_run, lb_experiment, run_lb

from benchlib.workloads.linkbench.bindings.postgres_native import AVAILABLE, MISSING

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not AVAILABLE, reason=MISSING)]

# range_limit 5 fills pages (the list-tail history, paging back), history 30 %: every path taken
PROPS = {"maxid1": MAXID1, "loaders": 1, "data_file": SMALL, "requesters": 1, "requests": 3000,
         "maxtime": 600, "range_limit": 5, "getlinklist_history": 30}


def _run(url, data_dir, driver, **props):
    exp = {"experiment": f"lbc{driver}", "workload": "linkbench", "properties": {**PROPS, **props},
           "targets": [{"name": "t", "url": url}], "load": {"batch_size": 512},
           "run": {"processes": 1, "loops": 1, "status_interval_s": 60, "driver": driver}, "seed": 11}
    return run_lb(exp, data_dir)


# the rows each table is left with (times aside: the clock's)
ROW_QUERIES = {"link": "SELECT id1, id2, link_type, visibility, data, version FROM linktable ORDER BY 1, 2, 3",
               "count": "SELECT id, link_type, count, version FROM counttable ORDER BY 1, 2",
               "node": "SELECT id, type, version, data FROM nodetable ORDER BY 1"}


def _rows(url):
    with psycopg.connect(url) as c:
        return {t: c.execute(q).fetchall() for t, q in ROW_QUERIES.items()}


def log_counts(log: str) -> list[str]:
    """The per-requester line (requests, found / not found, history queries) and
    RANGE_SIZE's values of a linkbench.log (not its window's duration: a time)."""
    return [re.sub(r"sampleDuration = \d+ms|requests/second = \d+", "", ln.split("]", 1)[-1])
            for ln in log.splitlines() if "history queries" in ln or "RANGE_SIZE total" in ln]


def _outcome(rd):
    ret = pd.read_parquet(rd / "returns.parquet")
    ret = ret[ret["step"] == "r.L1"].groupby(["op", "status"])["count"].sum().to_dict()
    meta = json.loads((rd / "meta.json").read_text())
    return ret, meta


def check_paths_agree(url, data_dir, rows, path: str) -> None:
    """run.driver python, then c, on the graph of ``url`` (its tables' rows: ``rows(url)``):
    the same outcomes, requester lines and rows; meta's driver_path ``path`` for c."""
    out = {}
    for driver in ("python", "c"):
        rd = _run(url, data_dir, driver)
        out[driver] = (*_outcome(rd), rows(url), (rd / "linkbench.log").read_text())
    (rp, mp, dbp, logp), (rc, mc, dbc, logc) = out["python"], out["c"]
    assert mc.get("driver_path") == path and mp.get("driver_path") != path
    assert rp == rc and sum(rp.values()) == 3000
    assert ("GET_LINKS_LIST", "OK") in rp and ("UPDATE_LINK", "RETRY") in rp
    assert ("ADD_LINK", "RETRY") in rp and ("DELETE_LINK", "EMPTY") in rp
    for t in dbp:
        assert dbp[t] == dbc[t], t
    assert log_counts(logp) == log_counts(logc) and log_counts(logc)


def check_two_requesters(url, data_dir, path: str, fetch) -> None:
    """Two requesters in C, two timed loops: every step ok, no error, counttable = visible links."""
    rd = run_lb(lb_experiment("lbc2", url, run={"threads": [2], "processes": 1, "loops": 2, "loop_secs": 0.5,
                                                "status_interval_s": 60, "driver": "c"}), data_dir)
    assert json.loads((rd / "meta.json").read_text()).get("driver_path") == path
    check_run(rd, fetch)


def test_c_and_python_paths_agree(pg_own_db, data_dir):
    check_paths_agree(pg_own_db, data_dir, _rows, "c-libpq")


def test_c_path_two_requesters_timed_loops(pg_own_db, data_dir):
    check_two_requesters(pg_own_db, data_dir, "c-libpq", Fetch("postgres", lambda: psycopg.connect(pg_own_db)))


def test_c_path_refused_on_sqlite_in_one_line():
    from benchlib.workloads.linkbench.workload import LinkBenchWorkload
    assert "no C loop on sqlite" in LinkBenchWorkload.native_missing("sqlite")


def _c_requester(url: str):
    """A LinkBench requester on the C loop over libpq (seed 3), its tables made in ``url``."""
    from benchlib.registries.targets import target_class
    from benchlib.targets.base import Endpoint
    from benchlib.workloads.linkbench.bindings import binding
    from benchlib.workloads.linkbench.properties import from_properties
    from benchlib.workloads.linkbench.requests import RequestClient
    p = from_properties({"maxid1": MAXID1, "data_file": SMALL})
    st = binding(target_class("postgres").dialect, p)
    with psycopg.connect(url, autocommit=True) as c:
        for sql in st.create_tables():
            c.execute(sql)
    return RequestClient(p, st, Endpoint("postgres", {"conninfo": url}), 3, None, driver="c")


def _terminate(url: str, pid: int) -> None:
    """The backend ``pid`` ended by the server, and gone."""
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(%s)", (pid,))
        while c.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            time.sleep(0.01)


def test_c_requester_goes_on_after_its_connection_is_lost(pg_own_db):
    """The backend killed mid-chunk: the loop returns (F_BROKEN), the one reconnection
    policy opens a new connection, and the plan goes on there where it stood, every
    request counted once by the requester."""
    from benchlib.run.recording import reopen
    client = _c_requester(pg_own_db)
    chunk = client.next_chunk(200)
    ops, plan = client.native, client.native.plan(chunk)
    i, _, flags = ops.run(plan, 0, 1 << 62, None, (0, 0, 0.0), 0)
    client.ops_done(plan.results(0, i)[0])
    assert i == 200 and flags == 0
    plan = client.native.plan(client.next_chunk(200))
    _terminate(pg_own_db, client.native.conn.backend_pid)
    i1, _, flags = client.native.run(plan, 0, 1 << 62, None, (0, 0, 0.0), 0)
    client.ops_done(plan.results(0, i1)[0])
    assert flags & client.native.loop.F_BROKEN and 1 <= i1 < 200   # the first request on it
    reopen(client, "test")
    i2, _, flags = client.native.run(plan, i1, 1 << 62, None, (0, 0, 0.0), 0)
    client.ops_done(plan.results(i1, i2)[0])
    assert i2 == 200 and flags == 0
    assert client.counters()["requests"] == 400
    client.close()


def test_a_connection_lost_between_chunks_is_reopened_for_the_next_plan(pg_own_db):
    """The backend ended while the requester was between two chunks: the next plan's
    MULTIGET_LINK statements cannot be prepared on it. That is a lost connection (a
    ConnectionError, not a bad statement): the thread's plan_on reopens it by the one
    policy and makes the plan there, and the requests run (a kill test's run failed with
    "ValueError: m1: server closed the connection unexpectedly")."""
    from benchlib.run.native import plan_on
    client = _c_requester(pg_own_db)
    chunk = client.next_chunk(400)
    lengths = {len(a[2]) for code, a in zip(chunk.codes, chunk.args) if code == 4}
    assert lengths, "the chunk has no MULTIGET_LINK: nothing to prepare"
    old = client.native.conn
    _terminate(pg_own_db, old.backend_pid)
    with pytest.raises(ConnectionError, match=r"^m\d+: "):
        client.native.plan(chunk)
    plan = plan_on(client, chunk, "test")
    assert client.native.conn is not old and client.reconnects == 1
    i, _, flags = client.native.run(plan, 0, 1 << 62, None, (0, 0, 0.0), 0)
    client.ops_done(plan.results(0, i)[0])
    assert i == 400 and flags == 0
    assert client.counters()["requests"] == 400 and not client.counters()["errors"]
    client.close()


def test_a_plan_takes_multigets_up_to_the_properties_bound():
    """link_multiget_dist_max goes to 10,000 (properties.py): a MULTIGET_LINK of more than
    1,024 id2s is a request of the plan like any (it failed the plan, and freed the id2s'
    buffer it kept: a double free when the plan went); more than the bound, one error."""
    from benchlib.workloads.linkbench.bindings.postgres_native import _lbloop
    for n in (1025, 4000, 10_000):
        plan = _lbloop.Plan([4, 4], [(1, 1, list(range(3))), (2, 1, list(range(n)))])
        assert len(plan) == 2
        del plan
    for _ in range(3):   # the failed plan's buffers freed once (a double free aborts here)
        with pytest.raises(ValueError, match="request 1: 1 to 10000 id2s"):
            _lbloop.Plan([4, 4], [(1, 1, list(range(3))), (2, 1, list(range(10_001)))])


def test_multigets_of_more_than_1024_id2s_agree(pg_own_db, data_dir):
    """MULTIGET_LINKs of 1,025 to 1,100 id2s: the C loop's outcomes are the psycopg path's."""
    big = {"link_multiget_dist": "UniformDistribution", "link_multiget_dist_min": 1025,
           "link_multiget_dist_max": 1100, "requests": 400}
    rp, _ = _outcome(_run(pg_own_db, data_dir, "python", **big))
    rc, _ = _outcome(_run(pg_own_db, data_dir, "c", **big))
    assert rp == rc and sum(rp.values()) == 400 and rc.get(("MULTIGET_LINK", "ERROR"), 0) == 0
    assert sum(v for (op, _), v in rc.items() if op == "MULTIGET_LINK") > 0


def test_a_failed_requests_server_message_is_in_the_log_on_both_paths(pg_own_db, data_dir):
    """LinkBenchRequest's ``oneRequest error: OP error <message>`` line per failed request:
    a trigger refuses every link insert after the load; the C loop's lines carry the
    server's message as the psycopg path's do, one per ERROR counted."""
    def run(driver, name, **over):
        exp = {"experiment": f"lberr{name}", "workload": "linkbench",
               "properties": {**PROPS, "requests": 300},
               "targets": [{"name": "pg", "url": pg_own_db}], "load": {"batch_size": 512},
               "run": {"processes": 1, "loops": 1, "status_interval_s": 60, "driver": driver,
                       "max_error_ratio": 1.0}, "seed": 11, **over}
        return run_lb(exp, data_dir)
    run("python", "load", run={"skip": True})
    with psycopg.connect(pg_own_db, autocommit=True) as c:
        c.execute("CREATE FUNCTION review_no_links() RETURNS trigger LANGUAGE plpgsql AS "
                  "$$BEGIN RAISE EXCEPTION 'review: no link inserts here'; END$$")
        c.execute("CREATE TRIGGER review_no_links BEFORE INSERT ON linktable "
                  "FOR EACH ROW EXECUTE FUNCTION review_no_links()")
    said = {}
    for driver in ("python", "c"):
        rd = run(driver, driver, load={"skip": True})
        errors = sum(n for (op, st), n in _outcome(rd)[0].items() if st == "ERROR")
        lines = re.findall(r"^ERROR \S+ \S+ \[Thread-0\]: oneRequest error: (\w+) error (.*)$",
                           (rd / "linkbench.log").read_text(), re.M)
        assert 0 < len(lines) == min(errors, 100), (driver, errors, lines[:3])
        assert {m for _, m in lines} == {"review: no link inserts here"}, driver
        said[driver] = lines
    assert said["c"] == said["python"]
