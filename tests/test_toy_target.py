"""A target registered from the tests (tests/toy: SQLite's file under the dialect ``toy``)
runs YCSB end to end through ``benchlib run``, through YCSB's generic SQL binding and
nothing of benchlib's or of the toy's that names it (issue 36: a SQL dialect needs no
binding file); a workload with no binding for a target's dialect is refused in one
line, exit 2, before anything runs."""
from __future__ import annotations

import sqlite3

import pytest
import toy  # noqa: F401  (registers the toy target, as a plugin would)

from benchlib import cli, load_results
from benchlib.registries import workloads as registry
from benchlib.workloads.base import Workload
from benchlib.workloads.bindings import Bindings


def _run(tmp_path, text: str) -> int:
    yaml = tmp_path / "x.yaml"
    yaml.write_text(text)
    return cli.main(["run", str(yaml), "--data-dir", str(tmp_path / "data"), "--no-progress"])


def test_the_toy_target_runs_ycsb_through_the_cli(tmp_path):
    assert _run(tmp_path, "experiment: toyrun\nworkload: ycsb\n"
                "properties: {recordcount: 500, operationcount: 2000, readproportion: 0.5,"
                " updateproportion: 0.2, insertproportion: 0.3}\n"
                "targets: [{name: play, url: toy}]\nindex: {enabled: true}\nrun: {threads: [2], loops: 1}\n"
                "seed: 5\n") == 0
    res = load_results(tmp_path / "data" / "toyrun")
    steps = res["steps"].set_index("step")
    assert steps.loc["l.pre", "ops"] == 500 and steps.loc["r.L1", "ops"] == 2000
    assert steps["errors"].sum() == 0
    run = res["runs"].iloc[0]
    assert run["meta"]["target"]["dialect"]["name"] == "toy"
    lat = res["latency"][res["latency"].step == "r.L1"].set_index("op")
    inserted = int(lat.loc["INSERT", "count"])
    assert inserted > 0
    # the rows it wrote, counted in the toy target's own SQLite file, indexed by l.post
    run_dir = next((tmp_path / "data" / "toyrun").glob("play-*"))
    conn = sqlite3.connect(run_dir / "db.sqlite")
    assert conn.execute('SELECT count(*) FROM "usertable"').fetchone()[0] == 500 + inserted
    indexes = [r[1] for r in conn.execute("PRAGMA index_list(usertable)")]
    assert "usertable_field0_idx" in indexes
    conn.close()


class NowhereWorkload(Workload):
    """A workload with no binding at all: every target's dialect is refused."""

    name = "nowhere"
    bindings = Bindings("nowhere")

    @classmethod
    def check_experiment(cls, exp):
        from benchlib.registries.targets import target_class
        for t in exp.targets:
            cls.bindings.check(target_class(t.kind).dialect.name, t.name)


@pytest.fixture
def nowhere():
    registry.register("nowhere", NowhereWorkload)
    yield
    registry.unregister("nowhere")


@pytest.mark.parametrize("workload, url, says", [
    ("nowhere", "toy", "workload nowhere does not run on target 'play' (toy): it runs on no dialect"),
    ("ycsb", "redis://127.0.0.1:1/0", "workload ycsb does not run on target 'play' (redis): it runs on "),
])
def test_a_workload_without_a_binding_for_the_dialect_is_one_line(nowhere, tmp_path, capsys,
                                                                   workload, url, says):
    assert _run(tmp_path, f"experiment: refused\nworkload: {workload}\nproperties: {{recordcount: 10}}\n"
                f"targets: [{{name: play, url: '{url}'}}]\n") == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1
    assert not (tmp_path / "data" / "refused").exists()   # refused before anything ran


def test_no_target_module_names_a_workload():
    """A target knows no workload: YCSB's per-DBMS code lives in its bindings."""
    from pathlib import Path

    import benchlib.targets
    folder = Path(benchlib.targets.__file__).parent
    named = [p.name for p in folder.iterdir()   # sources only: a stale build's .so may linger
             if p.suffix in (".py", ".c", ".h") and "ycsb" in p.read_text().lower()]
    assert named == []


def test_a_missing_driver_names_the_extra_from_the_registry():
    """The install hint is the registry's: a target's ``extra`` or else its kind."""
    from benchlib.registries import targets
    from benchlib.targets.base import TargetError, make_target
    targets.register("driverless", "toy.no_such_driver:Target", embedded=True, extra="toy-extra")
    try:
        with pytest.raises(TargetError, match=r"install benchlib\[toy-extra\]$"):
            make_target("t", "driverless")
    finally:
        targets.unregister("driverless")
    assert targets.install_extra("embedded-postgres") == "embedded"
    assert targets.install_extra("mysql") == "mysql"
