"""LinkBench (workload ``linkbench``) on every SQL target: load, index, two request
loops on a small graph; counttable agrees with the visible links; the operation mix
and the loaded out-degree are as configured; bad input is one line and exit 2."""
from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, ROOT, driver_url

from benchlib import load_results, run_experiment
from benchlib.params import validate
from benchlib.workloads.linkbench.dists import Graph
from benchlib.workloads.linkbench.properties import (
    PERCENTAGES,
    from_properties,
    read_config,
)
from benchlib.registries.targets import target_class
from benchlib.workloads.linkbench.bindings import binding

MAXID1 = 1501
# a small out-degree distribution: the maintained one gives one node 4.18 M links at any
# maxid1 (as the Java loader does), too many for a test's graph
SMALL = str(DATA / "linkbench" / "Distribution_small.dat")


def lb_experiment(name: str, url: str, props: dict | None = None, **over) -> dict:
    exp = {"experiment": name, "workload": "linkbench",
           "properties": {"maxid1": MAXID1, "loaders": 1, "data_file": SMALL, **(props or {})},
           "targets": [{"name": name, "url": url}],
           "load": {"batch_size": 512},
           "run": {"threads": [2], "processes": 1, "loops": 2, "loop_secs": 0.3,
                   "status_interval_s": 60},
           "seed": 7}
    exp.update(over)
    return exp


def run_lb(exp_dict: dict, data_dir: Path) -> Path:
    exp = validate(exp_dict, "test")
    res = run_experiment(exp, data_dir, progress=False)
    (run_id,) = res.runs
    rd = data_dir / exp.experiment / run_id
    assert res.ok, (res.runs, (rd / "meta.json").read_text()[-600:])
    return rd


