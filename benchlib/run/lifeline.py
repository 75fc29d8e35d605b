"""A client process dies with its controller.

A spawned client that outlives a SIGKILLed controller keeps its connections, the run's
SQLite file and the resource tracker's pipe open (so the run's shared-memory segments
are never unlinked) for as long as it runs. Two guards close that:

- ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the process when the thread
  that spawned it (the controller's main thread) ends, whatever the way;
- the parent check just after it: a controller that died between the spawn and the
  prctl (the child still importing) left a parent pid that is no longer its own, so the
  child exits at once — it never runs a second for nobody.

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
    """Whether the process that spawned this one is gone (its children re-parented)."""
    return os.getppid() != parent
