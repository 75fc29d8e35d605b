"""Notebooks executed by papermill: where they are, one at a time or side by side, and
``experiment.ipynb`` run on experiment YAMLs.

The notebooks are read from ``$BENCHLIB_NOTEBOOKS`` if set, else from ``notebooks/``
of the source checkout benchlib is installed from (``Path(benchlib.__file__).parents[1]
/ "notebooks"``; the Makefile installs with ``pip install -e``). They are not package
data on purpose: the reports run the very notebooks a user opens and edits in Jupyter.
"""
from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

from ..masking import SECRETS_ENV, hide_secrets
from .kernel import KERNEL, fresh_namespace, renumber, shared_kernel


class ReportError(Exception):
    """A report that could not be made in full; the message is one line."""


def notebooks_dir() -> Path:
    """Where the notebooks are: ``$BENCHLIB_NOTEBOOKS``, else the checkout's notebooks/."""
    env = os.environ.get("BENCHLIB_NOTEBOOKS")
    # this file is benchlib/reports/execute.py: the checkout is three folders up
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "notebooks"
    if not (path / "summary.ipynb").is_file():
        raise ReportError(f"{path}: no benchlib notebooks there (install benchlib from its "
                          f"checkout with pip install -e, or set BENCHLIB_NOTEBOOKS)")
    return path


def show_progress(progress: bool | None) -> bool:
    """A progress bar when asked, else (None) when stderr is a terminal."""
    return sys.stderr.isatty() if progress is None else bool(progress)


def execute(name: str, output: Path, parameters: dict, *, progress: bool | None = None,
            km=None) -> str | None:
    """Execute ``notebooks/<name>.ipynb`` into ``output``; None when it ran through, else
    one line naming the notebook and the failing cell (the output keeps the error).
    ``km``: a started kernel (:func:`.kernel.shared_kernel`) to run it in, else one of its
    own, started the same way (Unix sockets, not a TCP port another kernel could draw),
    without the tables' cache, and the output written after every cell (an experiment's
    log, which a killed experiment keeps)."""
    if km is not None:
        return _execute(name, output, parameters, progress, km, save_each_cell=False)
    try:
        with shared_kernel(notebooks_dir(), cache=False) as own:
            return _execute(name, output, parameters, progress, own, save_each_cell=True)
    except Exception as e:  # noqa: BLE001 - no kernel: one line
        msg = (str(e).strip().splitlines() or [""])[0]
        return f"{name}.ipynb could not run: {type(e).__name__}: {msg}"


def _execute(name: str, output: Path, parameters: dict, progress: bool | None, km,
             save_each_cell: bool) -> str | None:
    without_slow_imports()
    import papermill
    from papermill.exceptions import PapermillExecutionError

    output.parent.mkdir(parents=True, exist_ok=True)
    src = notebooks_dir() / f"{name}.ipynb"
    try:
        # a report's parameter a notebook does not take (summary has no plots to make
        # interactive) is left out, not injected
        declared = papermill.inspect_notebook(str(src))
        parameters = {k: v for k, v in parameters.items() if k in declared}
        papermill.execute_notebook(str(src), str(output), parameters=parameters,
                                   kernel_name=KERNEL, progress_bar=show_progress(progress),
                                   # no papermill cwd: it is an os.chdir of the whole process
                                   # for the execution, which two kernels' threads undid in
                                   # the wrong order, leaving the caller in notebooks/ (a
                                   # test after a report found no parameters/quickstart.yaml);
                                   # the kernel was started in that folder already
                                   cwd=None, km=km, log_output=False,
                                   # a report's notebook is written once, when it ends (or
                                   # fails), not after every cell: each write validates it
                                   request_save_on_cell_execute=save_each_cell)
    except PapermillExecutionError as e:
        count = _renumbered(output).get(e.exec_count, e.exec_count)
        msg = (str(e.evalue).strip().splitlines() or [""])[0]
        return f"{name}.ipynb failed in cell In [{count}]: {e.ename}: {msg}"
    except Exception as e:  # noqa: BLE001 - no kernel, a broken notebook: one line, work kept
        msg = (str(e).strip().splitlines() or [""])[0]
        return f"{name}.ipynb could not run: {type(e).__name__}: {msg}"
    _renumbered(output)
    return None


def _renumbered(output: Path) -> dict[int, int]:
    """Renumber an executed notebook's cells from 1 (:func:`.kernel.renumber`), written
    as nbformat writes it (read as JSON: nbformat's validation is most of a read)."""
    if not output.is_file():
        return {}
    nb = json.loads(output.read_text(encoding="utf-8"))
    new = renumber(nb)
    output.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return new


