"""One requester's own counts, as LinkBenchRequest keeps them for its last lines:
its requests, MULTIGET_LINK's links found and not found (``numfound``: a call that
found some adds those; one that found none adds all it asked for, ``numnotfound``),
its history queries (GET_LINKS_LIST paging back into a list's tail) of its
GET_LINKS_LIST calls, and RANGE_SIZE: the links each GET_LINKS_LIST returned, as
SampledStats keeps them (every call counted, at most MAXSAMPLES sizes kept, each call
as likely to be kept). The client process hands them to the controller with its
results (``ClientResult.thread_counters``); linkbench.log prints them per requester.
"""
from __future__ import annotations

import random

MAXSAMPLES = 10000   # SampledStats' samples per operation (maxsamples)


class RequesterStats:
    def __init__(self, thread: int, seed: int):
        self.thread = thread
        self.requests = self.found = self.not_found = 0
        self.history = self.lists = 0
        self.range_n = 0
        self.range_kept: list[int] = []
        self.rng = random.Random(seed)   # its own: the request stream's draws stay as they were

    def multiget(self, asked: int, found: int) -> None:
        if found:
            self.found += found
        else:
            self.not_found += asked

    def links_list(self, returned: int, history: bool) -> None:
        self.lists += 1
        self.history += history
        self.range_n += 1
        if len(self.range_kept) < MAXSAMPLES:
            self.range_kept.append(returned)
        elif (j := self.rng.randrange(self.range_n)) < MAXSAMPLES:
            self.range_kept[j] = returned

    def as_dict(self) -> dict:
        return {"thread": self.thread, "requests": self.requests, "found": self.found,
                "not_found": self.not_found, "history_queries": self.history,
                "get_links_list": self.lists, "range_size_calls": self.range_n,
                "range_size_kept": list(self.range_kept)}
