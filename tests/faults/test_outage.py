"""A stall is a row of 0 and an outage is not ok (issues 35.3 and 41.9), on a real
PostgreSQL database of the test's own.

- A lock: the test's own connection holds ``LOCK TABLE … IN ACCESS EXCLUSIVE MODE`` on
  the run's table for 3.2 s while a run loop (closed, then paced) is at work: every op of
  the loop has rows of 0 ops for the seconds the lock covered (at least 2 whole ones), the
  time series draws them as 0, and the run stays ok (no connection was lost: a stall is
  the server's performance, not an outage).
- An outage: the database stops accepting connections (``ALLOW_CONNECTIONS false``) and
  the run's sessions are ended (found by the application name benchlib gives them, in the test's own database, and
  the loop's statement) for 2.5 s: the loop reconnects when it may again; its seconds
  out are rows of 0, the step is ``degraded`` with the reason, the run is ``degraded``,
  and a rerun measures the loop again (``ok``) keeping the load.

Each case waits for the run's clients (polling pg_stat_activity) before it acts; the lock
and the outage last a set time on purpose (the fault's length), never to wait for a state.
"""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from conftest import paced

from benchlib import load_results, run_experiment
from benchlib.params import validate

pytestmark = pytest.mark.postgres
THREADS = 4


def _experiment(url: str, name: str, target: float | None = None, loop_secs: float = 6) -> dict:
    run = {"threads": [THREADS], "processes": 1, "loops": 1, "loop_secs": loop_secs}
    if target:
        run.update(paced(target))
    props = {"table": name, "recordcount": 2000, "operationcount": 0, "readproportion": 0.5,
             "updateproportion": 0.5, "requestdistribution": "uniform"}
    return validate({"experiment": name, "workload": "ycsb", "properties": props,
                     "targets": [{"name": "t", "url": url}], "load": {"threads": 1},
                     "run": run, "seed": 3}, name)


def _admin(url: str):
    import psycopg
    return psycopg.connect(url, autocommit=True, application_name="outage-test")


# the run's own sessions: the application_name benchlib gives them (benchlib-<hex>; its
# sampler's are <that>-monitor), in the test's own database
RUN_SESSION = "application_name LIKE 'benchlib-%%' AND application_name NOT LIKE '%%-monitor'"


