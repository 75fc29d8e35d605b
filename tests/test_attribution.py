"""The server's work of this run (issue 35, item 4): dsec counts the run's own sessions
over exactly the step's window, the server-wide figure beside it, a line when other
databases were busy; client CPU from the clients' getrusage alone."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import small_experiment

from benchlib import load_results, run_experiment
from benchlib.hw.sessions import SessionAccount, read_task
from benchlib.params import validate
from benchlib.summaries import eff_op, summarize
from benchlib.summaries.samples import run_samples


class BusyDatabase:
    """A database of the test's own beside the run's, a thread running a CPU-heavy query
    in a loop there until stopped; ``commits`` it made."""

    def __init__(self, pg_url: str, name: str):
        import psycopg
        from psycopg import sql
        self.admin, self.name = pg_url, name
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.url = pg_url.rsplit("/", 1)[0] + "/" + name
        self.stop, self.commits = threading.Event(), 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        import psycopg
        with psycopg.connect(self.url, autocommit=True) as c:
            while not self.stop.is_set():
                c.execute("SELECT sum(i::bigint * i) FROM generate_series(1, 300000) i").fetchone()
                self.commits += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        import psycopg
        from psycopg import sql
        self.stop.set()
        self.thread.join(30)
        with psycopg.connect(self.admin, autocommit=True) as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name)))


class BackendWatch:
    """The test's own reading of the run's backends from /proc: every 10 ms the CPU of
    each backend whose application_name starts with ``benchlib-`` and that connected to
    the run's database after ``armed``, its last value kept (a backend that goes keeps
    what it had)."""

    def __init__(self, url: str):
        self.url, self.last, self.born = url, {}, {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        import psycopg
        with psycopg.connect(self.url, autocommit=True) as c:
            listed = 0.0
            while not self.stop.is_set():
                if time.monotonic() - listed > 0.1:
                    rows = c.execute("SELECT pid, backend_start FROM pg_stat_activity WHERE datname = "
                                     "current_database() AND application_name LIKE 'benchlib-%' "
                                     "AND application_name NOT LIKE '%-monitor'").fetchall()
                    for pid, started in rows:
                        self.born.setdefault(pid, started)
                    listed = time.monotonic()
                for pid in list(self.born):
                    got = read_task((pid, None))
                    if got is not None:
                        self.last[pid] = got[1]
                time.sleep(0.01)

    def cpu_s(self, after) -> float:
        """The CPU of the backends that connected after ``after`` (a step's own clients')."""
        return sum(cpu for pid, cpu in self.last.items() if self.born[pid] > after)


def test_dsec_is_the_runs_own_backends_beside_a_busy_database(pg_own_db, pg_url, data_dir):
    # scans: the backends' CPU per operation well above the clients' (ticks of 10 ms add up)
    props = {"recordcount": 2000, "operationcount": 10**8, "readproportion": 0, "updateproportion": 0,
             "scanproportion": 1.0, "maxscanlength": 500, "requestdistribution": "uniform"}
    exp = validate(small_experiment("attr", pg_own_db, properties=props,
                                    run={"threads": [2], "loops": 1, "loop_secs": 4, "driver": "python"}), "t")
    watch = BackendWatch(pg_own_db)
    watch.thread.start()
    busy_name = pg_own_db.rsplit("/", 1)[1] + "_busy"
    try:
        with BusyDatabase(pg_url, busy_name) as busy:
            deadline = time.monotonic() + 60
            while busy.commits < 2 and time.monotonic() < deadline:   # busy before the run starts
                time.sleep(0.05)
            assert run_experiment(exp, data_dir, out=sys.stderr).ok
            assert busy.commits > 2
    finally:
        watch.stop.set()
        watch.thread.join(10)
    res = load_results(data_dir / "attr")
    steps = res["steps"].set_index("step")
    run = steps.loc["r.L1"]
    assert run["dbms_attribution"] == "sessions"
    assert run["dbms_sessions"] >= 2                          # the two clients' backends
    own = watch.cpu_s(steps.loc["l.pre", "ended"])            # r.L1's clients connected after the load
    assert own > 0.5, own
    eff = eff_op(res).set_index("step").loc["r.L1"]
    reference_us = own / run["ops"] * 1e6
    print(f"dsecpq {eff['dsecpq']:.1f} us/op, the run's backends from /proc {reference_us:.1f}, "
          f"the whole server {eff['dsecpq_all']:.1f}; other databases' commits {run['other_db_commits']}")
    # dsecpq: the run's own backends over the step; the test's /proc reading also holds the
    # clients' connecting and preparing, before the step (a few ms each)
    assert abs(eff["dsecpq"] - reference_us) <= 0.10 * reference_us, (eff["dsecpq"], reference_us)
    # the whole server did more: the busy database's query loop ran on it meanwhile
    assert eff["dsec_all"] > eff["dsec"] + 0.2
    assert run["other_db_commits"] > 0
    text = summarize(res, "eff.op")
    assert "other databases on the server were busy during the step" in text
    assert "the run's own sessions" in text
    # the points' CPU per operation: the clients' getrusage + the run's own backends
    pts = run_samples(res)
    expected = (run["client_cpu_s"] + run["dbms_cpu_s"]) / run["ops"] * 1e6
    assert pts["cpu_us_per_op"].iloc[0] == pytest.approx(expected)


def test_session_account_keeps_a_session_that_went(tmp_path):
    """Two CPU-burning processes of the test's own, listed as sessions; one exits before
    the window ends: its last reading stays in, and the sum matches what the kernel
    says each used (their rusage at exit, read by wait4)."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"
    procs = [subprocess.Popen([sys.executable, "-c", burn.format(s=s)]) for s in (0.6, 2.0)]
    acct = SessionAccount(lambda: [(p.pid, None) for p in procs if p.returncode is None])
    acct.begin()
    cpu = {}
    while len(cpu) < 2:
        acct.poll()
        for p in procs:
            if p.pid not in cpu:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    p.returncode = status
                    cpu[pid] = ru.ru_utime + ru.ru_stime
        time.sleep(0.01)
    work = acct.end()
    assert work.sessions == 2
    # each started before begin() (its interpreter's start-up is not in the window) and
    # its last 10 ms may fall after the last poll: within 0.15 s of the kernel's sum
    assert work.cpu_s == pytest.approx(sum(cpu.values()), abs=0.15)
    assert work.cpu_s > 2.0


