"""A step in YCSB's text format, so existing YCSB scripts read benchlib runs.

The layout is Java YCSB's TextMeasurementsExporter with hdrhistogram measurements:
``[OVERALL], RunTime(ms), …``, ``[OVERALL], Throughput(ops/sec), …``, then per
operation ``Operations``, ``AverageLatency(us)``, ``MinLatency(us)``, ``MaxLatency(us)``,
the percentiles, and one ``Return=STATUS`` line per status seen. Paced runs add the
``[Intended-OP]`` blocks, as YCSB does with ``measurement.interval=both``.

Counted as YCSB's DBWrapper counts: an op's ``Operations`` and latencies are its calls
that returned OK; those that did not (NOT_FOUND, ERROR) are timed under ``[OP-FAILED]``
(``[Intended-OP-FAILED]``), with their own histogram, and all its returns are its
``Return=`` lines; ``[OVERALL] Throughput`` divides every operation, failed or not.
"""
from __future__ import annotations

import math

from ... import measure
from ...schema import OK, STATUS_NAMES, is_batch, is_intended

PERCENTILE_KEYS = [("p50_us", 50), ("p90_us", 90), ("p95_us", 95), ("p99_us", 99), ("p999_us", 99.9)]
FAILED = "-FAILED"   # YCSB's name for an op's calls that did not return OK


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


def _section(op: str, figures: dict) -> list[str]:
    """``Operations`` and, where any was timed, the latency lines of one section."""
    lines = [f"[{op}], Operations, {int(figures['count'])}"]
    if figures["count"] and _num(figures["max_us"]) != "NaN":   # a batch's records: no latency
        lines.append(f"[{op}], AverageLatency(us), {_num(figures['mean_us'])}")
        lines.append(f"[{op}], MinLatency(us), {_num(figures['min_us'])}")
        lines.append(f"[{op}], MaxLatency(us), {_num(figures['max_us'])}")
        for key, p in PERCENTILE_KEYS:
            lines.append(f"[{op}], {_ordinal(p)}PercentileLatency(us), {_num(figures[key])}")
    return lines


def _split(row: dict, hdr: str, not_ok: str) -> tuple[dict, dict | None]:
    """(the figures of the calls that returned OK, those of the others or None)."""
    ok = row["returns"].get(STATUS_NAMES[OK], 0) if row.get("returns") else None
    bad = row.get(not_ok) or ""
    if not bad:
        figures = dict(row)
        if ok is not None and ok != row["count"] and not is_intended(row["op"]):
            figures["count"] = ok   # failures never timed apart (no histogram): counted only
        return figures, None
    hist, failed = measure.decode(row.get(hdr) or ""), measure.decode(bad)
    return measure.summarize(measure.without(hist, failed)), measure.summarize(failed)


def _op_lines(r: dict, ops_by_name: dict) -> list[str]:
    op = r["op"]
    if is_intended(op):   # YCSB's measureIntended: the same split, no Return lines
        base = ops_by_name.get(op[len("Intended-"):], {})
        ok, bad = _split({**r, "not_ok_intended_hdr": base.get("not_ok_intended_hdr")},
                         "hdr", "not_ok_intended_hdr")
    else:
        ok, bad = _split(r, "hdr", "not_ok_hdr")
    lines = _section(op, ok)
    for status, n in sorted((r.get("returns") or {}).items(), key=lambda item: item[0] != STATUS_NAMES[OK]):
        lines.append(f"[{op}], Return={status}, {int(n)}")
    if bad is not None:
        lines.extend(_section(op + FAILED, bad))
    return lines


def format_step(secs: float, ops: int, latency_rows: list[dict]) -> str:
    """The YCSB text of one step from its latency rows (as the controller makes them);
    ``ops``: every operation the step ran, failed or not (YCSB's throughput)."""
    lines = [f"[OVERALL], RunTime(ms), {secs * 1000:.0f}",
             f"[OVERALL], Throughput(ops/sec), {ops / secs if secs else float('nan')!r}"]
    ops_by_name = {r["op"]: r for r in latency_rows}
    for r in latency_rows:
        if not is_batch(r["op"]):
            lines.extend(_op_lines(r, ops_by_name))
    return "\n".join(lines) + "\n"
