"""The DBMS's cgroup as the source of its CPU (issue 38): a server benchlib provisions runs
in a cgroup of its own, and the local sampler reads the cgroup's CPU — backends that lived
shorter than a sample included — over the process sum; a cgroup path given by hand is
checked in one line."""
from __future__ import annotations

import threading
import time

import psutil
import pytest

from benchlib.hw import cgroup
from benchlib.hw.processes import tree_cpu_s
from benchlib.hw.sampler import Sampler
from benchlib.hw.spec import HwSpec
from benchlib.targets import postgres_binaries as pgbin

try:
    pgbin.find(None)
    HAVE_PG = ""
except ValueError as e:
    HAVE_PG = str(e)

PROBE = cgroup.make("probe")
if PROBE is not None:
    PROBE.remove()
HAVE_CGROUP = "" if PROBE is not None else "no writable cgroup hierarchy here (not root, or none mounted)"


def test_a_path_that_is_no_cgroup_is_one_line_before_the_run(tmp_path):
    from types import SimpleNamespace

    from benchlib.params import ParameterError
    from benchlib.run.hwsources import check
    with pytest.raises(ValueError, match="should match"):
        HwSpec(dbms_cgroup="relative/path")
    for path, says in ((tmp_path / "nope", "not a directory"), (tmp_path, "neither cpuacct.usage")):
        with pytest.raises(ParameterError, match=says) as e:
            check(SimpleNamespace(hw=HwSpec(dbms_cgroup=str(path))))
        assert "\n" not in str(e.value)


def test_the_hosts_root_cgroup_is_not_a_servers():
    """This process runs in its hierarchies' roots here (or a cgroup shared with others):
    no server's cgroup is made of it."""
    cg = cgroup.of_process(psutil.Process().pid)
    assert cg is None or str(cg.path).count("/") > 3


def _zombies(pids) -> bool:
    for p in pids:
        try:
            if psutil.Process(p).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.Error:
            continue
    return False


@pytest.mark.skipif(bool(HAVE_PG or HAVE_CGROUP), reason=HAVE_PG or HAVE_CGROUP or "x")
def test_short_lived_backends_count_in_the_servers_cgroup(tmp_path):
    import psycopg

    from benchlib.targets.postgres_provisioned import ProvisionedPostgresTarget
    t = ProvisionedPostgresTarget("cgtest", "postgres-provisioned", {}, data_dir=tmp_path)
    t.set_run_dir(tmp_path)
    t.start()
    try:
        cg = t.dbms_cgroup()
        assert cg is not None and cg is t.own_cgroup
        assert set(t.dbms_pids()) <= cg.pids()          # the whole tree moved in
        s = Sampler(0.5, dbms_pids=t.dbms_pids, dbms_cgroup=t.dbms_cgroup)
        s.start("r", "load")
        s.window_begin()
        truth0, n0 = tree_cpu_s(t._postmaster), len(t.dbms_pids())

        def burst():   # connections shorter than a sample, each some CPU
            for _ in range(6):
                with psycopg.connect(t.conninfo) as c:
                    c.execute("SELECT count(*) FROM generate_series(1, 300000)").fetchone()
        threads = [threading.Thread(target=burst) for _ in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        deadline = time.monotonic() + 10      # every backend of the burst gone and reaped
        while len(t.dbms_pids()) > n0 or _zombies(t.dbms_pids()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        truth = tree_cpu_s(t._postmaster) - truth0
        w = s.window_end()
        rows = s.stop()
    finally:
        t.stop()
    assert truth > 0.2
    assert w["dbms_cpu_from"] == "cgroup"
    assert abs(w["dbms_server_cpu_s"] - truth) <= 0.15 * truth, (w, truth)
    assert set(rows["dbms_cpu_from"].dropna()) == {"cgroup"}
    assert abs(rows["dbms_cpu_s"].sum() - truth) <= 0.15 * truth + 0.05
    assert not cg.path.exists()                       # gone with its server


@pytest.mark.skipif(bool(HAVE_CGROUP), reason=HAVE_CGROUP or "x")
def test_a_cgroup_a_killed_benchlib_left_is_swept_by_the_next():
    import subprocess
    import sys
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()                                   # its pid: no process now
    mine = cgroup.make("sweep")
    left = mine.path.parent / f"cgtest-{gone.pid}-0"
    left.mkdir()
    try:
        again = cgroup.make("sweep")
        again.remove()
        assert not left.exists() and mine.path.exists()   # a live process's kept
    finally:
        mine.remove()
        if left.exists():
            left.rmdir()


def test_the_attribution_line_says_the_cpu_came_from_the_cgroup():
    import pandas as pd

    from benchlib import schema
    from benchlib.summaries.attribution import attribution_lines

    def line(src):
        st = schema.conform("steps", pd.DataFrame({
            "run_id": ["a"], "step": ["l.pre"], "phase": ["load"], "secs": [1.0], "ops": [10],
            "dbms_cpu_s": [0.5], "dbms_server_cpu_s": [0.5], "dbms_attribution": ["server"], "dbms_cpu_from": [src]}))
        return attribution_lines({"steps": st})
    assert "read from its cgroup, exited backends' included" in line("cgroup")
    assert "cgroup" not in line("processes")


@pytest.mark.skipif(bool(HAVE_CGROUP), reason=HAVE_CGROUP or "x")
def test_a_cgroup_named_by_hand_counts_a_process_that_came_and_went():
    """hw.dbms_cgroup: a process that joined the cgroup, burnt CPU and exited between two
    samples is in the step's figure; no process list could have shown it."""
    import subprocess
    import sys
    from types import SimpleNamespace

    from benchlib.run.hwsources import cgroup_of
    made = cgroup.make("byhand")
    try:
        spec = HwSpec(dbms_cgroup=str(made.path))
        s = Sampler(0.5, dbms_pids=lambda: [], dbms_cgroup=lambda: cgroup_of(spec, SimpleNamespace()))
        s.start("r", "load")
        s.window_begin()
        burn = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid()));"
                "t = time.process_time()\nwhile time.process_time() - t < 0.3: pass")
        p = subprocess.run([sys.executable, "-c", burn, str(made.path / "cgroup.procs")], check=True)
        w = s.window_end()
        rows = s.stop()
    finally:
        made.remove()
    assert p.returncode == 0
    assert w["dbms_cpu_from"] == "cgroup" and 0.3 <= w["dbms_server_cpu_s"] < 0.6, w
    assert rows["dbms_cpu_s"].sum() >= 0.3


@pytest.mark.skipif(bool(HAVE_CGROUP), reason=HAVE_CGROUP or "x")
def test_a_cgroups_id_is_its_path_in_its_hierarchy_as_cadvisor_labels_it():
    cg = cgroup.make("idprobe")
    try:
        assert cg.id() == "/benchlib/" + cg.path.name
        assert cgroup.CpuCgroup(cg.path.parent.parent, cg.version).id() == "/"
        assert cgroup.CpuCgroup(cg.path.parent / "x", cg.version).id() == "/benchlib/x"
    finally:
        cg.remove()
    from pathlib import Path
    assert cgroup.CpuCgroup(Path("/tmp/not-a-hierarchy"), 1).id() is None
