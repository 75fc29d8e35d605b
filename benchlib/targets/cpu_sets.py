"""Server and clients apart on one host: a provisioned target's ``cpus: {server: …,
clients: …}`` pins the server's processes and the client processes to CPU sets, the same
split in every configuration of the target.

    targets:
      - {name: pg, url: postgres-provisioned, cpus: {server: 0, clients: 1}}   # or "0-3", [4, 5]

The server is pinned as it starts (its start command's affinity, which every process it
forks inherits: PostgreSQL's backends, MariaDB's and Redis' threads); each step's client
processes on this host as they have connected, every thread of theirs. A set names CPUs
as a number, a list of numbers or a string of ranges (``"0-3,6"``); a CPU benchlib may not
run on (``os.sched_getaffinity``), or one in both sets, is one line before anything runs.
meta.json's ``dbms.cpus`` holds the split.
"""
from __future__ import annotations

import os
import re

ROLES = ("server", "clients")


def _parse(role: str, value) -> frozenset[int]:
    if isinstance(value, bool):
        raise ValueError(f"cpus: {role}: {value!r}: CPU numbers (0, [0, 1] or \"0-3,6\")")
    if isinstance(value, int):
        items = [value]
    elif isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        items = value
    elif isinstance(value, str) and re.fullmatch(r"\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*", value):
        items = []
        for part in value.split(","):
            lo, _, hi = part.partition("-")
            if hi and int(hi) < int(lo):
                raise ValueError(f"cpus: {role}: {part.strip()}: a range runs low to high")
            items += range(int(lo), int(hi or lo) + 1)
    else:
        raise ValueError(f"cpus: {role}: {value!r}: CPU numbers (0, [0, 1] or \"0-3,6\")")
    return frozenset(items)


def _ranges(cpus) -> str:
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def split(options: dict) -> dict[str, frozenset[int]] | None:
    """The target's ``cpus`` option checked: {"server": CPUs, "clients": CPUs} (a role left
    out is not pinned), or None; ValueError (one line) for a bad one."""
    value = options.get("cpus")
    if value is None:
        return None
    if not isinstance(value, dict) or not value or set(value) - set(ROLES):
        raise ValueError(f"cpus: {value!r}: a mapping {{server: CPUs, clients: CPUs}}")
    sets = {role: _parse(role, value[role]) for role in ROLES if role in value}
    usable = os.sched_getaffinity(0)
    for role, cpus in sets.items():
        lacking = cpus - usable
        if lacking:
            raise ValueError(f"cpus: {role}: CPU {_ranges(lacking)} is not one benchlib may run on here "
                             f"(CPUs {_ranges(usable)})")
    both = sets.get("server", frozenset()) & sets.get("clients", frozenset())
    if both:
        raise ValueError(f"cpus: CPU {_ranges(both)} is in both the server's and the clients' sets: "
                         "they are kept apart (give each its own CPUs)")
    return sets


def as_meta(sets: dict[str, frozenset[int]] | None) -> dict | None:
    return None if sets is None else {role: _ranges(cpus) for role, cpus in sets.items()}


def pinning(cpus: frozenset[int] | None):
    """subprocess' ``preexec_fn`` that pins the started command (and all it forks) to
    ``cpus``; None when not pinned."""
    if not cpus:
        return None
    chosen = set(cpus)
    return lambda: os.sched_setaffinity(0, chosen)


def pin(pids: list[int], cpus: frozenset[int] | None) -> None:
    """Every thread of each of ``pids`` pinned to ``cpus`` (a process's own affinity call
    moves one thread only); a process gone meanwhile is skipped."""
    if not cpus:
        return
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        for tid in tids:
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:   # the thread ended meanwhile
                continue
