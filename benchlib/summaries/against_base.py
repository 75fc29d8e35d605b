"""Many configurations against one base: ``benchlib compare BASE B C …``.

As a series of server versions is published against the first (the LinkBench seed's
relative throughput per step, version by version): per point of the matrix
(``schema.POINT``) and run loop, each configuration's throughput, p99 of the main calls
(:func:`.uncertainty.main_calls`), CPU and I/O per operation, each as the ratio to the
base with its 95% interval (:func:`.uncertainty.ratio_ci`: log scale, Welch), and a mark
where the interval spans 1 (not significant). Points are matched as two-way ``compare``
matches them (:mod:`.pairing`: the same DBMS configuration, or the targets ``pairs``
names); a configuration without a point of the base has no cell there, and one that
pairs with none of the base's targets is named in ``attrs["unpaired"]``. For a paced
run the p99 is from the intended start, its service time beside it (:mod:`.samples`).
"""
from __future__ import annotations

import math

import pandas as pd

from ..schema import phase_of
from .pairing import Pairs, matched_points
from .samples import SERVICE_P99, estimate, metrics_of, run_samples
from .uncertainty import METRICS, CompareError, Estimate, ratio_of, verdict

# what is set against the base, and which way is better; + each main call's p99 (lower)
BASE_METRICS = {**METRICS, "io_kb_per_op": "lower"}
NOT_SIGNIFICANT = "~"   # the mark of a ratio whose 95% interval spans 1


ALL_LOOPS = "r.*"   # the step of a run's figure over all its run loops (as compare, the headline)


def _only_step(results: dict, step: str) -> dict:
    """``results`` with one run step (its steps, latency, intervals and hw rows); all of
    them for :data:`ALL_LOOPS`."""
    if step == ALL_LOOPS:
        return results
    return {k: (v[v["step"] == step] if isinstance(v, pd.DataFrame) and "step" in v else v)
            for k, v in results.items()}


def _run_steps(results: dict) -> list[str]:
    steps = results["steps"]
    names = sorted({str(s) for s in steps["step"] if phase_of(s) == "run"})
    return sorted(names, key=lambda s: (len(s), s))


def against_base(base: dict, others: list[tuple[str, dict]], pairs: Pairs | None = None, *,
                 samples=run_samples, metrics: dict = BASE_METRICS, all_loops: bool = False) -> pd.DataFrame:
    """One row per configuration, point, step and metric: ``config target (the base's)
    target_other threads target_ops_per_s point step metric base value ratio ci_low ci_high significant
    verdict``; ``others`` is [(name, results)] in the order they are shown; ``pairs``:
    (base's target, another's) where they are not the same configuration. ``samples``:
    the runs' figures (:func:`.samples.run_samples`, or one that adds columns), ``metrics``
    those set against the base first; ``all_loops``: also the runs' loops together (step
    :data:`ALL_LOOPS`, the figure ``compare`` prints) where there are several."""
    rows, unpaired = [], []
    steps = _run_steps(base)
    steps += [ALL_LOOPS] if all_loops and len(steps) > 1 else []
    base_samples: dict[str, pd.DataFrame] = {}   # the base's figures, once per step for all others
    for name, res in others:
        found = False
        for step in steps:
            if step not in base_samples:
                base_samples[step] = samples(_only_step(base, step))
            sb = base_samples[step]
            here = step == ALL_LOOPS or step in _run_steps(res)
            so = samples(_only_step(res, step)) if here else pd.DataFrame()
            if not len(sb) or not len(so):
                continue
            try:   # the pairs that name this configuration's targets; the same ones else
                mine = [p for p in pairs or [] if p[1] in set(so.get("config", []))]
                matched = matched_points(sb, so, mine)
            except CompareError as e:
                unpaired.append(f"{name}: {e}")
                break
            found = True
            names = list(dict.fromkeys([*metrics, *metrics_of(sb), *metrics_of(so)]))
            for (kb, gb), (ko, go) in matched:
                for metric in names:
                    a, b = estimate(gb, metric), estimate(go, metric)
                    if a and b:
                        rows.append(_row(name, kb, ko, step, metric, a, b))
        if not found and not any(u.startswith(f"{name}:") for u in unpaired):
            unpaired.append(f"{name}: no run loop of the base's")
    out = pd.DataFrame(rows)
    out.attrs["unpaired"] = unpaired
    return out


def _row(name: str, key: tuple, key_o: tuple, step: str, metric: str, a: Estimate, b: Estimate) -> dict:
    r, lo, hi = ratio_of(a, b)
    v = verdict(metric, r, lo, hi)
    return {"config": name, "target": key[0], "target_other": key_o[0], "threads": key[1], "target_ops_per_s": key[2],
            "point": key[3], "step": step, "metric": metric, "base": a.value, "value": b.value,
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
    keys = ["target", "threads", "target_ops_per_s", "point", "step", "metric"]   # the base's target
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
    notes = [f"not compared: {u}" for u in df.attrs.get("unpaired", [])]
    if not len(df):
        return "\n".join([f"(no point of {', '.join(names)} matches one of {base_name})", *notes])
    t = table(df).reset_index()
    t["target_ops_per_s"] = t["target_ops_per_s"].map(lambda v: f"{v:.0f}")
    if not (t["point"] != "").any():
        t = t.drop(columns="point")
    head = (f"X/base: base = {base_name}; per point and run loop, the ratio of each "
            f"configuration's mean to the base's, [its 95% interval]; {NOT_SIGNIFICANT}: not "
            "significant (the interval spans 1). ops_per_s: higher is better; the others lower.")
    if df["metric"].str.endswith(SERVICE_P99).any():
        head += ("\npaced: <op>_p99_us from the intended start (coordinated omission corrected), "
                 "<op>_service_p99_us the service time")
    return "\n".join([head, t.to_string(index=False), *notes])
