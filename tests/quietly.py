"""An experiment run as :func:`benchlib.run_experiment` runs it (its preflight, then its
runs), less the one-line summaries each step prints as it ends (``summaries.step_lines``):
~1.1-1.5 s of pandas in the controller a step on this machine, a third of a short run's
time, which the tests that run through here neither read nor assert (a summary line's
failure never costs a run either: ``sequence._seed_lines`` turns it into text). A test
that reads what a run prints runs it through ``benchlib.run_experiment`` or the CLI."""
from __future__ import annotations

from pathlib import Path

from benchlib.params import validate
from benchlib.run.experiment import preflight, run_experiment


def run_quietly(exp_dict: dict, data_dir: Path, force: bool = False):
    """The result of running ``exp_dict`` (validated) into ``data_dir``: every run ok."""
    exp = validate(exp_dict, exp_dict["experiment"])
    preflight(exp, data_dir)
    res = run_experiment(exp, data_dir, progress=False, force=force)   # its step lines: none
    metas = (Path(data_dir) / exp.experiment / r / "meta.json" for r, s in res.runs.items() if s != "ok")
    assert res.ok, (res.runs, [m.read_text()[-600:] for m in metas if m.exists()])
    return res
