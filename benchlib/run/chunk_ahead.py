"""A client's next chunk of operations made ahead, while the current one runs.

The hot loops (:mod:`.clients`, :mod:`.mux`, :mod:`.native`) take a client's operations a
chunk at a time (``next_chunk(CHUNK_OPS)``: 20,000 operations), and a chunk is made when
the previous one is used up: everything random is drawn then, before timing. Made in
the loop's thread, that stops the client for as long as the chunk takes to make —
LinkBench's requester 60 ms of CPU per 20,000 requests, 200-300 ms of wall on a loaded
2-core host, every 20,000 requests (issue 40: a requester's 1-second windows of 1.2-1.3 s,
a requester that did not run again before the step's end).

:func:`ahead` makes a client's ``next_chunk`` hand out a chunk made beforehand: taking a
chunk wakes the client's maker thread to make the next one, which the loop finds made
when it needs it (or waits only for what is left of it). The chunks are the same, drawn in the same
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


class ChunkAhead:
    """``next_chunk`` of one client, each chunk made while the previous one runs, by one
    maker thread of the client's (started with the first chunk, ended by :meth:`stop`
    or when the client is done): taking a chunk only wakes it, so the loop never waits
    for a thread to start (a new thread per chunk cost the loop 0.3-31 ms: Thread.start
    waits for the new thread, which takes the GIL to make the chunk)."""

    def __init__(self, next_chunk):
        self.make = next_chunk
        self.cv = threading.Condition()
        self.want: int | None = None     # the size the maker is asked to make
        self.ready: tuple | None = None  # (chunk, error) made and not yet taken
        self.size: int | None = None     # the size asked for (the one made ahead)
        self.thread: threading.Thread | None = None
        self.stopped = False
        self.asked = False     # the next chunk asked of the maker, not yet taken
        self.made = 0          # chunks handed out that were made ahead (tests read it)

    def __call__(self, max_ops: int):
        if self.size is not None and not self.asked:   # the client said it was done
            return None
        if self.size is None:   # the first: made here, the maker started for the next
            chunk = self.make(max_ops)
        elif max_ops != self.size:
            raise RuntimeError(f"a chunk of {self.size} made ahead, {max_ops} asked for")
        else:
            with self.cv:
                while self.ready is None:
                    self.cv.wait()
                (chunk, error), self.ready = self.ready, None
            self.asked = False
            if error is not None:
                raise error
            self.made += chunk is not None
        self.size = max_ops
        if chunk is not None:   # None: the client is done, nothing more to make
            with self.cv:
                self.want, self.asked = max_ops, True
                self.cv.notify()
            if self.thread is None:
                self.thread = threading.Thread(target=self._maker, name="chunk-ahead", daemon=True)
                self.thread.start()
        return chunk

    def _maker(self) -> None:
        while True:
            with self.cv:
                while self.want is None and not self.stopped:
                    self.cv.wait()
                if self.stopped:
                    return
                n, self.want = self.want, None
            try:
                made = (self.make(n), None)
            except BaseException as e:  # noqa: BLE001 - raised where the chunk is taken
                made = (None, e)
            with self.cv:
                self.ready = made
                self.cv.notify()
            if made[0] is None:
                return

    def pending(self) -> bool:
        """Whether the next chunk is asked for (being made, or made) and not yet taken."""
        return self.asked

    def wait_made(self) -> None:
        """Until the chunk made ahead is there (tests)."""
        with self.cv:
            while self.ready is None and not self.stopped:
                self.cv.wait()

    def stop(self) -> None:
        """No more chunks: the maker ends (after the one it is making, if any)."""
        with self.cv:
            self.stopped = True
            self.cv.notify()


def ahead(client):
    """``client`` with its chunks made ahead where it says they may be
    (``chunks_ahead``); else as it is. Closing the client stops its maker."""
    if getattr(client, "chunks_ahead", False):
        feed = client.next_chunk = ChunkAhead(client.next_chunk)
        close = getattr(client, "close", None)

        def closing():
            feed.stop()
            if close is not None:
                close()
        client.close = closing
    return client
