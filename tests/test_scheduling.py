"""The suite's own scheduling (tests/scheduling.py): a module whose tests share a fixture
stays on one worker; the rest go out one test at a time, longest first."""
from __future__ import annotations

import re
from pathlib import Path

from scheduling import SHARED, unit_of

TESTS = Path(__file__).parent


def test_every_module_with_a_shared_fixture_is_one_unit():
    shared = {p.relative_to(TESTS.parent).as_posix() for p in TESTS.rglob("test_*.py")
              if re.search(r"scope\s*=\s*[\"'](module|class|package)[\"']", p.read_text())}
    assert shared <= SHARED, f"add to tests/scheduling.py SHARED: {sorted(shared - SHARED)}"
    assert all((TESTS.parent / m).exists() for m in SHARED), "SHARED names a module that is gone"


def test_units():
    assert unit_of("tests/test_points.py::test_a[x]") == "tests/test_points.py"
    assert unit_of("tests/test_resume_workloads.py::test_b[y]") == "tests/test_resume_workloads.py::test_b[y]"
