"""Many configurations against one base: ``benchlib compare BASE B C …``.

As a series of server versions is published against the first (the LinkBench seed's
relative throughput per step, version by version): per point of the matrix
(``schema.POINT``) and run loop, each configuration's throughput, p99 of the main calls
(:func:`.uncertainty.main_calls`), CPU and I/O per operation, each as the ratio to the
base with its 95% interval (:func:`.uncertainty.ratio_ci`: log scale, Welch), and a mark
where the interval spans 1 (not significant). Points are matched as two-way ``compare``
matches them; a configuration without a point of the base has no cell there.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..schema import phase_of
from .uncertainty import METRICS, matched_points, ratio_ci, run_samples, samples_of, verdict

# what is set against the base, and which way is better; + each main call's p99 (lower)
BASE_METRICS = {**METRICS, "io_kb_per_op": "lower"}
NOT_SIGNIFICANT = "~"   # the mark of a ratio whose 95% interval spans 1


def _only_step(results: dict, step: str) -> dict:
    """``results`` with one run step (its steps, latency, intervals and hw rows)."""
    return {k: (v[v["step"] == step] if isinstance(v, pd.DataFrame) and "step" in v else v)
            for k, v in results.items()}


def _run_steps(results: dict) -> list[str]:
    steps = results["steps"]
    names = sorted({str(s) for s in steps["step"] if phase_of(s) == "run"})
    return sorted(names, key=lambda s: (len(s), s))


def against_base(base: dict, others: list[tuple[str, dict]]) -> pd.DataFrame:
    """One row per configuration, point, step and metric: ``config threads
    target_ops_per_s point step metric base value ratio ci_low ci_high significant
    verdict``; ``others`` is [(name, results)] in the order they are shown."""
    rows = []
    for step in _run_steps(base):
        sb = run_samples(_only_step(base, step))
        for name, res in others:
            so = run_samples(_only_step(res, step)) if step in _run_steps(res) else pd.DataFrame()
            if not len(sb) or not len(so):
                continue
            p99s = sorted({c for c in (*sb.columns, *so.columns) if c.endswith("_p99_us")})
            for (kb, gb), (_, go) in matched_points(sb, so):
                for metric in (*BASE_METRICS, *p99s):
                    a, b = samples_of(gb, metric), samples_of(go, metric)
                    if a and b:
                        rows.append(_row(name, kb, step, metric, a, b))
    return pd.DataFrame(rows)


def _row(name: str, key: tuple, step: str, metric: str, a: list, b: list) -> dict:
    r, lo, hi = ratio_ci(a, b)
    v = verdict(metric, r, lo, hi)
    return {"config": name, "threads": key[0], "target_ops_per_s": key[1], "point": key[2],
            "step": step, "metric": metric, "base": float(np.mean(a)), "value": float(np.mean(b)),
            "ratio": r, "ci_low": lo, "ci_high": hi,
            "significant": v in ("better", "worse"), "verdict": v}


def cell(r) -> str:
    """``0.93 [0.9–0.96]``, ``1.02 [0.97–1.07] ~`` (not significant), ``1.1 ~`` (one sample)."""
    if r["ratio"] is None or math.isnan(r["ratio"]):
        return ""
    ci = "" if math.isnan(r["ci_low"]) else f" [{r['ci_low']:.3g}–{r['ci_high']:.3g}]"
    return f"{r['ratio']:.3g}{ci}" + ("" if r["significant"] else f" {NOT_SIGNIFICANT}")


def table(df: pd.DataFrame) -> pd.DataFrame:
    """The relative table: one row per point, step and metric, one column per
    configuration, each cell :func:`cell` (the order of ``df``'s configurations kept)."""
    if not len(df):
        return pd.DataFrame()
    keys = ["threads", "target_ops_per_s", "point", "step", "metric"]
    df = df.assign(cell=[cell(r) for _, r in df.iterrows()])
    out = df.pivot_table(index=keys, columns="config", values="cell", aggfunc="first", sort=False)
    return out.reindex(columns=list(dict.fromkeys(df["config"]))).fillna("")


def score(r) -> float:
    """How much better than the base, on the log scale (log2 of the ratio, its sign
    turned for a lower-is-better metric); 0 where the difference is not significant:
    what a report colours its cells by."""
    if not r["significant"] or not r["ratio"] > 0:
        return 0.0
    s = math.log2(r["ratio"])
    return s if BASE_METRICS.get(r["metric"], "lower") == "higher" else -s


def format_against_base(df: pd.DataFrame, base_name: str, names: list[str]) -> str:
    """The relative table as text, with what it is in its first lines."""
    if not len(df):
        return f"(no point of {', '.join(names)} matches one of {base_name})"
    t = table(df).reset_index()
    t["target_ops_per_s"] = t["target_ops_per_s"].map(lambda v: f"{v:.0f}")
    if not (t["point"] != "").any():
        t = t.drop(columns="point")
    head = (f"X/base: base = {base_name}; per point and run loop, the ratio of each "
            f"configuration's mean to the base's, [its 95% interval]; {NOT_SIGNIFICANT}: not "
            "significant (the interval spans 1). ops_per_s: higher is better; the others lower.")
    return head + "\n" + t.to_string(index=False)
