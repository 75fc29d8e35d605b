"""YCSB's chunks for the C loops as packed columns (workloads/ycsb/columns.py, the loops'
Plan.columns in workloads/_native/_sqlcols.h): the same operations, keys and values as
the argument tuples the Python path makes from the same seed (the tuples' own draws,
alphabet and lengths), checked inputs, and on PostgreSQL the values YCSB writes: one
field of fieldlength characters of the pool's alphabet per update, every update counted."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import small_experiment

from benchlib import load_results, run_experiment
from benchlib.params import validate
from benchlib.workloads.generators import ValuePool
from benchlib.workloads.ycsb.bindings import postgres_native as pg_native
from benchlib.workloads.ycsb.columns import ChunkColumns
from benchlib.workloads.ycsb.plan import CoreWorkloadPlan, field_length_generator
from benchlib.workloads.ycsb.workload import RUN_OPS, YcsbRunClient, config_from

needs_c = pytest.mark.skipif(not pg_native.AVAILABLE, reason=pg_native.MISSING)


class _Offline(YcsbRunClient):
    """A run client's chunk making alone, its binding's two attributes that next_chunk
    reads given (bytes arguments; a C loop or none): no connection is opened."""

    def __init__(self, props: dict, native):
        cfg = config_from({"recordcount": 1000, "operationcount": 10**9, **props})
        self.cfg, self.core = cfg, cfg.core
        self.plan = CoreWorkloadPlan(cfg.core, 0, 1, 7, None)
        self.rng = np.random.default_rng(3)
        self.as_bytes, self.native = True, native
        self.pool = ValuePool(self.rng, int(cfg.core.fieldlength), as_bytes=True)
        self.lengths = field_length_generator(cfg.core, self.rng)
        self.remaining, self.chunk_cap = None, None


PROPS = [
    {"readproportion": 0.5, "updateproportion": 0.5, "requestdistribution": "uniform"},   # YCSB A
    {"readproportion": 0.2, "updateproportion": 0.2, "insertproportion": 0.2, "scanproportion": 0.2,
     "readmodifywriteproportion": 0.2, "insertorder": "ordered", "zeropadding": 12,
     "fieldlengthdistribution": "uniform", "minfieldlength": 3, "readallfields": "false"},
    {"readproportion": 0.1, "updateproportion": 0.3, "insertproportion": 0.3,
     "readmodifywriteproportion": 0.3, "writeallfields": "true", "fieldlength": 7,
     "fieldlengthdistribution": "zipfian"},
]


@pytest.mark.parametrize("props", PROPS)
def test_the_columns_are_the_tuples_the_python_path_makes(props):
    tuples, columns = _Offline(props, None), _Offline(props, object())
    for _ in range(3):   # chunk after chunk: the draws stay in step
        a, b = tuples.next_chunk(2000), columns.next_chunk(2000)
        assert isinstance(b.args, ChunkColumns) and not isinstance(a.args, ChunkColumns)
        assert list(a.codes) == list(b.codes)
        assert a.args == list(b.args)


@needs_c
@pytest.mark.parametrize("props", PROPS)
def test_a_plan_from_columns_takes_the_chunk_as_the_tuples_plan_does(props):
    loop = pg_native._pgloop
    kinds = bytes(loop.KINDS[n] for n in RUN_OPS)
    tuples, columns = _Offline(props, None), _Offline(props, object())
    a, b = tuples.next_chunk(3000), columns.next_chunk(3000)
    nf = int(tuples.core.fieldcount)
    assert len(loop.Plan(a.codes, a.args, kinds, nf)) == len(loop.Plan.columns(*b.args.packed(kinds, nf))) == 3000


@needs_c
def test_columns_that_do_not_fit_are_refused_in_one_line():
    loop = pg_native._pgloop
    kinds = bytes(loop.KINDS[n] for n in RUN_OPS)
    cols = _Offline(PROPS[0], object()).next_chunk(100).args
    good = list(cols.packed(kinds, 10))
    # a key column short; a pool too short for its values; a value fewer (an update
    # without its value); a loop with fewer fields than the chunk's
    for bad, what in (({5: cols.keys[:50]}, "unequal lengths"), ({10: b"x" * 50}, "outside the pool"),
                      ({11: cols.offsets[:-1], 12: cols.lengths[:-1]}, "values or field out of range"),
                      ({2: 3}, "values or field out of range")):
        args = [bad.get(i, x) for i, x in enumerate(good)]
        with pytest.raises(ValueError, match=what):
            loop.Plan.columns(*args)


@needs_c
@pytest.mark.postgres
def test_updates_from_columns_write_ycsbs_values_and_are_all_counted(pg_own_db, tmp_path):
    import psycopg
    props = {"recordcount": 300, "operationcount": 4000, "readproportion": 0.5, "updateproportion": 0.5,
             "requestdistribution": "uniform", "fieldlength": 100, "table": "t_cols"}
    exp = validate(small_experiment("cols", pg_own_db, properties=props,
                                    run={"threads": [2], "processes": 1, "driver": "c"}), "t")
    assert run_experiment(exp, tmp_path, progress=False).ok
    with psycopg.connect(pg_own_db) as c:   # the rows the updates left (the load's and theirs)
        rows = c.execute("SELECT * FROM t_cols").fetchall()
    t = load_results(tmp_path / "cols")
    assert t["runs"]["meta"].iloc[0]["driver_path"] == "c-libpq"
    step = t["steps"].set_index("step").loc["r.L1"]
    assert step["ops"] == 4000 and step["errors"] == 0
    lat = t["latency"][t["latency"].step == "r.L1"].set_index("op")["count"]
    assert lat["READ"] + lat["UPDATE"] == 4000 and lat["UPDATE"] > 1500
    assert len(rows) == 300
    value = re.compile(rb"[A-Za-z0-9]{100}")
    assert all(value.fullmatch(v.encode()) for r in rows for v in r[1:])
    assert all(re.fullmatch(r"user\d+", r[0]) for r in rows)
