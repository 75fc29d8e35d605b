"""kv, ybio and LinkBench clients reconnect when the server ends their connections mid-run (issue 28):
PostgreSQL's pg_terminate_backend, MariaDB's KILL CONNECTION through mysqlclient and
PyMySQL, Redis's CLIENT KILL. Each test waits until the run's clients are at work (their
statements seen on the server), kills every one of their connections, and asserts that the
run ends ok, that each connection cost at most 2 errors, that the clients went on, and that
what the run counts as done is what the database holds (failed calls count nothing).
LinkBench's clients hold two connections each (reads and node writes; link writes): both
are killed, in the load and in the request loop, and its count rows still sum to the
visible links. SQLite has no connection to lose: it has no case here."""
from __future__ import annotations

import json
import math
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import driver_url
from killing import KILLERS, RUN_STATEMENT
from resuming import loop_at_work

from benchlib import load_results, run_experiment
from benchlib.params import validate
from benchlib.targets.base import make_target
from benchlib.workloads.linkbench.dists import Graph
from benchlib.workloads.linkbench.properties import from_properties

THREADS = 4




# the run loop's seconds; a second, longer run only where the killer caught no statement
# of the first loop (a pair of suites on 2 cores: the loop ended while the killer waited
# for its first second, and its PyMySQL statements are brief)
LOOP_SECS = (4, 12)


def _experiment(workload: str, url: str, name: str, loop_secs: float = LOOP_SECS[0]) -> dict:
    run = {"threads": [THREADS], "processes": 1, "loop_secs": loop_secs}
    if workload.startswith("ycsb"):   # ycsb: the C loop where there is one; ycsb-python: not
        props = {"table": name, "recordcount": 2000, "operationcount": 0, "readproportion": 0.5,
                 "updateproportion": 0.5, "requestdistribution": "uniform"}
        run["driver"] = "python" if workload.endswith("python") else "auto"
    elif workload.startswith("kv"):   # kv: the C loop over hiredis on Redis; kv-python: redis-py
        run["driver"] = "python" if workload.endswith("python") else "auto"
        # no removes: every read and update finds its key, so every error is a failed call
        props = {"a": 0.5, "b": 0.25, "d": 0.25, "key_count": 2000, "op_count": 0, "table": name}
    else:   # ybio: the C loop over libpq on PostgreSQL; ybio-python: psycopg
        run["driver"] = "python" if workload.endswith("python") else "auto"
        props = {"tab_prefix": f"{name}_", "tab_rows": 2000, "batch_size": 20, "pct_update": 30,
                 "status_every_s": 0}
    return validate({"experiment": name, "workload": workload.split("-")[0], "properties": props,
                     "targets": [{"name": "t", "url": url}], "load": {"threads": 1},
                     "run": run, "seed": 3},
                    name)


def _query(url: str, sql: str):
    target = make_target("q", url)
    target.start()
    try:
        conn = target.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return cur.fetchone()
        finally:
            conn.close()
    finally:
        target.stop()


def _stored_kv(url: str, kind: str, table: str) -> int:
    if kind == "redis":
        import redis
        r = redis.Redis.from_url(url)
        try:
            keys = list(r.scan_iter(match=f"{table}:*", count=5000))
            n = r.zcard(f"{table}:index")
            assert len(keys) - 1 == n   # the index kept in step with the keys
            r.unlink(*keys, table)   # and benchlib's mark
            return n
        finally:
            r.close()
    return _query(url, f"SELECT count(*) FROM {make_target('q', url).dialect.quote_ident(table)}")[0]


def _figures(workload: str, url: str, step, killed: list) -> None:
    """The case's figures in one line (pytest -s shows them): kills, errors, ops/s."""
    print(f"\nKILLED {workload} {url.split(':', 1)[0]}: {len(killed)} connections killed, "
          f"{step.errors} errors ({step.errors / len(killed):.2f} per kill), "
          f"{step.ops_per_s:,.0f} ops/s")


def _in_step(folder: Path, step: str, loop_s: float, first_second: bool = False):
    """A function that says the run's ``step`` (``loop_s`` long) is at work, from the run's
    own folder (:func:`resuming.loop_at_work`: a quarter of the loop after the step before
    it saved, or its first second): the killers wait on it, not on a count of connections
    that preflight, the load, the controller and the sampler may make up before the loop,
    nor on the loop's first line alone, which comes a second late (a second is held until
    the next is complete). ``first_second``: only once its first second is on disk, for a
    loop long enough to be killed after it (a client that has not started its requests
    when the step before is a quarter loop old reopens a killed connection before its
    first request, and nothing fails)."""
    probe = loop_at_work(folder, step, math.inf if first_second else loop_s / 4)
    return lambda: probe() is not None


