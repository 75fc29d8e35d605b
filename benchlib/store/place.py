"""Where results go: a data folder and an experiment's folder that can be written, or
one line saying why not; and nothing left behind by a run that was refused.

A ``--data-dir`` whose name is not UTF-8 (the catalog and the Parquet files store paths
as text), one under ``/proc``, on a read-only file system or naming a file is refused
before anything is made (:func:`writable_folder`). :func:`experiment_folder` makes the
experiment's folder for a run; when the run is refused before any run folder exists
(a locked experiment, a changed parameter, an executor that does not start), what it
made (the folder, ``.lock``, ``experiment.json``) is taken away again and an
``experiment.json`` that was there is put back as it was.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .folders import ResultsError
from .lock import ExperimentLock

OURS = (".lock", "experiment.json")   # what a refused run may have made in its folder


def check_path_text(path: Path, what: str) -> None:
    """ResultsError when the path's name is not UTF-8 text."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeError:
        raise ResultsError(f"{raw.decode('utf-8', 'backslashreplace')}: {what}'s name is not UTF-8 "
                           "(run folders' paths are stored as text): give a folder with a UTF-8 name") from None


def writable_folder(path: Path, what: str, make: bool = True) -> Path:
    """``path``, a folder this process can write in (made when ``make``): else
    ResultsError naming it and why (not UTF-8, a file, no such place, read-only)."""
    path = Path(path)
    check_path_text(path, what)
    try:
        if make:
            path.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            raise NotADirectoryError(20, "not a folder")
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except FileExistsError:
        raise ResultsError(f"{path}: not a folder ({what})") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot write there ({what}): {e.strerror or e}") from None
    return path


@contextlib.contextmanager
def experiment_folder(data_dir: Path, name: str) -> Iterator[Path]:
    """The folder ``data_dir/name`` for a run, made writable and locked (one benchlib
    process per experiment: :mod:`.lock`); on an exception raised before any run
    folder is in it, what this run made there is removed again, under the lock."""
    made = [p for p in (Path(data_dir), Path(data_dir) / name) if not p.exists()]
    writable_folder(data_dir, "--data-dir")
    exp_dir = Path(data_dir) / name
    writable_folder(exp_dir, "the experiment's folder")
    before = {p.name for p in exp_dir.iterdir()}
    saved = _saved(exp_dir / "experiment.json")
    with ExperimentLock(exp_dir):
        try:
            yield exp_dir
        except BaseException:
            _undo(exp_dir, before, saved, made)
            raise


def _saved(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and path.stat().st_size < (1 << 20) else None
    except OSError:
        return None


def _undo(exp_dir: Path, before: set[str], saved: bytes | None, made: list[Path]) -> None:
    """Take away what a refused run made: only when nothing but OURS is new there."""
    with contextlib.suppress(OSError):
        new = {p.name for p in exp_dir.iterdir()} - before
        if not new <= set(OURS):
            return
        for name in new:
            (exp_dir / name).unlink()
        if saved is not None:
            (exp_dir / "experiment.json").write_bytes(saved)
        for folder in reversed(made):   # the experiment's, then the data folder made for it
            folder.rmdir()


def check_run_places(exp_dir: Path, run_ids: list[str]) -> None:
    """ResultsError when something other than a folder is where a run folder goes."""
    for rid in run_ids:
        p = Path(exp_dir) / rid
        if p.is_symlink() or (p.exists() and not p.is_dir()):
            raise ResultsError(f"{p}: {'a link' if p.is_symlink() else 'a file'} where the run folder "
                               f"{rid} goes: move it away")