def check_run(rd: Path, fetch) -> None:
    """Steps, ops and the count table of a load + index + 2 loops run."""
    t = load_results(rd)
    steps = t["steps"].set_index("step")
    assert list(steps.index) == ["l.pre", "l.post", "r.L1", "r.L2"]
    assert (steps["status"] == "ok").all() and (steps["errors"] == 0).all()
    p = from_properties({"maxid1": MAXID1, "data_file": SMALL})
    ids = np.arange(p.startid1, p.maxid1)
    links = int(Graph(p).nlinks(ids).sum())
    nodes, counts = len(ids), len(ids) * p.link_type_count
    assert steps.loc["l.pre", "ops"] == nodes + links + counts      # rows, not batches
    assert steps.loc["l.post", "ops"] == links
    lat = t["latency"].set_index(["step", "op"])
    assert lat.loc[("l.pre", "LOAD_NODE_BULK"), "count"] == -(-nodes // 512)
    run_ops = t["latency"][t["latency"]["step"] == "r.L1"]
    assert run_ops["count"].sum() == steps.loc["r.L1", "ops"] > 0
    # every op of the mix has its row, even a rare one (MULTIGET_LINK is 0.5 %) that a
    # short loop gave no turn: the lines' columns do not depend on the dice
    assert set(run_ops["op"]) == set(from_properties({}).mix)
    assert {"GET_LINKS_LIST", "GET_NODE", "UPDATE_NODE", "ADD_LINK"} <= set(run_ops["op"])
    st = binding(target_class(fetch.dialect).dialect, p)
    assert fetch(st.count_mismatches()) == []   # count = visible links for every (id1, type)
    assert fetch(f"SELECT COUNT(*) FROM {st.count}")[0][0] == counts


class Fetch:
    def __init__(self, dialect, connect):
        self.dialect, self.connect = dialect, connect

    def __call__(self, sql):
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            conn.close()


def test_sqlite_load_index_requests(data_dir, tmp_path):
    # loops of a request count, not of 0.3 s: the summary's per-operation columns are the
    # operations that ran, and a 0.3-s loop on a busy machine (two suites side by side)
    # ran too few requests for every kind of Java's log to be among them
    exp = lb_experiment("lbsq", "sqlite", {"requests": 1500, "maxtime": 600})
    del exp["run"]["loop_secs"]
    rd = run_lb(exp, data_dir)
    check_summary_columns(rd, tmp_path)
    check_run(rd, Fetch("sqlite", lambda: sqlite3.connect(rd / "db.sqlite")))
    conn = sqlite3.connect(rd / "db.sqlite")
    idx = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'linktable_id1_type'").fetchone()[0]
    assert "id1, link_type, visibility, time, id2, version, data" in idx
    ret = pd.read_parquet(rd / "returns.parquet")
    assert set(ret["status"]) <= {"OK", "RETRY", "EMPTY", "ERROR"} and "RETRY" in set(ret["status"])
    n = ret[ret["step"] == "r.L1"]["count"].sum()
    assert n == load_results(rd)["steps"].set_index("step").loc["r.L1", "ops"]
    assert "add_to_upd" in (rd / "linkbench.txt").read_text()


@pytest.mark.postgres
def test_postgres_by_url(pg_own_db, data_dir):
    import psycopg
    rd = run_lb(lb_experiment("lbpg", pg_own_db), data_dir)
    check_run(rd, Fetch("postgres", lambda: psycopg.connect(pg_own_db)))


@pytest.mark.embedded
def test_embedded_postgres(data_dir):
    t = load_results(run_lb(lb_experiment("lbemb", "embedded-postgres"), data_dir))
    steps = t["steps"].set_index("step")
    assert list(steps.index) == ["l.pre", "l.post", "r.L1", "r.L2"]
    assert (steps["errors"] == 0).all() and steps.loc["r.L2", "ops"] > 0


@pytest.mark.mysql
def test_mariadb(mysql_own_db, mysql_driver, data_dir):
    import pymysql
    db = mysql_own_db.rsplit("/", 1)[1]
    rd = run_lb(lb_experiment("lbmy", driver_url(mysql_own_db, mysql_driver)), data_dir)
    fetch = Fetch("mysql", lambda: pymysql.connect(host="127.0.0.1", user="root", database=db))
    check_run(rd, fetch)
    # linktable partitioned as the maintained client's README creates it (link_partitions)
    assert fetch("SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = "
                 "DATABASE() AND TABLE_NAME = 'linktable'") == [(16,)]
    st = binding(target_class("mysql").dialect, from_properties({}))
    assert "PARTITION" not in st.create_tables("InnoDB", 0)[0]


def test_request_mix_matches_config(data_dir):
    """20,000 requests (2 × 10,000): each op's share within 1 point of its percentage."""
    exp = lb_experiment("lbmix", "sqlite", {"maxid1": 501, "requests": 10000},
                        run={"threads": [2], "processes": 1, "loops": 1,
                             "status_interval_s": 60})
    rd = run_lb(exp, data_dir)
    lat = load_results(rd)["latency"]
    run = lat[(lat["step"] == "r.L1") & ~lat["op"].str.startswith("Intended-")]
    total = run["count"].sum()
    assert total == 20000
    mix = from_properties({}).mix
    got = run.set_index("op")["count"] / total
    assert set(got.index) == set(mix)   # all ten operations ran
    for op, want in mix.items():
        assert abs(got.get(op, 0.0) - want) < 0.01, (op, got.get(op), want)


def test_loaded_outdegree_is_the_java_loaders(data_dir):
    """nlinks_func=real: each id1 has the links the Java loader gives it (the data_file's
    out-degree at its shuffled rank, at least one per type, split evenly among the types);
    reciprocal: n / (id1 - startid1) links, the first id n."""
    exp = lb_experiment("lbdeg", "sqlite", {"maxid1": 4001}, run={"skip": True})
    rd = run_lb(exp, data_dir)
    conn = sqlite3.connect(rd / "db.sqlite")
    deg = dict(conn.execute("SELECT id1, COUNT(*) FROM linktable GROUP BY id1").fetchall())
    d = np.array([deg.get(i, 0) for i in range(1, 4001)])
    p = from_properties({"maxid1": 4001, "data_file": SMALL})
    assert (d == Graph(p).nlinks(np.arange(1, 4001))).all()
    # the small file: 92 % of the nodes at most 3 links, so 2 (one per type), the top one 100
    assert abs((d <= 2).mean() - 0.92) < 0.01 and d.max() == 100 and d.min() == 2
    per_type = conn.execute("SELECT COUNT(*) FROM linktable GROUP BY id1, link_type").fetchall()
    assert {n for (n,) in per_type} == {x // 2 for x in set(d.tolist())}
    g = Graph(from_properties({"maxid1": 4001, "nlinks_func": "reciprocal"}))
    r = np.sort(g.nlinks(np.arange(1, 4001)))[::-1]
    assert list(r[:4]) == [4000, 4000, 2000, 1334]


@pytest.mark.parametrize("over, named", [
    (["-p", "addlink=50"], "sum to 100"),
    (["-p", "maxid1=1"], "maxid1"),
    (["-p", "read_function=com.facebook.LinkBench.distributions.FooDistribution"],
     "read_function"),
    (["-p", "workload_file=nope/LinkConfigPgsql.properties"], "LinkConfigPgsql.properties"),
    (["-p", "link_type_cont=3"], "link_type_count"),
])
def test_bad_input_is_one_line_exit_2(over, named, tmp_path, capsys):
    from benchlib.cli import main
    data = tmp_path / "out"
    code = main(["run", str(ROOT / "parameters" / "linkbench.yaml"), *over, "--data-dir", str(data)])
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and named in lines[0], err
    assert not data.exists() or not any(data.rglob("*"))


def test_bad_input_from_the_shell(tmp_path):
    """The same through the installed entry point: exit 2, one line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "benchlib.cli", "run",
                           str(ROOT / "parameters" / "linkbench.yaml"), "-p", "maxid1=0",
                           "--data-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "maxid1" in proc.stderr and not (tmp_path / "out").exists()


def test_linkbench_config_runs_as_it_is(tmp_path, capsys):
    """A LinkConfig file naming its workload_file: merged, the config's values win, and
    connection keys (the password) never reach the properties."""
    home = tmp_path / "linkbench"
    (home / "config").mkdir(parents=True)
    (home / "config" / "FBWorkload.properties").write_text(
        "maxid1 = 10000001\nlink_type_count = 2\nnlinks_func = real\n"
        "read_function = com.facebook.LinkBench.distributions.ZipfDistribution\nread_shape = 0.8\n")
    cfg = home / "config" / "LinkConfigPgsql.properties"
    cfg.write_text("workload_file = config/FBWorkload.properties\nhost = h\npassword = secret\n"
                   "dbid = linkdb\nmaxid1 = 2001\nloaders = 3\nrequesters = 4\n"
                   "linkstore = com.facebook.LinkBench.LinkStorePgsql\n")
    props = read_config(cfg)
    assert props["maxid1"] == "2001" and props["link_type_count"] == "2"
    assert "password" not in props and "host" not in props
    p = from_properties(props)
    assert (p.maxid1, p.loaders, p.requesters, p.read_function) == (2001, 3, 4, "ZipfDistribution")
    exp = validate({"experiment": "cfg", "workload": "linkbench", "workload_file": str(cfg),
                    "targets": [{"name": "s", "url": "sqlite"}]}, "test")
    assert exp.workload_properties()["maxid1"] == "2001"
    assert sum(getattr(p, k) for k in PERCENTAGES) == pytest.approx(100)
    from benchlib.cli import (
        main,  # `benchlib run LinkConfigPgsql.properties`, as LinkBench -c
    )
    assert main(["run", str(cfg), "--dry-run", "--data-dir", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "workload linkbench" in out and "-t4-" in out and "l.pre l.post r.L1" in out


def check_summary_columns(rd: Path, tmp_path: Path) -> None:
    """benchlib summary on an imported LinkBench run and on a benchlib run: same headers."""
    from benchlib import summaries
    from benchlib.importers import import_output
    src = DATA / "linkbench"
    imp = import_output("linkbench", [src / "pgsql_load.stdout.log",
                                      src / "pgsql_request.stdout.log"], into=tmp_path / "imp")

    def headers(path, kind):
        out = summaries.summarize(load_results(path), kind)
        blocks = [b.strip().splitlines() for b in out.strip().split("\n\n")]
        return {b[0].strip(): re.split(r"\s+", b[1].strip()) for b in blocks if len(b) > 1}

    for kind in ("rt", "run", "eff.op", "eff.sec"):
        ours, theirs = headers(rd, kind), headers(imp, kind)
        for step in ("l.pre." + kind, "r.L1." + kind):
            assert step in ours and step in theirs and ours[step] == theirs[step], (kind, step)
    assert headers(rd, "rt")["l.pre.rt"][2:11] == "n9 nx nm l9 lx lm c9 cx cm".split()


def test_steep_zipf_and_targets_without_sql():
    """A Zipf shape above 1 (numpy's sampler) stays in range; a target that is not SQL
    is refused before anything runs."""
    from benchlib.workloads.linkbench.dists import node_access
    p = from_properties({"maxid1": 101, "node_read_shape": 1.5})
    ids = node_access(p, np.random.default_rng(1), "node_read").next(5000)
    assert ids.min() >= 1 and ids.max() < 101 and np.bincount(ids).max() > 1000
    with pytest.raises(Exception, match="basic"):
        validate(lb_experiment("lbb", "basic"), "test")
