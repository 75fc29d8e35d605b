"""A step's clients forked from a server that imported their modules once
(benchlib/run/forkserver.py): what a spawned client had, a forked one has too — the
controller's environment at the start, and no library the client side does not import."""
from __future__ import annotations

import os
import pkgutil
import subprocess
import sys

import benchlib
from benchlib.run import forkserver

CONTROLLER_LIBRARIES = ("pandas", "pyarrow", "matplotlib", "seaborn", "plotly", "nbformat")


def test_nothing_preloaded_pulls_a_controller_library():
    every = [m.name for m in pkgutil.walk_packages(benchlib.__path__, "benchlib.")]
    names = forkserver.preload(dict.fromkeys(every + ["numpy", "pandas", "psycopg"]))
    assert "benchlib.run.clients" in names and "benchlib.workloads.ycsb.workload" in names
    assert "numpy" in names and "psycopg" in names and "pandas" not in names
    code = ("import sys\n"
            f"for name in {names!r}:\n"
            "    try:\n        __import__(name)\n"
            "    except ImportError:\n        pass\n"     # as the forkserver does: an optional part absent
            f"print(' '.join(m for m in {CONTROLLER_LIBRARIES!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"preloading imports {out.stdout.strip()}: a forked client would carry it"


def _report_variable(q, name: str) -> None:
    q.put(os.environ.get(name))


def test_a_forked_client_has_the_environment_of_its_start(monkeypatch):
    ctx = forkserver.context()
    q = ctx.Queue()
    name = f"BENCHLIB_TEST_FORKSERVER_{os.getpid()}"
    monkeypatch.delenv(name, raising=False)
    first = ctx.Process(target=forkserver.in_environment, args=(dict(os.environ), _report_variable, q, name))
    first.start()      # the server runs from here on (if no earlier test started it)
    assert q.get(timeout=60) is None
    first.join(30)
    monkeypatch.setenv(name, "after the server started")
    bare = ctx.Process(target=_report_variable, args=(q, name))
    bare.start()
    from_server = q.get(timeout=60)
    bare.join(30)
    given = ctx.Process(target=forkserver.in_environment, args=(dict(os.environ), _report_variable, q, name))
    given.start()
    assert q.get(timeout=60) == "after the server started"
    given.join(30)
    if ctx.get_start_method() == "forkserver":   # the premise: the server's own is older
        assert from_server is None


def test_a_misspelled_start_method_is_one_line_before_any_run(tmp_path):
    from pathlib import Path
    exe = Path(sys.executable).with_name("benchlib")
    r = subprocess.run([str(exe), "run", "parameters/quickstart.yaml", "--data-dir", str(tmp_path / "d")],
                       env=dict(os.environ, BENCHLIB_START_METHOD="fork"), capture_output=True, text=True,
                       timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == ["benchlib: BENCHLIB_START_METHOD='fork': one of forkserver, spawn"]
    assert not (tmp_path / "d").exists()
