"""When a step's failed operations fail the step: ``run.max_error_ratio`` of its calls, or
LinkBench's ``max_failed_requests``; failed operations are counted beside a step's ops,
never inside them (a batch is one call: it fails whole)."""
from __future__ import annotations

from .. import schema
from ..schema import COMPLETED_NAMES
from ..workloads.base import StepSpec


def too_many_failed(step: StepSpec, failed: int, tried: int) -> str | None:
    """Why the step fails for its failed operations (one line), or None: past
    ``step.max_failed`` of them, or past ``step.max_error_ratio`` of the ``tried`` calls
    (a batch is one call, as it fails whole)."""
    if step.max_failed is not None and failed > step.max_failed:
        return (f"{failed:,} of {tried:,} operations failed, more than max_failed_requests "
                f"{step.max_failed:,}")
    if failed and failed > step.max_error_ratio * tried:
        return (f"{failed:,} of {tried:,} operations failed ({100 * failed / tried:.1f} %), more "
                f"than run.max_error_ratio {step.max_error_ratio:g}")
    return None


def failed_count(rows: list[dict], compound_ops: dict[str, int] | None = None) -> int:
    """The step's failed operations (ERROR, or a status unknown): a compound op's own
    failures are its inner ops', already counted."""
    return sum(v for r in rows if r["op"] not in (compound_ops or {}) and not schema.is_intended(r["op"])
               for k, v in (r.get("returns") or {}).items() if k not in COMPLETED_NAMES)


def calls_count(rows: list[dict], batch_units: dict | None, compound_ops: dict | None) -> int:
    """The calls the clients made: each op's count, a batch once (not its records)."""
    derived = {u for u in (batch_units or {}).values() if u} | set(compound_ops or {})
    return sum(r["count"] for r in rows if r["op"] not in derived and not schema.is_intended(r["op"]))
