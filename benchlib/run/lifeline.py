"""A client process dies with its controller.

A spawned client that outlives a SIGKILLed controller keeps its connections, the run's
SQLite file and the resource tracker's pipe open (so the run's shared-memory segments
are never unlinked) for as long as it runs. Two guards close that:

- ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the process when the thread
  that started it ends, whatever the way — the controller's main thread for a spawned
  client; for one forked by multiprocessing's forkserver (:mod:`.forkserver`) the
  server, which exits when the controller's end of its pipe closes;
- the parent check just after it: a controller that died between the start and the
  prctl closed its end of the pipe multiprocessing keeps to the child (the parent
  sentinel), so the child exits at once — it never runs a second for nobody.

Once every client is gone the resource tracker reads the end of its pipe and unlinks
the segments the controller created and did not unlink (the insert counter's).
"""
from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal

PR_SET_PDEATHSIG = 1     # linux/prctl.h
ORPHAN_EXIT = 3          # the exit code of a client whose controller is gone


def expected_parent() -> int:
    """The pid of the process that spawned this one (as it told us), else the parent now."""
    parent = mp.parent_process()
    return parent.pid if parent is not None and parent.pid else os.getppid()


def die_with_parent() -> int:
    """This process killed when its parent dies; it exits now if the parent already did.
    The parent's pid, for later checks (:func:`orphaned`)."""
    parent = expected_parent()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):   # no prctl (not Linux): the parent checks remain
        pass
    if orphaned(parent):
        os._exit(ORPHAN_EXIT)
    return parent


def orphaned(parent: int) -> bool:
    """Whether the process that started this one is gone: its end of multiprocessing's
    pipe closed (a client forked by a forkserver has the server as its parent, not the
    controller), else, outside multiprocessing, this process re-parented."""
    started_by = mp.parent_process()
    if started_by is not None:
        return not started_by.is_alive()
    return os.getppid() != parent
