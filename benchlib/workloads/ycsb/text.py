"""A step in YCSB's text format, so existing YCSB scripts read benchlib runs.

The layout is Java YCSB's TextMeasurementsExporter with hdrhistogram measurements:
``[OVERALL], RunTime(ms), …``, ``[OVERALL], Throughput(ops/sec), …``, then per
operation ``Operations``, ``AverageLatency(us)``, ``MinLatency(us)``, ``MaxLatency(us)``,
the percentiles, and one ``Return=STATUS`` line per status seen. Paced runs add the
``[Intended-OP]`` blocks, as YCSB does with ``measurement.interval=both``.
"""
from __future__ import annotations

import math

from ...schema import OK, STATUS_NAMES, is_batch

PERCENTILE_KEYS = [("p50_us", 50), ("p90_us", 90), ("p95_us", 95), ("p99_us", 99), ("p999_us", 99.9)]


def _ordinal(p: float) -> str:
    # YCSB: integers get an English ordinal suffix, others print as they are (99.9)
    if p != int(p):
        return f"{p:g}"
    p = int(p)
    suffix = "th" if 10 <= p % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(p % 10, "th")
    return f"{p}{suffix}"


def _num(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    return str(int(v)) if float(v) == int(v) else repr(float(v))


def format_step(secs: float, ops: int, latency_rows: list[dict]) -> str:
    """The YCSB text of one step from its latency rows (as the controller makes them)."""
    lines = [f"[OVERALL], RunTime(ms), {secs * 1000:.0f}",
             f"[OVERALL], Throughput(ops/sec), {ops / secs if secs else float('nan')!r}"]
    for r in latency_rows:
        op = r["op"]
        if is_batch(op):
            continue
        lines.append(f"[{op}], Operations, {int(r['count'])}")
        if _num(r["max_us"]) != "NaN":   # a batch's records: counted, no latency of their own
            lines.append(f"[{op}], AverageLatency(us), {_num(r['mean_us'])}")
            lines.append(f"[{op}], MinLatency(us), {_num(r['min_us'])}")
            lines.append(f"[{op}], MaxLatency(us), {_num(r['max_us'])}")
            for key, p in PERCENTILE_KEYS:
                lines.append(f"[{op}], {_ordinal(p)}PercentileLatency(us), {_num(r[key])}")
        for status, n in sorted((r.get("returns") or {}).items(), key=lambda item: item[0] != STATUS_NAMES[OK]):
            lines.append(f"[{op}], Return={status}, {int(n)}")
    return "\n".join(lines) + "\n"
