"""The multiprocessing semaphores a killed run left are swept by the next run, and no
other (issue 42; the killed run itself: tests/faults/test_orphans.py, whole_group)."""
from __future__ import annotations

import multiprocessing as mp
import os
import shutil
from pathlib import Path

from benchlib.run import semaphores


def test_a_mapped_semaphore_stays_and_an_unmapped_one_goes():
    lock = mp.get_context("spawn").Lock()          # named, mapped by this process
    live = Path("/dev/shm/sem." + lock._semlock.name.lstrip("/"))
    assert live.exists() and live.stat().st_ino in semaphores.mapped()
    stale = live.with_name(f"sem.mp-benchlibtest{os.getpid()}")   # the same file, mapped by none
    shutil.copyfile(live, stale)
    try:
        gone = semaphores.sweep()
        assert stale.name in gone and not stale.exists()
        assert live.exists() and live.name not in gone
        with lock:                                   # still a working semaphore
            pass
    finally:
        stale.unlink(missing_ok=True)
