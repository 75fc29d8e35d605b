"""One benchlib process at a time per experiment folder: an OS file lock.

Two runs of the same experiment into one data dir would each move the other's run
folders aside; the second one is refused at once, naming the process that holds the
lock (flock is released by the kernel when that process dies, even by SIGKILL, so a
stale lock never blocks anyone).
"""
from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

from .folders import ResultsError

LOCK_FILE = ".lock"


class ExperimentLocked(ResultsError):
    """Another process runs this experiment; the message names it."""


class ExperimentLock:
    def __init__(self, exp_dir: Path):
        self.path = Path(exp_dir) / LOCK_FILE
        self.fd: int | None = None

    def __enter__(self) -> ExperimentLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as e:   # .lock made a folder, a read-only place
            raise ResultsError(f"{self.path}: cannot open the experiment's lock file: "
                               f"{e.strerror or e}{' (remove it)' if self.path.is_dir() else ''}") from None
        _take(fd, self.path)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _take(fd: int, path: Path) -> None:
    """The lock on ``fd`` (closed and ExperimentLocked, naming the holder, if it is held)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise ExperimentLocked(
            f"{path.parent}: another benchlib run ({holder}) is running this experiment; "
            "wait for it to end, or give another --data-dir") from None


def check_free(exp_dir: Path) -> None:
    """ExperimentLocked when another process runs the experiment now; creates nothing
    (preflight asks first, so that the run's own tables are not taken for another's)."""
    try:
        fd = os.open(Path(exp_dir) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return   # no lock file (or none readable): the lock itself decides later
    _take(fd, Path(exp_dir) / LOCK_FILE)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
