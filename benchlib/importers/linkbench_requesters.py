"""A LinkBench log's per-requester lines: LinkBenchRequest's last line of each
(``ThreadID = i total requests = N requests/second = R found = F not found = NF history
queries = H/G``) with that requester's RANGE_SIZE statistics lines (the links each
GET_LINKS_LIST returned), as the import's meta (``steps.<step>.requesters``)."""
from __future__ import annotations

import re

TOTALS_LINE = re.compile(r"ThreadID = (\d+) total requests = (\d+) requests/second = (\d+) found = (\d+) "
                     r"not found = (\d+) history queries = (\d+)/(\d+)")
_KEYS = ("thread", "requests", "requests_per_s", "found", "not_found", "history_queries",
         "get_links_list")


def totals_of(match: re.Match) -> dict:
    """A requester's last line, matched by ``TOTALS_LINE``, as a dict of its counts."""
    return dict(zip(_KEYS, (int(x) for x in match.groups())))


def requesters(totals: list[dict], threads: list[list]) -> list[dict]:
    """Each requester's last line (its requests, found / not found, history queries)
    with its RANGE_SIZE statistics over its windows: the calls (the last totalOps), the
    mean of the sizes (the windows' means weighted by their calls) and the largest; in
    thread order."""
    mine: dict[int, list] = {}
    for r in threads:
        if r[2] == "RANGE_SIZE":
            mine.setdefault(r[0], []).append(r)
    out = []
    for t in sorted(totals, key=lambda t: t["thread"]):   # in the log as they ended
        rows = mine.get(t["thread"], [])
        seen = [r for r in rows if r[7] and r[8] is not None]
        n = sum(r[5] for r in seen)
        rs = {} if not rows else {
            "range_size_calls": int(rows[-1][3]),
            "range_size_mean": round(sum(r[8] * r[5] for r in seen) / n, 2) if n else None,
            "range_size_max": max((r[16] for r in seen), default=None)}
        out.append({**t, **rs})
    return out
