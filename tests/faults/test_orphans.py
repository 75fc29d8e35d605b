"""After a SIGKILL of benchlib nothing of its run lives on: no client process, no resource
tracker, no connection to the database, no shared-memory segment of it (issue 41, 8).

The run is killed at three moments: as a step's line is printed (the next step's clients
not spawned yet or being spawned), once the next step's client processes exist but are
still starting (the 0.2-0.3 s after a step's line that left orphans for an hour), and in a
loop; and its whole process group in a loop, the resource tracker with it: the next
counter made on the host unlinks the segment, the next run the multiprocessing
semaphores (/dev/shm/sem.mp-*) no process maps any more. Each moment is waited for (the line read, the processes seen in /proc, a second of
the loop logged), never slept to."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import small_experiment
from benchlib.run import semaphores
from benchlib.workloads import keycounter
from resuming import (children, cli, line_reader, session_pids, shm_segments, wait_inside_loop,
                      wait_line, wait_until)

GONE_S = 10      # what the issue allows: nothing of the run 10 s after the kill


def _spawned(pid: int) -> set[int]:
    """The run's client processes: forked by its forkserver (benchlib/run/forkserver.py),
    or spawned by the controller where there is none."""
    out = set()
    for kid in children(pid):
        try:
            cmdline = Path(f"/proc/{kid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"--multiprocessing-fork" in cmdline:
            out.add(kid)
        elif b"multiprocessing.forkserver" in cmdline:
            out |= children(kid)
    return out


def _backends(url: str) -> int:
    import psycopg
    with psycopg.connect(url, autocommit=True) as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                         "AND pid <> pg_backend_pid()").fetchone()[0]


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("moment", ["step_line", "clients_starting", "in_loop", "whole_group"])
def test_nothing_of_a_killed_run_lives_on(tmp_path, pg_own_db, moment):
    exp = small_experiment("orph", pg_own_db, run={"threads": [4], "processes": 2, "loops": 3,
                                                   "loop_secs": 2},
                           properties={"recordcount": 3000, "operationcount": 10**9,
                                       "readproportion": 0.95, "updateproportion": 0,
                                       "insertproportion": 0.05, "requestdistribution": "latest",
                                       "table": "orphans"})
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exp))
    proc = cli("run", path, "--data-dir", tmp_path / "data", "--no-progress", start_new_session=True)
    lines = line_reader(proc)
    wait_line(lines, "l.pre", proc)
    if moment == "clients_starting":   # r.L1's processes started, not yet connected
        assert wait_until(lambda: _spawned(proc.pid), 60, 0.005), "no client process spawned"
    elif moment in ("in_loop", "whole_group"):
        wait_inside_loop(tmp_path / "data" / "orph", "r.L1", proc, loop_s=2)
    pids = session_pids(proc.pid)
    segments = shm_segments(pids)
    assert segments, "the run maps no insert counter segment: nothing to check"
    sems = shm_segments(pids, ("/dev/shm/sem.mp-",))   # as the clients opened them
    if moment == "whole_group":   # the resource tracker killed too: the next run sweeps
        # (a run may map none at this moment: then the check below that none is left holds
        # for what it did map)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_until(lambda: not session_pids(proc.pid), GONE_S, 0.1)
        assert [s for s in segments if Path(s).exists()], "nothing left to sweep"
        # the kill leaves the run's semaphores, but in a parallel suite another run's
        # executor may sweep them first (they are stale): what must hold is that none is left
        keycounter.create(0, 1).close(unlink=True)       # what the next run's counter does
        semaphores.sweep()                                # what the next run's executor does
    else:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    left = wait_until(lambda: not session_pids(proc.pid) and
                      not [s for s in segments if Path(s).exists()], GONE_S, 0.1)
    assert left, (f"{GONE_S} s after the kill: processes {sorted(session_pids(proc.pid))}, "
                  f"segments {[s for s in segments if Path(s).exists()]}")
    assert wait_until(lambda: _backends(pg_own_db) == 0, GONE_S, 0.1), "connections left"
    assert not [s for s in sems if Path(s).exists()], "the run's semaphores left in /dev/shm"


def test_the_next_counter_unlinks_the_segments_of_dead_controllers():
    from multiprocessing import resource_tracker, shared_memory
    dead = _exited_pid()
    names = [f"{keycounter.PREFIX}{dead}_0123456789ab", f"{keycounter.PREFIX}{os.getpid()}_ba9876543210"]
    made = [shared_memory.SharedMemory(name=n, create=True, size=64) for n in names]
    try:
        keycounter.create(0, 1).close(unlink=True)
        assert not (keycounter.SHM_DIR / names[0]).exists()     # its process is gone
        assert (keycounter.SHM_DIR / names[1]).exists()         # this one's: alive
    finally:
        for shm in made:
            shm.close()
            if (keycounter.SHM_DIR / shm.name.lstrip("/")).exists():
                shm.unlink()
            else:   # swept: this process's resource tracker need not unlink it at exit
                resource_tracker.unregister(f"/{shm.name.lstrip('/')}", "shared_memory")


def _exited_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid
