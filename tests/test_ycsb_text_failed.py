"""benchlib's YCSB text counts as YCSB does (issue 35, item 5): an op's ``Operations`` and
latencies are its OK calls, the others are ``[OP-FAILED]`` with a histogram of their own,
``[OVERALL] Throughput`` divides every operation; ``benchlib import ycsb`` reads the text
back to the successes and failures that the run's tables hold."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import small_experiment

from benchlib import load_results, measure, run_experiment
from benchlib.params import validate
from benchlib.workloads.ycsb.text import format_step

SAMPLES = Path(__file__).parent / "data" / "ycsb"   # real YCSB outputs (shared/samples/ycsb)
LINE = re.compile(r"^\[([A-Za-z_-]+)\], ([^,]+), (-?[0-9.]+|NaN)$")
KEY = re.compile(r"^(Operations|AverageLatency\(us\)|MinLatency\(us\)|MaxLatency\(us\)|"
                 r"\d+(\.\d+)?(st|nd|rd|th)?PercentileLatency\(us\)|Return=[A-Z_]+|"
                 r"RunTime\(ms\)|Throughput\(ops/sec\))$")


def sections(text: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        m = LINE.match(line)
        assert m, f"not a YCSB summary line: {line!r}"
        out.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    return out


def test_sections_split_ok_from_failed():
    """[READ] holds the OK calls' histogram, [READ-FAILED] the others', from one row."""
    rng = np.random.default_rng(3)
    ok, bad = rng.integers(100, 200, 900), rng.integers(5000, 9000, 100)
    every, failed = measure.new_histogram(), measure.new_histogram()
    measure.record_many(every, np.concatenate([ok, bad]))
    measure.record_many(failed, bad)
    row = {"op": "READ", **measure.summarize(every), "errors": 100, "hdr": measure.encode(every),
           "returns": {"OK": 900, "NOT_FOUND": 60, "ERROR": 40}, "not_ok_hdr": measure.encode(failed)}
    row["count"] = 1000
    s = sections(format_step(2.0, 1000, [row]))
    assert s["OVERALL"]["Throughput(ops/sec)"] == "500.0"   # all 1000 operations / 2 s
    assert s["READ"]["Operations"] == "900"
    assert float(s["READ"]["MaxLatency(us)"]) < 200.5          # no failed latency in it
    assert s["READ"]["Return=NOT_FOUND"] == "60" and s["READ"]["Return=ERROR"] == "40"
    assert s["READ-FAILED"]["Operations"] == "100"
    assert float(s["READ-FAILED"]["MinLatency(us)"]) >= 4995
    assert not any(k.startswith("Return=") for k in s["READ-FAILED"])   # as YCSB: the op's


def _own_table_with_holes(url: str, data_dir: Path, props: dict) -> int:
    """Loaded by benchlib, then a third of the rows deleted: reads and updates of those
    keys return NOT_FOUND. Returns the rows deleted."""
    import psycopg
    run_experiment(validate(small_experiment("holes-load", url, properties=props, run={"skip": True}),
                            "t"), data_dir, out=sys.stderr)
    with psycopg.connect(url, autocommit=True) as c:
        return c.execute("DELETE FROM usertable WHERE ycsb_key LIKE '%3' OR ycsb_key LIKE '%7' "
                         "OR ycsb_key LIKE '%9'").rowcount


@pytest.mark.parametrize("driver,paced", [("python", False), ("c", False), ("python", True)])
def test_failed_reads_round_trip_through_the_importer(pg_own_db, data_dir, tmp_path, driver, paced):
    props = {"recordcount": 1000, "operationcount": 3000, "readproportion": 0.5,
             "updateproportion": 0.5, "requestdistribution": "uniform"}
    assert _own_table_with_holes(pg_own_db, data_dir, props) > 100
    pacing = {"target_base": 1500, "target_factors": [1]} if paced else {}
    exp = validate(small_experiment("holes", pg_own_db, properties=props, load={"skip": True},
                                    run={"driver": driver, **pacing}), "t")
    assert run_experiment(exp, data_dir, out=sys.stderr).ok
    run_dir = next((data_dir / "holes").glob("*/meta.json")).parent
    text = (run_dir / "ycsb-r.L1.txt").read_text()
    s = sections(text)
    for op, keys in s.items():
        assert all(KEY.match(k) for k in keys), f"[{op}] has keys YCSB does not print: {keys}"
    run = load_results(data_dir / "holes")
    lat = run["latency"].set_index("op")
    step = run["steps"].iloc[0]
    for op in ("READ", "UPDATE"):
        returns = {k[7:]: int(v) for k, v in s[op].items() if k.startswith("Return=")}
        assert sum(returns.values()) == lat.loc[op, "count"]
        assert int(s[op]["Operations"]) == returns["OK"] == lat.loc[op, "count"] - lat.loc[op, "errors"]
        assert int(s[f"{op}-FAILED"]["Operations"]) == lat.loc[op, "errors"] > 0
        if paced:   # measured from the intended start too, split the same way
            assert int(s[f"Intended-{op}"]["Operations"]) == returns["OK"]
            assert int(s[f"Intended-{op}-FAILED"]["Operations"]) == lat.loc[op, "errors"]
        else:
            assert f"Intended-{op}" not in s
    # YCSB's throughput: every operation of the step, the failed ones too
    thr, ms = float(s["OVERALL"]["Throughput(ops/sec)"]), float(s["OVERALL"]["RunTime(ms)"])
    assert round(thr * step["secs"]) == step["ops"] + step["failed"]
    assert ms == round(step["secs"] * 1000)

    into = tmp_path / "imported"
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "import", "ycsb", str(run_dir / "ycsb-r.L1.txt"),
                        "--into", str(into)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    imp = load_results(into)
    ilat = imp["latency"].set_index("op")
    for op in ("READ", "UPDATE"):
        assert ilat.loc[op, "count"] == lat.loc[op, "count"]       # successes + failures
        assert ilat.loc[op, "errors"] == lat.loc[op, "errors"]     # failures
        assert ilat.loc[f"{op}-FAILED", "count"] == lat.loc[op, "errors"]
    assert imp["steps"]["errors"].iloc[0] == step["errors"]
    # YCSB's text gives a step's operations only as Throughput × RunTime(ms): whole
    # milliseconds, so within half a millisecond's operations (and one for the rounding)
    assert abs(imp["steps"]["ops"].iloc[0] - (step["ops"] + step["failed"])) <= thr * 0.0005 + 1


@pytest.mark.parametrize("name", ["pg-runa-t4-hdr.out", "load-failed-inserts.out"])
def test_real_ycsb_outputs_have_the_same_shape(name):
    """The line shape and keys checked above are those of real YCSB outputs, a failed
    one's too: [INSERT] Return=ERROR under the op, [INSERT-FAILED] with no Return lines."""
    lines = [ln for ln in (SAMPLES / name).read_text().splitlines() if ln.startswith("[") and "GC" not in ln]
    s = sections("\n".join(lines))
    assert s and all(KEY.match(k) for keys in s.values() for k in keys)
    for op, keys in s.items():
        if op.endswith("-FAILED"):
            assert not any(k.startswith("Return=") for k in keys)
            assert any(k.startswith("Return=") for k in s[op[:-len("-FAILED")]])
