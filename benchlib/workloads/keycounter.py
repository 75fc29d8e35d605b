"""One acknowledged-insert counter per host, shared among its client processes.

YCSB's ``AcknowledgedCounterGenerator``: run-phase inserts claim keys from one
transaction counter shared by all client threads; a key is acknowledged when its
insert returned (whatever its status, as YCSB's ``finally``), and ``lastValue`` is the
highest key below which every key is acknowledged. Reads, updates, scans and
read-modify-writes draw their keys up to ``lastValue`` only, so they never ask for a
key whose insert has not returned.

Here the clients are processes (and threads in them), and a chunk of operations is
drawn before it is timed, so:

- a chunk claims one block of keys for its inserts (``claim``), under a lock (a
  thread lock and ``flock`` on the segment, so threads and processes alike);
- each client acknowledges its block in order, one insert at a time as it returns
  (``ack``): it writes only its own slot, so no lock is needed;
- ``last_value`` reads the counter, then every slot's first unacknowledged key, each
  slot once (another process may acknowledge between two reads): the lowest, less
  one. Read at draw time it is stale by the time the chunk runs, which is safe: it
  only grows.
- keys claimed by a step that ended before their inserts ran are holes; the
  controller records them between steps (``settle``) and later draws skip them.

The segment is a ``multiprocessing.shared_memory`` block the controller creates for
a run (:func:`create`) and unlinks at its end; clients attach by name. Its name says
whose it is (``benchlib_keys_<pid>_<token>``): a controller killed with its resource
tracker (a whole process group SIGKILLed) leaves it behind, and the next counter made
on the host unlinks every one whose process is gone (:func:`sweep`). A client on
another host (a Dask worker elsewhere) cannot attach: it keeps a counter of its own
(:func:`private`) whose new keys lie in a range of their own, so its reads see the
loaded records and its own inserts only (:data:`ACROSS_HOSTS`).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import threading
from pathlib import Path
from multiprocessing import shared_memory

import numpy as np

ACROSS_HOSTS = ("insert counter: the clients on the controller's host share one acknowledged "
                "counter; a client on another host counts its own inserts (keys of its own) and "
                "reads only the loaded records and those")
HOLE_RANGES = 4096          # room for the ranges of claimed keys no insert ever reached
REGION_BITS = 36            # a private counter's new keys: its region << REGION_BITS above
REGIONS_PER_LOOP = 4096
_HEAD = 3                   # int64s: next key to claim, number of hole ranges, slots
SHM_DIR = Path("/dev/shm")
PREFIX = "benchlib_keys_"   # + the creating process's pid + "_" + a token
_OWNED = re.compile(rf"^{PREFIX}(\d+)_[0-9a-f]+$")
_attached: dict[str, KeyCounter] = {}
_attach_lock = threading.Lock()


class KeyCounter:
    """The counter over an int64 array: [next, n_holes, n_slots, slots × (first, end),
    holes × (lo, hi)]."""

    def __init__(self, buf, slots: int, shm=None, region: int = 0):
        self.shm, self.slots, self.region = shm, slots, region
        self.a = np.ndarray(_HEAD + 2 * slots + 2 * HOLE_RANGES, dtype=np.int64, buffer=buf)
        self.base = 0       # set by create/private: the first key of the run's inserts
        self._lock = threading.Lock()
        self._fd = os.open(f"/dev/shm/{shm.name.lstrip('/')}", os.O_RDWR) if shm else None

    @property
    def name(self) -> str | None:
        return self.shm.name if self.shm else None

    def _slot(self, slot: int) -> int:
        if not 0 <= slot < self.slots:
            raise ValueError(f"insert counter: slot {slot} not in [0, {self.slots})")
        return _HEAD + 2 * slot

    def claim(self, slot: int, n: int) -> int:
        """The first of ``n`` new keys for ``slot``. Its previous block must be done: a
        driver draws a client's next chunk only once the last one returned."""
        i = self._slot(slot)
        with self._lock:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                start = int(self.a[0])
                self.a[i + 1] = start + n
                self.a[i] = start if n else -1     # the slot before the counter: see last_value
                self.a[0] = start + n
            finally:
                if self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
        return start

    def ack(self, slot: int, n: int = 1) -> None:
        """The next ``n`` inserts of ``slot``'s block returned."""
        i = _HEAD + 2 * slot
        first = int(self.a[i])
        if first >= 0:
            first += n
            self.a[i] = first if first < self.a[i + 1] else -1

    def last_value(self) -> int:
        """The highest key below which every claimed key is acknowledged."""
        nxt = int(self.a[0])                     # first: a claim writes its slot before it
        # each slot read once: another process acknowledges its block's last key (its
        # slot to -1) whenever it likes; a slot read as busy and then read for its value
        # gave that -1 as the lowest first key (last_value -2: a chunk's reads of keys
        # never inserted, YCSB D's 949 NOT_FOUND)
        busy = [f for f in self.a[_HEAD:_HEAD + 2 * self.slots:2].tolist() if f >= 0]
        return min([nxt, *busy]) - 1

    def holes(self) -> np.ndarray:
        """The (lo, hi) ranges of claimed keys that were never inserted."""
        n = int(self.a[1])
        return self.a[_HEAD + 2 * self.slots:_HEAD + 2 * self.slots + 2 * n].reshape(-1, 2).copy()

    def settle(self) -> None:
        """Between steps (no client running): blocks left unacknowledged become holes."""
        firsts = self.a[_HEAD:_HEAD + 2 * self.slots].reshape(-1, 2)
        for s in range(self.slots):
            lo, hi = (int(x) for x in firsts[s])
            n = int(self.a[1])
            if lo < 0 or n >= HOLE_RANGES:
                continue    # full: the slot stays unacknowledged, reads stay below it
            j = _HEAD + 2 * self.slots + 2 * n
            self.a[j], self.a[j + 1], self.a[1] = lo, hi, n + 1
            firsts[s] = (-1, -1)

    def state(self) -> dict:
        """What a resumed run's counter goes on from (saved with each finished step): the
        next key to claim, and the holes — the claimed blocks no insert reached so far
        among them (as :meth:`settle` would make them)."""
        firsts = self.a[_HEAD:_HEAD + 2 * self.slots].reshape(-1, 2)
        pending = [[int(lo), int(hi)] for lo, hi in firsts.tolist() if lo >= 0]
        return {"next": int(self.a[0]), "holes": self.holes().tolist() + pending}

    def keynums(self, v: np.ndarray) -> np.ndarray:
        """Counter values as key numbers: a private counter's new keys in its own range."""
        if not self.region:
            return v
        v = np.asarray(v, dtype=np.int64)
        return np.where(v < self.base, v, v + (self.region << REGION_BITS))

    def close(self, unlink: bool = False) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.shm is not None:
            with _attach_lock:
                if _attached.get(self.shm.name) is self:
                    del _attached[self.shm.name]
            self.a = None
            self.shm.close()
            if unlink:   # a client's resource tracker may have unlinked it as its process died
                with contextlib.suppress(FileNotFoundError):
                    self.shm.unlink()


