"""One Jupyter kernel for all the notebooks of a report, executed one after another.

A kernel per notebook cost each page a kernel's start, benchlib's imports (pandas,
matplotlib, plotly, whose figure classes load on first use) and a load of the
experiment's tables: on 2 cores most of a re-render was that, four times over. In one
kernel the imports happen once, and the run folders' tables are read once
(``store.runcache``, on in this kernel's environment). Between notebooks the kernel's
namespace is emptied (``%reset -f``; imported modules stay), so a notebook sees only its
own parameters and names, as when it runs alone.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..store.runcache import CACHE_ENV

KERNEL = "python3"
# ipykernel 7 warns about TCP on every start: not news
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]


@contextmanager
def shared_kernel(cwd: Path, start_timeout: float = 120, cache: bool = True):
    """A started kernel manager (``jupyter_client``'s async one, as papermill's nbclient
    uses), in ``cwd``, the tables' cache on unless ``cache`` is false (a notebook that
    writes the run folders it reads: ``experiment.ipynb``); shut down on leaving.

    Its sockets are Unix ones in a private folder of its own (``transport="ipc"``), not
    TCP ports: jupyter_client picks a free port, closes it and lets the kernel bind it,
    so two kernels started at once (a report's two, another report's, a notebook test's)
    could draw the same port, and the kernel died with "Address already in use" —
    seen in the suite, two pages failed for it. A path of our own cannot be drawn twice.
    Where there are no Unix sockets (Windows), or the temporary folder's path is too long
    for one (108 bytes with the socket's name), TCP as before."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    own = tempfile.mkdtemp(prefix="benchlib-kernel-") if os.name == "posix" else None
    if own and len(os.fsencode(own)) > 80:
        shutil.rmtree(own, ignore_errors=True)
        own = None
    km = (AsyncKernelManager(kernel_name=KERNEL, transport="ipc",
                             connection_file=os.path.join(own, "kernel.json"))
          if own else AsyncKernelManager(kernel_name=KERNEL))
    try:
        run_sync(km.start_kernel)(extra_arguments=KERNEL_ARGUMENTS, cwd=str(cwd),
                                  env={**os.environ, **({CACHE_ENV: "1"} if cache else {})})
        try:
            yield km
        finally:
            run_sync(km.shutdown_kernel)(now=False)
    finally:
        if own:
            shutil.rmtree(own, ignore_errors=True)


def fresh_namespace(km) -> None:
    """Empty the kernel's namespace before the next notebook (restart it if it died: a
    notebook that crashed its kernel must not fail the ones after it)."""
    from jupyter_core.utils import run_sync

    if not run_sync(km.is_alive)():
        run_sync(km.restart_kernel)(now=True)
        return
    kc = km.client()
    kc.start_channels()
    try:
        run_sync(kc.wait_for_ready)(timeout=120)
        run_sync(kc.execute_interactive)("%reset -f", store_history=False, timeout=60)
    finally:
        kc.stop_channels()


def renumber(nb: dict) -> dict[int, int]:
    """Number the code cells' executions of ``nb`` (a notebook's JSON) from 1, as a kernel
    of its own would have (a shared kernel goes on counting from the notebook before);
    returns old → new."""
    new: dict[int, int] = {}
    for cell in nb.get("cells", []):
        count = cell.get("execution_count") if cell.get("cell_type") == "code" else None
        if count is None:
            continue
        new[count] = cell["execution_count"] = len(new) + 1
        for out in cell.get("outputs", []):
            if out.get("execution_count") is not None:
                out["execution_count"] = new[count]
    return new
