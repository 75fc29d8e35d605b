"""A client process's own use of the host over a step, measured by itself (exact also
for a step shorter than the sampler's tick, and for SQLite, whose engine it runs):
its CPU, its threads' context switches, its memory (:mod:`.clients` puts them in its
ClientResult)."""
from __future__ import annotations

import resource


def own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)   # all threads of this process
    return r.ru_utime + r.ru_stime


def own_switches() -> tuple[int, int]:
    """This process's threads' context switches so far: (voluntary, involuntary)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_nvcsw, r.ru_nivcsw


def own_memory() -> tuple[int | None, int | None]:
    try:
        import psutil
        m = psutil.Process().memory_info()
        return m.rss, m.vms
    except Exception:  # noqa: BLE001 - a figure missing, not a step lost
        return None, None
