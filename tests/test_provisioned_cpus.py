"""Server and clients apart on one host (issue 37): a provisioned target's ``cpus``
pins every process of its server and every thread of the run's client processes, as
read back from the processes themselves; a bad set is one line before anything runs."""
from __future__ import annotations

import json
import os

import psutil
import pytest
from conftest import small_experiment

from benchlib.params import ParameterError, validate
from benchlib.run.experiment import run_experiment
from benchlib.targets import cpu_sets
from benchlib.targets import postgres_binaries as pgbin

USABLE = sorted(os.sched_getaffinity(0))
pytestmark = pytest.mark.skipif(len(USABLE) < 2, reason="one CPU here: no two sets to keep apart")
SERVER, CLIENTS = USABLE[0], USABLE[1]


def _threads_affinity(pid: int) -> list[set]:
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out.append(os.sched_getaffinity(int(tid)))
        except OSError:
            continue
    return out


def _server_processes(under) -> list[psutil.Process]:
    """The postmaster on a data directory under ``under`` and every process it forked (not
    benchlib's watchdog beside it)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            cmd = p.info["cmdline"] or ()
            if cmd and cmd[0].endswith("/postgres") and any(str(under) in a for a in cmd):
                found += [p, *p.children(recursive=True)]
        except psutil.Error:
            continue
    return found


def test_server_and_clients_run_on_their_own_cpus(tmp_path, monkeypatch):
    try:
        pgbin.find(None)
    except ValueError as e:
        pytest.skip(str(e))
    seen = []
    pin = cpu_sets.pin

    def pin_and_read(pids, cpus):   # what the processes say, just as they were pinned
        pin(pids, cpus)
        seen.append(([a for pid in pids for a in _threads_affinity(pid)],
                     [(set(p.cpu_affinity()), p.cmdline()) for p in _server_processes(tmp_path / "data")]))
    monkeypatch.setattr(cpu_sets, "pin", pin_and_read)
    exp = small_experiment("provcpus", "postgres-provisioned", properties={"recordcount": 300, "operationcount": 300},
                           run={"threads": [2], "loops": 1})
    exp["targets"] = [{"name": "pg", "url": "postgres-provisioned",
                       "cpus": {"server": str(SERVER), "clients": [CLIENTS]}}]
    res = run_experiment(validate(exp, "e.yaml"), tmp_path / "data", progress=False)
    assert res.ok
    assert len(seen) == 2     # the load's clients and the run loop's
    for clients, server in seen:
        assert clients and all(a == {CLIENTS} for a in clients), clients
        assert len(server) >= 3 and all(a == {SERVER} for a, _ in server), server
    (run_dir,) = [p for p in (tmp_path / "data" / "provcpus").iterdir() if p.is_dir()]
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["dbms"]["cpus"] == {"server": str(SERVER), "clients": str(CLIENTS)}


def test_a_provisioned_mariadb_is_pinned_too(tmp_path):
    from benchlib.targets.base import make_target
    t = make_target("mcpu", "mysql-provisioned", {"cpus": {"server": [SERVER]}}, tmp_path)
    t.start()
    try:
        affinities = _threads_affinity(t._proc.pid)
        assert len(affinities) > 1 and all(a == {SERVER} for a in affinities)
        assert t.dbms_info()["cpus"] == {"server": str(SERVER)}
    finally:
        t.stop()


@pytest.mark.parametrize("cpus, says", [
    ({"server": 0, "clients": 4096}, "cpus: clients: CPU 4096 is not one benchlib may run on here"),
    ({"server": "0-1", "clients": 1}, "cpus: CPU 1 is in both the server's and the clients' sets"),
    ({"server": "1-0"}, "a range runs low to high"),
    ({"sever": 0}, "a mapping {server: CPUs, clients: CPUs}"),
    ({"server": "zero"}, "CPU numbers"),
])
def test_a_bad_cpu_set_is_one_line(cpus, says):
    exp = small_experiment("provcpubad", "redis-provisioned")
    exp["targets"] = [{"name": "r", "url": "redis-provisioned", "cpus": cpus}]
    exp["workload"] = "kv"
    with pytest.raises(ParameterError) as e:
        validate(exp, "e.yaml")
    assert says in str(e.value) and "\n" not in str(e.value)
