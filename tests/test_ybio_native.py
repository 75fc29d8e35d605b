"""ybio's sessions on PostgreSQL through the C loop over libpq (``run.driver: c``,
bindings/postgres_native.py) against the Python path (psycopg, :class:`PostgresYbio`),
in a database of the test's own: the same calls on two tables loaded alike give the
same statuses call by call (ranges inside the table OK, ranges past its end or over
deleted rows NOT_FOUND) and leave the same rows; one thread driving two sessions
(``run_many``) gives what the sessions give one after the other; whole runs with
``run.driver: c`` and ``python`` count their rows as the calls' batches, update the
share they are asked to, and say which path ran; ``prepared: false`` is refused for
``c`` in one line."""
from __future__ import annotations

import psycopg
import pytest

from benchlib import load_results, run_experiment
from benchlib.params import ParameterError, validate
from benchlib.targets.postgres import PostgresTarget, conninfo
from benchlib.workloads.base import Chunk
from benchlib.workloads.ybio.bindings import postgres_native as native
from benchlib.workloads.ybio.bindings.postgres import PostgresYbio
from benchlib.workloads.ybio.sql import statements

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(not native.AVAILABLE, reason=native.MISSING)]
PG = PostgresTarget.dialect
ROWS, BATCH = 300, 7


def _load(url: str, table: str):
    """``table`` with keys 1..ROWS, scratch = key, keys 101..105 deleted."""
    st = statements(PostgresYbio, PG, table, f"{table}_i")
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(st.create)
        c.execute(st.index)
        c.execute(f"INSERT INTO {table} SELECT k, k, 'x' FROM generate_series(1, {ROWS}) k")
        c.execute(f"DELETE FROM {table} WHERE mykey BETWEEN 101 AND 105")
    return st


def _calls(n: int = 200) -> list[tuple[int, int]]:
    """(code, first key): reads and updates, inside, past the end, over the hole."""
    firsts = [1, ROWS - BATCH + 1, ROWS - 2, 99, 104, 250] + [(k * 37) % (ROWS + 20) + 1 for k in range(n)]
    return [(k % 3 == 0, f) for k, f in enumerate(firsts)]


def _digest(url: str, table: str):
    with psycopg.connect(url) as c:
        return c.execute(f"SELECT count(*), sum(scratch), md5(string_agg(mykey || ':' || scratch, ',' "
                         f"ORDER BY mykey)) FROM {table}").fetchone()


def _python_statuses(url: str, st, calls) -> list[int]:
    session = PostgresYbio(psycopg.connect(url, autocommit=True))
    try:
        fns = session.calls(st, True)
        return [0 if fns[c](b"%d" % f, b"%d" % (f + BATCH - 1)) == BATCH else 1 for c, f in calls]
    finally:
        session.close()


def _chunk(calls) -> Chunk:
    codes = [int(c) for c, _ in calls]
    return Chunk(codes, [(c, f, f + BATCH - 1, BATCH) for c, f in zip(codes, (f for _, f in calls))],
                 [BATCH] * len(codes))


def test_the_c_loop_gives_the_python_sessions_statuses_and_rows(pg_own_db):
    calls = _calls()
    st_py, st_c = _load(pg_own_db, "t_py"), _load(pg_own_db, "t_c")
    expected = _python_statuses(pg_own_db, st_py, calls)
    assert 0 < expected.count(1) < len(calls)          # both outcomes are exercised
    session = native.PostgresYbioNative(conninfo(pg_own_db), st_c)
    try:
        ops = session.native(2)
        plan = ops.plan(_chunk(calls))
        i, t1, flags = ops.run(plan, 0, 1 << 62, None)
        assert (i, flags) == (len(calls), 0) and t1 > 0
        codes, statuses, lat = (bytes(x) for x in plan.results(0, len(calls))[:3])
        assert list(codes) == [int(c) for c, _ in calls]
        assert list(statuses) == expected
    finally:
        session.close()
    assert _digest(pg_own_db, "t_c") == _digest(pg_own_db, "t_py")


def test_one_thread_drives_two_sessions_as_one_after_the_other(pg_own_db):
    calls = _calls(60)
    st_a, st_b = _load(pg_own_db, "t_a"), _load(pg_own_db, "t_b")
    st_ref = _load(pg_own_db, "t_ref")
    expected = _python_statuses(pg_own_db, st_ref, calls)
    sessions = [native.PostgresYbioNative(conninfo(pg_own_db), st) for st in (st_a, st_b)]
    try:
        ops = [s.native(2) for s in sessions]
        conns = [o.conn for o in ops]
        for o in ops:
            o.conn.assign(o.plan(_chunk(calls)))
        while True:
            flags, _, _ = ops[0].run_many(conns, 1 << 62, 0, 1)
            if flags & ops[0].loop.F_IDLE or all(c.done == len(calls) for c in conns):
                break
        for c in conns:
            assert c.done == len(calls)
            assert list(bytes(c.plan.results(0, len(calls))[1])) == expected
    finally:
        for s in sessions:
            s.close()
    assert _digest(pg_own_db, "t_a") == _digest(pg_own_db, "t_b") == _digest(pg_own_db, "t_ref")


