"""How long a test may take, and what a slow shared fixture says (issue 42).

pytest-timeout's limit (``timeout`` in pyproject.toml) covers a test's setup, call and
teardown. The first test of a module whose tests share a module fixture sets that
fixture up (tests/test_points.py: 24 runs), so a flat limit that the others never need
was what that one test hit under load. Here:

- each test's limit is its last measured seconds (``durations.json``, setup included;
  in a module that shares a fixture, the module's longest test's) times ``SLACK``, never under the configured limit or the test's own
  ``@pytest.mark.timeout``: a test that took 120 s on an idle machine may take 8 times
  that beside two other suites on 2 cores, a 1-s test keeps the configured 300 s;
- a module-, class- or session-scoped fixture's setup is timed; one that took longer
  than ``SLOW_FIXTURE_S`` is named at the end of the run with its seconds, and a test
  whose setup failed or timed out in such a fixture says which fixture it was in and how
  long it had run — instead of a bare "Timeout >300s" in the first test of a module.
"""
from __future__ import annotations

import time

import pytest

SLACK = 8.0               # the slowdown the limit allows over the last full run
SLOW_FIXTURE_S = 60.0     # a shared fixture's setup longer than this is named at the end
PROPERTY = "shared_fixture_setup_s"   # on a setup report: {fixture: seconds}


def timeout_s(known_s: float | None, floor_s: float) -> float:
    """A test's limit: ``SLACK`` times its last seconds, at least ``floor_s``."""
    return max(floor_s, SLACK * known_s) if known_s else floor_s


def size(items, known: dict[str, float], default_s: float) -> None:
    """Gives every item a timeout marker sized to its work (see the module doc). A test of
    a module that shares a fixture counts the module's longest test: whichever of them
    runs first (one selected alone, another order) sets the fixture up."""
    from scheduling import unit_of
    longest: dict[str, float] = {}
    for nodeid, s in known.items():
        unit = unit_of(nodeid)
        if unit != nodeid:
            longest[unit] = max(longest.get(unit, 0.0), s)
    for item in items:
        seconds = longest.get(unit_of(item.nodeid), known.get(item.nodeid))
        own = item.get_closest_marker("timeout")
        floor = default_s
        if own:
            floor = float(own.args[0] if own.args else own.kwargs.get("timeout", default_s))
        limit = timeout_s(seconds, floor)
        if limit > floor or not own:
            kwargs = {k: v for k, v in (own.kwargs if own else {}).items() if k != "timeout"}
            item.add_marker(pytest.mark.timeout(limit, **kwargs), append=False)


class SharedFixtureClock:
    """Times the setup of every fixture wider than a function (a pytest plugin)."""

    def __init__(self):
        self.took: dict[str, float] = {}          # this item's setup: fixture -> seconds
        self.running: list[tuple[str, float]] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if fixturedef.scope == "function":
            yield
            return
        name = f"{fixturedef.argname} ({fixturedef.scope})"
        self.running.append((name, time.monotonic()))
        try:
            yield
        finally:
            _, t0 = self.running.pop()
            self.took[name] = round(time.monotonic() - t0, 1)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when != "setup" or not self.took:
            return
        report = outcome.get_result()
        report.user_properties.append((PROPERTY, dict(self.took)))
        if report.failed:
            limit = item.get_closest_marker("timeout")
            report.sections.append(("shared fixtures", "; ".join(
                f"{name} ran {s:.0f} s before the setup failed" for name, s in self.took.items())
                + (f" (this test's limit, setup included: {limit.args[0]:.0f} s)" if limit and limit.args
                   else "")))
        self.took.clear()


def slow_fixture_lines(reports, slow_s: float = SLOW_FIXTURE_S) -> list[str]:
    """One line per shared fixture whose setup took longer than ``slow_s``."""
    lines = []
    for rep in reports:
        for key, value in getattr(rep, "user_properties", ()):
            if key == PROPERTY:
                lines += [f"{rep.nodeid.split('::')[0]}: {name} set up in {s:.0f} s"
                          for name, s in value.items() if s > slow_s]
    return lines
