"""An outage is not ``ok``: the rule that marks a step whose server was gone for part of
it (its clients lost their connections and reopened them) ``degraded``, and a run step
in which no operation completed ``failed`` (README, "Run status").

A step is **degraded** when its clients reopened lost connections (``reconnects`` > 0)
and the outage cost it

- ``outage_s`` of at least OUTAGE_SHARE of the step: the whole seconds whose rate fell
  below LOW_FRACTION of the step's usual one (the USUAL_PERCENTILE of its whole seconds'
  rates), or the time a connection of it spent reopening (on average), whichever is
  longer; or
- (a run loop) a rate below FALL_FRACTION of the median of the run's earlier loops
  that ended ok.

Without a lost connection nothing is degraded: a stall whose connections were kept (a
lock, a checkpoint) is the server's performance, measured as seconds of 0 ops
(:class:`.intervals.ZeroRows`), and a loaded machine's slow seconds are never an outage.
"""
from __future__ import annotations

import statistics

import numpy as np

LOW_FRACTION = 0.10       # a second below this share of the usual rate is out
USUAL_PERCENTILE = 90     # the step's usual rate: this percentile of its whole seconds' rates
OUTAGE_SHARE = 0.10       # degraded from this share of the step out
FALL_FRACTION = 0.50      # degraded below this share of the earlier loops' median rate
WHOLE_S = 0.9             # a second at least this long is whole (a step's last is shorter)


class SecondsMeter:
    """Each whole second's operations, as the step's controller emits them: a count per
    second (a day-long loop's are 86,400 numbers), what :func:`low_s` reads."""

    def __init__(self):
        self.ops: list[int] = []

    def add(self, ops: int, interval_s: float) -> None:
        if interval_s >= WHOLE_S:
            self.ops.append(int(ops))

    def low_s(self) -> float:
        """The whole seconds below LOW_FRACTION of the usual rate."""
        if not self.ops:
            return 0.0
        usual = float(np.percentile(self.ops, USUAL_PERCENTILE))
        return float(sum(1 for n in self.ops if n < LOW_FRACTION * usual))


def judge(outcome, meter: SecondsMeter, connections: int) -> None:
    """Mark ``outcome`` (a step that ended ok) failed when it is a run loop in which no
    operation completed, degraded when an outage cost it (the module's rule); its
    ``reconnects`` and ``outage_s`` set from its clients and seconds."""
    results = outcome.client_results
    outcome.reconnects = sum(getattr(c, "reconnects", 0) or 0 for c in results)
    down_s = sum(getattr(c, "reconnect_s", 0.0) or 0.0 for c in results) / max(connections, 1)
    outcome.outage_s = max(meter.low_s(), down_s) if outcome.reconnects else 0.0
    if outcome.status != "ok":
        return
    if outcome.step.phase == "run" and not outcome.ops:
        outcome.status, outcome.error = "failed", "no operation completed" + (
            f" ({outcome.reconnects} connections lost and reopened)" if outcome.reconnects else "")
    elif outcome.reconnects and outcome.outage_s >= OUTAGE_SHARE * outcome.secs:
        outcome.status = "degraded"
        outcome.error = (f"outage: {outcome.reconnects} connections lost and reopened; "
                         f"{outcome.outage_s:.1f} s of {outcome.secs:.1f} s out (below "
                         f"{LOW_FRACTION:.0%} of its usual rate, or reopening a connection)")


def judge_against(outcome, earlier: list) -> None:
    """Mark a run loop that ended ok degraded when it lost connections and its rate fell
    below FALL_FRACTION of the median of ``earlier`` (the run's loops that ended ok)."""
    rates = [o.ops / o.secs for o in earlier if o.step.phase == "run" and o.status == "ok" and o.secs]
    if outcome.status != "ok" or outcome.step.phase != "run" or not outcome.reconnects or not rates \
            or not outcome.secs:
        return
    usual, rate = statistics.median(rates), outcome.ops / outcome.secs
    if rate < FALL_FRACTION * usual:
        outcome.status = "degraded"
        outcome.error = (f"outage: {outcome.reconnects} connections lost and reopened; "
                         f"{rate:,.0f} ops/s against {usual:,.0f} in the run's earlier loops")
