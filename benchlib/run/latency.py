"""A step's latency rows: per op (and ``Intended-<op>``) merged exactly from its client
processes' histograms, with the step's ops and errors counted once (a batch's records
through its record op, a compound op's inner operations not twice), and a blank row for
each defined op that did not run."""
from __future__ import annotations

from .. import measure, schema
from ..schema import COMPLETED_NAMES
from .intervals import is_batch


def with_defined_ops(rows: list[dict], defined: list[str] | None) -> list[dict]:
    """``rows`` and a blank row (count 0) for every defined op that did not run."""
    have = {r["op"] for r in rows}
    missing = [op for op in defined or () if op not in have]
    if not missing:
        return rows
    empty = measure.new_histogram()
    blank = {**measure.summarize(empty), "errors": 0, "hdr": measure.encode(empty), "returns": {}}
    return sorted(rows + [{"op": op, **blank} for op in missing], key=lambda r: r["op"])


def latency_rows(client_results: list[measure.ClientResult], batch_units: dict | None = None,
                 compound_ops: dict[str, int] | None = None) -> tuple[list[dict], int, int]:
    """Latency rows per op (and Intended-op), merged exactly; the step's ops and errors.

    A batched op (``batch_units``; by default the ``-BATCH`` ones) counts its records:
    through its record op, or, when it has none (``None``), its own ``units``.
    ``compound_ops`` (the workload's): ops whose inner operations are timed under their
    own names too, and how many each has; those are not counted twice."""
    rows, ops, errors = [], 0, 0
    merged = measure.merge_client_results(client_results)
    for op, m in sorted(merged.items()):
        n_all = sum(m["returns"].values())
        n_err = sum(v for k, v in m["returns"].items() if k not in schema.NOT_ERROR_NAMES)
        s = measure.summarize(m["hdr"])
        row = {"op": op, **s, "count": n_all, "errors": n_err, "hdr": measure.encode(m["hdr"]),
               "returns": m["returns"], **measure.not_ok_fields(m)}
        rows.append(row)
        if m["intended_hdr"].get_total_count():
            si = measure.summarize(m["intended_hdr"])
            rows.append({"op": schema.intended(op), **si, "errors": n_err,
                         "hdr": measure.encode(m["intended_hdr"]), "returns": {}})
        if not is_batch(op, batch_units):  # a batch's records are counted under its unit op
            ops += n_all - sum(v for k, v in m["returns"].items() if k not in COMPLETED_NAMES)
        elif batch_units and batch_units.get(op, "") is None:
            ops += m["units"]    # a batch that keeps its latency: its rows are the step's ops
            row["units"] = m["units"]   # (kept in .steps/, for a rerun's check of the load)
        # a batch that failed is an error of the step (its unit op counts records only)
        errors += n_err
    for op, inner in (compound_ops or {}).items():
        if op in merged:   # each of its inner ops ran (or failed: not counted above)
            ok = sum(v for k, v in merged[op]["returns"].items() if k in COMPLETED_NAMES)
            ops -= inner * ok
    return rows, ops, errors
