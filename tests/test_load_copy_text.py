"""YCSB's load on PostgreSQL makes each batch as COPY's text at once (ValuePool.copy_text:
numpy cuts the values, no tuple or string per value) where it made tuples and formatted
them: the same bytes for the same draws, and the same records in the table as the rows
path loads (SQLite's) from the same seed."""
from __future__ import annotations

import sqlite3

import numpy as np
import psycopg
import pytest

from benchlib.params import validate
from benchlib.run.experiment import run_experiment
from benchlib.targets.sql.postgres import PostgresDialect
from benchlib.workloads.generators import ValuePool, build_key_names


@pytest.mark.parametrize("as_bytes", [False, True])
def test_copy_text_is_the_rows_payload_of_the_same_draws(as_bytes):
    rows_pool = ValuePool(np.random.default_rng(7), 100, as_bytes=as_bytes)
    text_pool = ValuePool(np.random.default_rng(7), 100, as_bytes=as_bytes)
    keys = build_key_names(np.arange(0, 1234, dtype=np.int64), True, 1)
    keys = [k.encode() for k in keys] if as_bytes else keys
    for _ in range(2):   # a second chunk: the draws go on alike
        flat = rows_pool.values(np.full(len(keys) * 10, 100))
        rows = [(k, *flat[i:i + 10]) for k, i in zip(keys, range(0, len(flat), 10))]
        want = PostgresDialect().bulk_payload("t", [], rows, plain=True)
        got = text_pool.copy_text([k if as_bytes else k.encode() for k in keys],
                                  text_pool.offsets(len(keys) * 10), 100)
        assert got == want


def _load(url: str, data, name: str) -> None:
    exp = validate({"experiment": name, "workload": "ycsb", "targets": [{"name": "t", "url": url}],
                    "properties": {"recordcount": 2500, "operationcount": 1, "table": "ycsbload_same",
                                   "fieldcount": 3, "fieldlength": 20},
                    "load": {"threads": 2, "processes": [1], "batch_size": 400},
                    "run": {"skip": True}, "seed": 5}, f"{name}.yaml")
    res = run_experiment(exp, data, progress=False, out=open("/dev/null", "w"))
    assert res.ok, res.runs


def test_postgres_loads_the_records_sqlite_loads_from_the_same_seed(pg_own_db, tmp_path):
    lite = tmp_path / "same.sqlite"
    _load(pg_own_db, tmp_path / "d", "pgsame")
    _load(f"sqlite:///{lite}", tmp_path / "d", "litesame")
    q = "SELECT ycsb_key, field0, field1, field2 FROM ycsbload_same ORDER BY ycsb_key"
    with psycopg.connect(pg_own_db) as c:
        pg = [tuple(r) for r in c.execute(q).fetchall()]
    with sqlite3.connect(lite) as c:
        sq = [tuple(r) for r in c.execute(q).fetchall()]
    assert len(pg) == 2500 and pg == sq
    assert all(len(v) == 20 and v.isalnum() for r in pg for v in r[1:])