def _run_and_kill(workload: str, url: str, kind: str, tmp_path):
    for loop_secs in LOOP_SECS:
        name = f"rc_{workload.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        exp = _experiment(workload, url, name, loop_secs)
        pattern = RUN_STATEMENT[workload.split("-")[0]].format(name=name)
        killed: list = []
        ready, over = _in_step(tmp_path / "d" / name, "r.L1", loop_secs), threading.Event()
        killer = threading.Thread(target=lambda: killed.extend(
            KILLERS[kind](url, pattern, ready=ready, over=over.is_set)))
        killer.start()
        try:
            res = run_experiment(exp, tmp_path / "d", progress=False)
        finally:
            over.set()   # a killer that saw nothing stops looking (not its 120 s)
            killer.join()
        assert res.ok, res.runs
        if killed:   # under load the killer may catch fewer than THREADS before the loop ends
            break
    assert killed, f"the killer saw no statement of the run loop in {LOOP_SECS} s loops"
    t = load_results(tmp_path / "d" / name)
    run = t["steps"].set_index("step").loc["r.L1"]
    # redis-py's pool replaces a connection the server closed between two commands before
    # the next is sent (it sees the closed socket): no operation is cut, none counts; a
    # kill that lands mid-command is an error like any other library's
    least = 0 if kind == "redis" and workload.endswith("python") else 1
    assert run.status == "ok" and least <= run.errors <= 2 * len(killed)
    _figures(workload, url, run, killed)
    iv = t["intervals"][t["intervals"].step == "r.L1"]
    assert iv[iv.second == iv.second.max() - 1]["ops"].sum() > 0   # the clients went on
    return name, t


def _check_kv(name, t, url, kind):
    lat = t["latency"].set_index(["step", "op"])
    ok = lat["count"] - lat["errors"]
    # an insert cut by the kill may have been done before its reply was lost
    stored = _stored_kv(url, kind, name) - 2000
    assert ok[("r.L1", "INSERT")] <= stored <= lat.loc[("r.L1", "INSERT"), "count"]


def _check_ycsb(name, t, url):
    """Reads and updates only: the table holds its records, whatever was lost."""
    assert _query(url, f"SELECT count(*) FROM {make_target('q', url).dialect.quote_ident(name)}")[0] == 2000


def _check_ybio(name, t, url):
    (b,) = t["benchruns"].to_dict("records")
    lat = t["latency"].set_index("op")
    ok_batches = (lat.loc[["READ-BATCH", "UPDATE-BATCH"], "count"]
                  - lat.loc[["READ-BATCH", "UPDATE-BATCH"], "errors"]).sum()
    assert b["num_rows"] == 20 * ok_batches            # rows of succeeded calls only
    table = make_target("q", url).dialect.quote_ident(f"{name}_0001")
    assert _query(url, f"SELECT count(*) FROM {table}")[0] == 2000
    assert b["num_updated"] == 20 * (lat.loc["UPDATE-BATCH", "count"] - lat.loc["UPDATE-BATCH", "errors"])
    assert b["errors"] >= 1


# a small out-degree distribution (the maintained one gives a node 4.18 M links at any size)
SMALL_DIST = str(Path(__file__).parents[1] / "data" / "linkbench" / "Distribution_small.dat")


def _lb_experiment(url: str, name: str, phase: str, driver: str = "auto") -> dict:
    """A LinkBench graph in tables of the test's own; ``load``: a graph big enough for the
    kill to meet its loaders (node loader, one link loader), no request loop."""
    props = {"maxid1": 40001 if phase == "load" else 3001, "loaders": 1, "data_file": SMALL_DIST,
             **{t: f"{name}_{t}" for t in ("linktable", "counttable", "nodetable")}}
    run = ({"skip": True} if phase == "load" else
           # 8 s: its killer starts once the loop's first second is on disk (_in_step), ~2 s in
           # (a second is held until the next is complete), and kills within ~1.3 s (its
           # gathering and settling); a 4-s loop at load 9 saw its kills land after the last
           # request. Not a quarter loop after the step before saved: on a host where a round
           # trip costs a client ~50 µs of CPU, the 4 requesters were still preparing their
           # statements then, and each reopened its killed connections before its first
           # request: no request failed (both suites of a pair, session 19)
           {"threads": [THREADS], "processes": 1, "loops": 1, "loop_secs": 8, "driver": driver})
    return validate({"experiment": name, "workload": "linkbench", "properties": props,
                     "targets": [{"name": "t", "url": url}], "load": {"batch_size": 256},
                     "run": run, "seed": 3}, name)


LOAD_STATEMENT = {"mysql": "INSERT INTO %", "postgres": "COPY %"}   # LinkBench's loaders


