"""A PostgreSQL benchlib provisions (issue 37): each configuration of a target's version ×
settings its own fresh server, what the server was in meta.json, two configurations two
points, bad settings refused by the server's own words before anything runs, and no server
left behind, not even by a SIGKILL."""
from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import psutil
import pytest
import yaml
from conftest import small_experiment
from resuming import alive, cli, wait_inside_loop, wait_until

from benchlib import cli as benchlib_cli
from benchlib import load_results
from benchlib.matrix import target_configurations
from benchlib.params import ParameterError, load_experiment, plan, validate
from benchlib.run.experiment import run_experiment
from benchlib.summaries import samples
from benchlib.targets import postgres_binaries as pgbin

URL = "postgres-provisioned"
BUFFERS = ["128MB", "256MB"]
LOADERS = min(2, os.cpu_count() or 1)   # load.threads 2, load.processes auto: a loader per core

try:
    pgbin.find(None)
    HAVE_PG = ""
except ValueError as e:
    HAVE_PG = str(e)
pytestmark = pytest.mark.skipif(bool(HAVE_PG), reason=HAVE_PG or "x")


def _exp(name: str, **over) -> dict:
    exp = small_experiment(name, URL, properties={"recordcount": 1000, "operationcount": 10**6,
                                                  "readproportion": 0.5, "updateproportion": 0.5},
                           run={"threads": [2], "loops": 1, "loop_secs": 1}, load={"threads": 2})
    exp["targets"] = [{"name": "pg", "url": URL, "settings": {"shared_buffers": BUFFERS, "work_mem": "8MB"}}]
    for k, v in over.items():
        exp[k] = v
    return exp