def _wait_for_loop(c, table: str, want: int = THREADS, wait_s: float = 120) -> set[int]:
    """The pids of the run loop's sessions: ``want`` of the run's sessions at once whose
    statement is one of the loop's (a read or an update of ``table`` by its key)."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        now = {r[0] for r in c.execute(
            f"SELECT pid FROM pg_stat_activity WHERE {RUN_SESSION} AND datname = current_database() "
            "AND (query LIKE %s OR query LIKE %s)", (f'SELECT %FROM "{table}" WHERE %', f'UPDATE "{table}" SET %'))}
        if len(now) >= want:
            return now
        time.sleep(0.02)
    raise AssertionError("the run loop's sessions never showed")


def _in_background(fn) -> tuple[threading.Thread, list]:
    errors: list = []

    def body():
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t, errors


def _zero_seconds(iv, step: str = "r.L1") -> dict[str, set[int]]:
    """Per op of ``step``: the whole seconds with a row of 0 ops."""
    mine = iv[(iv.step == step) & (iv.interval_s >= 0.99) & ~iv.op.str.startswith("Intended")]
    return {op: set(g.loc[g.ops == 0, "second"].astype(int)) for op, g in mine.groupby("op")}


@pytest.mark.parametrize("target", [None, 400.0], ids=["closed", "paced"])
def test_a_lock_leaves_rows_of_zero_and_the_run_ok(pg_own_db, tmp_path, target):
    name = f"stall_{uuid.uuid4().hex[:8]}"

    def lock():
        with _admin(pg_own_db) as c:
            _wait_for_loop(c, name)
            with c.transaction():
                c.execute(f'LOCK TABLE "{name}" IN ACCESS EXCLUSIVE MODE')
                time.sleep(3.2)      # the stall's length: the fault itself
    t, errors = _in_background(lock)
    res = run_experiment(_experiment(pg_own_db, name, target), tmp_path / "d", progress=False)
    t.join(30)
    assert not errors, errors
    assert res.ok, res.runs
    r = load_results(tmp_path / "d" / name)
    step = r["steps"].set_index("step").loc["r.L1"]
    assert step.status == "ok" and step.reconnects == 0 and step.outage_s == 0
    zeros = _zero_seconds(r["intervals"])
    assert set(zeros) == {"READ", "UPDATE"}
    assert all(len(s) >= 2 for s in zeros.values()), zeros          # the lock's whole seconds
    assert zeros["READ"] == zeros["UPDATE"]
    iv = r["intervals"][r["intervals"].step == "r.L1"]
    assert iv.groupby("op")["second"].nunique().eq(iv["second"].nunique()).all()   # no gap
    if target:
        assert iv.loc[iv.ops == 0, "intended_p99_us"].isna().all()   # nothing ended: no latency
    # the batch means and the steady-state check read them as whole seconds of rate 0
    from benchlib.summaries.uncertainty import interval_rates
    rates = interval_rates(iv)
    assert ((rates["rate"] == 0) & rates["whole"]).sum() >= 2
    # the time series draws them as 0: the black lines of all operations (a line a step)
    import numpy as np
    from benchlib.plots.timeseries import timeseries
    fig = timeseries(r)
    total = np.concatenate([line.get_ydata() for line in fig.axes[0].lines if line.get_color() == "black"])
    assert (total == 0).sum() >= 2


def test_an_outage_is_degraded_and_a_rerun_measures_the_loop_again(pg_own_db, tmp_path):
    import psycopg
    from psycopg import sql
    name = f"outage_{uuid.uuid4().hex[:8]}"
    db = pg_own_db.rsplit("/", 1)[1]
    admin_url = pg_own_db.rsplit("/", 1)[0] + "/postgres"
    allow = sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}")
    ended: list[int] = []

    def outage():
        with _admin(pg_own_db) as c:
            _wait_for_loop(c, name)
        try:
            with _admin(admin_url) as c:
                c.execute(allow.format(sql.Identifier(db), sql.SQL("false")))
                until = time.monotonic() + 2.5      # the outage's length: the fault itself
                while time.monotonic() < until:
                    pids = [r[0] for r in c.execute(f"SELECT pid FROM pg_stat_activity WHERE {RUN_SESSION} "
                                                    "AND datname = %s", (db,))]
                    ended.extend(p for p in pids
                                 if c.execute("SELECT pg_terminate_backend(%s)", (p,)).fetchone()[0])
                    time.sleep(0.05)
        finally:
            with _admin(admin_url) as c:
                c.execute(allow.format(sql.Identifier(db), sql.SQL("true")))
    t, errors = _in_background(outage)
    exp = _experiment(pg_own_db, name)
    res = run_experiment(exp, tmp_path / "d", progress=False)
    t.join(30)
    assert not errors, errors
    assert len(set(ended)) >= THREADS
    assert res.runs == {next(iter(res.runs)): "degraded"} and not res.ok
    r = load_results(tmp_path / "d" / name)
    (meta,) = r["runs"]["meta"]
    assert meta["status"] == "degraded" and meta["error"].startswith("degraded: r.L1: outage: ")
    step = r["steps"].set_index("step").loc["r.L1"]
    assert step.status == "degraded" and step.reconnects >= THREADS and step.outage_s >= 0.6
    assert r["steps"].set_index("step").loc["l.pre"].status == "ok"
    from benchlib.store.catalog import list_runs
    from benchlib.summaries import not_finished
    assert list(list_runs(tmp_path / "d")["status"]) == ["degraded"]          # the catalog
    assert "degraded: r.L1: outage: " in not_finished(r)   # the report's note
    zeros = _zero_seconds(r["intervals"])
    assert all(len(s) >= 1 for s in zeros.values()) and set(zeros) == {"READ", "UPDATE"}
    # a rerun without --force keeps the load and measures the degraded loop again
    with psycopg.connect(admin_url, autocommit=True) as c:   # the database answers again
        c.execute("SELECT 1")
    res = run_experiment(exp, tmp_path / "d", progress=False)
    assert res.ok, res.runs
    r = load_results(tmp_path / "d" / name)
    (meta,) = r["runs"]["meta"]
    assert meta["status"] == "ok" and [x["kept"] for x in meta["resumptions"]] == [["l.pre"]]
    assert r["steps"].set_index("step").loc["r.L1"].status == "ok"
    assert not r["intervals"].duplicated(["step", "second", "op"]).any()   # the new loop's alone


@pytest.mark.mysql
def test_a_mariadb_outage_is_degraded(mysql_own_db, tmp_path):
    """MariaDB: the run's own user is locked out (``ACCOUNT LOCK``) and its connections
    killed for 2.5 s; the loop reconnects once it may again, and is degraded."""
    import pymysql
    db = mysql_own_db.rsplit("/", 1)[1]
    user = f"bl_out_{uuid.uuid4().hex[:8]}"
    name = f"outage_{uuid.uuid4().hex[:8]}"
    admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", autocommit=True)
    cur = admin.cursor()
    cur.execute(f"CREATE USER '{user}'@'%'")
    cur.execute(f"GRANT ALL ON `{db}`.* TO '{user}'@'%'")
    url = f"mysql://{user}@127.0.0.1:3306/{db}"
    killed: list[int] = []

    def ids() -> list[int]:
        cur.execute("SELECT id FROM information_schema.processlist WHERE user = %s AND "
                    "(info LIKE %s OR info LIKE %s)", (user, f"SELECT %FROM `{name}` WHERE %",
                                                       f"UPDATE `{name}` SET %"))
        return [r[0] for r in cur.fetchall()]

    def outage():
        end = time.monotonic() + 120
        while len(ids()) < 2 and time.monotonic() < end:   # the loop's sessions at work
            time.sleep(0.02)
        try:
            cur.execute(f"ALTER USER '{user}'@'%' ACCOUNT LOCK")
            until = time.monotonic() + 2.5      # the outage's length: the fault itself
            while time.monotonic() < until:
                cur.execute("SELECT id FROM information_schema.processlist WHERE user = %s", (user,))
                for (cid,) in cur.fetchall():
                    try:
                        cur.execute(f"KILL CONNECTION {int(cid)}")
                        killed.append(cid)
                    except pymysql.err.OperationalError:   # it ended meanwhile
                        pass
                time.sleep(0.05)
        finally:
            cur.execute(f"ALTER USER '{user}'@'%' ACCOUNT UNLOCK")
    try:
        t, errors = _in_background(outage)
        res = run_experiment(_experiment(url, name), tmp_path / "d", progress=False)
        t.join(30)
        assert not errors, errors
        assert killed and list(res.runs.values()) == ["degraded"]
        r = load_results(tmp_path / "d" / name)
        step = r["steps"].set_index("step").loc["r.L1"]
        assert step.status == "degraded" and step.reconnects >= 1 and step.outage_s >= 0.6
        assert all(len(s) >= 1 for s in _zero_seconds(r["intervals"]).values())
    finally:
        cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        admin.close()
