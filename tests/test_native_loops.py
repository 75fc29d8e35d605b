"""The C loops of ``benchlib/workloads/_native/`` (issue 36): each built once, by an
extension of its own (so a parallel ``build_ext -j`` cannot link one extension's object
into another), and each, where it is built, imported and run for one operation against
the real server through its own calls; the numbers Python reads from them are
benchlib's."""
from __future__ import annotations

import runpy
import uuid
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
import setuptools
from conftest import ROOT

from benchlib import schema

NATIVE = ROOT / "benchlib" / "workloads" / "_native"


def _extensions(monkeypatch, **env) -> list:
    """setup.py's extensions, as ``setup()`` is handed them (nothing is built)."""
    got = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: got.update(kw))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    return got["ext_modules"]


def test_each_loop_is_one_extension_whose_objects_are_its_own(monkeypatch):
    exts = _extensions(monkeypatch)
    names = [e.name for e in exts]
    assert len(set(names)) == len(names)
    # build_ext compiles a source to the object of the same path under build_temp: a
    # source two extensions share is one object two parallel compiles race for
    objects = Counter(Path(s).with_suffix(".o") for e in exts for s in e.sources)
    assert [o for o, n in objects.items() if n > 1] == []
    loops = {Path(s).stem for e in exts for s in e.sources if Path(s).parent == NATIVE.relative_to(ROOT)}
    assert loops == {p.stem for p in NATIVE.glob("*.c")} == {"_pgloop", "_lbloop", "_myloop", "_lbmyloop", "_redisloop"}
    assert all(e.name == f"benchlib.workloads._native.{Path(e.sources[0]).stem}"
               for e in exts if "_native" in e.name)
    assert all(e.optional for e in exts)    # a missing library's headers skip only that loop


def test_no_loop_is_built_with_BENCHLIB_C_LOOPS_0(monkeypatch):
    assert [e.name for e in _extensions(monkeypatch, BENCHLIB_C_LOOPS="0")] == ["benchlib.importers._linescan"]


def _check_constants(loop) -> None:
    assert (loop.ST_OK, loop.ST_NOT_FOUND, loop.ST_ERROR, loop.ST_EMPTY) == \
        (schema.OK, schema.NOT_FOUND, schema.ERROR, schema.EMPTY)
    assert [loop.F_TICK, loop.F_BROKEN, loop.F_END, loop.F_NEED, loop.F_IDLE, loop.F_WAIT] == \
        [1 << k for k in range(6)]
    assert list(loop.KINDS.values()) == list(range(len(loop.KINDS)))   # in code order


def _run_one(loop, conn, plan) -> list[int]:
    """The plan on conn through Conn.run (a thread per connection): its statuses."""
    i, _, flags = conn.run(plan, 0, 1 << 62, 0, 0, 0, 0.0, 0)
    assert (i, flags) == (len(plan), 0)
    return list(plan.results(0, len(plan))[1])


def _run_many(loop, conn, plan) -> list[int]:
    """The plan on conn through run_many (one thread, many connections): its statuses."""
    conn.assign(plan)
    while not loop.run_many([conn], 1 << 62, 0, 1)[0] & (loop.F_NEED | loop.F_IDLE):
        pass
    assert conn.done == len(plan)
    return list(plan.results(0, len(plan))[1])


@contextmanager
def _opened(loop, *args):
    """A connection of the loop's own (its constants checked first), closed after."""
    _check_constants(loop)
    conn = loop.Conn(*args)
    try:
        yield conn
    finally:
        conn.close()


@pytest.mark.requires("c-libpq")
def test_the_loop_over_libpq_runs_an_operation(pg_url):
    from benchlib.workloads._native import _pgloop as loop
    with _opened(loop, pg_url) as conn:     # libpq takes the URL as its conninfo
        conn.prepare_counts([b"SELECT count(*) FROM generate_series($1::int, $2::int)"])
        count = bytes([loop.KINDS["COUNT"]])
        # (statement, lo, hi, rows): 1..5 counts 5 rows; 1..3 counts 3, not 4
        assert _run_one(loop, conn, loop.Plan([0], [(0, 1, 5, 5)], count, 0)) == [schema.OK]
        assert _run_many(loop, conn, loop.Plan([0], [(0, 1, 3, 4)], count, 0)) == [schema.NOT_FOUND]


@pytest.mark.requires("c-libmariadb")
def test_the_loop_over_libmariadb_runs_an_operation(mysql_url):
    from benchlib.targets.mysql import connect_params
    from benchlib.workloads._native import _myloop as loop
    p = connect_params(mysql_url)
    with _opened(loop, p["host"], p["user"], p["password"], p["database"], int(p["port"]),
                 p.get("unix_socket"), 5) as conn:
        # one field: reads, scans and updates by field + 1 (0: all fields); no table touched
        conn.prepare_ycsb([b"SELECT %s", b"SELECT %s"], [b"SELECT %s LIMIT %s"] * 2,
                          [b"DO %s, %s"] * 2, b"DO %s, %s")
        read = bytes([loop.KINDS["READ"]])
        assert _run_one(loop, conn, loop.Plan([0], [(b"k'1", -1)], read, 1)) == [schema.OK]
        assert _run_many(loop, conn, loop.Plan([0], [(b"k2", 0)], read, 1)) == [schema.OK]


@pytest.mark.requires("c-hiredis")
def test_the_loop_over_hiredis_runs_an_operation(redis_url):
    from redis.connection import parse_url

    from benchlib.workloads._native import _redisloop as loop
    u = parse_url(redis_url)
    key = f"native_t{uuid.uuid4().hex[:8]}:k1"
    index, k = key.replace(":k1", ":index").encode(), loop.KINDS
    with _opened(loop, u.get("host", "localhost"), int(u.get("port", 6379)), None, None, None,
                 str(u.get("db", 0)), 5.0) as conn:
        # an insert, a read, a delete (its key and the index then gone: nothing left)
        plan = loop.Plan([k["INSERT"], k["READ"], k["DELETE"]], [(key, "v"), (key,), (key,)], index)
        assert _run_one(loop, conn, plan) == [schema.OK] * 3
        assert _run_many(loop, conn, loop.Plan([k["READ"]], [(key,)], index)) == [schema.EMPTY]
