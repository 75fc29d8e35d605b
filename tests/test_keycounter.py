"""The host's acknowledged-insert counter read while another client process claims and
acknowledges: ``last_value`` never goes back, never below the counter's start.

A YCSB D run (read latest) once read 949 keys never inserted in one loop, a whole chunk's
reads: its ``last_value`` had read each slot twice (which slots are busy, then their
values), and another process's last acknowledgement of its block between the two reads
made a busy slot's -1 the minimum — ``last_value`` -2, every key of the chunk drawn
below 0. The churner here acknowledges a block every few microseconds; the reader calls
``last_value`` until it has seen the churner's slot busy many times."""
from __future__ import annotations

import multiprocessing as mp
import time

from benchlib.workloads import keycounter

START = 1000
BUSY_SEEN = 200_000      # readings with the churner's block pending: the race had its chances
DEADLINE_S = 60


def _churn(name: str, slot: int, stop) -> None:
    c = keycounter.attach(name, START, 2, slot, 1)
    while not stop.is_set():
        for _ in range(1000):
            c.claim(slot, 1)        # the slot busy: its block [n, n + 1) pending ...
            c.ack(slot, 1)          # ... and returned: the slot -1 again


def test_last_value_never_goes_back_while_another_process_acknowledges():
    shared = keycounter.create(START, 2)
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    churner = ctx.Process(target=_churn, args=(shared.name, 1, stop), daemon=True)
    churner.start()
    try:
        prev, busy, calls = START - 1, 0, 0
        deadline = time.monotonic() + DEADLINE_S
        while busy < BUSY_SEEN and time.monotonic() < deadline:
            nxt_before = int(shared.a[0])
            v = shared.last_value()
            calls += 1
            assert v >= prev, f"last_value went back from {prev} to {v} (call {calls})"
            busy += v < nxt_before - 1      # read while the churner's block was pending
            prev = v
        assert busy >= BUSY_SEEN, f"the churner's block seen pending {busy} times in {calls} calls"
        assert prev > START        # the churner's keys were acknowledged meanwhile
    finally:
        stop.set()
        churner.join(10)
        shared.close(unlink=True)
