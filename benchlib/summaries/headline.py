"""The experiment's headline: its best point and what a reader of one line needs of it.

The best is a point of the matrix (``schema.POINT`` within an experiment and
configuration: the DBMS configuration, threads, target rate, the workload's own matrix
values), its throughput the
mean over its repetitions — never one lucky repetition, never a mean over points. Its
latency is the p99 of its main calls (:func:`.uncertainty.main_calls`): where a workload
counts units inside calls (ybio's ``READ-BATCH`` of ``batch_size`` rows), the headline
gives the throughput in units (rows/s) and the latency of the call, and says so; the
units' own p99 is no latency anyone waits for. A paced point's p99 is from the intended
start (coordinated omission corrected), its service time beside it.
"""
from __future__ import annotations

import math

import pandas as pd

from ..schema import POINT, is_batch, unit_op
from .response import op_order
from .loops_latency import RULE
from .samples import SERVICE_P99, run_samples

UNIT = "rows"   # what a batch's units are called (ybio's rows, a batched insert's records)


def best_point(results: dict) -> dict | None:
    """{"name", "target", "runs", "ops_per_s", "p99_us": {call: µs}, "service_p99_us", "unit"}
    of the point with the highest mean throughput (the p99 from the intended start for a
    paced point, its service time in ``service_p99_us``); None when no run loop was measured."""
    samples = run_samples(results)
    if not len(samples) or samples["ops_per_s"].isna().all():
        return None
    keys = [c for c in ("experiment", "config") if c in samples] + POINT
    groups = [(k, g) for k, g in samples.groupby(keys) if g["ops_per_s"].notna().any()]
    _, g = max(groups, key=lambda kg: kg[1]["ops_per_s"].mean())
    p99s = {c.removesuffix("_p99_us"): g[c].mean() for c in g   # the calls this point made
            if c.endswith("_p99_us") and not c.endswith(SERVICE_P99) and g[c].notna().any()}
    service = {op: g[op + SERVICE_P99].mean() for op in p99s   # paced: the service time beside
               if op + SERVICE_P99 in g and g[op + SERVICE_P99].notna().any()}
    calls = op_order(pd.DataFrame({"op": list(p99s)}))
    batched = [op for op in calls if is_batch(op)]
    many = "experiment" in g and samples["experiment"].astype("object").nunique() > 1
    first = g.sort_values("run_id").iloc[0]
    name = f"{first['experiment']}/{first['run_id']}" if many else str(first["run_id"])
    return {"name": name, "target": first["target"], "runs": len(g), "ops_per_s": float(g["ops_per_s"].mean()),
            "p99_us": {op: p99s[op] for op in calls}, "unit": UNIT if batched else "ops",
            "service_p99_us": {op: service[op] for op in calls if op in service},
            "units_of": [unit_op(op) for op in batched]}


def headline_text(results: dict, tail: str) -> str:
    """``best <run>: 1,234 ops/s, p99 READ 310 µs, UPDATE 420 µs · <tail>``; a batched
    workload's ``… rows/s (rows of READ-BATCH calls), p99 READ-BATCH 1.2 ms …``."""
    best = best_point(results)
    if best is None:
        return f"no measured steps · {tail}"
    reps = f" (mean of {best['runs']} runs)" if best["runs"] > 1 else ""
    units = f" ({UNIT} of {', '.join(op + '-BATCH' for op in best['units_of'])} calls)" \
        if best["units_of"] else ""
    svc = best["service_p99_us"]
    p99 = [f"{op} {_us(v)}" + (f" (service {_us(svc[op])})" if op in svc else "")
           for op, v in best["p99_us"].items()]
    what = "p99 from the intended start" if svc else "p99"
    return (f"best {best['name']} on {best['target']}{reps}: {best['ops_per_s']:,.0f} {best['unit']}/s{units}"
            + (f", {what} {', '.join(p99)} ({RULE})" if p99 else "") + f" · {tail}")


def _us(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v / 1000:,.1f} ms" if v >= 10_000 else f"{v:,.0f} µs"