def _run_and_kill_lb(url: str, kind: str, phase: str, tmp_path, driver: str = "auto"):
    """Kill every connection of LinkBench's clients (two per requester) mid-load or mid-run;
    each lost connection costs at most 2 errors; the graph's counts hold."""
    name = f"rc_lb_{uuid.uuid4().hex[:8]}"
    exp = _lb_experiment(url, name, phase, driver)
    want = 2 if phase == "load" else 2 * THREADS
    killed: list = []
    # a load's loaders by their own statements: the controller's schema work and its checks
    # of the tables (issue 41) name the tables too, and are over before the load
    pattern = (LOAD_STATEMENT[kind] if phase == "load" else "%") + name
    # the run's clients once its loop is at work (the load's loaders, by their statements,
    # are theirs alone: a load of a few seconds is not waited for)
    ready = None if phase == "load" else _in_step(tmp_path / "d" / name, "r.L1",
                                                      exp.run.loop_secs, first_second=True)
    killer = threading.Thread(target=lambda: killed.extend(
        KILLERS[kind](url, pattern, want, 120, ready=ready)))
    killer.start()
    res = run_experiment(exp, tmp_path / "d", progress=False)
    killer.join()
    assert res.ok, res.runs
    assert killed
    t = load_results(tmp_path / "d" / name)
    step = t["steps"].set_index("step").loc["l.pre" if phase == "load" else "r.L1"]
    assert step.status == "ok" and 1 <= step.errors <= 2 * len(killed)
    if driver == "c":   # the C loop's, not psycopg's
        assert json.loads(next((tmp_path / "d" / name).glob("*/meta.json")).read_text())["driver_path"] == \
            {"postgres": "c-libpq", "mysql": "c-libmariadb"}[kind]
    _figures(f"linkbench-{phase}", url, step, killed)
    q = make_target("q", url).dialect.quote_ident
    link, count, node = (q(f"{name}_{t}") for t in ("linktable", "counttable", "nodetable"))
    visible = _query(url, f"SELECT count(*) FROM {link} WHERE visibility = 1")[0]
    assert _query(url, f"SELECT coalesce(sum(count), 0) FROM {count}")[0] == visible
    assert _query(url, f"SELECT count(*) FROM {count} c WHERE count <> (SELECT count(*) FROM "
                       f"{link} l WHERE l.id1 = c.id AND l.link_type = c.link_type "
                       f"AND l.visibility = 1)")[0] == 0
    if phase == "load":   # the failed batches were sent again: the whole graph is there
        p = from_properties(exp.properties)
        ids = np.arange(p.startid1, p.maxid1)
        assert _query(url, f"SELECT count(*) FROM {node}")[0] == len(ids)
        assert visible == int(Graph(p).nlinks(ids).sum())
    return step


def _pair_url(request, kind: str, library: str) -> str:
    if kind == "postgres":
        return request.getfixturevalue("pg_own_db")
    if kind == "mysql":
        return driver_url(request.getfixturevalue("mysql_own_db"), library)
    return request.getfixturevalue("redis_url")


_MARK = {"postgres": [pytest.mark.postgres], "mysql": [pytest.mark.mysql], "redis": []}


def _marks(workload: str, kind: str, library: str) -> list:
    """The server's marker, and the optional client library the pair goes through
    (mysqlclient: the pair skips, saying so, on a machine without it)."""
    return _MARK[kind] + ([pytest.mark.requires("mysqlclient")] if library == "c" else
                          [pytest.mark.requires(f"c-{library}")] if library in ("lbloop", "lbmyloop") else [])
# every workload × target × client library whose connection can be lost (SQLite's cannot:
# it is a file in the client's process)
PAIRS = [(w, k, lib) for w in ("ycsb", "ycsb-python", "kv", "ybio", "linkbench-load", "linkbench")
         for k, lib in (("postgres", "psycopg"), ("mysql", "c"), ("mysql", "python"))]
PAIRS.remove(("ycsb-python", "mysql", "python"))   # PyMySQL: the Python loop anyway
PAIRS[8:8] = [("kv", "redis", "hiredis"), ("kv-python", "redis", "redis-py")]
# LinkBench's C loop (run.driver: c): a reopened connection goes on with the plan in
# progress, its MULTIGET_LINK statements prepared there too (449 of them failed before)
PAIRS.append(("linkbench-c", "postgres", "lbloop"))
PAIRS.append(("linkbench-c", "mysql", "lbmyloop"))   # over libmariadb: its templates made again
PAIRS.insert(PAIRS.index(("ybio", "mysql", "python")) + 1, ("ybio-python", "postgres", "psycopg"))


@pytest.mark.slow
@pytest.mark.parametrize("workload,kind,library",
                         [pytest.param(*pr, marks=_marks(*pr), id="-".join(pr)) for pr in PAIRS])
def test_kill_connections_mid_run(workload, kind, library, request, tmp_path):
    url = _pair_url(request, kind, library)
    if workload.startswith("linkbench"):
        _run_and_kill_lb(url, kind, "load" if workload.endswith("load") else "run", tmp_path,
                         driver="c" if workload.endswith("-c") else "python")   # the others: the Python path
        return
    name, t = _run_and_kill(workload, url, kind, tmp_path)
    if workload.startswith("ycsb"):
        _check_ycsb(name, t, url)
    else:
        _check_kv(name, t, url, kind) if workload.startswith("kv") else _check_ybio(name, t, url)
