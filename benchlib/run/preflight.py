"""What is checked before a run starts: every URL target answers, a finished run
would not be skipped under other parameters; and the parameters as a run folder
records them."""
from __future__ import annotations

from pathlib import Path

from ..masking import mask_mapping
from ..params import Experiment, ParameterError, RunSpec, plan
from ..store import folders, lock
from ..targets import ownership
from ..targets.base import make_target
from ..registries.targets import embedded_names
from .hwsources import check as hw_check


def resolved_parameters(exp: Experiment) -> dict:
    """The experiment's parameters as recorded in its folder: secrets masked, and
    without the path it was read from (the same experiment may be run from anywhere)."""
    resolved = mask_mapping(exp.model_dump(mode="json"))
    resolved.pop("source", None)
    return resolved


# what a run's figures do not depend on: a changed description does not stop a rerun, nor
# where the DBMS host's figures come from (hw:, newer than some folders; a finished run
# gets them after the fact with `benchlib import prometheus`), nor which target the others
# are set against (base:, read by the summaries; newer than some folders)
NOT_MEASURED = frozenset({"source", "description", "hw", "base"})
# nor whether a load may replace a table benchlib did not make, nor whether a provisioned
# server's data is loaded in each run or copied from one load (the same data; both newer
# than some folders)
NOT_MEASURED_KEYS = frozenset({"load.replace", "load.fresh"})


def check_rerun(exp: Experiment, exp_dir: Path, specs: list[RunSpec]) -> None:
    """A run that finished with other parameters would be skipped, and the folder
    would then describe runs it does not hold: say which keys changed, and stop."""
    now = resolved_parameters(exp)
    for spec in specs:
        try:
            meta = folders.read_meta(exp_dir / spec.run_id)
        except folders.ResultsError:
            continue
        if meta.get("status") != "ok" or not isinstance(meta.get("parameters"), dict):
            continue
        changed = changed_keys(meta["parameters"], now)
        if changed:
            raise ParameterError(
                f"{exp_dir}: run {spec.run_id} finished with other parameters "
                f"({', '.join(changed[:5])}{' …' if len(changed) > 5 else ''} changed); "
                "use --force to run it again with these, or another experiment name")


def changed_keys(then: dict, now: dict) -> list[str]:
    """The dotted keys whose values differ between two runs' parameters, those a run's
    figures do not depend on aside."""
    then, now = ({k: v for k, v in d.items() if k not in NOT_MEASURED} for d in (then, now))
    return [k for k in _changed_keys(then, now) if k not in NOT_MEASURED_KEYS]


def _changed_keys(a, b, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += _changed_keys(a.get(k), b.get(k), f"{prefix}{k}.")
        return out
    return [] if a == b else [prefix.rstrip(".")]


def preflight(exp: Experiment, data_dir: Path | str = "data") -> None:
    """Connect to every URL target once before anything runs: an unreachable database
    is one line and exit 2, not a folder of failed runs; so is a table of the name a
    load would create that benchlib did not make (:func:`check_tables`). (Embedded
    targets start with their run; a database file there already is read as it is.) A
    Prometheus that hw.dbms names must answer too."""
    hw_check(exp)
    lock.check_free(Path(data_dir) / exp.experiment)   # a run of it now: that, not its tables
    specs = plan(exp)
    for t in exp.targets:
        target = make_target(t.name, t.url, t.options, data_dir)
        embedded = t.kind in embedded_names()   # sqlite, basic, embedded-postgres …
        if embedded and not target.inspectable_unstarted():
            continue
        if not embedded:
            target.start()
        try:
            check_tables(exp, target, [s for s in specs if s.target.name == t.name])
        finally:
            if not embedded:
                target.stop()


def check_tables(exp: Experiment, target, specs: list[RunSpec]) -> None:
    """TargetError (one line) when a run of ``specs`` would load into a table on
    ``target`` (started) that benchlib did not make, or (load.skip) run against one
    that is missing or not the workload's (targets/ownership.py); nothing is written."""
    if exp.load.replace or (exp.load.skip and exp.run.skip) or not target.tracks_tables:
        return
    shapes: dict = {}
    for spec in specs:   # a matrix point may name its own tables (ybio's per session)
        workload = exp.workload_class()({**exp.workload_properties(), **spec.workload_point})
        workload.steps(exp, spec)
        shapes.update((s.name, s) for s in workload.load_tables())
    ownership.check(target, list(shapes.values()), skip=exp.load.skip)
