"""LinkBench's threads as run: ``-p requesters=2`` and ``--threads 2`` on a config that says
8 are one thing — the run's name (``t2``), meta.json, ``benchlib list``, steps.parquet's
threads and linkbench.log's ``Requester thread`` lines say the 2 that ran; the loaders
likewise (``Starting loaders``, the load step's threads: the node loader and the others).
The same run loads as Java does (``load.mode java``)."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from benchlib import cli, load_results
from benchlib.params import ParameterError, validate
from benchlib.property_run import experiment_from_property_file

SMALL = str(Path(__file__).parent / "data" / "linkbench" / "Distribution_small.dat")


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "LinkConfigSmall.properties"
    cfg.write_text("linkstore = com.facebook.LinkBench.LinkStorePgsql\n"
                   f"maxid1 = 1501\nloaders = 3\nrequesters = 8\nmaxtime = 1\ndata_file = {SMALL}\n"
                   "progressfreq = 100\ndisplayfreq = 100\n")
    return cfg


def _two_everywhere(rd: Path, capsys, d: Path) -> None:
    """The run folder says the 2 requesters that ran: its name, meta.json, steps.parquet,
    linkbench.log's requester and final lines, ``benchlib list``."""
    assert "-t2-" in rd.name
    assert json.loads((rd / "meta.json").read_text())["threads"] == 2
    steps = load_results(rd)["steps"].set_index("step")
    assert steps.loc["r.L1", "threads"] == 2 and steps.loc["l.pre", "threads"] == 2   # 1 node + 1 link loader
    log = (rd / "linkbench.log").read_text()
    assert len(re.findall(r"Requester thread #\d+ started", log)) == 2
    assert sorted(re.findall(r"ThreadID = (\d+) total requests = ", log)) == ["0", "1"]
    assert re.search(r"\[main\]: Starting loaders 1$", log, re.M)
    assert re.search(r"LOAD_NODE_BULK count = \d+ .* threads = 2$", log, re.M)
    assert re.search(r"GET_NODE count = \d+ .* threads = 2$", log, re.M)
    capsys.readouterr()
    assert cli.main(["list", "--data-dir", str(d)]) == 0
    row = [ln for ln in capsys.readouterr().out.splitlines() if rd.name in ln]
    assert row and re.search(r"\s2\s", row[0]), row


@pytest.mark.parametrize("how", [["-p", "requesters=2"], ["--threads", "2"]])
def test_threads_given_either_way_are_the_runs_everywhere(tmp_path, capsys, how):
    cfg = _config(tmp_path)
    exp = experiment_from_property_file(cfg, "sqlite", 2 if how[0] == "--threads" else None,
                                        [] if how[0] == "--threads" else ["requesters=2"])
    assert exp.run.threads == [2] and str(exp.workload_properties()["requesters"]) == "2"
    d = tmp_path / "d"
    java = ["-p", "load.mode=java"] if how[0] == "-p" else []   # the load as Java's too, in one of them
    assert cli.main(["run", str(cfg), *how, "-p", "loaders=1", *java, "--target", "sqlite",
                     "--data-dir", str(d), "--no-progress"]) == 0
    (rd,) = [p for p in (d / cfg.stem).iterdir() if p.is_dir()]
    _two_everywhere(rd, capsys, d)
    if not java:
        return
    # load.mode java: INSERTs of 1024 rows into tables made with their index (l.post finds it)
    steps = load_results(rd)["steps"].set_index("step")
    lat = load_results(rd)["latency"].query("step == 'l.pre'").set_index("op")["count"]
    links = int(steps.loc["l.post", "ops"])
    assert lat["LOAD_LINKS_BULK"] == -(-links // 1024) and lat["LOAD_COUNTS_BULK"] == -(-1500 * 2 // 1024)
    assert "Load mode java: INSERTs of 1024 rows into tables with their index" in (rd / "linkbench.log").read_text()
    with sqlite3.connect(next(rd.glob("*.sqlite"))) as c:
        assert c.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                         "AND name LIKE '%id1_type'").fetchone()[0] == 1


@pytest.mark.parametrize("given", [["--threads", "3", "-p", "requesters=2"],
                                   ["--threads", "2", "-p", "properties.requesters=3"]])
def test_threads_and_requesters_that_disagree_are_one_line(tmp_path, capsys, given):
    """Two counts of the same threads: refused before anything runs, one line, exit 2."""
    cfg = _config(tmp_path)
    assert cli.main(["run", str(cfg), *given, "--target", "sqlite", "--data-dir", str(tmp_path / "d"),
                     "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is the run's threads; give one of them" in err[0], err
    assert "Traceback" not in err[0] and not (tmp_path / "d").exists()
    # the same count given both ways is one count
    assert cli.main(["run", str(cfg), "--threads", "2", "-p", "requesters=2", "--target", "sqlite",
                     "--dry-run"]) == 0
    assert "-t2-" in capsys.readouterr().out


def test_a_yaml_with_requesters_runs_them_and_refuses_other_threads():
    base = {"experiment": "y", "workload": "linkbench", "targets": [{"name": "s", "url": "sqlite"}],
            "properties": {"maxid1": 1501, "requesters": 3, "data_file": SMALL}}
    assert validate(base, "test").run.threads == [3]
    with pytest.raises(ParameterError, match="requesters = 3 and run.threads"):
        validate({**base, "run": {"threads": [1, 4]}}, "test")
    assert validate({**base, "run": {"threads": [3]}}, "test").run.threads == [3]



def test_load_mode_is_refused_by_a_workload_without_it():
    with pytest.raises(ParameterError, match="load.mode java: ycsb loads as fast"):
        validate({"experiment": "y", "targets": [{"name": "s", "url": "sqlite"}], "load": {"mode": "java"}}, "test")


@pytest.mark.postgres
def test_postgres_java_load_writes_the_graph_into_indexed_tables(pg_own_db, tmp_path):
    """load.mode java on PostgreSQL (an INSERT of unnest arrays per 1024 rows): every node,
    link and count of the graph, with the index there before l.post."""
    import psycopg

    from benchlib import run_experiment
    from benchlib.workloads.linkbench.dists import Graph
    from benchlib.workloads.linkbench.properties import from_properties
    props = {"maxid1": 1501, "loaders": 1, "data_file": SMALL}
    exp = {"experiment": "lbpgjava", "workload": "linkbench", "load": {"mode": "java"}, "properties": props,
           "targets": [{"name": "pg", "url": pg_own_db}], "run": {"skip": True}, "seed": 5}
    assert run_experiment(validate(exp, "test"), tmp_path / "d", progress=False).ok
    with psycopg.connect(pg_own_db) as c:
        rows = [c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("nodetable", "linktable", "counttable")]
        links = c.execute("SELECT sum(count) FROM counttable").fetchone()[0]
        index = c.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'linktable_id1_type'").fetchone()[0]
    assert rows == [1500, Graph(from_properties(props)).total_links(), 3000] and links == rows[1] and index == 1
