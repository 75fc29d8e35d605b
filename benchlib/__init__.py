"""benchlib: database benchmarks from Jupyter — YCSB and friends, hardware efficiency,
the one-line summaries of the seeds.

The small public API; everything else is reachable through its module.
"""
__version__ = "0.1.0"

from .params import Experiment, ParameterError, load_experiment  # noqa: E402
from .results import load_results  # noqa: E402


def run_experiment(experiment, data_dir="data", *, overrides=None, force=False, progress=None):
    """Run an experiment (an :class:`Experiment`, or the path of its YAML)."""
    from .runner import preflight
    from .runner import run_experiment as _run
    if not isinstance(experiment, Experiment):
        experiment = load_experiment(experiment, overrides)
    preflight(experiment, data_dir)
    return _run(experiment, data_dir, force=force, progress=progress)


__all__ = ["Experiment", "ParameterError", "load_experiment", "load_results", "run_experiment",
           "__version__"]
