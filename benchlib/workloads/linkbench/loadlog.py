"""The load's lines of linkbench.log and of the terminal, as LinkBenchLoad prints them.

LoadProgress.update: each time a loader has finished an id1 chunk (its links and its
counts written), the id1s, links and counts done so far; a line when the links pass a
multiple of ``load_progress_interval`` — one line, however many multiples that update
passed — or when the last id1 is done. Here an update is a second of the step (its
rows as they come: the terminal; as stored: linkbench.log), and the id1s done are
those whose counts are written (a loader writes an id1 chunk's counts after its links:
load.py), so a node of millions of links holds its chunk's id1s back as in Java
(95.9 % of the id1s done at 10 s, 4 % of the links).

``LOAD PHASE COMPLETED``: the nodes, links and counts the loaders wrote (their
batches' rows, counted); the line after it says which load it was: benchlib's fast
path (multi-row batches into tables with primary keys only, the secondary index built
after, in l.post: its time said, and the rate with it).
"""
from __future__ import annotations

from .load import JAVA_BULK, LOADER_CHUNK, count_batch_rows

LINKS, COUNTS = "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK"


class LoadProgress:
    """LoadProgress's lines, fed each update's links and counts rows in order."""

    def __init__(self, p):
        self.p, self.every, self.total = p, max(p.load_progress_interval, 1), p.id_range
        self.links = self.counts = 0
        self.finished = False

    def update(self, at: float, links: int, counts: int) -> list[tuple[float, str]]:
        if not links and not counts:
            return []
        prev = self.links
        self.links, self.counts = self.links + links, self.counts + counts
        id1s = min(self.counts // max(self.p.link_type_count, 1), self.total)
        last = id1s >= self.total and not self.finished
        if self.links // self.every > prev // self.every or last:
            self.finished = self.finished or last
            return [(at, self.line(id1s, at))]
        return []

    def line(self, id1s: int, sec: float) -> str:
        sec = max(sec, 1e-3)
        links, counts = self.links, self.counts
        return (f"{id1s}/{self.total} id1s ({100 * id1s / max(self.total, 1):.1f}%) at {id1s / sec:.1f} /sec. "
                f"{links} links at {links / sec:.1f} /sec. {counts} counts at {counts / sec:.1f} /sec. "
                f"link+count at {(links + counts) / sec:.1f} /sec. ")


def loaded(o) -> dict[str, int]:
    """The rows each bulk operation wrote in a load step (its batches' rows, counted)."""
    return {r["op"]: int(r.get("units") or 0) for r in o.latency_rows if r["op"].endswith("_BULK")}


def stored_updates(p, o, seconds: list[dict]) -> list[tuple[float, int, int]]:
    """(seconds from the step's start, links, counts) of each stored second of a load:
    the rows hold batches, so the links of a second are its batches at the step's rows
    per link batch, and its counts its count batches' (an id1 chunk's each: load.py); the
    totals at the end are the counted ones."""
    rows = loaded(o)
    per_sec: dict[int, list] = {}
    for r in seconds:
        x = per_sec.setdefault(r["second"], [0, 0, 1.0])
        x[0 if r["op"] == LINKS else 1] += r["ops"] if r["op"] in (LINKS, COUNTS) else 0
        if r.get("interval_s") is not None and r["interval_s"] == r["interval_s"]:
            x[2] = min(x[2], float(r["interval_s"]))
    lb = sum(x[0] for x in per_sec.values()) or 1
    links_all, counts_all = rows.get(LINKS, 0), rows.get(COUNTS, 0)
    out, cum_l, cum_c, seen_l, seen_c = [], 0, 0, 0, 0
    for sec in sorted(per_sec):
        nl, nc, length = per_sec[sec]
        cum_l, cum_c = cum_l + nl, cum_c + nc
        links = round(links_all * cum_l / lb)
        counts = min(cum_c * count_batch_rows(p, o.step.load_mode == "java"), counts_all)
        out.append((min(sec + length, max(o.secs, 1e-3)), links - seen_l, counts - seen_c))
        seen_l, seen_c = links, counts
    if out and (seen_l, seen_c) != (links_all, counts_all):   # the last second: all of them
        at, nl, nc = out[-1]
        out[-1] = (at, nl + links_all - seen_l, nc + counts_all - seen_c)
    return out


def completed_line(p, o) -> str:
    """``LOAD PHASE COMPLETED. Loaded N nodes (Expected M), …``: the counted rows."""
    rows = loaded(o) if o.status == "ok" else {}
    nodes, links, counts = (rows.get(k, 0) for k in ("LOAD_NODE_BULK", LINKS, COUNTS))
    secs = max(o.secs, 1e-9)
    return (f"LOAD PHASE COMPLETED. Loaded {nodes} nodes (Expected {p.id_range}), {links} links "
            f"({links / max(nodes, 1):.2f} /node), {counts} counts "
            f"({counts / max(nodes, 1):.2f} /node). {o.secs:.1f} seconds, "
            f"{round(links / secs)} Links/s, {round((links + counts) / secs)} (link+count)/s, "
            f"{round((links + counts + nodes) / secs)} (link+count+node)/s")


def mode_line(o, index_s: float | None) -> str:
    """The line after it: which load it was (benchlib's fast path, or Java's), and for
    the fast path the rate with the secondary index built (l.post), which Java's INSERTs
    into indexed tables pay as they go."""
    links = loaded(o).get(LINKS, 0) if o.status == "ok" else 0
    if o.step.load_mode == "java":
        return (f"Load mode java: INSERTs of {JAVA_BULK} rows into tables with their index, "
                f"id1 chunks of {LOADER_CHUNK}: Links/s as LinkBenchLoad's")
    line = ("Load mode fast: multi-row batches (COPY where the DBMS has it) into tables with "
            "their primary keys only, the secondary index built after")
    if index_s is None:
        return line + " (not in this run)"
    return (line + f" in {index_s:.1f} seconds: {round(links / max(o.secs + index_s, 1e-9))} "
            "Links/s with it")


def nodes_done_at(seconds: list[dict]) -> float | None:
    """The end of the last second that wrote nodes (the node loader's last batch)."""
    secs = [r["second"] + min(float(r.get("interval_s") or 1.0), 1.0) for r in seconds
            if r["op"] == "LOAD_NODE_BULK" and r["ops"]]
    return max(secs) if secs else None
