"""multiprocessing's named semaphores that a killed run left in /dev/shm (issue 42).

The local executor's queue, event and start value (:mod:`.executors`) are semaphores
of the ``spawn`` context: named ones (``/dev/shm/sem.mp-…``) whose names the run's
resource tracker unlinks when the run ends, however it ends — unless the tracker is
killed with it (a whole process group SIGKILLed). Such a name is no one's: every
process that uses a semaphore maps its file from the moment the name exists, so a
name of ours whose file no process maps can only be a dead run's. The next run on the host
unlinks those (:func:`sweep`), as the key counter sweeps its segments.
"""
from __future__ import annotations

import os
from pathlib import Path

SHM_DIR = Path("/dev/shm")
PATTERN = "sem.mp-*"       # multiprocessing's own names (SemLock._make_name)


def mapped() -> set[int]:
    """The inodes of the /dev/shm files that a process of this host maps (of the
    processes we may read). By inode, not by name: the process that made a semaphore
    maps it under the temporary name glibc made it as (``sem.XXXXXX (deleted)``)."""
    found = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text()
        except OSError:          # ended meanwhile, or another user's
            continue
        for ln in text.splitlines():
            if " /dev/shm/" in ln:
                found.add(int(ln.split(None, 5)[4]))
    return found


def sweep() -> list[str]:
    """Unlink this user's multiprocessing semaphores that no process maps; their names."""
    uid = os.geteuid()
    ours = {}
    for path in SHM_DIR.glob(PATTERN):
        try:
            st = path.stat()
        except OSError:
            continue
        if st.st_uid == uid:
            ours[path] = st.st_ino
    if not ours:
        return []
    used = mapped()              # read after the names: a newer name is not looked at
    gone = []
    for path, inode in ours.items():
        if inode not in used:
            try:
                path.unlink()
                gone.append(path.name)
            except OSError:      # another sweep took it
                pass
    return gone
