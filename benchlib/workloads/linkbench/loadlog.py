"""The load's lines of linkbench.log and of the terminal, as LinkBenchLoad prints them.

LoadProgress.update: each time a loader has finished an id1 chunk (its links and its
counts written), the id1s, links and counts done so far; a line when the links pass a
multiple of ``load_progress_interval`` since the previous update — one line, however
many multiples — or when the last id1 is done. Here an update is a second of the step
in which chunks were finished (its rows as they come: the terminal; as stored:
linkbench.log); the id1s done are those whose counts are written (a loader writes an
id1 chunk's counts after its links: load.py), the links those written. A node of
millions of links holds its chunk back as in Java (the first chunk, which one loader
writes while the others finish every other: 95.9 % of the id1s done at 10 s), and no
chunk finishing meanwhile, no line comes until it is done — Java's 9 lines, not one a
second; where Java's links are its finished chunks' only, these are all those written.

The stored seconds hold batches, not rows: a second's counts are its count batches at a
full batch's rows (load.mode java: bulk_insert_count, every batch full but a loader's
last, as LinkBenchLoad's buffers; fast: an id1 chunk's, all full but the range's last
chunk), capped by the counted total, so the id1s are exact but for a loader's last
batch; java mode's id1s may have a few links in the loader's buffer (under one batch),
as Java's update counts a chunk whose rows sit in its buffers. The terminal's lines
(the rows as they come) are exact.

``LOAD PHASE COMPLETED``: the nodes, links and counts the loaders wrote (their
batches' rows, counted); a fast load's line ends with its mode, and that its Links/s
leave the index out (``mode_tail``); the line after it says which load it was:
benchlib's fast path (multi-row batches into tables with primary keys only, the
secondary index built after, in l.post: its time said, and the rate with it) or Java's.
"""
from __future__ import annotations

from .load import count_batch_rows

LINKS, COUNTS = "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK"


class LoadProgress:
    """LoadProgress's lines, fed each update's links and counts rows in order."""

    def __init__(self, p):
        self.p, self.every, self.total = p, max(p.load_progress_interval, 1), p.id_range
        self.links = self.counts = self.reported = 0
        self.finished = False

    def update(self, at: float, links: int, counts: int) -> list[tuple[float, str]]:
        """A second that wrote ``links`` links and ``counts`` counttable rows: an update
        when it finished chunks (wrote counts)."""
        self.links, self.counts = self.links + links, self.counts + counts
        if not counts:
            return []
        prev, self.reported = self.reported, self.links
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
    the rows hold batches, so a second's links are its link batches at the step's rows
    per batch (all but a chunk's last are full), its counts its count batches' rows (an
    id1 chunk's each in the fast load: load.py); the totals at the end the counted ones."""
    per_sec: dict[int, list] = {}
    for r in seconds:
        x = per_sec.setdefault(r["second"], [0, 0, 1.0])
        if r["op"] in (LINKS, COUNTS):
            x[0 if r["op"] == LINKS else 1] += r["ops"]
        if r.get("interval_s") is not None and r["interval_s"] == r["interval_s"]:
            x[2] = min(x[2], float(r["interval_s"]))
    rows = loaded(o)
    links_all, counts_all = rows.get(LINKS, 0), rows.get(COUNTS, 0)
    per_batch = links_all / max(sum(x[0] for x in per_sec.values()), 1)
    count_rows = count_batch_rows(p, o.step.load_mode == "java")
    out, cum_l, cum_c, seen_l, seen_c = [], 0, 0, 0, 0
    for sec in sorted(per_sec):
        nl, nc, length = per_sec[sec]
        cum_l, cum_c = cum_l + nl, cum_c + nc
        links, counts = min(round(cum_l * per_batch), links_all), min(cum_c * count_rows, counts_all)
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
            f"{round((links + counts + nodes) / secs)} (link+count+node)/s{mode_tail(o)}")


def mode_tail(o) -> str:
    """load.mode java: nothing (Java's line as it is, its Links/s LinkBenchLoad's: INSERTs
    into indexed tables); fast: which load it was, and that its Links/s leaves out the
    secondary index (built after, in l.post: the next line gives the rate with it)."""
    if o.step.load_mode == "java":
        return ""
    return " (mode fast: COPY or multi-row batches, secondary index after: not in these Links/s)"


def mode_line(p, o, index_s: float | None) -> str:
    """The line after it: which load it was (benchlib's fast path, or Java's), and for
    the fast path the rate with the secondary index built (l.post), which Java's INSERTs
    into indexed tables pay as they go."""
    links = loaded(o).get(LINKS, 0) if o.status == "ok" else 0
    if o.step.load_mode == "java":
        return (f"Load mode java: INSERTs of {p.bulk_insert_count} rows into tables with their "
                f"index, id1 chunks of {p.loader_chunk_size}: Links/s as LinkBenchLoad's")
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
