"""Load steps' DBMS CPU from the server's cgroup (issue 38) on a provisioned PostgreSQL
(a cgroup of its own, made by benchlib), against the truth and the process sum, read at
the edges of each step's window:

- cgroup: the steps table's ``dbms_server_cpu_s`` (``dbms_cpu_from`` = cgroup);
- truth: the postmaster tree's CPU from /proc, each process's own and its reaped
  children's (the postmaster reaps every backend: theirs is in its children_user/system);
- processes: what the sampler counted before the cgroup (a ProcAccount's two readings).

    PYTHONPATH=. .venv/bin/python bench/bench_cgroup_cpu.py ycsb [--records 100000]
    PYTHONPATH=. .venv/bin/python bench/bench_cgroup_cpu.py linkbench [--records 100000]   # maxid1 - 1
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from benchlib.hw.processes import ProcAccount, tree_cpu_s  # noqa: E402
from benchlib.run import hwsources  # noqa: E402

SEEN: dict[str, dict] = {}
_WINDOW = hwsources.StepSampling.window


def _window(self, edge: str) -> None:
    _WINDOW(self, edge)
    root = self.target._postmaster
    if edge == "start":
        self.bench = (ProcAccount(), tree_cpu_s(root))
        self.bench[0].sample(self.target.dbms_pids())
        return
    acc, t0 = self.bench
    SEEN[self.step] = {"truth": tree_cpu_s(root) - t0, "processes": acc.sample(self.target.dbms_pids())[0],
                       "cgroup": self.window_figures.get("dbms_server_cpu_s"),
                       "from": self.window_figures.get("dbms_cpu_from")}


def main() -> None:
    from conftest import small_experiment

    from benchlib.params import load_experiment
    from benchlib.run.experiment import run_experiment
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=("ycsb", "linkbench"))
    ap.add_argument("--records", type=int, default=100_000)
    a = ap.parse_args()
    small = Path(__file__).resolve().parents[1] / "tests" / "data" / "linkbench" / "Distribution_small.dat"
    props = ({"recordcount": a.records, "operationcount": 10**6} if a.workload == "ycsb" else
             {"maxid1": a.records + 1, "data_file": str(small)})   # the shipped out-degrees: 4.18 M links on one node
    exp = small_experiment("cgcpu", "postgres-provisioned", workload=a.workload, properties=props,
                           run={"threads": [4], "loops": 1, "loop_secs": 2}, load={"threads": 4})
    exp["targets"], exp["properties"] = [{"name": "pg", "url": "postgres-provisioned"}], props
    hwsources.StepSampling.window = _window
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "e.yaml").write_text(yaml.safe_dump(exp))
        run_experiment(load_experiment(Path(tmp) / "e.yaml"), Path(tmp) / "data", progress=False)
    print(f"{'step':8} {'truth_s':>8} {'cgroup_s':>9} {'processes_s':>12} {'cgroup/truth':>13} {'processes/truth':>16}")
    for step, f in SEEN.items():
        t = f["truth"] or float("nan")
        print(f"{step:8} {f['truth']:8.3f} {f['cgroup'] or float('nan'):9.3f} {f['processes'] or float('nan'):12.3f} "
              f"{(f['cgroup'] or float('nan')) / t:13.3f} {(f['processes'] or float('nan')) / t:16.3f}  ({f['from']})")


if __name__ == "__main__":
    main()
