"""The C loop over libmariadb (run.driver: c on MariaDB) against the Python loop on the
same operations: the same outcomes, the same rows, the same statuses of failing
statements; keys and values that need escaping arrive as they were sent; errors counted
as the Python path counts them (a server that ends the connections:
tests/faults/test_run_faults.py); the Python path when the extension is missing. One
thread driving all of a process's connections (run_many, libmariadb's non-blocking
calls) against a thread per connection: the same outcomes and rows, a lost connection
reported as such. Each test on a database of its own (mysql_own_db)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import mysql_rows, small_experiment
from loops import assert_paced, assert_same_outcomes, run_mix

from benchlib.params import ParameterError, validate
from benchlib.workloads.ycsb.bindings import mysql_native, open_binding
from benchlib.targets.base import Endpoint, TargetError, make_target

needs_c = pytest.mark.skipif(not mysql_native.AVAILABLE, reason=mysql_native.MISSING)

FIELDS = ", ".join(f"field{i}" for i in range(10))


@needs_c
@pytest.mark.mysql
def test_the_c_loop_and_the_python_loop_give_the_same_outcomes_and_rows(mysql_own_db, tmp_path):
    lc = assert_same_outcomes(run_mix(mysql_own_db, tmp_path, "c"), run_mix(mysql_own_db, tmp_path, "python"),
                              "c-libmariadb")
    # one thread: the same operations in the same order leave the same rows
    c_rows = mysql_rows(mysql_own_db, f"SELECT YCSB_KEY, {FIELDS} FROM t_c ORDER BY YCSB_KEY")
    assert len(c_rows) == 500 + lc["INSERT"][0]
    assert c_rows == mysql_rows(mysql_own_db, f"SELECT YCSB_KEY, {FIELDS} FROM t_python ORDER BY YCSB_KEY")


@needs_c
@pytest.mark.mysql
def test_one_thread_multiplexing_gives_what_a_thread_per_connection_gives(mysql_own_db, tmp_path):
    """2 connections of one process, driven from one thread (multiplex) and a thread each."""
    run = {"threads": [2], "processes": 1}
    lc = assert_same_outcomes(run_mix(mysql_own_db, tmp_path, "c", "mux", multiplex=True, **run),
                              run_mix(mysql_own_db, tmp_path, "c", "threads", multiplex=False, **run),
                              "c-libmariadb", "c-libmariadb")
    # the same keys: the records loaded and those inserted (which client's update of a key
    # came last is a race of the two connections: the values are compared on one
    # connection's operations below)
    keys = [mysql_rows(mysql_own_db, f"SELECT YCSB_KEY FROM t_{n} ORDER BY YCSB_KEY") for n in ("mux", "threads")]
    assert len(keys[0]) == 500 + lc["INSERT"][0] and keys[0] == keys[1]


@needs_c
@pytest.mark.mysql
@pytest.mark.parametrize("multiplex", [True, False])
def test_the_c_loop_paced_records_intended_latencies(mysql_own_db, tmp_path, multiplex):
    # paced: a thread per connection, whatever multiplex says (one thread runs closed loops)
    assert_paced(run_mix(mysql_own_db, tmp_path, "c", threads=[2], processes=1, target_factors=[1.0],
                         target_base=2000, multiplex=multiplex)[0])


def _natives(url: str, table: str, n: int) -> list:
    """n connections of the C loop on a YCSB table of 10 fields of its own."""
    from benchlib.targets.mysql import connect_params
    from benchlib.workloads.ycsb.bindings.mysql import MysqlYcsb
    from benchlib.workloads.ycsb.workload import config_from
    cfg = config_from({"recordcount": 10, "table": table})
    target = make_target("my", url, {"library": "pymysql"})
    target.start()
    MysqlYcsb.create_table(target, cfg)
    target.stop()
    return [mysql_native.MysqlYcsbNative(connect_params(url), cfg) for _ in range(n)]


def _plan(b, j: int):
    """Connection j's operations on keys of its own: every kind, with a read that finds
    nothing (NOT_FOUND) and an insert of a key that is there (ERROR)."""
    kinds = b.loop.KINDS     # the loop's operations, by YCSB's names
    codes, args = [], []
    for i in range(60):
        k, v = f"k{j}_{i}".encode(), [f"v{j}_{i}_{f}".encode() for f in range(10)]
        ops = [("INSERT", (k, v)), ("READ", (k, -1)), ("UPDATE", (k, i % 10, [b"u" + k])),
               ("SCAN", (k, 5, -1)), ("READ-MODIFY-WRITE", (k, 3, -1, v[::-1])),
               ("READ", (k + b"-", 0)), ("INSERT", (k, v))]
        codes += [kinds[o] for o, _ in ops]
        args += [a for _, a in ops]
    ops = b.native(list(kinds))
    return ops, ops.plan(SimpleNamespace(codes=codes, args=args))


def _outcomes(plan) -> tuple:
    r = plan.results(0, len(plan))
    return np.frombuffer(r[1], np.int8).tolist(), np.frombuffer(r[4], np.int64) >= 0


@needs_c
@pytest.mark.mysql
def test_run_many_gives_each_connection_what_it_gives_alone(mysql_own_db):
    """Two connections from one thread (run_many) and each alone (Conn.run), on tables of
    their own: the same statuses, a read-modify-write's read and update each timed, the
    same rows."""
    alone, mux = _natives(mysql_own_db, "t_alone", 2), _natives(mysql_own_db, "t_many", 2)
    try:
        want = []
        for j, b in enumerate(alone):
            ops, plan = _plan(b, j)
            i = 0
            while i < len(plan):
                i = ops.run(plan, i, 1 << 62, None)[0]
            want.append(_outcomes(plan))
        plans = [_plan(b, j)[1] for j, b in enumerate(mux)]
        conns = [b.conn for b in mux]
        for conn, plan in zip(conns, plans):
            conn.assign(plan)
        while True:
            flags, _, k = mysql_native._myloop.run_many(conns, 1 << 62, 0, 1)
            assert not flags & 2           # no connection lost
            if flags & 8:                  # its plan used up
                assert conns[k].done == len(plans[k])
                conns[k].assign(None)
            if flags & 16:                 # none busy
                break
        got = [_outcomes(p) for p in plans]
    finally:
        for b in alone + mux:
            b.close()
    for (st_w, rmw_w), (st_g, rmw_g) in zip(want, got):
        assert st_g == st_w and (rmw_g == rmw_w).all()
    assert st_w.count(1) == st_w.count(2) == 60 and rmw_w.sum() == 60
    rows = [mysql_rows(mysql_own_db, f"SELECT YCSB_KEY, {FIELDS} FROM {t} ORDER BY YCSB_KEY")
            for t in ("t_alone", "t_many")]
    assert len(rows[0]) == 120 and rows[0] == rows[1]


@needs_c
@pytest.mark.mysql
def test_run_many_reports_a_killed_connection_and_goes_on_with_the_others(mysql_own_db):
    """KILL CONNECTION of one of two idle connections: its next operation is an ERROR and
    run_many says it is lost (F_BROKEN, the driver reconnects it: tests/faults); the other
    runs its plan to the end."""
    import pymysql
    b = _natives(mysql_own_db, "t_kill", 2)
    try:
        plans = [_plan(x, j)[1] for j, x in enumerate(b)]
        conns = [x.conn for x in b]
        for conn, plan in zip(conns, plans):
            conn.assign(plan)
        with pymysql.connect(host="127.0.0.1", user="root", autocommit=True) as k:
            k.cursor().execute(f"KILL CONNECTION {int(conns[0].thread_id)}")
        seen = []
        while True:
            flags, _, k = mysql_native._myloop.run_many(conns, 1 << 62, 0, 1)
            seen.append((flags, k))
            if flags & 2:
                assert conns[k].closed and conns[k].done == 1
                conns[k].assign(None)
            if flags & 8:
                conns[k].assign(None)
            if flags & 16:
                break
        assert seen[0] == (2, 0) and (8, 1) in seen
        assert _outcomes(plans[0])[0][0] == 2 and _outcomes(plans[1])[0].count(2) == 60
    finally:
        for x in b:
            x.close()


def _bindings(url: str):
    from benchlib.targets.mysql import connect_params
    from benchlib.workloads.ycsb.bindings.mysql import MysqlYcsb
    from benchlib.workloads.ycsb.workload import config_from
    cfg = config_from({"recordcount": 10, "table": "usertable"})
    target = make_target("my", url, {"library": "pymysql"})
    target.start()
    MysqlYcsb.create_table(target, cfg)
    target.stop()
    return MysqlYcsb(target.endpoint(), cfg), mysql_native.MysqlYcsbNative(connect_params(url), cfg)


@needs_c
@pytest.mark.mysql
def test_a_failing_statement_is_an_error_of_its_operation_on_both_paths(mysql_own_db):
    py, c = _bindings(mysql_own_db)
    # quotes, backslashes, a NUL-free multibyte value and SQL in a key: sent as values
    odd = "o'ne\\\"; DROP TABLE usertable; -- é€".encode()
    v = [b"x" * 10] * 10

    def st(b, op: str, *args) -> int:
        """The status the driver records: the Python binding raises where C returns 2
        (the client thread counts the exception as an ERROR)."""
        if b is py:
            args = tuple(a.decode() if isinstance(a, bytes) else
                         [x.decode() for x in a] if isinstance(a, list) else a for a in args)
        try:
            return getattr(b, op)(*args)
        except Exception:  # noqa: BLE001 - the library's error class
            return 2

    def ops(b):
        return [st(b, "insert", b"k1", v), st(b, "insert", b"k1", v), st(b, "read", b"k1", -1),
                st(b, "read", b"k2", 3), st(b, "update", b"k1", 2, [odd]),
                st(b, "update", b"k9", -1, v), st(b, "scan", b"k", 5, -1),
                st(b, "insert", odd, [odd] * 10), st(b, "read", odd, 4)]
    statuses = []
    for b in (py, c):
        py.cur.execute("DELETE FROM usertable")
        statuses.append(ops(b))
        py.cur.execute("SELECT field2 FROM usertable WHERE YCSB_KEY = 'k1'")
        assert py.cur.fetchall() == ((odd.decode(),),)
        py.cur.execute("SELECT field9 FROM usertable WHERE YCSB_KEY = %s", (odd.decode(),))
        assert py.cur.fetchall() == ((odd.decode(),),)
    # duplicate key an error; a read that finds nothing NOT_FOUND; an update that finds
    # nothing OK, as MariaDB reports rows changed (targets/mysql.py)
    assert statuses[0] == statuses[1] == [0, 2, 0, 1, 0, 0, 0, 0, 0]
    py.cur.execute("ALTER TABLE usertable DROP COLUMN field4")   # the statements fail now
    broken = [[st(b, "read", b"k1", 4), st(b, "read", b"k1", 0)] for b in (py, c)]
    assert broken[0] == broken[1] == [2, 0]        # an error; the connection goes on
    assert not c.conn.closed
    py.cur.execute(f"KILL CONNECTION {int(c.conn.thread_id)}")
    assert c.read(b"k1", 0) == 2 and c.conn.closed   # lost: the driver reconnects
    py.close()
    c.close()


@needs_c
def test_a_server_that_is_not_there_is_one_line_without_the_password():
    ep = Endpoint("mysql", {"params": {"host": "127.0.0.1", "port": 1, "user": "root",
                                       "password": "s3cret-pw", "database": "test"},
                            "library": "pymysql"})
    from benchlib.workloads.ycsb.workload import config_from
    with pytest.raises(TargetError) as e:
        open_binding(ep, config_from({"recordcount": 10}), "c")
    msg = str(e.value)
    assert msg.startswith("cannot connect to mysql://root@127.0.0.1:1/test: ")
    assert len(msg.splitlines()) == 1 and "s3cret-pw" not in msg


def test_driver_c_on_mariadb_without_the_extension_is_refused(monkeypatch):
    monkeypatch.setattr(mysql_native, "AVAILABLE", False)   # as where it could not be built
    with pytest.raises(ParameterError, match="_myloop is not built"):
        validate(small_experiment("d", "mysql://root@127.0.0.1/db", run={"driver": "c"}), "t")
    assert validate(small_experiment("d", "mysql://root@127.0.0.1/db"), "t").run.driver == "auto"


@pytest.mark.mysql
def test_without_the_extension_auto_runs_the_python_binding(mysql_own_db, monkeypatch):
    from benchlib.targets.mysql import connect_params
    from benchlib.workloads.ycsb.bindings.mysql import MysqlYcsb
    from benchlib.workloads.ycsb.workload import config_from
    monkeypatch.setattr(mysql_native, "AVAILABLE", False)
    ep = Endpoint("mysql", {"params": connect_params(mysql_own_db), "library": "pymysql"})
    b = open_binding(ep, config_from({"recordcount": 10}), "auto")
    assert isinstance(b, MysqlYcsb)
    b.close()


def test_a_storage_engine_that_is_not_a_name_is_refused_before_any_sql():
    # refused as the target is made (issue 41: at validation), so no statement can carry it
    with pytest.raises(TargetError, match="my: options: engine .* is not a storage engine's name"):
        make_target("my", "mysql://root@127.0.0.1:1/test", {"library": "pymysql", "engine": "InnoDB; DROP TABLE x"})
