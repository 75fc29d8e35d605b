"""Runs that fail say so; nothing a user types harms a database or leaks a secret.

Each test is one trial of issue 15, asserting the outcome a user needs: the victim table
still there, the status true, the second run refused, no secret in any written file."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from conftest import paced, small_experiment

from benchlib import cli


# a paced loop (200 ops/s over its threads) for the runs that are killed, interrupted or
# held running while the test acts: what they check needs a loop at work, not clients
# driving the database flat out meanwhile
PACE = paced(200)


def write(tmp_path, exp: dict, name="e.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(exp))
    return p


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchlib.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def one_line_error(r) -> str:
    err = r.stderr.strip()
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.mark.postgres
def test_a_table_name_carrying_sql_harms_nothing(pg_own_db, tmp_path):
    import psycopg
    with psycopg.connect(pg_own_db, autocommit=True) as c:
        c.execute("CREATE TABLE victim (x int)")
    exp = small_experiment("inj", pg_own_db)
    r = run_cli("run", write(tmp_path, exp), "-p", "table=t1; drop table victim",
                "--data-dir", tmp_path / "d")
    assert "properties: table" in one_line_error(r)
    with psycopg.connect(pg_own_db) as c:
        assert c.execute("SELECT to_regclass('victim')").fetchone()[0] == "victim"
    assert not (tmp_path / "d" / "inj").exists()


def test_an_exception_inside_a_run_marks_it_failed(tmp_path):
    # a SQLite path under a regular file: the target cannot open its database
    blocker = tmp_path / "file"
    blocker.write_text("x")
    exp = small_experiment("exc", "sqlite")
    exp["targets"] = [{"name": "lite", "url": "sqlite", "options": {"path": str(blocker / "db.sqlite")}}]
    r = run_cli("run", write(tmp_path, exp), "--data-dir", tmp_path / "d", "--no-progress")
    assert r.returncode == 1 and "Traceback" not in r.stderr + r.stdout
    run_dir = next((tmp_path / "d" / "exc").glob("lite-*"))
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "failed" and meta["error"]
    assert "Traceback" in (run_dir / "error.log").read_text()
    # a rerun does not skip it as finished
    r2 = run_cli("run", write(tmp_path, exp), "--data-dir", tmp_path / "d", "--no-progress")
    assert "finished before" not in r2.stdout


def test_two_runs_of_one_experiment_at_once_the_second_is_refused(tmp_path):
    exp = small_experiment("twice", "sqlite", run={"loop_secs": 20, **PACE})
    p = write(tmp_path, exp)
    first = subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                              str(tmp_path / "d"), "--no-progress"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # the lock taken: its file names the holder (written once the flock is held)
        lock, deadline = tmp_path / "d" / "twice" / ".lock", time.time() + 60
        while time.time() < deadline and not (lock.exists() and f"pid {first.pid}" in lock.read_text()):
            time.sleep(0.05)
        second = run_cli("run", p, "--data-dir", tmp_path / "d", "--no-progress")
        err = one_line_error(second)
        assert f"pid {first.pid}" in err and "running this experiment" in err
    finally:
        os.killpg(first.pid, signal.SIGINT)
        first.communicate(timeout=60)
    # the first run's folder is its own: nothing was moved aside by the second
    assert not (tmp_path / "d" / "twice" / ".attempts").exists()


def test_sigterm_marks_the_run_interrupted(tmp_path):
    exp = small_experiment("term", "sqlite", run={"loop_secs": 30, **PACE})
    p = write(tmp_path, exp)
    proc = subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                             str(tmp_path / "d"), "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        logs = list((tmp_path / "d" / "term").glob("*/intervals.jsonl"))
        if logs and '"r.L1"' in logs[0].read_text():
            break
        time.sleep(0.1)
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err and "SIGTERM" in err
    meta = json.loads(next((tmp_path / "d" / "term").glob("*/meta.json")).read_text())
    assert meta["status"] == "interrupted"


def test_a_killed_runs_files_are_its_owners_alone(tmp_path):
    """Issue 41: every file a run writes is 0600 whatever the umask — the interval log
    and the SQLite database with its -wal and -shm (written by the clients) of a run
    SIGKILLed mid-loop, and again after the rerun that resumed it (the log rewritten)."""
    import stat
    # a loop of 3 s: killed once its first second is logged, 2 s before its end
    exp = small_experiment("modes", "sqlite", run={"loop_secs": 3, **PACE},
                           properties={"recordcount": 2000, "operationcount": 10**9})
    p, d = write(tmp_path, exp), tmp_path / "d"
    umask = {"preexec_fn": lambda: os.umask(0o022)}
    proc = subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                             str(d), "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, **umask)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            logs = list((d / "modes").glob("*/intervals.jsonl"))
            if logs and '"r.L1"' in logs[0].read_text():
                break
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)    # the controller and its clients
        proc.wait(30)

    def modes() -> dict[str, int]:
        return {str(f.relative_to(d)): stat.S_IMODE(f.stat().st_mode) for f in d.rglob("*")
                if f.is_file()}
    killed = modes()
    names = {n.rsplit("/", 1)[-1] for n in killed}
    assert {"intervals.jsonl", "db.sqlite", "db.sqlite-wal", "meta.json", ".lock"} <= names, names
    assert {n: m for n, m in killed.items() if m != 0o600} == {}
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir", str(d),
                        "--no-progress"], capture_output=True, text=True, timeout=300, **umask)
    assert r.returncode == 0 and "resume " in r.stdout, r.stdout + r.stderr
    assert {n: m for n, m in modes().items() if m != 0o600} == {}


SECRET = "s3cr3t-Pw"


@pytest.mark.postgres
@pytest.mark.parametrize("form", ["query", "userinfo-with-at", "property"])
def test_no_secret_reaches_a_file_or_a_line(pg_own_db, tmp_path, form):
    host = pg_own_db.split("@", 1)[1]
    if form == "query":   # libpq's own form; trust auth ignores the password
        url = f"postgresql://postgres@{host}?password={SECRET}"
    elif form == "userinfo-with-at":
        url = f"postgresql://postgres:{SECRET}@x@{host}"
    else:
        url = pg_own_db
    exp = small_experiment("sec", url, properties={
        "recordcount": 100, "operationcount": 100, "table": f"sec_{os.getpid()}",
        "db.passwd": SECRET})
    r = run_cli("run", write(tmp_path, exp), "--data-dir", tmp_path / "d", "--no-progress")
    assert SECRET not in r.stdout + r.stderr
    for f in (tmp_path / "d").rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_a_rerun_with_changed_parameters_stops_naming_the_keys(tmp_path, capsys):
    exp = small_experiment("rerun", "sqlite", properties={"recordcount": 200, "operationcount": 200})
    p = write(tmp_path, exp)
    d = str(tmp_path / "d")
    assert cli.main(["run", str(p), "--data-dir", d, "--no-progress"]) == 0
    before = (tmp_path / "d" / "rerun" / "experiment.json").read_text()
    assert cli.main(["run", str(p), "--data-dir", d, "--no-progress",
                     "-p", "operationcount=300"]) == 2
    assert "properties.operationcount" in capsys.readouterr().err
    assert (tmp_path / "d" / "rerun" / "experiment.json").read_text() == before
    # the same parameters: skipped; --force: run again with the new ones
    assert cli.main(["run", str(p), "--data-dir", d, "--no-progress"]) == 0
    assert "finished before" in capsys.readouterr().out
    assert cli.main(["run", str(p), "--data-dir", d, "--no-progress", "-p", "operationcount=300",
                     "--force"]) == 0
    assert json.loads((tmp_path / "d" / "rerun" / "experiment.json").read_text()
                      )["properties"]["operationcount"] == 300


def test_one_broken_run_folder_breaks_nothing_else(tmp_path, capsys):
    exp = small_experiment("brk", "sqlite", properties={"recordcount": 200, "operationcount": 200},
                           run={"threads": [1, 2]})
    p = write(tmp_path, exp)
    d = tmp_path / "d"
    assert cli.main(["run", str(p), "--data-dir", str(d), "--no-progress"]) == 0
    runs = sorted((d / "brk").glob("brk-*"))
    assert len(runs) == 2
    meta = runs[0] / "meta.json"
    meta.write_text(meta.read_text()[:80])                       # truncated meta.json
    lat = runs[1] / "latency.parquet"
    capsys.readouterr()
    assert cli.main(["summary", str(d / "brk"), "--kind", "eff.op"]) == 0
    out, err = capsys.readouterr()
    assert runs[0].name in err and "meta.json" in err and "brk" in out
    lat.write_bytes(lat.read_bytes()[:100])                      # truncated table
    assert cli.main(["summary", str(d / "brk")]) == 2            # nothing readable is left
    assert "latency.parquet" in capsys.readouterr().err
    # a rerun runs the broken ones again, moving them aside
    assert cli.main(["run", str(p), "--data-dir", str(d), "--no-progress"]) == 0
    assert len(list((d / "brk" / ".attempts").iterdir())) >= 1
    assert cli.main(["summary", str(d / "brk")]) == 0


def test_a_corrupt_catalog_costs_no_run_and_rebuilds(tmp_path, capsys):
    exp = small_experiment("cat", "sqlite", properties={"recordcount": 100, "operationcount": 100})
    p = write(tmp_path, exp)
    d = tmp_path / "d"
    d.mkdir()
    (d / "catalog.sqlite").write_text("not a database")
    assert cli.main(["run", str(p), "--data-dir", str(d), "--no-progress"]) == 0
    assert "catalog was not updated" in capsys.readouterr().err
    assert cli.main(["list", "--data-dir", str(d)]) == 0   # read from the run folders meanwhile
    assert cli.main(["list", "--data-dir", str(d), "--rebuild"]) == 0
    out, err = capsys.readouterr()
    assert "cat-t2" in out and "kept as catalog.sqlite.corrupt-" in err
    assert list(d.glob("catalog.sqlite.corrupt-*"))


def test_a_catalog_from_before_its_table_was_renamed_keeps_its_rows(tmp_path):
    import sqlite3

    from benchlib.store import catalog
    cols = ", ".join(catalog.catalog_runs.c.keys())
    with sqlite3.connect(tmp_path / catalog.CATALOG) as conn:   # the table as it was named
        conn.execute(f"CREATE TABLE benchruns ({cols}, PRIMARY KEY (run_id, experiment))")
        conn.execute("INSERT INTO benchruns (run_id, experiment, status, started, path) "
                     "VALUES ('old-r1', 'old', 'ok', '2026-01-01', '/x')")
    df = catalog.list_runs(tmp_path)
    assert df["run_id"].tolist() == ["old-r1"] and df["status"].tolist() == ["ok"]
    with sqlite3.connect(tmp_path / catalog.CATALOG) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert catalog.TABLE in names and "benchruns" not in names


@pytest.mark.embedded
@pytest.mark.slow
def test_embedded_server_left_by_a_kill_9_is_stopped_before_the_next(tmp_path):
    pytest.importorskip("pgserver")
    exp = small_experiment("emb", "embedded-postgres", run={"loop_secs": 30, **PACE})
    p = write(tmp_path, exp)
    d = tmp_path / "d"
    proc = subprocess.Popen([sys.executable, "-m", "benchlib.cli", "run", str(p), "--data-dir",
                             str(d), "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    pid_file = d / ".embedded-postgres" / "emb" / "postmaster.pid"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        logs = list((d / "emb").glob("*/intervals.jsonl"))
        if logs and '"r.L1"' in logs[0].read_text():
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read()
    old = int(pid_file.read_text().split()[0])
    # its watchdog (targets/watchdog.py) would stop the server at once: killed first, the
    # server outlives its benchlib, as when a whole machine's processes are killed
    import psutil
    dogs = [c for c in psutil.Process(proc.pid).children() if str(old) in c.cmdline()]
    assert len(dogs) == 1
    dogs[0].kill()
    proc.kill()
    proc.communicate(timeout=30)
    os.kill(old, 0)                                   # the server outlived its benchlib
    r = run_cli("run", p, "-p", "run.loop_secs=1", "--data-dir", d, "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "left running by a killed run" in r.stderr and str(old) in r.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(old, 0)
    # and the second run's own server is stopped when it ends: nothing left running
    assert not pid_file.exists()


def _paced_unless_mux(multiplex, rate: float) -> dict:
    """A thread per connection (multiplex false; "auto" where these cases' loops take it:
    mysqlclient's and PyMySQL's have no async functions) reconnects the same paced or not
    (ClientThread._on_exception, NativeThread's reopen): paced at ``rate`` over the
    threads, its clients need not drive the server flat out. A paced step is never
    multiplexed (clients._make_threads): multiplex true stays unpaced, or its one thread
    driving them all would not be what the case tests."""
    return {} if multiplex is True else paced(rate)


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize("driver,multiplex", [("python", True), ("c", True), ("c", False)])
def test_clients_reconnect_when_the_server_ends_their_connections(driver, multiplex, pg_own_db, tmp_path):
    """One thread multiplexing the connections, in Python (psycopg) or in C, or a thread
    per connection running each chunk in C (workloads/_native/_pgloop.c)."""
    import threading

    import psycopg

    from benchlib import load_results
    from benchlib.params import validate
    from benchlib.workloads.ycsb.bindings import postgres_native as pg_native
    if driver == "c" and not pg_native.AVAILABLE:
        pytest.skip(pg_native.MISSING)
    exp = validate(small_experiment("mux", pg_own_db, properties={
        "recordcount": 2000, "operationcount": 10**9, "readproportion": 1.0,
        "updateproportion": 0.0}, run={"threads": [8], "processes": 1, "loop_secs": 4,
                                       "multiplex": multiplex, "driver": driver,
                                       **_paced_unless_mux(multiplex, 400)}), "t")

    def terminate_later():
        others = ("FROM pg_stat_activity WHERE datname = current_database() "
                  "AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
        with psycopg.connect(pg_own_db, autocommit=True) as c:
            # into the run loop (not the load, on a busy machine too): the 8 clients' reads
            end = time.monotonic() + 120
            while time.monotonic() < end and c.execute(
                    f"SELECT count(*) {others} AND query ILIKE 'SELECT%'").fetchone()[0] < 8:
                time.sleep(0.1)
            time.sleep(0.3)
            c.execute(f"SELECT pg_terminate_backend(pid) {others}")
    killer = threading.Thread(target=terminate_later)
    killer.start()
    from benchlib import run_experiment
    res = run_experiment(exp, tmp_path / "d", progress=False)
    killer.join()
    assert res.ok, res.runs
    t = load_results(tmp_path / "d" / "mux")
    run = t["steps"][t["steps"].step == "r.L1"].iloc[0]
    assert run.status == "ok" and run.errors >= 1          # the ended operations count as errors
    assert t["runs"]["meta"].iloc[0]["driver_path"] == ("c-libpq" if driver == "c" else "python")
    iv = t["intervals"][(t["intervals"].step == "r.L1") & (t["intervals"].op == "READ")]
    assert iv[iv.second == iv.second.max() - 1]["ops"].sum() > 0   # and the clients went on


@pytest.mark.mysql
@pytest.mark.slow
@pytest.mark.parametrize("library,loop,multiplex", [
    ("c", "c", True),    # the C loop, one thread driving the 4 connections (run_many)
    ("c", "c", False),   # the C loop, a thread per connection
    ("c", "python", "auto"),   # YCSB's Python loop on mysqlclient: reopened by workloads/reconnect.py
    ("python", "python", "auto")])
def test_mariadb_clients_reconnect_when_their_connections_are_killed(mysql_own_db, library, loop,
                                                                     multiplex, tmp_path):
    """KILL CONNECTION of every client mid-run, in benchlib's C loop over libmariadb (from
    one thread or a thread per connection) and in the Python loop on either client
    library: the operations it cut count as errors, the clients connect again and go on,
    the run ends ok."""
    from conftest import driver_url
    from killing import kill_clients_later

    from benchlib import load_results, run_experiment
    from benchlib.params import validate
    from benchlib.targets import mysql_driver
    from benchlib.workloads.ycsb.bindings import mysql_native
    if library == "c" and mysql_driver.c_client_error():
        pytest.skip(mysql_driver.c_client_error())
    if loop == "c" and not mysql_native.AVAILABLE:
        pytest.skip(mysql_native.MISSING)
    db = mysql_own_db.rsplit("/", 1)[1]
    exp = validate(small_experiment("kill", driver_url(mysql_own_db, library), properties={
        "recordcount": 2000, "operationcount": 10**9, "readproportion": 0.8,
        "updateproportion": 0.2}, run={"threads": [4], "processes": 1, "loop_secs": 4,
                                       "driver": loop, "multiplex": multiplex,
                                       **_paced_unless_mux(multiplex, 400)}), "t")
    # the 4 clients and the controller's connections, once the run loop is at work (its
    # seconds in the run's own folder): before it, preflight's, the load's and the sampler's
    # connections made up a count of 5 and the killer fired in the load
    def in_loop() -> bool:
        return any('"r.L1"' in p.read_text() for p in (tmp_path / "d").glob("kill/*/intervals.jsonl"))
    killer, killed = kill_clients_later(db, min_conns=4, settle_s=0.5, wait_s=120, ready=in_loop)
    res = run_experiment(exp, tmp_path / "d", progress=False)
    killer.join()
    assert res.ok, res.runs
    assert len(killed) >= 4
    t = load_results(tmp_path / "d" / "kill")
    run = t["steps"][t["steps"].step == "r.L1"].iloc[0]
    assert run.status == "ok" and run.errors >= 1          # the cut operations count as errors
    assert t["runs"]["meta"].iloc[0]["driver_path"] == ("c-libmariadb" if loop == "c" else "python")
    iv = t["intervals"][(t["intervals"].step == "r.L1") & (t["intervals"].op == "READ")]
    assert iv[iv.second == iv.second.max() - 1]["ops"].sum() > 0   # and the clients went on
