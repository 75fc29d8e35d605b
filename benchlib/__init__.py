"""benchlib: database benchmarks from Jupyter — YCSB and friends, hardware efficiency,
the one-line summaries of the seeds.

The small public API; everything else is reachable through its module.
"""
__version__ = "0.1.0"

# imported when first used (PEP 562): the command line pays for pydantic only when a
# command needs the parameters, and for pandas only when it reads or writes tables
_LAZY = {"Experiment": "params", "ParameterError": "params", "load_experiment": "params",
         "load_results": "results"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_experiment(experiment, data_dir="data", *, overrides=None, force=False, progress=None):
    """Run an experiment (an :class:`Experiment`, or the path of its YAML)."""
    from .params import Experiment, load_experiment
    from .runner import preflight
    from .runner import run_experiment as _run
    if not isinstance(experiment, Experiment):
        experiment = load_experiment(experiment, overrides)
    preflight(experiment, data_dir)
    return _run(experiment, data_dir, force=force, progress=progress)


__all__ = [
    "Experiment",
    "ParameterError",
    "__version__",
    "load_experiment",
    "load_results",
    "run_experiment",
]
