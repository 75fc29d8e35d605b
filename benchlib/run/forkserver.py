"""How a step's client processes start: forked from a server that imported their modules
once (multiprocessing's ``forkserver``), not each spawned as a new interpreter.

A spawned client is a new Python that imports benchlib's client side, numpy and the
target's driver before it connects: 0.9 s of CPU per client process and step on the
2-core machine of BENCHMARKS.md ("How a step's clients start"), for every step of a run —
a quickstart of 1-s loops spent 5 of its 15 s of CPU on it, CPU that a host shared with
the DBMS takes from the server. Forked from a server that imported those modules once,
a client is ready in milliseconds.

What a spawned client had and a forked one keeps:

- the controller's environment at the moment of the start (a forkserver's children
  inherit the server's, from when it started): the executor sends ``os.environ`` with the
  task and the client sets it first (:func:`in_environment`). What a process reads only
  as it starts (glibc's ``MALLOC_*`` tunables, ``LD_PRELOAD``) is the server's, from its
  start: a controller that changes those between experiments restarts itself, or sets
  ``BENCHLIB_START_METHOD=spawn``;
- its working directory and ``sys.path``: multiprocessing's preparation data, as for spawn;
- a client that outlives no controller: the server exits when the controller's end of its
  pipe closes, and the client dies with the server (``PR_SET_PDEATHSIG``,
  :mod:`.lifeline`, which asks the controller's pipe, not the parent pid, whether it lives).

The server is started once per controller process, at its first step, with the client-side
modules the controller has imported by then (its workload's, its target's, the driver's);
a later experiment's other modules are imported by its clients as before. Where the
platform has no forkserver: spawn.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys

from ..errors import ParameterError
from ..registries import targets

# the start methods BENCHLIB_START_METHOD may choose
START_METHOD_ENV, START_METHODS = "BENCHLIB_START_METHOD", ("forkserver", "spawn")
# what a client process imports to run a step: its loop (benchlib.run.clients and what it
# imports), the workloads' and targets' modules the controller has imported (its
# workload's, bindings', dialect's), the drivers; not the controller's parts, which pull
# pandas, pyarrow and matplotlib: a client forked with them would carry their memory in its
# rss (a spawned one does not import them), and tests/test_forkserver.py checks that
# nothing preloaded does
CLIENT_PACKAGES = ("benchlib.workloads.", "benchlib.targets.")
CONTROLLER_ONLY = (".summary", ".plots", ".plots_interactive")
# what the client side imports whatever its target (the targets' own client libraries:
# their registry entries' drivers)
COMMON = frozenset({"numpy", "hdrh", "psutil"})


def preload(modules=None) -> list[str]:
    """The modules the server imports, of those the controller has (``sys.modules``)."""
    modules = sys.modules if modules is None else modules
    drivers = COMMON | targets.client_drivers()
    names = {"benchlib.run.clients"}
    for name in modules:
        if name.startswith(CLIENT_PACKAGES) and not name.endswith(CONTROLLER_ONLY):
            names.add(name)
        elif name in drivers:
            names.add(name)
    return sorted(names)


def start_method() -> str:
    """``forkserver`` where the platform has it, else ``spawn``; ``BENCHLIB_START_METHOD``
    chooses (``spawn``: every client a new interpreter, as before; what
    bench/bench_client_start.py compares)."""
    chosen = os.environ.get(START_METHOD_ENV, "")
    if chosen and chosen not in START_METHODS:
        raise ParameterError(f"{START_METHOD_ENV}={chosen!r}: one of {', '.join(START_METHODS)}")
    if chosen == "spawn" or "forkserver" not in mp.get_all_start_methods():
        return "spawn"
    return "forkserver"


def context():
    """The multiprocessing context a step's local clients start from."""
    if start_method() == "spawn":
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(preload())   # read when the server starts: the first step's
    return ctx


def in_environment(env: dict, target, *args) -> None:
    """``target(*args)`` in the environment ``env`` (the starting process's at the start,
    which a process forked by the server would not have)."""
    os.environ.clear()
    os.environ.update(env)
    target(*args)
