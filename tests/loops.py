"""What the tests of the C loops (test_pg_native.py, test_mysql_native.py) share: one
experiment of every kind of YCSB operation through a given run.driver, and the check
that the C loop and the Python loop gave the same outcomes."""
from __future__ import annotations

import re

from conftest import small_experiment

from benchlib import load_results, run_experiment
from benchlib.params import validate

# every kind of operation YCSB's workloads A-F issue, in one mix
MIX = {"recordcount": 500, "operationcount": 3000, "readproportion": 0.3, "updateproportion": 0.2,
       "insertproportion": 0.1, "scanproportion": 0.2, "readmodifywriteproportion": 0.2,
       "maxscanlength": 20, "requestdistribution": "zipfian"}
RUN_OPS = {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}


def run_mix(url: str, tmp_path, driver: str, name: str | None = None, **run):
    """The mix through run.driver ``driver`` on table t_<name> (name: the driver's): (tables,
    the Return= lines of the run step's YCSB text)."""
    name = name or driver
    exp = validate(small_experiment(f"n{name}", url, properties={**MIX, "table": f"t_{name}"},
                                    run={"threads": [1], "driver": driver, **run}), "t")
    assert run_experiment(exp, tmp_path / name, progress=False).ok
    t = load_results(tmp_path / name / f"n{name}")
    text = next((tmp_path / name / f"n{name}").glob("*/ycsb-r.L1.txt")).read_text()
    returns = sorted(re.findall(r"^\[([A-Z-]+)\], Return=(\w+), (\d+)$", text, re.M))
    return t, returns


def assert_same_outcomes(c: tuple, py: tuple, c_path: str, py_path: str = "python") -> dict:
    """The C loop's run (``c``: run_mix's result) and the Python loop's (or another run
    whose driver path is ``py_path``): the same counts, errors and Return= lines per
    operation, each second's operations adding up to the step's. The latency rows per
    operation: {op: (count, errors)}."""
    (tc, rc), (tp, rp) = c, py
    assert tc["runs"]["meta"].iloc[0]["driver_path"] == c_path
    assert tp["runs"]["meta"].iloc[0]["driver_path"] == py_path
    sc, sp = (x["steps"].set_index("step").loc["r.L1"] for x in (tc, tp))
    assert sc["ops"] == sp["ops"] == 3000 and sc["errors"] == sp["errors"] == 0
    lc, lp = ({r.op: (r["count"], r.errors) for _, r in x["latency"][x["latency"].step == "r.L1"].iterrows()}
              for x in (tc, tp))
    assert lc == lp and set(lc) == RUN_OPS
    assert rc == rp and ("READ-MODIFY-WRITE", "OK", str(lc["READ-MODIFY-WRITE"][0])) in rc
    for x in (tc, tp):   # each second's operations add up to the step's
        iv = x["intervals"][x["intervals"].step == "r.L1"]
        assert iv.groupby("op")["ops"].sum().to_dict() == {k: v[0] for k, v in lc.items()}
    return lc


def assert_paced(t) -> None:
    """A paced run (2000/s) of the mix: every operation has its intended-start latency;
    a read-modify-write's inner read and update are timed under READ and UPDATE, not
    scheduled of their own."""
    lat = t["latency"][t["latency"].step == "r.L1"].set_index("op")["count"]
    for op in RUN_OPS:
        inner = lat["READ-MODIFY-WRITE"] if op in ("READ", "UPDATE") else 0
        assert lat[f"Intended-{op}"] == lat[op] - inner
    step = t["steps"].set_index("step").loc["r.L1"]
    assert step["ops"] == 3000 and step["secs"] >= 1.4   # 3000 on a schedule of 2000/s
