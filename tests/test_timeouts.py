"""Each test's limit sized to its work, a slow shared fixture named (tests/timeouts.py)."""
from __future__ import annotations

from pathlib import Path

import timeouts

pytest_plugins = ["pytester"]


def test_a_limit_is_the_last_seconds_times_the_slack_never_under_the_floor():
    assert timeouts.timeout_s(122.7, 300) == 122.7 * timeouts.SLACK > 300
    assert timeouts.timeout_s(1.0, 300) == 300
    assert timeouts.timeout_s(None, 180) == 180


MODULE = """
import time
import pytest

WIDE = "module"          # (a name: tests/test_scheduling.py reads this file for shared fixtures)

@pytest.fixture(scope=WIDE)
def runs():
    time.sleep(SETUP_S)          # the module's shared work
    return 1

@pytest.mark.timeout(LIMIT_S)
def test_first(runs):
    assert runs == 1

def test_second(runs):
    assert runs == 1
"""


def _run(pytester, monkeypatch, setup_s, limit_s):
    """The module above run by a pytest of its own (with tests/ on its path)."""
    monkeypatch.setenv("PYTHONPATH", str(Path(timeouts.__file__).parent))
    pytester.makeconftest("""
from timeouts import SharedFixtureClock, slow_fixture_lines

def pytest_configure(config):
    config.pluginmanager.register(SharedFixtureClock(), "clock")

def pytest_terminal_summary(terminalreporter):
    reports = [r for rs in terminalreporter.stats.values() for r in rs if hasattr(r, "nodeid")]
    for line in slow_fixture_lines(reports, slow_s=0.2):
        terminalreporter.write_line("SLOW " + line)
""")
    pytester.makepyfile(test_shared=MODULE.replace("SETUP_S", str(setup_s)).replace("LIMIT_S", str(limit_s)))
    return pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")


def test_a_slow_shared_fixture_is_named_with_its_seconds(pytester, monkeypatch):
    res = _run(pytester, monkeypatch, 0.5, 30)
    res.assert_outcomes(passed=2)
    res.stdout.fnmatch_lines(["SLOW test_shared.py: runs (module) set up in *"])


def test_a_fixture_past_the_limit_says_which_and_how_long(pytester, monkeypatch):
    res = _run(pytester, monkeypatch, 5, 1)
    res.assert_outcomes(errors=2)          # the second test gets the fixture's error
    res.stdout.fnmatch_lines(["*shared fixtures*", "runs (module) ran 1 s before the setup failed "
                              "(this test's limit, setup included: 1 s)"])


class _Item:
    def __init__(self, nodeid, marks=()):
        self.nodeid, self.marks = nodeid, list(marks)

    def get_closest_marker(self, name):
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, mark, append=True):
        self.marks.insert(len(self.marks) if append else 0, mark.mark)


def test_every_test_of_a_shared_module_gets_the_module_s_longest_and_own_limits_stay():
    import pytest
    shared = "tests/test_points.py"                      # in scheduling.SHARED
    items = [_Item(f"{shared}::test_b"), _Item("tests/test_x.py::test_fast"),
             _Item("tests/test_x.py::test_own", [pytest.mark.timeout(600, method="thread").mark])]
    timeouts.size(items, {f"{shared}::test_a": 100.0, f"{shared}::test_b": 1.0,
                          "tests/test_x.py::test_fast": 2.0, "tests/test_x.py::test_own": 10.0}, 300)
    limits = [i.get_closest_marker("timeout") for i in items]
    assert limits[0].args == (100 * timeouts.SLACK,) and limits[1].args == (300,)
    assert limits[2].args == (600,) and limits[2].kwargs == {"method": "thread"}
