"""An outage is not ``ok``: the rule that marks a step whose server was gone for part of
it ``degraded``, and a run loop in which no operation completed ``failed`` (docs/reliability.md,
"Run status").

While the server is gone its clients' operations fail at once and their driver threads
wait in the reconnection policy (:func:`.recording.reopen`) until it answers again, so
the time they spend there is the outage's length as the step lived it: ``outage_s`` is
that time averaged over the step's driver threads (a thread reopening one connection
drives none of its others meanwhile, as the one thread of a multiplexed process). A step
is **degraded** when ``outage_s`` is at least OUTAGE_SHARE of the step and the server
was gone: it refused an attempt to reopen (``refused``), or it ended the connections
again and again (more reopened than AGAIN per client).

Nothing else degrades a step: a stall whose connections were kept (a lock, a
checkpoint) is the server's performance, measured as seconds of 0 ops
(:class:`.intervals.ZeroRows`); a loaded machine's slow seconds are not an outage, nor
is each connection ended once and reopened at the first attempt, however slowly the
machine opens it (PyMySQL's 0.4 s each at load 20 on 2 cores was 10 % of a 4-s loop).
"""
from __future__ import annotations

OUTAGE_SHARE = 0.10       # degraded from this share of the step spent reopening connections
AGAIN = 2                 # ended again and again: more reopened than this many per client
                          # (a LinkBench client's two connections may be lost one by one)


def judge(outcome) -> None:
    """Mark ``outcome`` (a step that ended ok) failed when it is a run loop in which no
    operation completed, degraded when an outage cost it OUTAGE_SHARE of its time; its
    ``reconnects`` and ``outage_s`` set from its clients' counts."""
    results = outcome.client_results
    outcome.reconnects = sum(getattr(c, "reconnects", 0) or 0 for c in results)
    threads = sum(getattr(c, "driver_threads", 0) or 0 for c in results) or outcome.step.threads
    outcome.outage_s = sum(getattr(c, "reconnect_s", 0.0) or 0.0 for c in results) / max(threads, 1)
    refused = sum(getattr(c, "refused", 0) or 0 for c in results)
    if outcome.status != "ok":
        return
    lost = f"{outcome.reconnects} connections lost and reopened"
    if outcome.step.phase == "run" and not outcome.ops:
        outcome.status, outcome.error = "failed", "no operation completed" + (
            f" ({lost})" if outcome.reconnects else "")
    elif (refused or outcome.reconnects > AGAIN * outcome.step.threads) \
            and outcome.outage_s >= OUTAGE_SHARE * outcome.secs:
        outcome.status = "degraded"
        outcome.error = (f"outage: {lost}" + (f", {refused} attempts refused" if refused else "")
                         + f"; the clients spent {outcome.outage_s:.1f} s of {outcome.secs:.1f} s "
                         "reopening them")
