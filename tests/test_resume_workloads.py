"""kv, ybio and LinkBench killed in loop 2 and run again: on the loaded tables the kept
steps left they resume (of 3 loops: loop 1 kept, 2-3 run, no insert finding a key the
killed loop inserted); on a table changed meanwhile (of 2 loops) they say so in one line
and run again whole. tests/test_resume.py keeps the longer case (loops 1-2 kept of 4)."""
from __future__ import annotations

import sqlite3
import uuid

import pytest
from resuming import check_resumed, check_run_again, kill_and_resume, no_insert_failed
from test_linkbench import lb_experiment
from test_resume import PACED
from test_ybio import experiment as ybio_experiment

# killed in r.L2: a loop kept, the killed loop and one after it run again, which is what
# check_resumed asserts (kept rows as they were, the rest run by the rerun); each loop
# costs ~4-5 s a run (2 s of it its clients' start), so no loop more than that
AT = "r.L2"
# paced at 200 ops/s in all (tests/test_resume.py's PACED), not flat out: the resume asks
# for ops in every loop, not the most the clients can drive
RUN = {"threads": [2], "processes": 1, "loops": 3, "loop_secs": 2, "status_interval_s": 60, **PACED}
# a run that must run again whole (ybio's, LinkBench's): a loop kept before the kill, the
# killed one the last, all of it run again
RUN_AGAIN = {**RUN, "loops": 2}
# kv's deleted half of the table must outgrow what the killed loop may have removed
# (TAIL_S of its busiest second, at most its share of the loaded keys): paced, that is
# ~10 x 20 removes of ~2,400 rows, so as the others: a loop kept, killed in the last
KV_AGAIN, KV_AT = RUN_AGAIN, AT


def kv_experiment(name: str, url: str, table: str, run: dict = RUN) -> dict:
    return {"experiment": name, "workload": "kv", "seed": 5,
            "properties": {"table": table, "key_count": 3000, "prepare_insert_ratio": 0.1,
                           "prepare_remove_ratio": 0.1, "read": 0.6, "insert": 0.2,
                           "remove": 0.1, "update": 0.1},
            "targets": [{"name": name, "url": url}], "load": {"threads": 1, "batch_size": 500},
            "run": run}


def ybio(name: str, url: str, run: dict = RUN) -> dict:
    exp = ybio_experiment(name, url, pct_update=50)
    return {**exp, "run": {**run, "threads": [1]}}


def linkbench(name: str, url: str, run: dict = RUN) -> dict:
    return lb_experiment(name, url, run=run)


def _execute(url: str, run_dir, sql: str) -> None:
    """A statement on the run's database: its SQLite file, or the PostgreSQL URL's."""
    if url == "sqlite":
        with sqlite3.connect(run_dir / "db.sqlite") as c:
            c.execute(sql)
        return
    import psycopg
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(sql)


@pytest.mark.slow
def test_kv_on_sqlite_resumes_with_inserts_and_removes(tmp_path):
    run_dir, *rest = kill_and_resume(tmp_path, kv_experiment("rkv", "sqlite", "resumeall_kv"), at=AT)
    check_resumed(run_dir, *rest, at=AT)
    no_insert_failed(run_dir)


@pytest.mark.slow
def test_kv_on_redis_resumes(tmp_path, redis_url):
    import redis
    table = "resumeall_" + uuid.uuid4().hex[:8]
    try:
        run_dir, *rest = kill_and_resume(tmp_path, kv_experiment("rkvr", redis_url, table), at=AT)
        check_resumed(run_dir, *rest, at=AT)
        no_insert_failed(run_dir)
    finally:
        r = redis.Redis.from_url(redis_url)
        for k in r.scan_iter(match=f"{table}:*", count=5000):
            r.unlink(k)
        r.unlink(table)   # benchlib's mark


@pytest.mark.slow
def test_kv_on_postgres_with_rows_deleted_runs_again(tmp_path, pg_own_db):
    def delete_half(run_dir):
        _execute(pg_own_db, run_dir, "DELETE FROM resumeall_kvpg WHERE k < '8'")
    run_dir, _, _, out = kill_and_resume(tmp_path, kv_experiment("rkvpg", pg_own_db, "resumeall_kvpg", KV_AGAIN),
                                         after_kill=delete_half, at=KV_AT)
    check_run_again(run_dir, out, "the loaded table resumeall_kvpg holds")


@pytest.mark.slow
def test_ybio_on_sqlite_resumes(tmp_path):
    run_dir, *rest = kill_and_resume(tmp_path, ybio("rybio", "sqlite"), at=AT)
    check_resumed(run_dir, *rest, at=AT)


@pytest.mark.slow
def test_ybio_on_postgres_with_its_table_dropped_runs_again(tmp_path, pg_own_db):
    exp = ybio("rybiopg", pg_own_db, RUN_AGAIN)
    table = exp["properties"]["tab_prefix"] + "0001"
    run_dir, _, _, out = kill_and_resume(
        tmp_path, exp, after_kill=lambda rd: _execute(pg_own_db, rd, f'DROP TABLE "{table}"'), at=AT)
    check_run_again(run_dir, out, "its loaded table cannot be counted")


@pytest.mark.slow
def test_linkbench_on_postgres_resumes(tmp_path, pg_own_db):
    run_dir, *rest = kill_and_resume(tmp_path, linkbench("rlb", pg_own_db), at=AT)
    check_resumed(run_dir, *rest, at=AT)


@pytest.mark.slow
def test_linkbench_on_sqlite_with_nodes_deleted_runs_again(tmp_path):
    run_dir, _, _, out = kill_and_resume(
        tmp_path, linkbench("rlbsq", "sqlite", RUN_AGAIN),
        after_kill=lambda rd: _execute("sqlite", rd, "DELETE FROM nodetable WHERE id % 2 = 0"), at=AT)
    check_run_again(run_dir, out, "the loaded table nodetable holds")