def _run(url: str, tmp_path, driver: str, threads: int = 1, paced: float = 0.0, **props):
    name = f"yn-{driver}-{threads}-{paced:g}"
    exp = validate({
        "experiment": name, "workload": "ybio",
        "properties": {"tab_prefix": "yn", "tab_rows": 2000, "batch_size": 10, "run_duration": 1.0,
                       "pct_update": 30, "status_every_s": 0.3, **props},
        "targets": [{"name": "t", "url": url}], "load": {"threads": 1, "batch_size": 500},
        "run": {"threads": [threads], "processes": 1, "driver": driver, "multiplex": threads > 1,
                "target_base": 400, "target_factors": [paced]},
        "seed": 3}, "t")
    res = run_experiment(exp, tmp_path, progress=False, force=True)
    assert res.ok, res.runs
    (run_id,) = res.runs
    return load_results(tmp_path / name / run_id), (tmp_path / name / run_id / "meta.json").read_text()


@pytest.mark.parametrize("threads", [1, 2])
def test_whole_runs_count_rows_alike_on_both_paths(pg_own_db, tmp_path, threads):
    by_driver = {}
    for driver in ("c", "python"):
        res, meta = _run(pg_own_db, tmp_path, driver, threads)
        assert f'"driver_path": "{"c-libpq" if driver == "c" else "python"}"' in meta
        lat = res["latency"][res["latency"].step == "r.L1"].set_index("op")
        step = res["steps"].set_index("step").loc["r.L1"]
        calls = lat["count"].get("READ-BATCH", 0) + lat["count"].get("UPDATE-BATCH", 0)
        assert lat["errors"].sum() == 0 and calls > 100
        # every call counted its 10 rows, as READ or UPDATE units: the step's operations
        assert lat["count"]["READ"] == 10 * lat["count"]["READ-BATCH"]
        assert lat["count"]["UPDATE"] == 10 * lat["count"]["UPDATE-BATCH"]
        assert step["ops"] == 10 * calls
        iv = res["intervals"][res["intervals"].step == "r.L1"]
        assert iv.groupby("op")["ops"].sum().to_dict() == lat["count"].to_dict()
        (b,) = res["benchruns"].to_dict("records")
        assert b["num_updated"] == lat["count"]["UPDATE"]
        by_driver[driver] = lat["count"]["UPDATE"] / step["ops"]
    # the seed's rule keeps the updated share at pct_update on both paths
    assert by_driver["c"] == pytest.approx(0.3, abs=0.01) and by_driver["python"] == pytest.approx(0.3, abs=0.01)


def test_the_c_loop_paced_records_intended_latencies_and_rows(pg_own_db, tmp_path):
    res, meta = _run(pg_own_db, tmp_path, "c", paced=1.0)      # 400 calls/s for 1 s
    assert '"driver_path": "c-libpq"' in meta
    lat = res["latency"][res["latency"].step == "r.L1"].set_index("op")["count"]
    for op in ("READ-BATCH", "UPDATE-BATCH"):
        assert lat[f"Intended-{op}"] == lat[op]
    calls = lat["READ-BATCH"] + lat["UPDATE-BATCH"]
    assert 300 <= calls <= 401 and lat["READ"] + lat["UPDATE"] == 10 * calls


def test_c_without_prepared_statements_is_refused_in_one_line():
    with pytest.raises(ParameterError, match="prepared"):
        validate({"experiment": "x", "workload": "ybio", "properties": {"prepared": False},
                  "targets": [{"name": "t", "url": "postgresql://u@127.0.0.1:5432/x"}],
                  "run": {"driver": "c"}}, "t")


def test_auto_without_prepared_statements_runs_psycopg(pg_own_db):
    from benchlib.workloads.ybio.bindings import open_session
    from benchlib.workloads.ybio.parameters import parse_parameters
    st = _load(pg_own_db, "t_auto")
    endpoint = PostgresTarget("t", pg_own_db).endpoint()
    for prepared, kind in ((True, native.PostgresYbioNative), (False, PostgresYbio)):
        session = open_session(endpoint, st, parse_parameters({"prepared": prepared}), "auto")
        try:
            assert type(session) is kind
        finally:
            session.close()
