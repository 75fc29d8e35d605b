"""A client's next chunk of operations made ahead, while the current one runs.

The hot loops (:mod:`.clients`, :mod:`.mux`, :mod:`.native`) take a client's operations a
chunk at a time (``next_chunk(CHUNK_OPS)``: 20,000 operations), and a chunk is made when
the previous one is used up: everything random is drawn then, before timing. Made in
the loop's thread, that stops the client for as long as the chunk takes to make —
LinkBench's requester 60 ms of CPU per 20,000 requests, 200-300 ms of wall on a loaded
2-core host, every 20,000 requests (issue 40: a requester's 1-second windows of 1.2-1.3 s,
a requester that did not run again before the step's end).

:func:`ahead` makes a client's ``next_chunk`` hand out a chunk made beforehand: taking a
chunk starts a thread making the next one, which the loop finds made when it needs it
(or waits only for what is left of it). The chunks are the same, drawn in the same
order from the same streams by one thread at a time: the client's ``next_chunk`` is
called exactly as often and with the same size as before, only earlier. What goes on
meanwhile must not change what a chunk draws, so only a client that says so
(``WorkloadClient.chunks_ahead``: its chunks draw from its own streams alone, nothing its
operations change, like the acknowledged-insert counter) is made ahead; the others as
before. A C loop runs a chunk without the GIL, so the next one is made beside it; a
Python loop shares the GIL with the maker, which the interpreter hands back within its
switch interval (5 ms) whenever the loop's call returns.
"""
from __future__ import annotations

import threading


class _Making(threading.Thread):
    """One chunk being made: ``fn(max_ops)`` in a thread of its own, its chunk or its
    error kept for whoever takes it."""

    def __init__(self, fn, max_ops: int):
        super().__init__(name="chunk-ahead", daemon=True)
        self.fn, self.max_ops = fn, max_ops
        self.chunk = self.error = None
        self.start()

    def run(self):
        try:
            self.chunk = self.fn(self.max_ops)
        except BaseException as e:  # noqa: BLE001 - raised where the chunk is taken
            self.error = e

    def take(self):
        self.join()
        if self.error is not None:
            raise self.error
        return self.chunk


class ChunkAhead:
    """``next_chunk`` of one client, each chunk made while the previous one runs."""

    def __init__(self, next_chunk):
        self.make = next_chunk
        self.making: _Making | None = None
        self.size: int | None = None
        self.made = 0          # chunks handed out that were made ahead (tests read it)

    def __call__(self, max_ops: int):
        if self.making is not None and max_ops == self.size:
            chunk, self.making = self.making.take(), None
            self.made += chunk is not None
        else:   # the first, or another size than the one made ahead: none made for it
            if self.making is not None:
                raise RuntimeError("a chunk made ahead of another size was not taken")
            chunk = self.make(max_ops)
        if chunk is not None:   # None: the client is done, nothing more to make
            self.size, self.making = max_ops, _Making(self.make, max_ops)
        return chunk

    def pending(self) -> bool:
        """Whether the next chunk is being (or has been) made and not yet taken."""
        return self.making is not None


def ahead(client):
    """``client`` with its chunks made ahead where it says they may be
    (``chunks_ahead``); else as it is."""
    if getattr(client, "chunks_ahead", False):
        client.next_chunk = ChunkAhead(client.next_chunk)
    return client
