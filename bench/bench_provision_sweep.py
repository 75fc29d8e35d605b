"""A provisioned PostgreSQL sweep at a size that matters: versions × shared_buffers at
``--records`` YCSB records (default 1,000,000), one run per configuration; prints, for
BENCHMARKS.md, how many loads the sweep made (one per version is the aim) and their
seconds, and per configuration how long it took from the previous server's stop to its
own server ready with the data copied (the aim: ≤ 10 s).

The stop → ready time is measured directly after the sweep, on its kept loads: for each
configuration in the sweep's order, the one before it started from its kept data, then
``stop()`` of it and ``start()`` of this one timed together (the copy of the kept data
directory included). Each run's own ``dbms.data`` (copy_s, ready_s) and ``data_copy``
(the load's stop, keep and restart) from meta.json beside it.

    .venv/bin/python bench/bench_provision_sweep.py [--records 1000000] [--versions 15,18]
        [--data-dir /tmp/prov-sweep]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import yaml

from benchlib.params import plan, validate
from benchlib.run.experiment import run_experiment
from benchlib.store.folders import load_results
from benchlib.targets.base import make_target

BUFFERS = ["128MB", "1GB"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--versions", default="15,18")
    ap.add_argument("--data-dir", default="/tmp/prov-sweep")
    a = ap.parse_args()
    versions = [int(v) for v in a.versions.split(",")]
    exp = yaml.safe_load(Path("parameters/pg-versions.yaml").read_text())
    exp.update(experiment="pg-sweep-bench", repetitions=1, load={"threads": 2},
               run={"threads": [1], "loops": 1, "loop_secs": 2})
    exp["properties"]["recordcount"] = a.records
    exp["targets"][0]["version"] = versions
    data = Path(a.data_dir)
    shutil.rmtree(data / ".provisioned" / ".loaded" / exp["experiment"], ignore_errors=True)   # load anew
    t0 = time.monotonic()
    checked = validate(exp, "bench")
    options = {spec.run_id: spec.target.options for spec in plan(checked)}
    res = run_experiment(checked, data, progress=False, force=True)
    wall = time.monotonic() - t0
    assert res.ok, res.runs
    steps = load_results(res.path)["steps"]
    loads = steps[steps["phase"] == "load"]
    metas = [(json.loads((res.path / rid / "meta.json").read_text()), options[rid]) for rid in options]
    print(f"load {os.getloadavg()[0]:.1f}; sweep wall {wall:.1f} s; {len(metas)} configurations, "
          f"{len(loads)} loads ({', '.join(f'{s:.1f}' for s in loads['secs'])} s)")
    print("| configuration | data from | copy_s | ready_s | load's stop + keep, restart (s) | previous stop → ready (s) |")
    print("|---|---|---:|---:|---|---:|")
    prev = None
    for m, opts in metas:
        name = m["target"]["name"]
        d, kept = m["dbms"]["data"], m.get("data_copy")
        key = d.get("loaded") or kept["kept"]
        switch = _switch(prev, (name, opts, key), data) if prev else None
        keep = f"{kept['stop_and_copy_s']:.1f}, {kept['restart_s']:.2f}" if kept else "–"
        took = f"{switch:.2f}" if switch is not None else "–"
        print(f"| {name} ({m['dbms']['version']}) | {d['from']} | {d['copy_s']:.2f} | {d.get('ready_s', 0):.2f} | "
              f"{keep} | {took} |")
        prev = (name, opts, key)


def _switch(prev, this, data: Path) -> float:
    """The previous configuration's server started from its kept load, then its stop and
    this one's start (from its kept load) timed together."""
    a = make_target(prev[0], "postgres-provisioned", prev[1], data)
    b = make_target(this[0], "postgres-provisioned", this[1], data)
    for t, key in ((a, prev[2]), (b, this[2])):
        t.set_run_dir(data / "bench-logs")
        assert t.use_loaded(key), key
    a.start()
    t0 = time.monotonic()
    a.stop()
    b.start()
    took = time.monotonic() - t0
    assert b.admin().execute("SELECT count(*) FROM usertable").fetchone()[0] > 0
    b.stop()
    return took


if __name__ == "__main__":
    main()
