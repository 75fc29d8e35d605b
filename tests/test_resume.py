"""A run killed during a loop resumes at that loop: the loops it finished are kept as they
are (rows, timestamps, histograms), the rest run, and no server of the killed run is left."""
from __future__ import annotations

import time

import pytest
from conftest import paced, small_experiment
from resuming import alive, check_resumed, kill_and_resume, no_insert_failed


# the loops paced at 200 ops/s in all (not flat out): what is asked of them (a second of a
# loop logged to kill in, each loop's ops and inserts counted, kept rows as they were) needs
# ops in every second, not the most a client can drive; the run ids name tgt200
PACED = paced(200)


def ycsb_experiment(name: str, url: str, **props) -> dict:
    return small_experiment(name, url, run={"loops": 4, "loop_secs": 2, "threads": [2], **PACED},
                            properties={"recordcount": 2000, "operationcount": 10**9,
                                        "readproportion": 0.5, "updateproportion": 0.5,
                                        "table": f"longruns_{name}", **props})


# the sqlite case is the long one (loops 1-2 kept of 4, 3-4 run again); the others are killed
# in r.L2 of 3 (a loop kept, the killed one and one after it run again): what they ask of
# a resumed run beside it (the keys past the killed loop's inserts; no server left) needs no
# second kept loop, and each loop costs a run ~4-5 s
SHORT = {"loops": 3}
AT = "r.L2"


@pytest.mark.slow
def test_a_killed_sqlite_run_resumes_at_its_loop(tmp_path):
    run_dir, before, lat_before, out = kill_and_resume(tmp_path, ycsb_experiment("resq", "sqlite"))
    check_resumed(run_dir, before, lat_before, out)


@pytest.mark.slow
def test_a_killed_run_with_inserts_resumes_past_the_keys_it_inserted(tmp_path, pg_own_db):
    """The killed loop's inserts are in the table: the resumed loops' inserts claim keys
    past them (no duplicate key), and the check counts them (at least the kept ones')."""
    exp = ycsb_experiment("reins", pg_own_db, readproportion=0.4, updateproportion=0.4, insertproportion=0.2,
                          requestdistribution="latest")
    exp["run"].update(SHORT)
    run_dir, before, lat_before, out = kill_and_resume(tmp_path, exp, at=AT)
    check_resumed(run_dir, before, lat_before, out, at=AT)
    no_insert_failed(run_dir)


@pytest.mark.slow
@pytest.mark.embedded
def test_a_killed_embedded_postgres_run_resumes_and_leaves_no_server(tmp_path):
    pytest.importorskip("pgserver")
    pgdata = tmp_path / "data" / ".embedded-postgres" / "repg"
    killed = []

    def postmaster_stops(run_dir):
        """The killed run's server goes by itself (its watchdog), before any rerun."""
        pid = killed[0]
        end = time.monotonic() + 60
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        assert not alive(pid), "the killed run's PostgreSQL is still running"
    exp = ycsb_experiment("repg", "embedded-postgres")
    exp["run"].update(SHORT)
    run_dir, before, lat_before, out = kill_and_resume(
        tmp_path, exp, lambda: killed.append(int((pgdata / "postmaster.pid").read_text().split()[0])),
        postmaster_stops, at=AT)
    check_resumed(run_dir, before, lat_before, out, at=AT)
    assert "left running by a killed run" not in out
    assert not (pgdata / "postmaster.pid").exists() and not alive(killed[0])