def without_slow_imports() -> None:
    """Keep ``rfc3987_syntax`` from loading: jsonschema (nbformat's, papermill's) imports it
    when installed, for an IRI format check no notebook schema uses, and it builds a
    grammar on import: 1–2 s of a core in every ``benchlib report``. Only when jsonschema
    is not loaded yet (a process that loaded it keeps its checker)."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)   # its import then fails: skipped


def imports_before_threads() -> None:
    """papermill (requests, urllib3 with it) and nbconvert imported in this thread before
    a report starts its threads: imported first in two threads at once, urllib3 printed a
    warning about SOCKS support on stderr now and then (another thread's
    ``warnings.catch_warnings`` had taken its filter away meanwhile)."""
    without_slow_imports()
    import nbconvert  # noqa: F401
    import papermill  # noqa: F401


def execute_all(notebooks: tuple[str, ...], out: Path, parameters: dict, label: str,
                progress: bool | None, on_done=None, kernels: int | None = None) -> dict[str, str]:
    """Run notebooks into ``out/<name>.ipynb`` (one progress bar); {notebook: error line}
    of the failed. ``on_done(name, error or None)`` is called as each ends (in a worker
    thread). ``kernels`` (default: as many as cores, at most 4 and one per notebook) side
    by side, each running its share in turn (:mod:`.kernel`: start, imports and tables
    paid once per kernel; two kernels keep both cores of a small machine busy)."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    from tqdm.auto import tqdm
    imports_before_threads()
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for name in notebooks:
        todo.put(name)
    failed: dict[str, str] = {}
    raised: list[BaseException] = []
    bar = tqdm(total=len(notebooks), desc=f"report {label}", unit="notebook",
               disable=not show_progress(progress))

    def worker() -> None:
        done = 0
        try:
            with shared_kernel(notebooks_dir()) as km:
                while True:
                    if done:
                        fresh_namespace(km)
                    try:
                        name = todo.get_nowait()
                    except queue.Empty:
                        return
                    finish(name, execute(name, out / f"{name}.ipynb", parameters, progress=False, km=km))
                    done += 1
        except Exception as e:  # noqa: BLE001 - no kernel: each notebook left says so, in one line
            msg = (str(e).strip().splitlines() or [""])[0]
            while not todo.empty():
                name = todo.get_nowait()
                finish(name, f"{name}.ipynb could not run: {type(e).__name__}: {msg}")

    def finish(name: str, err: str | None) -> None:
        if err:
            failed[name] = err
            bar.write(f"report: {err}", file=sys.stderr)
        try:
            if on_done:
                on_done(name, err)
        except BaseException as e:   # raised once the kernels are shut down, not as a kernel's
            raised.append(e)
        bar.update()

    kernels = max(1, min(len(notebooks), kernels or os.cpu_count() or 1, 4))
    with bar, ThreadPoolExecutor(max_workers=kernels) as pool:
        for job in [pool.submit(worker) for _ in range(kernels)]:
            job.result()
    if raised:
        raise raised[0]
    return failed


# ---------------------------------------------------------------- experiment.ipynb

def run_experiment_notebook(*parameter_files, data_dir="data", parameters: dict | None = None,
                            progress: bool | None = None) -> Path:
    """Run ``experiment.ipynb`` on experiment YAMLs and keep the executed notebook as
    the experiment's log, ``<data_dir>/<experiment>/experiment.ipynb``.

    Each YAML's top-level keys become notebook parameters, later files (then
    ``parameters``) winning key by key — as ``papermill -f a.yaml -f b.yaml``. A key
    no file sets keeps the notebook's default. Returns the executed notebook's path;
    a bad parameter is a :class:`~benchlib.ParameterError` before anything runs, a
    failed run a :class:`ReportError` naming the cell (the notebook keeps the error).
    """
    import papermill

    from ..params import ParameterError, validate
    merged = {**_merged_yamls(parameter_files), **(parameters or {})}
    if parameter_files and not merged.get("source"):
        merged["source"] = str(Path(parameter_files[-1]).resolve())
    src = notebooks_dir() / "experiment.ipynb"
    declared = papermill.inspect_notebook(str(src))
    unknown = sorted(set(merged) - set(declared))
    if unknown:
        raise ParameterError(f"{', '.join(map(str, parameter_files)) or 'parameters'}: "
                             f"experiment.ipynb has no parameter {', '.join(unknown)}")
    full = {k: ast.literal_eval(v["default"]) for k, v in declared.items() if k != "data_dir"}
    full.update({k: v for k, v in merged.items() if k != "data_dir"})
    exp = validate({k: v for k, v in full.items() if v is not None}, merged.get("source") or str(src))
    data_dir = Path(merged.get("data_dir", data_dir)).resolve()
    out = data_dir / exp.experiment / "experiment.ipynb"
    masked, secrets = hide_secrets({**merged, "data_dir": str(data_dir)})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.touch(mode=0o600)   # papermill writes into it as it goes: private from the start
    os.environ[SECRETS_ENV] = json.dumps(secrets)   # the kernel's, never a file's
    try:
        err = execute("experiment", out, masked, progress=progress)
    finally:
        os.environ.pop(SECRETS_ENV, None)
        if out.exists():
            out.chmod(0o600)   # the experiment's log, as private as its meta.json
    if err:
        raise ReportError(f"{err} (the executed notebook is {out})")
    return out


def _merged_yamls(parameter_files) -> dict:
    """The top-level keys of the YAMLs, later files winning; a file that is not a
    mapping of keys is a ParameterError naming it."""
    import yaml

    from ..params import ParameterError
    merged: dict = {}
    for f in parameter_files:
        try:
            data = yaml.safe_load(Path(f).read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ParameterError(f"{f}: {type(e).__name__}: {str(e).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise ParameterError(f"{f}: expected a mapping of keys")
        merged.update(data)
    return merged
