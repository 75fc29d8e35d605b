"""A server benchlib started must not outlive benchlib: a watchdog process holds the
read end of a pipe whose write end only the benchlib process has. However that process
ends (a SIGKILL, an OOM kill) the pipe reads end-of-file, and the watchdog stops the
server (PostgreSQL's fast shutdown, SIGINT to the postmaster) unless benchlib said
first that it stopped the server itself.

The watchdog runs in a session of its own (a Ctrl-C to benchlib's process group is not
its business) and is a few lines of plain Python: it imports nothing of benchlib.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

STOPPED = b"stopped\n"

_BODY = r"""
import os, signal, sys, time
pid, sig = int(sys.argv[1]), int(sys.argv[2])
said = sys.stdin.buffer.read()          # returns when every writer is gone
if said != b"stopped\n":
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        sys.exit(0)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    for f in sys.argv[3:]:              # the owner's files, stale now
        try:
            os.unlink(f)
        except OSError:
            pass
"""


class Watchdog:
    """Stops the process ``pid`` (``sig``: SIGINT, PostgreSQL's fast shutdown; a server
    that stops on another, SIGTERM for MariaDB) when this process ends without
    :meth:`release`."""

    def __init__(self, pid: int, stale_files: tuple = (), sig: int = signal.SIGINT):
        self.proc = subprocess.Popen([sys.executable, "-c", _BODY, str(pid), str(int(sig)), *map(str, stale_files)],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)

    def release(self) -> None:
        """The server was stopped by its owner: the watchdog goes without doing anything."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.write(STOPPED)
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


OWNER_FILE = "benchlib.owner"   # in a server's data directory: the pid of the benchlib process that started it


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_leftover(pgdata: Path, what: str, stale: tuple = (), wait_s: float = 30.0) -> None:
    """A PostgreSQL server left running in ``pgdata`` by a benchlib process that was killed
    (should even its watchdog have failed) is stopped, with a line saying so, before a new
    one starts there: reusing it would carry the killed run's state (caches, locks,
    half-done work) into the next measurement. ``stale``: files that go with it."""
    owner_file, pid_file = pgdata / OWNER_FILE, pgdata / "postmaster.pid"
    try:
        owner = int(owner_file.read_text().split()[0])
        postmaster = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    if alive(owner):
        return
    if alive(postmaster):
        print(f"benchlib: stopping {what} (pid {postmaster}) left running by "
              f"a killed run (pid {owner}) in {pgdata}", file=sys.stderr)
        os.kill(postmaster, signal.SIGINT)   # PostgreSQL's fast shutdown
        deadline = time.monotonic() + wait_s
        while alive(postmaster) and time.monotonic() < deadline:
            time.sleep(0.1)
    owner_file.unlink(missing_ok=True)
    for f in stale:
        Path(f).unlink(missing_ok=True)