def in_holes(keys: np.ndarray, holes: np.ndarray) -> np.ndarray:
    """Which keys lie in one of the (lo, hi) ranges of :meth:`KeyCounter.holes`."""
    bad = np.zeros(len(keys), dtype=bool)
    for lo, hi in holes.tolist():
        bad |= (keys >= lo) & (keys < hi)
    return bad


def _size(slots: int) -> int:
    return 8 * (_HEAD + 2 * slots + 2 * HOLE_RANGES)


def create(start: int, slots: int, holes: list | None = None) -> KeyCounter:
    """The controller's: a run's counter, new keys from ``start``, one slot per client
    thread; ``holes``: ranges of keys below it never inserted (a resumed run's)."""
    sweep()
    shm = shared_memory.SharedMemory(name=f"{PREFIX}{os.getpid()}_{secrets.token_hex(6)}",
                                     create=True, size=_size(slots))
    c = KeyCounter(shm.buf, slots, shm)
    c.a[:] = -1
    c.a[0], c.a[1], c.a[2] = start, 0, slots
    c.base = start
    holes = (holes or [])[-HOLE_RANGES:]
    if holes:
        at = _HEAD + 2 * slots
        c.a[at:at + 2 * len(holes)] = np.asarray(holes, dtype=np.int64).ravel()
        c.a[1] = len(holes)
    with _attach_lock:
        _attached[shm.name] = c      # a client in this very process attaches to it as it is
    return c


def sweep() -> list[str]:
    """Unlink the counters whose creating process is gone (killed with its resource
    tracker, nothing else would); the names unlinked."""
    gone = []
    for path in SHM_DIR.glob(f"{PREFIX}*"):
        m = _OWNED.match(path.name)
        if m and not _alive(int(m.group(1))):
            try:
                path.unlink()
                gone.append(path.name)
            except OSError:     # another sweep took it, or not ours to remove
                pass
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # another user's process
        return True
    return True


def private(start: int, slots: int, region: int = 0) -> KeyCounter:
    """A counter in this process only (a client with no shared one)."""
    c = KeyCounter(bytearray(_size(slots)), slots, region=region)
    c.a[:] = -1
    c.a[0], c.a[1], c.a[2] = start, 0, slots
    c.base = start
    return c


def attach(name: str | None, start: int, slots: int, slot: int, loop: int | None) -> KeyCounter:
    """A client's counter: the host's shared one by name (one per process), else one of
    its own whose new keys lie in a range of their own (another host; no name given)."""
    with _attach_lock:
        c = _attached.get(name) if name else None
        if c is None and name:
            try:
                shm = shared_memory.SharedMemory(name=name, create=False)
            except FileNotFoundError:
                shm = None
            # (registered with the resource tracker a spawned client shares with the
            # controller: the same name once; the controller unlinks it)
            if shm is not None:
                n_slots = int(np.ndarray(_HEAD, dtype=np.int64, buffer=shm.buf)[2])
                c = _attached[name] = KeyCounter(shm.buf, n_slots, shm)
                c.base = start
    if c is not None:
        return c
    if name is None:      # nothing shared asked for: one client, one counter (tests, tools)
        return private(start, slots)
    region = 1 + slot + REGIONS_PER_LOOP * ((loop or 1) - 1)
    return private(start, slots, region)
