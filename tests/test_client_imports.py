"""A client process imports no pandas (issue 42): every step spawns its clients afresh,
and pandas was ~0.4-1.2 s of each one's start (ybio's and LinkBench's workload modules
imported it for a table only the controller makes)."""
from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import importlib, pkgutil, sys
import benchlib.run.clients
pkg = importlib.import_module("benchlib.workloads." + sys.argv[1])
for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
    if "plots" in m.name or m.name.endswith(".summary"):     # the controller's own
        continue
    try:
        importlib.import_module(m.name)
    except ImportError:       # an optional client library absent: not what is checked
        continue
    if "pandas" in sys.modules:
        sys.exit(m.name + " imports pandas")
"""


@pytest.mark.parametrize("workload", ["ycsb", "kv", "ybio", "linkbench"])
def test_a_workloads_client_modules_import_no_pandas(workload):
    proc = subprocess.run([sys.executable, "-c", CHECK, workload], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