def test_mariadb_without_performance_schema_says_so(mysql_own_db, data_dir):
    """The machine's MariaDB runs without performance_schema: dsec is the whole server's,
    the steps say so and the run prints why, once."""
    from conftest import mysql_rows
    if str(mysql_rows(mysql_own_db, "SELECT @@performance_schema")[0][0]).upper() in ("1", "ON"):
        pytest.skip("this MariaDB has performance_schema on")
    exp = validate(small_experiment("mattr", mysql_own_db, properties={"recordcount": 500, "operationcount": 1000}), "t")
    import io
    out = io.StringIO()
    assert run_experiment(exp, data_dir, out=out).ok
    steps = load_results(data_dir / "mattr")["steps"]
    assert set(steps["dbms_attribution"]) == {"server"}
    assert (steps["dbms_cpu_s"] == steps["dbms_server_cpu_s"]).all()
    assert out.getvalue().count("performance_schema is off") == 1


def test_redis_counts_its_one_process_over_the_step(redis_url, tmp_path):
    """Redis: the run's work is the server's one process, read at the step's start and
    end; the whole run's span as /proc says it holds at least the steps' sum."""
    import uuid

    import redis
    from benchlib.targets.base import make_target
    t = make_target("r", redis_url)
    t.start()
    pid = t.dbms_pids()[0]
    t.stop()
    table = "t" + uuid.uuid4().hex[:10]
    exp = validate({"experiment": "kva", "workload": "kv", "seed": 5,
                    "properties": {"a": 1.0, "key_count": 2000, "op_count": 20000, "table": table},
                    "targets": [{"name": "redis", "url": redis_url}],
                    "load": {"threads": 1, "batch_size": 500}, "run": {"threads": [2], "loops": 1}}, "t")
    before = read_task((pid, None))[1]
    try:
        assert run_experiment(exp, tmp_path / "d", out=sys.stderr).ok
    finally:
        after = read_task((pid, None))[1]
        r = redis.Redis.from_url(redis_url)
        keys = list(r.scan_iter(match=f"{table}:*", count=5000))
        r.unlink(*keys, table)   # the table's keys and benchlib's mark
        r.close()
    steps = load_results(tmp_path / "d" / "kva")["steps"]
    assert set(steps["dbms_attribution"]) == {"process"}
    assert (steps["dbms_cpu_s"] - steps["dbms_server_cpu_s"]).abs().max() <= 0.02   # one process, two readers
    assert 0 < steps["dbms_cpu_s"].sum() <= after - before + 0.01


def test_each_run_names_its_connections_apart(pg_own_db):
    """Every connection of a run carries its target's application_name, another run's
    target another (a URL's own is replaced), and session_tasks lists exactly them."""
    from benchlib.targets.base import make_target
    a = make_target("a", pg_own_db + "?application_name=mine")
    b = make_target("b", pg_own_db)
    assert a.app_name != b.app_name and a.app_name.startswith("benchlib-")
    a.start()
    try:
        conns = [a.connect(), a.endpoint().connect()]
        names = {c.execute("SHOW application_name").fetchone()[0] for c in conns}
        assert names == {a.app_name}
        pids = {c.execute("SELECT pg_backend_pid()").fetchone()[0] for c in conns}
        listed = {pid for pid, _ in a.session_tasks()}
        assert pids <= listed and a.admin().execute("SELECT pg_backend_pid()").fetchone()[0] in listed
        assert len(listed) == 3          # the admin connection and these two; not the sampler's own
        for c in conns:
            c.close()
    finally:
        a.stop()
