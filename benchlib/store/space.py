"""Disk space: a full disk is a failure like any other.

A run folder holds a little space in reserve from its start (:func:`reserve`): when the
disk fills mid-run, the step stops with one line naming the folder and its free space
(:func:`no_space`), and the reserve is given back (:func:`release`) so that the run's
meta.json and the catalog can still say ``failed``. Before a run, :func:`warn_if_short`
says when the free space is below what the experiment is expected to write.
"""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from ..filemodes import open_private

RESERVE = ".reserve"
RESERVE_BYTES = 256 * 1024   # meta.json, the steps table and the catalog's pages fit in it
# what a run folder takes, about: tables and meta, then per second of run loop (the
# interval log and table, the hw samples) — measured on the quickstart, rounded up
RUN_BASE_BYTES = 512 * 1024
PER_LOOP_SECOND_BYTES = 16 * 1024


class NoSpace(OSError):
    """The disk is full; the message is one line naming the folder and its free space."""

    def __str__(self) -> str:
        return str(self.strerror)


def free_bytes(path: Path) -> int | None:
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def is_no_space(e: BaseException) -> bool:
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)


def no_space(folder: Path, e: OSError | None = None) -> NoSpace:
    """The one-line error of a full disk under ``folder``."""
    return NoSpace(errno.ENOSPC, f"no space left on the device of {folder} "
                                 f"({_size(free_bytes(folder))} free)")


def reserve(run_dir: Path) -> None:
    """Hold RESERVE_BYTES in the run folder (NoSpace when even that is not there)."""
    path = Path(run_dir) / RESERVE
    try:
        with open_private(path, "wb") as f:
            try:
                os.posix_fallocate(f.fileno(), 0, RESERVE_BYTES)
            except OSError as e:
                if not is_no_space(e):   # a filesystem without fallocate: real bytes
                    f.write(b"\0" * RESERVE_BYTES)
                else:
                    raise
    except OSError as e:
        path.unlink(missing_ok=True)
        if is_no_space(e):
            raise no_space(run_dir) from None
        raise


def release(run_dir: Path) -> None:
    (Path(run_dir) / RESERVE).unlink(missing_ok=True)


def expected_bytes(runs: int, loop_secs: float) -> int:
    """What ``runs`` run folders of ``loop_secs`` seconds of run loops each write, about."""
    return int(runs * (RUN_BASE_BYTES + loop_secs * PER_LOOP_SECOND_BYTES))


def warn_if_short(folder: Path, runs: int, loop_secs: float) -> str | None:
    """A warning line when ``folder`` has less free space than the runs are expected
    to write; None when it has enough (or cannot tell)."""
    need, free = expected_bytes(runs, loop_secs), free_bytes(folder)
    if free is None or free >= need:
        return None
    return (f"warning: {folder} has {_size(free)} free; these {runs} runs are expected to "
            f"write about {_size(need)}: a full disk will fail the run that meets it")
