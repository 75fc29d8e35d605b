"""A server benchlib started must not outlive benchlib: a watchdog process holds the
read end of a pipe whose write end only the benchlib process has. However that process
ends (a SIGKILL, an OOM kill) the pipe reads end-of-file, and the watchdog stops the
server (PostgreSQL's fast shutdown, SIGINT to the postmaster) unless benchlib said
first that it stopped the server itself.

The watchdog runs in a session of its own (a Ctrl-C to benchlib's process group is not
its business) and is a few lines of plain Python: it imports nothing of benchlib.
"""
from __future__ import annotations

import subprocess
import sys

STOPPED = b"stopped\n"

_BODY = r"""
import os, signal, sys, time
pid = int(sys.argv[1])
said = sys.stdin.buffer.read()          # returns when every writer is gone
if said != b"stopped\n":
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        sys.exit(0)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    for f in sys.argv[2:]:              # the owner's files, stale now
        try:
            os.unlink(f)
        except OSError:
            pass
"""


class Watchdog:
    """Stops the process ``pid`` (SIGINT) when this process ends without :meth:`release`."""

    def __init__(self, pid: int, stale_files: tuple = ()):
        self.proc = subprocess.Popen([sys.executable, "-c", _BODY, str(pid), *map(str, stale_files)],
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
