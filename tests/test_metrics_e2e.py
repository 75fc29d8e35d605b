"""Hardware metrics beside real steps, and the one-line summaries from the folder alone."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from conftest import paced, small_experiment

from benchlib import load_results, run_experiment
from benchlib.params import validate


def metrics_run(url, data_dir, name):
    props = {"recordcount": 20000, "operationcount": 10**9, "readproportion": 0.5,
             "updateproportion": 0.5, "requestdistribution": "zipfian",
             "table": f"ycsb_metrics_{name}_{os.getpid()}"}
    # paced: 1,500 ops/s over the 2 clients, ~4,500 requests in the 3 s, keep the server
    # and the clients well above the 0.1 CPU-s check_hw asks of them (unthrottled, the
    # loop burned two cores for 3 s that nothing here reads)
    exp = validate(small_experiment(name, url, properties=props,
                                    run={"loop_secs": 3, "threads": [2], **paced(1500)}), "t")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    return load_results(data_dir / name)


def check_hw(t):
    hw = t["hw"]
    by_step = hw.groupby("step")
    assert set(by_step.groups) == {"l.pre", "r.L1"}
    run = hw[hw.step == "r.L1"]
    assert len(run) >= 2                                   # one sample a second
    assert run["dbms_cpu_s"].sum() > 0.1                   # the server worked
    assert run["client_cpu_s"].sum() > 0.1                 # and so did the clients
    assert (run["dbms_rss_gb"] > 0).all()
    busy = run["cpu_user"] + run["cpu_sys"]
    assert ((busy > 0) & (busy <= 100)).all()
    load = hw[hw.step == "l.pre"].sort_values("second")
    sizes = hw.sort_values(["ts"])["db_size_gb"].dropna()
    assert sizes.iloc[-1] > sizes.iloc[0] or load["db_size_gb"].notna().any()
    return sizes


@pytest.mark.postgres
def test_postgres_dbms_cpu_and_size(pg_own_db, data_dir):
    import psycopg
    with psycopg.connect(pg_own_db) as c:
        empty = c.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    t = metrics_run(pg_own_db, data_dir, "pgm")
    sizes = check_hw(t)
    # 20k records of 10 fields × 100 bytes into a database of the test's own: the size
    # sampled at the end holds at least those 20 MB over the empty database's size
    # (PostgreSQL stores more: tuple headers, the keys, free space in pages)
    assert sizes.iloc[-1] - empty / 1024**3 > 20000 * 1000 / 1024**3


@pytest.mark.mysql
def test_mariadb_dbms_cpu_and_size(mysql_own_db, data_dir):
    t = metrics_run(mysql_own_db, data_dir, "mym")
    sizes = check_hw(t)
    assert sizes.max() > 0


def test_sqlite_engine_cpu_is_the_clients(data_dir):
    t = metrics_run("sqlite", data_dir, "sqm")
    run = t["hw"][t["hw"].step == "r.L1"]
    # SQLite runs inside the client processes: its CPU is theirs
    assert run["dbms_cpu_s"].sum() == pytest.approx(run["client_cpu_s"].sum())


@pytest.mark.slow
def test_printed_step_lines_equal_summary_from_folder(tmp_path, capsys):
    from benchlib import cli
    p = tmp_path / "e.yaml"
    # paced (500 ops/s): the lines compared are the same whatever the rate
    exp = small_experiment("lines", "sqlite", run={"loop_secs": 2, "loops": 2, **paced(500)})
    p.write_text(yaml.safe_dump(exp))
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                        str(tmp_path / "d"), "--no-progress"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    printed = [l.strip() for l in r.stdout.splitlines()]
    for kind in ("eff.op", "eff.sec", "rt", "run"):
        # the summary command in this process (benchlib.cli's main, as the entry point
        # runs it): four more interpreters importing benchlib and pandas cost ~2 CPU-s each
        code = cli.main(["summary", str(tmp_path / "d" / "lines"), "--kind", kind])
        s = capsys.readouterr()
        assert code == 0, s.err
        lines = [l.strip() for l in s.out.splitlines() if l.strip()]
        for step in ("l.pre", "r.L1", "r.L2"):
            caption = f"{step}.{kind}"
            assert caption in lines, (caption, s.out)
            i = lines.index(caption)
            header, row = lines[i + 1], lines[i + 2]
            j = printed.index(caption)
            assert printed[j + 1] == header and printed[j + 2] == row, (caption, printed[j:j + 3], row)
