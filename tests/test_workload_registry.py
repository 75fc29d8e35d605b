"""A workload registered from this test module (a toy with one op) runs end to end
through ``benchlib run`` on SQLite, touching no file of benchlib's: the registry, the
runner and the spawned clients find it by its ``module:Class`` reference."""
from __future__ import annotations

import pytest

from benchlib import cli, load_results
from benchlib.registries import workloads as registry
from benchlib.workloads.base import Chunk, Workload, WorkloadClient
from benchlib.workloads.stepplan import StepPlan


class ToyClient(WorkloadClient):
    op_names = ["PING"]

    def __init__(self, endpoint, table: str, n_ops: int):
        self.conn = endpoint.connect()
        self.sql = f"INSERT INTO {table} (v) VALUES (?)"
        self.left = n_ops
        self.fns = [self.ping]

    def ping(self, v):
        self.conn.execute(self.sql, (v,))
        return 0

    def next_chunk(self, max_ops):
        n = min(max_ops, self.left)
        if n <= 0:
            return None
        self.left -= n
        return Chunk([0] * n, [(i,) for i in range(n)])

    def close(self):
        self.conn.close()


class ToyWorkload(Workload):
    """One op, PING: inserts a row, so the test can count what the run did."""

    name = "toy"

    def __init__(self, properties):
        super().__init__(properties)
        self.ops = int(properties.get("ops", 0))
        if self.ops <= 0:
            raise ValueError("ops: a number of operations > 0")

    def step_plan(self, exp, spec):
        return StepPlan(load=False, run_ops=self.ops)   # no load: its loops make their table

    def setup(self, target, step):
        if step.loop == 1:
            conn = target.connect()
            conn.execute("DROP TABLE IF EXISTS toy")
            conn.execute("CREATE TABLE toy (v INTEGER)")
            conn.close()

    def client(self, step, endpoint, index, total, seed, batch_size=1000):
        per = step.ops_total // total + (1 if index < step.ops_total % total else 0)
        return ToyClient(endpoint, "toy", per)

    def text_outputs(self, outcomes, intervals=None):
        return {"toy.txt": "".join(f"{o.step.name} {o.ops}\n" for o in outcomes)}


@pytest.fixture
def toy():
    registry.register("toy", ToyWorkload)
    yield
    registry.unregister("toy")


def test_toy_workload_runs_through_the_cli(toy, tmp_path, capsys):
    yaml = tmp_path / "toy.yaml"
    yaml.write_text("experiment: toy\nworkload: toy\nproperties: {ops: 3000}\n"
                    "targets: [{name: lite, url: sqlite}]\nrun: {threads: [2], loops: 2}\nseed: 3\n")
    assert cli.main(["run", str(yaml), "--data-dir", str(tmp_path / "data"), "--no-progress"]) == 0
    res = load_results(tmp_path / "data" / "toy")
    steps = res["steps"].set_index("step")
    assert list(steps.index) == ["r.L1", "r.L2"]
    assert steps["ops"].tolist() == [3000, 3000]
    lat = res["latency"]
    assert set(lat["op"]) == {"PING"} and lat["count"].sum() == 6000
    run_dir = next((tmp_path / "data" / "toy").glob("lite-*"))
    import sqlite3
    conn = sqlite3.connect(run_dir / "db.sqlite")
    # the table was made anew only before the first loop: both loops' rows are there
    assert conn.execute("SELECT count(*) FROM toy").fetchone()[0] == 6000
    assert (run_dir / "toy.txt").read_text() == "r.L1 3000\nr.L2 3000\n"
    assert "r.L2.eff.op" in capsys.readouterr().out


def test_unknown_workload_is_one_line(tmp_path, capsys):
    yaml = tmp_path / "x.yaml"
    yaml.write_text("experiment: x\nworkload: toyy\ntargets: [{name: lite, url: sqlite}]\n")
    assert cli.main(["run", str(yaml), "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown workload 'toyy'" in err and "ycsb" in err and len(err.splitlines()) == 1


def test_a_bad_toy_property_is_one_line(toy, tmp_path, capsys):
    yaml = tmp_path / "x.yaml"
    yaml.write_text("experiment: x\nworkload: toy\nproperties: {ops: 0}\n"
                    "targets: [{name: lite, url: sqlite}]\n")
    assert cli.main(["run", str(yaml), "--data-dir", str(tmp_path / "d")]) == 2
    assert "properties: ops: a number of operations > 0" in capsys.readouterr().err
    assert not (tmp_path / "d" / "x").exists()


def test_a_workloads_own_tables_and_plots_come_from_its_folder():
    """Workload.summary_tables / plots / interactive_plots: modules of its own folder that
    summaries.own_tables and plots.own reach by name; one line for a workload without."""
    from benchlib import plots, summaries
    kv = summaries.own_tables("kv")
    assert kv.__name__ == "benchlib.workloads.kv.summary" and callable(kv.kv_table)
    ybio = summaries.own_tables("ybio"), plots.own("ybio"), plots.own("ybio", interactive=True)
    assert [m.__name__.rpartition(".")[2] for m in ybio] == ["summary", "plots", "plots_interactive"]
    for name in ("riops_by_batch_size", "riops_heatmap"):       # the same names in both
        assert callable(getattr(ybio[1], name)) and callable(getattr(ybio[2], name))
    with pytest.raises(ValueError, match=r"^workload 'ycsb' has no plots of its own$"):
        plots.own("ycsb")
    with pytest.raises(ValueError, match=r"^workload 'linkbench' has no summary tables of its own$"):
        summaries.own_tables("linkbench")
    for name in registry.names():              # every hook a workload sets names a module
        for what in registry.OWN_MODULES:
            if getattr(registry.workload_class(name), what):
                registry.own_module(name, what)
