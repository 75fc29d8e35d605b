"""benchlib: database benchmarks from Jupyter — YCSB and friends, hardware efficiency,
the one-line summaries of the seeds.

The small public API; everything else is reachable through its module.
"""
from .version import __version__

# imported when first used (PEP 562): the command line pays for pydantic only when a
# command needs the parameters, and for pandas only when it reads or writes tables
# (each import written out, so tests/test_layers.py sees it)
def __getattr__(name):
    if name in ("Experiment", "ParameterError", "load_experiment"):
        from . import params as module
    elif name == "load_results":
        from .store import folders as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(module, name)
    return value


def run_experiment(experiment, data_dir="data", *, overrides=None, force=False, progress=None,
                   out=None):
    """Run an experiment (an :class:`Experiment`, or the path of its YAML); each step
    prints its one-line summaries in the seeds' formats as it ends."""
    import sys

    from .params import Experiment, load_experiment
    from .run.experiment import preflight
    from .run.experiment import run_experiment as _run
    from .summaries import step_lines
    if not isinstance(experiment, Experiment):
        experiment = load_experiment(experiment, overrides)
    preflight(experiment, data_dir)
    return _run(experiment, data_dir, force=force, progress=progress, out=out or sys.stdout,
                step_lines=step_lines)


__all__ = [
    "Experiment",
    "ParameterError",
    "__version__",
    "load_experiment",
    "load_results",
    "run_experiment",
]
