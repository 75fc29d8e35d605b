"""What is on disk decides which kept load a configuration starts from (issue 37): a
setting that changes the data directory (PostgreSQL's wal_segment_size, MariaDB's
innodb_page_size) is a load of its own; MariaDB loads once like PostgreSQL; a run killed
during its load starts again on an empty server, never on half-loaded data."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import yaml
from conftest import small_experiment
from resuming import alive, cli, wait_for_loop

from benchlib import load_results
from benchlib.params import ParameterError, validate
from benchlib.run.experiment import run_experiment
from benchlib.targets import postgres_binaries as pgbin

try:
    pgbin.find(None)
    HAVE_PG = ""
except ValueError as e:
    HAVE_PG = str(e)


def _metas(exp_dir) -> dict:
    return {p.name.split("-t2-")[0]: json.loads((p / "meta.json").read_text())
            for p in sorted(exp_dir.iterdir()) if (p / "meta.json").exists()}


def _exp(name, url, settings, **over):
    exp = small_experiment(name, url, properties={"recordcount": 400, "operationcount": 200}, **over)
    exp["targets"] = [{"name": name[:2], "url": url, "settings": settings}]
    return exp


@pytest.mark.skipif(bool(HAVE_PG), reason=HAVE_PG or "x")
def test_a_different_wal_segment_size_is_a_load_of_its_own(tmp_path):
    from benchlib.targets.base import make_target
    t = make_target("pgwal", "postgres-provisioned", {"settings": {"wal_segment_size": "32MB"}}, tmp_path)
    default = make_target("pgwal", "postgres-provisioned", {}, tmp_path)
    t.set_run_dir(tmp_path / "run")
    assert not t.use_loaded("e/k") and not default.use_loaded("e/k")
    # a kept load of the default segment size is not this configuration's
    assert t._loaded_dir("e/k").name == default._loaded_dir("e/k").name + "-wal_segment_size32MB"
    t.start()
    try:   # SHOW inside the configuration's server: its initdb's --wal-segsize
        assert t.admin().execute("SHOW wal_segment_size").fetchone()[0] == "32MB"
        assert t.dbms_info()["settings"]["wal_segment_size"] == "32MB"
    finally:
        t.stop()
    assert (tmp_path / ".provisioned" / ".initdb" / f"{t.binaries.version}-wal_segment_size32MB").is_dir()


def test_a_wal_segment_size_initdb_refuses_is_one_line():
    exp = _exp("pgdiskbad", "postgres-provisioned", {"wal_segment_size": "48MB"})
    with pytest.raises(ParameterError) as e:
        validate(exp, "e.yaml")
    assert "wal_segment_size: '48MB': a power of 2 from 1MB to 1GB" in str(e.value) and "\n" not in str(e.value)


def test_mariadb_loads_once_per_page_size(tmp_path):
    exp = _exp("mydisk", "mysql-provisioned", {"innodb_page_size": "8k", "innodb_buffer_pool_size": ["64M", "128M"]})
    res = run_experiment(validate(exp, "e.yaml"), tmp_path / "data", progress=False)
    assert res.ok
    first, second = (_metas(tmp_path / "data" / "mydisk")[f"my-innodb_buffer_pool_size{b}"] for b in ("64M", "128M"))
    assert first["planned"] == ["l.pre", "r.L1"] and first["dbms"]["data"]["from"] == "install-db"
    assert second["planned"] == ["r.L1"] and second["dbms"]["data"]["loaded"] == first["data_copy"]["kept"]
    for m in (first, second):
        assert m["dbms"]["settings"]["innodb_page_size"] == "8192"
    assert second["dbms"]["settings"]["innodb_buffer_pool_size"] == str(128 << 20)
    (kept,) = (tmp_path / "data" / ".provisioned" / ".loaded").glob("mydisk/*/mariadb-*")
    assert kept.name.endswith("-innodb_page_size8k") and not (tmp_path / "data" / ".provisioned" / "my").exists()


@pytest.mark.skipif(bool(HAVE_PG), reason=HAVE_PG or "x")
def test_a_run_killed_during_its_load_loads_again_on_an_empty_server(tmp_path):
    # a paced load (1,000 rows/s: about 5 s) to be killed in: the kill follows the load's
    # first line, which comes as its second second completes (a second is held until the
    # next is complete), ~2 s in; a 3-s load left a second for it at load
    exp = _exp("pgkill", "postgres-provisioned", {"work_mem": "8MB"},
               load={"threads": 2, "target_factors": [1000 / 16384]}, run={"threads": [2], "loops": 1})
    exp["properties"]["recordcount"] = 5000
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))
    data = tmp_path / "data"
    proc = cli("run", tmp_path / "e.yaml", "--data-dir", data, "--no-progress", start_new_session=True)
    wait_for_loop(data / "pgkill", "l.pre", proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert not list((data / ".provisioned").glob(".loaded/pgkill/*/*"))   # nothing kept of half a load
    again = cli("run", tmp_path / "e.yaml", "--data-dir", data, "--no-progress")
    out, err = again.communicate(timeout=180)
    assert again.returncode == 0, out + err
    (m,) = _metas(data / "pgkill").values()
    assert m["dbms"]["data"]["from"] == "initdb"         # an empty server, loaded whole again
    steps = load_results(data / "pgkill")["steps"]
    load = steps[steps["phase"] == "load"]
    # every row inserted once, none failed: no half of an earlier load was there
    assert len(load) == 1 and int(load["ops"].iloc[0]) == 5000 and int(load["failed"].iloc[0]) == 0
    end = time.monotonic() + 30
    pids = [int(p.read_text().split()[0]) for p in data.rglob("postmaster.pid")]
    while any(alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.1)
    assert not any(alive(p) for p in pids)


def test_a_kept_copy_is_whole_and_a_killed_copys_half_goes(tmp_path):
    from benchlib.targets import provisioning
    src = tmp_path / "src"
    (src / "pg_wal").mkdir(parents=True)
    (src / "PG_VERSION").write_text("16\n")
    (src / "postmaster.pid").write_text("1\n")
    (src / "pg_wal" / "000000010000000000000002").write_text("recycled")
    keep = tmp_path / ".loaded" / "exp" / "k1" / "16.2"
    dead = subprocess.Popen(["true"])
    dead.wait()
    half = keep.with_name(f".16.2.{dead.pid}")      # a copy whose process was killed
    running = keep.with_name(f".16.2.{os.getppid()}")   # one another process is making now
    for d in (half, running):
        d.mkdir(parents=True)
    provisioning.keep_copy(src, keep, ("postmaster.pid", "000000010000000000000002"))
    assert (keep / "PG_VERSION").read_text() == "16\n" and not (keep / "postmaster.pid").exists()
    assert not (keep / "pg_wal" / "000000010000000000000002").exists()
    assert not half.exists() and running.exists()


def test_a_full_disk_during_the_copy_is_one_line_and_leaves_no_half(tmp_path, monkeypatch):
    import errno
    import shutil

    from benchlib.targets import provisioning
    from benchlib.targets.base import TargetError
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"f{i}").write_text("x" * 1000)
    copied = []

    def fills_up(a, b, **kw):   # the device full after the first file, as ENOSPC says
        if copied:
            raise OSError(errno.ENOSPC, "No space left on device", b)
        copied.append(b)
        return shutil.copy2(a, b, **kw)
    real = shutil.copytree
    monkeypatch.setattr(shutil, "copytree", lambda *a, **kw: real(*a, **kw, copy_function=fills_up))
    keep = tmp_path / ".loaded" / "exp" / "k" / "16.2"
    with pytest.raises(TargetError) as e:
        provisioning.keep_copy(src, keep, ())
    assert "no space left on the device" in str(e.value) and "\n" not in str(e.value)
    assert not keep.exists() and not list(keep.parent.iterdir())
