"""The explorer of ``notebooks/explore.ipynb``: widgets (ipywidgets) to pick a data
folder, an experiment, its runs, an operation and a value, and the interactive plots
of :mod:`benchlib.plots.interactive` drawn again on every change — the time series of
the runs picked (overlaid) for that op, and the heatmap of the value over two
parameters of the matrix.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..store import folders

def experiments(data_dir) -> list[str]:
    """The experiments of a data folder: each folder whose sub-folders are runs, by its
    path under ``data_dir`` — a folder of several experiments (an archive) offers each of
    them, never one blend; "." when ``data_dir`` is an experiment's folder itself."""
    root = Path(data_dir)
    if not root.is_dir():
        return []
    runs = folders.find_runs(root)
    if runs == [root]:   # a run's own folder: no experiment to pick
        return []
    return sorted({run.parent.relative_to(root).as_posix() for run in runs})


def axes(results: dict) -> list[str]:
    """Run parameters that vary between the runs (heatmap axes), the usual ones first."""
    from ..plots.values import varying_parameters
    return varying_parameters(results)


class Explorer:
    """The widgets and the plots under them; :meth:`widget` is what a notebook shows."""

    def __init__(self, data_dir, experiment: str | None = None, runs=None, op: str | None = None,
                 value: str = "p99_us"):
        import ipywidgets as w

        from ..plots import VALUES
        self.results: dict = {}
        self.data = w.Text(value=str(data_dir), description="data folder", continuous_update=False)
        self.experiment = w.Dropdown(description="experiment")
        self.runs = w.SelectMultiple(description="runs", rows=6, layout=w.Layout(width="520px"))
        self.op = w.Dropdown(description="op")
        self.value = w.Dropdown(description="value", options=list(VALUES), value=value)
        self.x, self.y = w.Dropdown(description="x"), w.Dropdown(description="y")
        self.out = w.Output()
        self._quiet = False
        self._load_folder(experiment)
        if runs:
            self.runs.value = tuple(r for r in runs if r in self.runs.options)
        if op in self.op.options:
            self.op.value = op
        self.data.observe(lambda _: self._load_folder(None), names="value")
        self.experiment.observe(lambda _: self._load_experiment(), names="value")
        for box in (self.runs, self.op, self.value, self.x, self.y):
            box.observe(lambda _: self.draw(), names="value")
        self.draw()

    def widget(self):
        import ipywidgets as w
        return w.VBox([w.HBox([w.VBox([self.data, self.experiment, self.op, self.value, self.x, self.y]),
                               self.runs]), self.out])

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget())

    def _load_folder(self, experiment: str | None) -> None:
        names = experiments(self.data.value)
        self._quiet = True
        self.experiment.options = names
        self._quiet = False
        if names:
            self.experiment.value = experiment if experiment in names else names[0]
        self._load_experiment()

    def _load_experiment(self) -> None:
        if self._quiet:
            return
        from ..plots.style import _main_ops
        name = self.experiment.value
        self.results = folders.load_results(Path(self.data.value) / name) if name else {}
        runs = self.results.get("runs", pd.DataFrame())
        ids = sorted(runs["run_id"].astype(str)) if len(runs) else []
        iv = self.results.get("intervals", pd.DataFrame())
        ops = [o for o in _main_ops(iv) if o != "TOTAL"] if len(iv) else []
        names = axes(self.results) if ids else []
        self._quiet = True   # one draw for the new experiment, not one per widget
        self.runs.options, self.runs.value = ids, tuple(ids[:1])
        self.op.options = ["(every op)", *ops]
        self.op.value = "(every op)"
        self.x.options = self.y.options = names or ["threads"]
        self.x.value = names[0] if names else "threads"
        self.y.value = names[1] if len(names) > 1 else self.x.value
        self._quiet = False
        self.draw()

    def draw(self) -> None:
        """The plots for what the widgets say now; a choice that makes no plot says why."""
        if self._quiet:
            return
        from IPython.display import Markdown, clear_output, display

        from ..plots import interactive
        with self.out:
            clear_output(wait=True)
            if not self.results or not self.runs.value:
                folder = Path(self.data.value or ".")
                why = "" if folder.is_dir() else \
                    f": no such folder (a relative path is from the notebook's folder, {Path.cwd()})"
                display(Markdown(f"*no runs in {self.data.value or 'this folder'}{why}*"))
                return
            ops = None if self.op.value in (None, "(every op)") else [self.op.value]
            for make in (lambda: interactive.timeseries(self.results, list(self.runs.value), ops=ops),
                         lambda: interactive.heatmap(self.results, self.value.value, x=self.x.value,
                                                     y=self.y.value, op=ops[0] if ops else None)):
                try:
                    display(make())
                except ValueError as e:   # e.g. a parameter these runs do not have
                    display(Markdown(f"*{e}*"))


def explorer(data_dir, experiment: str | None = None, runs=None, op: str | None = None,
             value: str = "p99_us") -> Explorer:
    """An :class:`Explorer` over ``data_dir`` (defaults: the first experiment, its first
    run, every op, p99)."""
    return Explorer(data_dir, experiment, runs, op, value)
