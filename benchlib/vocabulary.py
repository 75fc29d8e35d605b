"""The words of benchlib's tables: operations (``READ``, ``Intended-READ``, ``INSERT-BATCH``,
``UPDATE-FAILED``), what an operation returns (YCSB's Status codes, LinkBench's outcomes)
and steps (``l.pre``, ``l.post``, ``r.L1`` …, their phases). :mod:`.schema` gives them
too, beside the tables that use them; a client process needs only these names."""
from __future__ import annotations

import re

TOTAL_OP = "TOTAL"              # all operations of a step together (summaries, imports)
INTENDED_PREFIX = "Intended-"   # latency from the intended start: "Intended-READ"
BATCH_SUFFIX = "-BATCH"         # one batch of records: "INSERT-BATCH" (its records: "INSERT")
# the operations that failed, timed under their own name as YCSB's DBWrapper does:
# "INSERT-FAILED", or with reportlatencyforeacherror "READ-NOT_FOUND", "UPDATE-ERROR" …
# (they are errors of their op, which counts them; never operations of their own)
FAILED_SUFFIXES = ("-FAILED", "-ERROR", "-NOT_FOUND", "-NOT_IMPLEMENTED", "-UNEXPECTED_STATE",
                   "-BAD_REQUEST", "-FORBIDDEN", "-SERVICE_UNAVAILABLE")

# what an operation's function returns: YCSB's Status codes, then LinkBench's outcomes
OK, NOT_FOUND, ERROR, RETRY, EMPTY = range(5)
STATUS_NAMES = {OK: "OK", NOT_FOUND: "NOT_FOUND", ERROR: "ERROR", RETRY: "RETRY", EMPTY: "EMPTY"}
# statuses that are outcomes, not errors: RETRY is LinkBench's operation redone as another
# (an add that found its link became an update, an update that found none an add), EMPTY
# a lookup that found nothing where finding nothing is normal (LinkBench's "not found")
NOT_ERRORS = frozenset({OK, RETRY, EMPTY})
NOT_ERROR_NAMES = frozenset(STATUS_NAMES[s] for s in NOT_ERRORS)
# statuses of an operation that ran (NOT_FOUND too: it found its answer); the others
# (ERROR) failed, and are counted beside a step's ops, never inside them
COMPLETED = NOT_ERRORS | {NOT_FOUND}
COMPLETED_NAMES = frozenset(STATUS_NAMES[s] for s in COMPLETED)

PHASES = ("load", "index", "run")
_FIXED_STEPS = {"load": "l.pre", "index": "l.post"}
_RUN_STEP = re.compile(r"r\.L(\d+)")


def intended(op: str) -> str:
    """The name of ``op``'s latency from the intended start: ``Intended-READ``."""
    return INTENDED_PREFIX + op


def is_intended(op: str) -> bool:
    return op.startswith(INTENDED_PREFIX)


def is_failed(op: str) -> bool:
    """``INSERT-FAILED``: the timings of an op's failures, not an op."""
    return op.endswith(FAILED_SUFFIXES)


def failed_of(op: str) -> str:
    """The op whose failures ``op`` times: ``INSERT-FAILED`` → ``INSERT``."""
    for s in FAILED_SUFFIXES:
        if op.endswith(s):
            return op[: -len(s)]
    return op


def is_batch(op: str) -> bool:
    return op.endswith(BATCH_SUFFIX)


def unit_op(batch_op: str) -> str:
    """The op a batch's records count under: ``INSERT-BATCH`` → ``INSERT``."""
    return batch_op.removesuffix(BATCH_SUFFIX)


def step_name(phase: str, loop: int | None = None) -> str:
    """The seed's step name: load → ``l.pre``, index → ``l.post``, run loop n → ``r.Ln``."""
    if phase == "run":
        if not isinstance(loop, int) or loop < 1:
            raise ValueError(f"run steps are numbered from 1, got loop {loop!r}")
        return f"r.L{loop}"
    try:
        return _FIXED_STEPS[phase]
    except KeyError:
        raise ValueError(f"unknown phase {phase!r} (known: {', '.join(PHASES)})") from None


def phase_of(step: str) -> str:
    """The phase of a step name (the inverse of :func:`step_name`): ``l.pre`` → load,
    ``l.post`` → index, ``r.L<n>`` (or any ``r.…`` an importer names) → run, else other."""
    step = str(step)
    for phase, name in _FIXED_STEPS.items():
        if step == name:
            return phase
    return "run" if step.startswith("r.") else "other"


def loop_of(step: str) -> int | None:
    """The run loop of ``r.L<n>``; None for any other step."""
    m = _RUN_STEP.fullmatch(str(step))
    return int(m.group(1)) if m else None
