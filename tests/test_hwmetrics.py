"""The live sampler, on this machine's real processes and PostgreSQL (no mocks)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from benchlib import schema
from benchlib.hw.disks import is_whole_disk
from benchlib.hw.processes import GB, process_tree_pids
from benchlib.hw.sampler import Sampler

DBMS_COLS = ["dbms_cpu_s", "dbms_rss_gb", "dbms_vsz_gb"]
BUSY = "import time, sys\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end: pass\n"


def busy_child(secs: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", BUSY, str(secs)])


def cpu_of(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def test_rows_seconds_and_percents():
    with Sampler(1.0).start("run-1", "r.L1") as s:
        time.sleep(3.05)
    df = s.result
    assert list(df.columns) == list(schema.HW)
    assert 2 <= len(df) <= 4                       # one row per second (+ a tail)
    assert (df["run_id"] == "run-1").all() and (df["step"] == "r.L1").all()
    assert df["second"].is_monotonic_increasing and df["second"].is_unique
    assert df["second"].iloc[0] == 0
    assert df["ts"].is_monotonic_increasing
    cpu = df[["cpu_user", "cpu_sys", "cpu_iowait", "cpu_idle"]]
    assert ((cpu >= 0) & (cpu <= 100)).all().all()
    # 100 minus steal (left out, as in vmstat): a shared VM steals a few percent
    assert cpu.sum(axis=1).between(80, 100 + 1e-9).all()
    assert (df["ctx_switches"] > 0).all()
    assert df[["disk_reads", "disk_write_kb"]].notna().all().all()   # this VM has vda
    # nothing to watch: NA, not 0
    assert df[[*DBMS_COLS, "client_cpu_s", "db_size_gb"]].isna().all().all()
    assert s.cost_cpu_s > 0


def test_client_cpu_of_a_busy_child_matches_its_own_cpu_time():
    child = busy_child(30)
    try:
        time.sleep(0.3)
        before = cpu_of(child.pid)
        s = Sampler(1.0, client_pids=lambda: [child.pid])
        s.start("r", "s")
        time.sleep(2.6)
        df = s.stop()
        after = cpu_of(child.pid)
    finally:
        child.kill()
        child.wait()
    assert df["client_cpu_s"].notna().all()
    assert df["client_cpu_s"].sum() == pytest.approx(after - before, abs=0.1)
    assert df["dbms_cpu_s"].isna().all() and df["dbms_rss_gb"].isna().all()


def test_a_process_born_and_reaped_within_the_step_is_fully_counted():
    # the last interval of a process that exits is only visible through its parent:
    # here the test process reaps it, as the runner reaps its client processes
    s = Sampler(1.0, client_pids=lambda: [child.pid])
    s.start("r", "s")
    time.sleep(0.3)
    child = busy_child(1.2)
    _, _, ru = os.wait4(child.pid, 0)
    child.returncode = 0
    time.sleep(1.0)
    df = s.stop()
    assert df["client_cpu_s"].sum() == pytest.approx(ru.ru_utime + ru.ru_stime, abs=0.1)
    assert (df["client_cpu_s"] >= 0).all()


def test_db_size_failing_and_carried():
    calls = []

    def size():
        calls.append(time.monotonic())
        if len(calls) == 2:
            raise RuntimeError("server went away")
        return 3 * GB // 2

    s = Sampler(0.5, db_size_bytes=size, db_size_every_s=0.6)
    s.start("r", "s")
    time.sleep(2.2)
    df = s.stop()
    assert len(df) >= 3                      # the failure did not stop the sampling
    sizes = df["db_size_gb"]
    assert sizes.isna().any()                # the failed call is NA …
    assert (sizes.dropna() == 1.5).all()     # … the others carry the last value
    assert sizes.iloc[-1] == 1.5             # the call at stop
    assert any("server went away" in e for e in s.errors)
    assert len(calls) <= 2.2 / 0.6 + 2       # at most every db_size_every_s, plus stop

    def broken():
        raise OSError("no such file")

    df = Sampler(0.5, db_size_bytes=broken).start("r", "s").stop()
    assert len(df) == 1 and df["db_size_gb"].isna().all()


def test_callable_errors_give_na_and_sampling_goes_on():
    def pids():
        raise RuntimeError("target lost")

    s = Sampler(0.5, dbms_pids=pids, client_pids=lambda: None)
    s.start("r", "s")
    time.sleep(1.2)
    df = s.stop()
    assert len(df) >= 2
    assert df[[*DBMS_COLS, "client_cpu_s"]].isna().all().all()
    assert df["cpu_idle"].notna().all()


def test_process_tree_and_disk_filter():
    child = busy_child(5)
    try:
        tree = process_tree_pids(os.getpid())
        assert tree[0] == os.getpid() and child.pid in tree
    finally:
        child.kill()
        child.wait()
    assert process_tree_pids(None) is None
    assert process_tree_pids(2 ** 22 + 12345) is None
    disks = ["sda", "sdb", "vda", "xvdf", "nvme0n1", "mmcblk0", "sda1", "vda2", "nvme0n1p1",
             "mmcblk0p2", "dm-0", "md127", "loop7", "ram0", "zram0", "sr0"]
    assert [d for d in disks if is_whole_disk(d)] == disks[:6]


@pytest.mark.postgres
def test_postgres_server_tree(pg_url):
    import psycopg
    with psycopg.connect(pg_url, autocommit=True) as conn, \
            psycopg.connect(pg_url, autocommit=True) as admin:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        postmaster = psutil.Process(backend).parent().pid
        s = Sampler(1.0, dbms_pids=lambda: process_tree_pids(postmaster),
                    db_size_bytes=lambda: admin.execute("SELECT pg_database_size(current_database())").fetchone()[0],
                    db_size_every_s=1.0)
        s.start("r", "r.L1")
        end = time.monotonic() + 2.5
        while time.monotonic() < end:
            conn.execute("SELECT count(*) FROM generate_series(1, 50000)").fetchone()
        df = s.stop()
        size = admin.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    assert df["dbms_cpu_s"].notna().all() and df["dbms_cpu_s"].sum() > 0
    assert (df["dbms_rss_gb"] > 0).all() and (df["dbms_vsz_gb"] > df["dbms_rss_gb"]).all()
    assert df["db_size_gb"].iloc[-1] == pytest.approx(size / GB, rel=0.01)
