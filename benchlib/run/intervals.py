"""One second's interval rows, merged from the processes' raw latencies: what the
step's controller (:mod:`.step`) makes of the seconds its clients send (its status
lines: :mod:`.status_window`).

A row's ``second`` is where it starts and ``interval_s`` its length (the controller
sets it: 1 s, a step's last second shorter). A batched op's records get a row of their
own with counts only: nobody waited for one record of a batch, so it has no latency.
"""
from __future__ import annotations

import numpy as np

from .. import measure, schema

UNIT_NO_LATENCY = ("mean_us", "p99_us", "max_us", "min_us", "intended_mean_us", "intended_p99_us",
                   "intended_max_us")


def is_batch(op: str, batch_units: dict | None) -> bool:
    return op in batch_units if batch_units else schema.is_batch(op)


def interval_rows(second: int, payloads: list[dict], batch_units: dict | None = None) -> list[dict]:
    """One second's interval rows, merged exactly from the processes' raw latencies; a
    batched op's records get a row of their own (or, with no record op, its ops count
    in records: ``_records``)."""
    by_op: dict[str, list] = {}
    for payload in payloads:
        for op, part in payload.items():
            by_op.setdefault(op, []).append(part)
    rows = []
    for op, parts in sorted(by_op.items()):
        svc = np.concatenate([x[0] for x in parts])
        itd = np.concatenate([x[1] for x in parts])
        units = sum(x[3] for x in parts)
        mean, p99, mx = measure.interval_stats(svc)
        imean, ip99, imx = measure.interval_stats(itd)
        failed = int(sum(x[4] if len(x) > 4 else 0 for x in parts))   # beside ops, never in them
        row = {"second": second, "op": op, "ops": len(svc) - failed, "errors": int(sum(x[2] for x in parts)),
               "mean_us": mean, "p99_us": p99, "max_us": mx,
               "min_us": float(svc.min()) if len(svc) else np.nan,
               "intended_mean_us": imean, "intended_p99_us": ip99,
               "intended_max_us": imx, "_inner": is_batch(op, batch_units), "_svc": svc,
               "_failed": failed}
        rows.append(row)
        unit_op = (batch_units or {}).get(op, schema.unit_op(op))
        if row["_inner"] and unit_op is None:
            row["_inner"], row["_records"] = False, int(units)  # counted in records
        elif row["_inner"] and units:
            # the batch's records: counted (and their rate), but no latency of their own:
            # nobody waited for one record of a batch (its latency is the batch's row)
            rows.append({**row, "op": unit_op, "ops": int(units), "errors": 0,
                         **{k: np.nan for k in UNIT_NO_LATENCY}, "_inner": False, "_svc": None,
                         "_failed": 0, "_unit": True})
    return rows


_FLAGS = ("_inner", "_unit")


class ZeroRows:
    """Every op a step runs has a row each second, 0 where none finished: a stall (a
    lock, an outage) is a row of 0 ops, never a second missing from the table. The ops
    are the step's defined ones (``Workload.defined_ops``) and every op seen in it so
    far (a workload that defines none: those its clients ran); a row of 0 has no
    latency (NaN), as no operation ended in it."""

    def __init__(self, defined: list[str] | None, batch_units: dict | None = None):
        self.shapes: dict[str, dict] = {}     # op -> its rows' flags (a batch's, its records')
        for op in defined or ():
            inner = is_batch(op, batch_units)
            unit_op = (batch_units or {}).get(op, schema.unit_op(op)) if inner else None
            if inner and unit_op is None:
                self.shapes[op] = {"_records": 0}
            else:
                self.shapes[op] = {"_inner": True} if inner else {}
                if unit_op is not None:
                    self.shapes.setdefault(unit_op, {"_unit": True})

    @property
    def known(self) -> bool:
        return bool(self.shapes)

    def see(self, rows: list[dict]) -> None:
        for r in rows:
            if r["op"] not in self.shapes:
                shape = {k: True for k in _FLAGS if r.get(k)}
                self.shapes[r["op"]] = {**shape, **({"_records": 0} if "_records" in r else {})}

    def fill(self, second: int, rows: list[dict]) -> list[dict]:
        """``rows`` of ``second`` and a row of 0 ops for each op that has none."""
        have = {r["op"] for r in rows}
        zeros = [{"second": second, "op": op, "ops": 0, "errors": 0,
                  **{k: np.nan for k in UNIT_NO_LATENCY}, "_inner": False, "_svc": None,
                  "_failed": 0, **shape}
                 for op, shape in self.shapes.items() if op not in have]
        return rows + zeros
