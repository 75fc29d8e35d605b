"""Index steps that can run twice (issue 41, 5): LinkBench killed as its index appears
resumes without --force; two LinkBench graphs of other table names load into one
database; an index of the name with other columns, or on another table, is refused in
one line; on SQLite, PostgreSQL and MariaDB."""
from __future__ import annotations

import os
import signal

import pytest
import yaml
from quietly import run_quietly
from resuming import check_resumed, cli, wait_until
from test_linkbench import lb_experiment
from test_resume import PACED

from benchlib import load_results
from benchlib.targets.base import TargetError, make_target
from benchlib.workloads.indexes import ensure_index, index_name
from benchlib.workloads.linkbench.bindings.base import INDEX_COLS

COLS = [c.strip() for c in INDEX_COLS.split(",")]
# paced (tests/test_resume.py's PACED): the loops are asked to run, not to run flat out
RUN = {"threads": [2], "processes": 1, "loops": 2, "loop_secs": 1, "status_interval_s": 60, **PACED}


def _target(url: str, tmp_path):
    if url == "sqlite":   # one file both experiments share
        url = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    t = make_target("t", url, None, tmp_path)
    t.start()
    return t


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
def any_db(request, tmp_path):
    """A database of this test's own on each SQL target."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.sqlite'}"
    return request.getfixturevalue("pg_own_db" if request.param == "postgres" else "mysql_own_db")


def _graph(name: str, url: str, prefix: str, run: dict) -> dict:
    return lb_experiment(name, url, {"linktable": f"{prefix}_link", "counttable": f"{prefix}_count",
                                     "nodetable": f"{prefix}_node"}, run=run)


# what the two graphs are asked: their load and index (l.pre, l.post) side by side in one
# database; the second graph's one loop runs on its tables beside the first graph's
GRAPH_RUNS = {"ga": {**RUN, "skip": True}, "gb": {**RUN, "loops": 1}}


@pytest.mark.slow
def test_two_graphs_of_other_table_names_load_into_one_database(any_db, tmp_path):
    for prefix in ("ga", "gb"):
        run_quietly(_graph(f"two{prefix}", any_db, prefix, GRAPH_RUNS[prefix]), tmp_path / "data")
    target = _target(any_db, tmp_path)
    conn = target.connect()
    try:
        for prefix in ("ga", "gb"):
            table = f"{prefix}_link"
            assert target.index_columns(conn, table, index_name(table, "id1_type")) == COLS
        assert target.index_columns(conn, "ga_link", "gb_link_id1_type") is None
    finally:
        conn.close()
        target.stop()


def test_an_index_step_runs_twice_and_refuses_another_index_of_its_name(any_db, tmp_path):
    target = _target(any_db, tmp_path)
    q = target.quote_ident
    conn = target.connect()
    try:
        cur = conn.cursor()
        for t in ("ix_a", "ix_b"):
            cur.execute(f"DROP TABLE IF EXISTS {q(t)}")
            cur.execute(f"CREATE TABLE {q(t)} (x integer, y integer)")
        make = f"CREATE INDEX IF NOT EXISTS {q('ix_a_xy')} ON {q('ix_a')} (x, y)"
        for _ in range(2):   # the second finds it made, with its columns: nothing to say
            ensure_index(target, conn, "ix_a", "ix_a_xy", ["x", "y"], make)
        assert target.index_columns(conn, "ix_a", "ix_a_xy") == ["x", "y"]
        with pytest.raises(TargetError, match=r"index ix_a_xy on ix_a has columns \(x, y\), not \(y\)"):
            ensure_index(target, conn, "ix_a", "ix_a_xy", ["y"], make)
        if "mysql" not in any_db:   # MariaDB's index names are the table's own: never taken
            other = f"CREATE INDEX IF NOT EXISTS {q('ix_a_xy')} ON {q('ix_b')} (x, y)"
            with pytest.raises(TargetError, match="taken by another table's index"):
                ensure_index(target, conn, "ix_b", "ix_a_xy", ["x", "y"], other)
        for t in ("ix_a", "ix_b"):
            cur.execute(f"DROP TABLE {q(t)}")
    finally:
        conn.close()
        target.stop()


@pytest.mark.slow
@pytest.mark.postgres
def test_linkbench_killed_as_its_index_appears_resumes_without_force(tmp_path, pg_own_db):
    import psycopg
    exp = lb_experiment("lbidx", pg_own_db, run={**RUN, "loops": 1})   # resumed at l.post: it and a loop run
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    data = tmp_path / "data"
    proc = cli("run", path, "--data-dir", data, "--no-progress", start_new_session=True)
    with psycopg.connect(pg_own_db, autocommit=True) as c:
        def index_there():
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            return c.execute("SELECT to_regclass('linktable_id1_type')").fetchone()[0]
        assert wait_until(index_there, 180, 0.002), "no index in 180 s"
        os.kill(proc.pid, signal.SIGKILL)      # as it appears: its step not recorded yet
    proc.communicate(timeout=60)
    (run_dir,) = (data / "lbidx").glob("lbidx-*")
    assert not (run_dir / ".steps" / "l.post.json").exists(), "killed too late: l.post finished"
    before = load_results(run_dir)
    again = cli("run", path, "--data-dir", data, "--no-progress")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    assert "already exists" not in out + err
    check_resumed(run_dir, before["steps"], before["latency"], out + err, at="l.post")


def test_ybio_index_step_runs_again_on_the_tables_it_indexed(tmp_path):
    """recreate: false keeps the loaded tables; the index step finds its index there."""
    from test_ybio import experiment as ybio_experiment
    url = f"sqlite:///{tmp_path / 'ybio.sqlite'}"
    d = {**ybio_experiment("yidx", url, recreate=False), "index": {"enabled": True}}
    d["run"] = {**d["run"], **PACED}   # its loop paced: the index step is what is asked
    for _ in range(2):   # the second run forced over the first, on the tables it left
        (run_id,) = run_quietly(d, tmp_path / "data", force=True).runs
        steps = load_results(tmp_path / "data" / "yidx" / run_id)["steps"]
        assert steps.set_index("step").loc["l.post", "status"] == "ok"
    target = _target(url, tmp_path)
    conn = target.connect()
    try:
        table = f"{d['properties']['tab_prefix']}0001"
        assert target.index_columns(conn, table, index_name(table, "asc_mykey")) == ["mykey"]
    finally:
        conn.close()
        target.stop()
