"""LinkBench on the toy target (tests/toy: SQLite under the dialect ``toy``) through
``benchlib run``: with no binding file of its own, it runs through LinkBench's generic
SQL binding, which speaks through the toy's dialect (issue 36), and loads the graph its
properties describe; a toy dialect that is not SQL is refused in one line before
anything runs."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import toy  # registers the toy target (no binding of its own)

from benchlib import cli, load_results
from benchlib.targets.dialect import Dialect
from benchlib.workloads.linkbench.dists import Graph
from benchlib.workloads.linkbench.properties import from_properties

MAXID1 = 801
SMALL = Path(__file__).parent / "data" / "linkbench" / "Distribution_small.dat"


def write_yaml(tmp_path, name="lbtoy"):
    yaml = tmp_path / f"{name}.yaml"
    yaml.write_text(f"experiment: {name}\nworkload: linkbench\n"
                    f"properties: {{maxid1: {MAXID1}, loaders: 1, data_file: '{SMALL}'}}\n"
                    "targets: [{name: toy, url: toy}]\nload: {batch_size: 256}\n"
                    "run: {threads: [1], processes: 1, loops: 1, loop_secs: 0.3, "
                    "status_interval_s: 60}\nseed: 5\n")
    return yaml


def test_linkbench_runs_on_the_toy_target(tmp_path):
    data = tmp_path / "data"
    assert cli.main(["run", str(write_yaml(tmp_path)), "--data-dir", str(data),
                     "--no-progress"]) == 0
    steps = load_results(data / "lbtoy")["steps"].set_index("step")
    assert list(steps.index) == ["l.pre", "l.post", "r.L1"]
    assert (steps["status"] == "ok").all() and steps.loc["r.L1", "ops"] > 0
    p = from_properties({"maxid1": MAXID1, "data_file": str(SMALL)})
    ids = np.arange(p.startid1, p.maxid1)
    links = int(Graph(p).nlinks(ids).sum())
    counts = len(ids) * p.link_type_count
    assert steps.loc["l.pre", "ops"] == len(ids) + links + counts
    assert steps.loc["l.post", "ops"] == links
    conn = sqlite3.connect(next((data / "lbtoy").glob("toy-*")) / "db.sqlite")
    try:
        # the requests add nodes and links: at least what was loaded, counts one per row
        assert conn.execute("SELECT COUNT(*) FROM nodetable").fetchone()[0] >= len(ids)
        assert conn.execute("SELECT COUNT(*) FROM linktable").fetchone()[0] >= links
        n_counts, total = conn.execute("SELECT COUNT(*), SUM(count) FROM counttable").fetchone()
        visible = conn.execute("SELECT COUNT(*) FROM linktable WHERE visibility = 1").fetchone()
        assert n_counts >= counts and total == visible[0]
    finally:
        conn.close()


def test_a_toy_dialect_that_is_not_sql_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    # no binding of its own, and no SQL services for the generic one to speak through
    monkeypatch.setattr(toy.ToyTarget, "dialect", Dialect("toy", placeholder="?", sql=False))
    data = tmp_path / "data"
    code = cli.main(["run", str(write_yaml(tmp_path)), "--data-dir", str(data)])
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert code == 2 and len(err) == 1, err
    assert "linkbench does not run on target 'toy' (toy)" in err[0]
    assert not data.exists() or not any(data.rglob("*"))
