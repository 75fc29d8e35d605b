"""The registries have one shape (issue 36): register, look up, list; a name none holds
raises UnknownName — the user's error (ParameterError: one line, exit 2) — naming the
known ones and the nearest."""
from __future__ import annotations

import pytest

from benchlib.errors import ParameterError
from benchlib.registries import Registry, UnknownName, executors, importers, targets, workloads


def test_register_look_up_list_and_forget():
    reg = Registry("gadget")
    reg.register("alpha", "benchlib.measure:throughput", default=True, colour="red")
    reg.register("beta", len)
    assert reg.names() == ["alpha", "beta"] and reg.default() == "alpha"
    assert "alpha" in reg and "gamma" not in reg
    from benchlib.measure import throughput
    assert reg.get("alpha") is throughput and reg.get("beta") is len      # imported when asked
    assert reg.facts("alpha") == {"colour": "red"}
    assert reg.refs() == {"alpha": "benchlib.measure:throughput", "beta": "builtins:len"}
    reg.unregister("alpha")
    assert reg.names() == ["beta"]
    with pytest.raises(UnknownName, match="no default gadget"):
        reg.default()


def test_an_unknown_name_is_one_user_error_with_the_nearest():
    reg = Registry("gadget")
    reg.register("sprocket", len)
    with pytest.raises(UnknownName) as e:
        reg.get("sprockte")
    assert isinstance(e.value, ParameterError) and isinstance(e.value, ValueError)
    assert str(e.value) == "unknown gadget 'sprockte' (known: sprocket); did you mean 'sprocket'?"
    with pytest.raises(UnknownName, match=r"\(known: sprocket\)$"):   # nothing near: no guess
        reg.check("zzz")


@pytest.mark.parametrize(("ask", "name", "near"), [
    (workloads.workload_class, "ycbs", "ycsb"),
    (targets.target_class, "postgress", "postgres"),
    (targets.target_kind, "sqlit", "sqlite"),
    (targets.target_kind, "postgress://u@h/db", "postgres"),
    (executors.executor_class, "dask2", "dask"),
    (importers.importer, "pgbnch", "pgbench"),
])
def test_every_registry_says_the_same(ask, name, near):
    with pytest.raises(UnknownName, match=f"did you mean '{near}'"):
        ask(name)


def test_the_command_line_says_it_in_one_line(tmp_path, capsys):
    from benchlib.cli import main
    exp = tmp_path / "e.yaml"
    exp.write_text("experiment: e\nworkload: ycsb\nexecutor: locl\ntargets: [{name: s, url: sqlite}]\n")
    assert main(["run", str(exp), "--dry-run", "--data", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "did you mean 'local'" in err, err
