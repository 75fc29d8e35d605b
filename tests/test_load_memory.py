"""A load's memory does not grow with the data (issue 27).

Each workload's load runs with its load process's address space capped (RLIMIT_AS) at
what the process maps when its client is built plus HEADROOM, and loads more bytes than
HEADROOM: a load that kept the rows it wrote, or made them all before writing, would
fail for want of memory (the code before issue 27 did, at the first chunk). The test
counts the rows in its own table. The workloads are benchlib's own, subclassed here only
to set the cap in the load process, before its client exists.
"""
from __future__ import annotations

import ctypes
import os
import resource
import sqlite3
from pathlib import Path

import pytest

from benchlib import run_experiment
from benchlib.params import validate
from benchlib.registries import workloads as registry
from benchlib.workloads.kv import KvWorkload
from benchlib.workloads.ybio import YbioWorkload
from benchlib.workloads.ycsb import YcsbWorkload

HEADROOM = 160 << 20    # bytes the load process may map beyond what it has at the start
DATA = 256 << 20        # bytes each test loads: more than HEADROOM
M_ARENA_MAX = -8        # glibc's mallopt parameter (malloc.h)


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _one_arena() -> None:
    """glibc gives each thread that mallocs an arena of its own, 64 MB of address space
    that RLIMIT_AS counts and that holds next to nothing: from here on, a new thread shares
    the arenas there are. mallopt, not MALLOC_ARENA_MAX: glibc reads the environment only
    as a process starts, and a client forked by a forkserver that an earlier test of this
    worker started has that server's settings. So forked, a thread that first mallocs
    after the cap takes a new arena and fails the load (a suite beside other work did,
    at half its rows; a probe thread started after the cap does so every time)."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_ARENA_MAX, 1)
    except (OSError, AttributeError):
        pass   # not glibc: no per-thread arenas to bound


def _cap() -> None:
    """This process may map HEADROOM more than it does now (a lower cap already set stays)."""
    _one_arena()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = _vm_size() + HEADROOM
    if soft == resource.RLIM_INFINITY or soft > want:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))


class _Capped:
    def client(self, step, endpoint, index, total, seed, batch_size=1000):
        if step.phase == "load":
            _cap()
        return super().client(step, endpoint, index, total, seed, batch_size)


class CappedYcsb(_Capped, YcsbWorkload):
    pass


class CappedKv(_Capped, KvWorkload):
    pass


class CappedYbio(_Capped, YbioWorkload):
    pass


@pytest.fixture
def capped(monkeypatch):
    # one malloc arena in a load process that starts now (spawned, or the forkserver's
    # first children); _cap's mallopt sees to one forked by an older server
    monkeypatch.setenv("MALLOC_ARENA_MAX", "1")
    names = {"capped-ycsb": CappedYcsb, "capped-kv": CappedKv, "capped-ybio": CappedYbio}
    for name, cls in names.items():
        registry.register(name, cls)
    yield
    for name in names:
        registry.unregister(name)


def _load(data_dir: Path, workload: str, props: dict, url: str, batch: int) -> None:
    exp = validate({
        "experiment": f"cap-{workload}", "workload": workload, "properties": props,
        "targets": [{"name": "db", "url": url}],
        "load": {"threads": 1, "processes": [1], "batch_size": batch},
        "run": {"skip": True}, "seed": 5,
    }, "test")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs


def _sqlite_count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as c:
        return c.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]


def _ycsb_props(table: str, length: int) -> dict:
    """DATA bytes of ten fields of ``length`` bytes a record."""
    return {"recordcount": DATA // (10 * length), "fieldcount": 10, "fieldlength": length,
            "table": table}


def test_ycsb_load_on_sqlite_in_capped_memory(capped, data_dir, tmp_path):
    db = tmp_path / "ycsb.sqlite"
    props = _ycsb_props("capped", 2000)
    _load(data_dir, "capped-ycsb", props, f"sqlite:///{db}", 100)
    assert _sqlite_count(db, "capped") == props["recordcount"]


def test_ycsb_load_on_postgres_in_capped_memory(capped, data_dir, pg_url):
    import psycopg
    table = f"memcap_ycsb_{os.getpid()}"
    try:
        props = _ycsb_props(table, 150)   # rows below TOAST's threshold: a faster COPY
        _load(data_dir, "capped-ycsb", props, pg_url, 1000)
        with psycopg.connect(pg_url) as c:
            assert c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == props["recordcount"]
    finally:
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(f"DROP TABLE IF EXISTS {table}")


def test_kv_prepare_on_sqlite_in_capped_memory(capped, data_dir, tmp_path):
    from benchlib.workloads.kv.parameters import parse
    from benchlib.workloads.kv.plan import keys_after_prepare
    db = tmp_path / "kv.sqlite"
    props = {"key_count": DATA // 4000, "value_size": 4000, "prepare_remove_ratio": 0.1,
             "op_count": 1, "table": "capped"}
    _load(data_dir, "capped-kv", props, f"sqlite:///{db}", 100)
    # the prepare inserted every key and removed its share again: what is left is counted
    assert _sqlite_count(db, "capped") == keys_after_prepare(parse(props))


def test_ybio_load_on_sqlite_in_capped_memory(capped, data_dir, tmp_path):
    db = tmp_path / "ybio.sqlite"
    rows = DATA // 4000
    props = {"tab_rows": rows, "filler": 4000, "batch_size": 10, "tab_prefix": "capped"}
    _load(data_dir, "capped-ybio", props, f"sqlite:///{db}", 1000)
    assert _sqlite_count(db, "capped0001") == rows