def _servers_in(path) -> list:
    """PostgreSQL processes whose command line names a folder under ``path``."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(str(path) in a for a in p.info["cmdline"] or ()) and "postgres" in " ".join(p.info["cmdline"]):
                found.append(p.pid)
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """One experiment: shared_buffers 128MB and 256MB, one server each."""
    tmp = tmp_path_factory.mktemp("prov")
    path = tmp / "e.yaml"
    path.write_text(yaml.safe_dump(_exp("provsweep")))
    res = run_experiment(load_experiment(path), tmp / "data", progress=False)
    return tmp / "data", res


def test_version_and_settings_lists_are_configurations():
    got = target_configurations([{"name": "pg", "url": URL, "version": [15, 16],
                                  "settings": {"shared_buffers": ["128MB", "1GB"], "work_mem": "8MB"}},
                                 {"name": "one", "url": URL, "settings": {"work_mem": "4MB"}}])
    assert [t["name"] for t in got] == ["pg-v15-shared_buffers128MB", "pg-v15-shared_buffers1GB",
                                        "pg-v16-shared_buffers128MB", "pg-v16-shared_buffers1GB", "one"]
    assert got[3]["options"] == {"version": 16, "settings": {"shared_buffers": "1GB", "work_mem": "8MB"}}
    assert got[4] == {"name": "one", "url": URL, "options": {"settings": {"work_mem": "4MB"}}}
    with pytest.raises(ValueError, match="given twice"):
        target_configurations([{"name": "pg", "url": URL, "settings": {"shared_buffers": ["1GB", "1GB"]}}])


def test_each_configuration_ran_on_its_own_server_with_its_settings(sweep):
    data, res = sweep
    assert set(res.runs.values()) == {"ok"} and len(res.runs) == 2
    seen = {}
    for run_dir in sorted((data / "provsweep").glob("pg-*")):
        meta = json.loads((run_dir / "meta.json").read_text())
        dbms = meta["dbms"]
        want = dbms["requested"]["shared_buffers"]
        # SHOW shared_buffers (current_setting) inside the configuration's own server
        assert dbms["settings"]["shared_buffers"] == want and dbms["settings"]["work_mem"] == "8MB"
        assert dbms["version_string"].startswith(f"PostgreSQL {dbms['version']}")
        assert dbms["started"] and "application_name" not in dbms["settings"]
        assert "database system is ready to accept connections" in (run_dir / "server.log").read_text()
        seen[meta["target"]["name"]] = (want, dbms["settings"]["port"])
    assert {k: v[0] for k, v in seen.items()} == {f"pg-shared_buffers{b}": b for b in BUFFERS}
    assert len({v[1] for v in seen.values()}) == 2          # two servers, each its own port


def test_the_data_is_loaded_once_and_copied_for_the_other_configuration(sweep):
    data, _ = sweep
    first, second = (json.loads((data / "provsweep" / f"pg-shared_buffers{b}-t2-p2-l{LOADERS}-tgt0-r1" / "meta.json")
                                .read_text()) for b in BUFFERS)
    assert first["planned"] == ["l.pre", "r.L1"] and second["planned"] == ["r.L1"]
    assert first["dbms"]["data"]["from"] == "initdb" and first["data_copy"]["kept"].startswith("provsweep/")
    assert second["dbms"]["data"] == {"from": "loaded", "loaded": first["data_copy"]["kept"],
                                      "copy_s": second["dbms"]["data"]["copy_s"],
                                      "ready_s": second["dbms"]["data"]["ready_s"]}
    assert second["dbms"]["data"]["ready_s"] >= second["dbms"]["data"]["copy_s"]
    # kept without the WAL a cleanly shut-down cluster does not need: its last checkpoint's segment
    (kept,) = (data / ".provisioned" / ".loaded").glob("provsweep/*/*")
    assert len([f for f in (kept / "pg_wal").iterdir() if f.is_file()]) == 1
    steps = load_results(data / "provsweep")["steps"]
    run = steps[steps["phase"] == "run"]
    assert len(run) == 2 and (run["ops"] > 0).all() and (run["status"] == "ok").all()
    assert set(steps[steps["phase"] == "load"]["run_id"]) == {f"pg-shared_buffers128MB-t2-p2-l{LOADERS}-tgt0-r1"}


def test_load_fresh_or_skip_keeps_no_data():
    from benchlib.run.loaded_data import data_key
    from benchlib.targets.base import make_target
    target = make_target("pg", URL, {})
    for load, kept in (({}, True), ({"fresh": True}, False), ({"skip": True}, False)):
        exp = validate(_exp("provkey", load={"threads": 2, **load}), "e.yaml")
        spec = plan(exp)[0]
        assert (data_key(exp, spec, exp.workload_properties(), target) is not None) == kept


def test_two_configurations_are_two_points_never_averaged(sweep, capsys):
    data, _ = sweep
    pts = samples.point_summary(load_results(data / "provsweep"))
    assert len(pts) == 2 and (pts["runs"] == 1).all()
    assert all("shared_buffers=" in t for t in pts["target"])
    assert benchlib_cli.main(["summary", str(data / "provsweep"), "--kind", "points"]) == 0
    out = capsys.readouterr().out
    assert all(f"shared_buffers={b}" in out for b in BUFFERS)


def test_no_server_or_data_directory_is_left(sweep):
    data, _ = sweep
    assert not _servers_in(data)
    # the runs' data directories are gone; the empty clusters and the loaded data stay for reruns
    assert {p.name for p in (data / ".provisioned").iterdir()} == {".initdb", ".loaded"}


def test_show_inside_a_started_server(tmp_path):
    from benchlib.targets.base import make_target
    t = make_target("pgshow", URL, {"settings": {"shared_buffers": "256MB"}}, tmp_path)
    t.start()
    try:
        pid = t._postmaster
        assert t.admin().execute("SHOW shared_buffers").fetchone()[0] == "256MB"
    finally:
        t.stop()
    assert not alive(pid) and not (tmp_path / ".provisioned" / "pgshow").exists()


@pytest.mark.parametrize("settings, version, says", [
    ({"shared_bufers": "1GB"}, None, 'unrecognized configuration parameter "shared_bufers"'),
    ({"shared_buffers": "1GBx"}, None, 'invalid value for parameter "shared_buffers": "1GBx"'),
    ({}, 9, "PostgreSQL 9 is not installed here (looked in /usr/lib/postgresql/9/bin"),
    ({"port": 5999}, None, "benchlib sets it"),
    ({"work_mem": "4MB\nfsync = off"}, None, "control character"),   # no second line in the config
])
def test_bad_input_is_one_line_before_anything_runs(settings, version, says):
    exp = _exp("provbad")
    exp["targets"] = [{"name": "pg", "url": URL, "settings": settings,
                       **({"version": version} if version else {})}]
    with pytest.raises(ParameterError, match="refuses them|not installed|benchlib sets|control character") as e:
        validate(exp, "e.yaml")
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_misspelled_setting_exits_2_in_one_line(tmp_path):
    exp = _exp("provcli")
    exp["targets"][0]["settings"] = {"shared_bufers": "1GB"}
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))
    proc = cli("run", tmp_path / "e.yaml", "--data-dir", tmp_path / "data")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert 'unrecognized configuration parameter "shared_bufers"' in err
    assert not (tmp_path / "data" / "provcli").exists()


@pytest.mark.slow
def test_sigkill_of_benchlib_leaves_no_server(tmp_path):
    exp = _exp("provkill", run={"threads": [2], "loops": 2, "loop_secs": 2})
    exp["targets"] = [{"name": "pg", "url": URL, "settings": {"shared_buffers": "128MB"}}]
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))
    data = tmp_path / "data"
    proc = cli("run", tmp_path / "e.yaml", "--data-dir", data, "--no-progress", start_new_session=True)
    wait_inside_loop(data / "provkill", "r.L1", proc, loop_s=2)
    # the loaded data is copied for the configuration between l.pre and r.L1: its server
    # may be starting again as the loop's lead passes
    pids = wait_until(lambda: _servers_in(data), 60)
    assert pids
    proc.send_signal(signal.SIGKILL)             # nothing of benchlib runs after this
    proc.communicate(timeout=60)
    end = time.monotonic() + 60
    while any(alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.1)
    assert not any(alive(p) for p in pids), "the killed run's PostgreSQL is still running"
    # run again: the killed run resumes on a server of its own over the data its load kept
    again = cli("run", tmp_path / "e.yaml", "--data-dir", data, "--no-progress")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, out + err
    assert "1/1 runs ok" in out and "resum" in out and not _servers_in(data), out


def test_a_data_directory_that_is_not_benchlibs_is_never_replaced(tmp_path):
    from benchlib.targets.base import TargetError, make_target
    theirs = tmp_path / ".provisioned" / "pgtheirs"
    theirs.mkdir(parents=True)
    (theirs / "PG_VERSION").write_text("15\n")
    t = make_target("pgtheirs", URL, {}, tmp_path)
    with pytest.raises(TargetError, match="not a data directory benchlib made"):
        t.start()
    t.stop()
    assert (theirs / "PG_VERSION").exists()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server here")
def test_a_provisioned_redis_runs_with_its_settings_and_refuses_a_misspelled_one(tmp_path):
    from benchlib.targets.base import make_target
    from benchlib.registries.targets import check_options
    t = make_target("r", "redis-provisioned", {"settings": {"appendonly": True, "io-threads": 2}}, tmp_path)
    t.start()
    try:
        pid = t._proc.pid
        assert t.admin().config_get("appendonly") in ({"appendonly": "yes"}, {b"appendonly": b"yes"})
        info = t.dbms_info()
        assert info["settings"]["appendonly"] == "yes" and info["settings"]["io-threads"] == "2"
        assert info["version"] and "maxmemory" not in info["settings"]   # at its default
    finally:
        t.stop()
    assert not alive(pid) and not (tmp_path / ".provisioned" / "r").exists()
    with pytest.raises(ValueError, match=r"refuses them: 'appendonlyx \"yes\"': Bad directive"):
        check_options("redis-provisioned", {"settings": {"appendonlyx": "yes"}})


@pytest.mark.skipif(shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists(),
                    reason="no mariadbd here")
def test_a_provisioned_mariadb_leaves_other_servers_temporary_tables_alone(tmp_path):
    """mariadbd deletes the ``#sql*`` files of its tmpdir as it starts: on the shared /tmp,
    a provisioned server (or its mariadb-install-db) removed the temporary tables of any
    other MariaDB busy with one, the system's too. Its tmpdir is its own, gone with it."""
    import tempfile

    from benchlib.targets.base import make_target
    from benchlib.targets.mysql_provisioned import _chown_mysql
    fd, other = tempfile.mkstemp(prefix="#sql-benchlibtest-", suffix=".MAI", dir="/tmp")
    os.close(fd)
    _chown_mysql(Path(other))     # as another server's (the one a server may delete)
    t = make_target("m", "mysql-provisioned", {}, tmp_path)
    try:
        t.start()
        try:
            own = t._q("SELECT @@tmpdir")[0][0]
            assert own == str(tmp_path / ".provisioned" / "m.tmp")
        finally:
            t.stop()
        assert Path(other).exists(), "the server's start deleted another server's temporary table"
        assert not Path(own).exists()
    finally:
        Path(other).unlink(missing_ok=True)


