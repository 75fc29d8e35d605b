"""A run's files are its owner's alone (0600), whoever writes them.

The tables, meta.json and error.log get it from their temporary file (``mkstemp``);
what is opened by name — the interval log appended to as seconds complete, the space
reserve, the experiment's lock, a database an engine creates in the run folder (SQLite
gives its ``-wal``, ``-shm`` and ``-journal`` the mode of its database file), the
catalog — is created here with that mode, whatever the umask. What a web server serves
is for all, on purpose: ``reports.html.publish``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import IO

PRIVATE = 0o600
_FLAGS = {"a": os.O_WRONLY | os.O_APPEND | os.O_CREAT, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC}


def open_private(path: Path | str, mode: str = "a", **kwargs) -> IO:
    """``open(path, mode)`` (``a``, ``w``, ``ab``, ``wb``) of a file that is 0600, made so
    if it was there before with another mode."""
    fd = os.open(path, _FLAGS[mode.replace("b", "")], PRIVATE)
    try:
        os.fchmod(fd, PRIVATE)
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def create_private(path: Path | str) -> None:
    """``path`` created empty and 0600 where it is missing (a database file before its
    engine opens it); a file that is there is left as it is."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE))
    except FileExistsError:
        pass
