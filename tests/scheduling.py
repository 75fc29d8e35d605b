"""How `make test` spreads the suite over its pytest workers (issue 42): longest first.

xdist's ``loadscope`` sends a whole module to one worker, so that a module-scoped fixture
(test_points' 24 runs) runs once; but it does so for every module, and a module of seven
independent 40-s cases (test_resume_workloads) then is a 5-minute chain on one worker
while the others idle at the end. Here:

- a module whose tests share a module- or class-scoped fixture (``SHARED``) is one unit
  of work, as loadscope has it; every other test is a unit of its own;
- the units go out longest first (their last measured seconds, ``durations.json``; a test
  not measured yet counts ``UNKNOWN_S``, a ``slow`` one ``UNKNOWN_SLOW_S``), so that the
  long ones start at once and the short ones fill the end (the LPT rule);
- the order is the collection's (every worker sorts its collection the same way, from the
  same file), so xdist's own reordering by unit size is switched off.

``python tests/scheduling.py JUNIT.xml`` writes ``durations.json`` from a run's JUnit
report (``pytest --junitxml=…``); ``tests/test_scheduling.py`` checks that every module
with a shared fixture is in ``SHARED``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")
UNKNOWN_S, UNKNOWN_SLOW_S = 2.0, 20.0

# modules whose tests share a module- or class-scoped fixture: one worker runs all of them
SHARED = frozenset({
    "tests/test_dask.py", "tests/test_interactive.py", "tests/test_notebooks.py",
    "tests/test_plots.py", "tests/test_points.py", "tests/test_provisioned.py", "tests/test_remote_hw.py",
    "tests/test_reports.py", "tests/test_ybio_report.py", "tests/faults/test_data_dir_faults.py",
    "tests/test_experiments_apart.py", "tests/test_p99_rule.py", "tests/test_ybio_heatmaps.py",
    "tests/test_configs.py", "tests/test_ycsb_mixes.py",
})


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module where the module shares a fixture,
    else the test itself."""
    module = module_of(nodeid)
    return module if module in SHARED else nodeid


def known() -> dict[str, float]:
    try:
        return json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}


def order(items: list) -> None:
    """Sorts pytest's ``items`` in place: units longest first, a unit's tests together in
    their collected order."""
    seconds = known()
    weight: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        unit = unit_of(item.nodeid)
        guess = UNKNOWN_SLOW_S if item.get_closest_marker("slow") else UNKNOWN_S
        weight[unit] = weight.get(unit, 0.0) + seconds.get(item.nodeid, guess)
        first.setdefault(unit, i)
    position = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda it: (-weight[unit_of(it.nodeid)], first[unit_of(it.nodeid)],
                               position[id(it)]))


def make_scheduler(config, log):
    """xdist's loadscope over :func:`unit_of`'s units, in the collection's order."""
    from xdist.scheduler.loadscope import LoadScopeScheduling

    class LongestFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False   # the collection is in order already
    return LongestFirst(config, log)


def write_durations(junit: Path) -> int:
    """``durations.json`` from a JUnit report: each test's seconds (setup, call and
    teardown, as the report counts them), rounded to 0.1 s."""
    import xml.etree.ElementTree as ET
    out: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        name = case.get("name", "")
        if not path or not name:
            continue
        parts = path.split("/")
        # classname is "tests.test_x" or "tests.test_x.TestClass"
        if parts[-1][:1].isupper():
            nodeid = f"{'/'.join(parts[:-1])}.py::{parts[-1]}::{name}"
        else:
            nodeid = f"{path}.py::{name}"
        out[nodeid] = round(float(case.get("time", 0) or 0), 1)
    DURATIONS.write_text(json.dumps(dict(sorted(out.items())), indent=0) + "\n")
    return len(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/scheduling.py JUNIT.xml")
    print(f"{write_durations(Path(sys.argv[1]))} tests' seconds in {DURATIONS}")