@pytest.mark.skipif(shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists(),
                    reason="no mariadbd here")
def test_a_provisioned_mariadb_runs_with_its_settings_and_refuses_a_misspelled_one(tmp_path):
    from benchlib.targets.base import make_target
    from benchlib.registries.targets import check_options
    t = make_target("m", "mysql-provisioned", {"settings": {"innodb_buffer_pool_size": "256M",
                                                            "innodb_flush_log_at_trx_commit": 2}}, tmp_path)
    t.start()
    try:
        pid = t._proc.pid
        assert t._q("SHOW GLOBAL VARIABLES LIKE 'innodb_buffer_pool_size'")[0][1] == str(256 << 20)
        info = t.dbms_info()
        assert info["settings"]["innodb_flush_log_at_trx_commit"] == "2"
        assert "max_connections" not in info["settings"] and "MariaDB" in info["version"]
    finally:
        t.stop()
    assert not alive(pid) and not (tmp_path / ".provisioned" / "m").exists()
    with pytest.raises(ValueError, match="unknown variable 'innodb_bufer_pool_size=1G'"):
        check_options("mysql-provisioned", {"settings": {"innodb_bufer_pool_size": "1G"}})
    with pytest.raises(ValueError, match="unsigned value 7 adjusted to 3"):
        check_options("mysql-provisioned", {"settings": {"innodb_flush_log_at_trx_commit": 7}})
