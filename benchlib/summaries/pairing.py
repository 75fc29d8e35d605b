"""Which point of B is compared with which of A: ``benchlib compare`` and against-base.

A point is compared only with the same DBMS configuration (its ``target``,
:func:`..points.target_point`: the target's name, DBMS and version, the options set) —
unless told which targets to pair: ``--pair pg=pg16`` pairs A's target ``pg`` with B's
``pg16`` by name. Within a pair of targets, points match on threads, target rate and the
workload's matrix values; two of one point each are compared whatever those are. When no
target pairs, :class:`CompareError` says so in one line, with the targets each side has
and the ``--pair`` that would pair them; a target of A that pairs with none of B's is
named under the table (``attrs["unpaired"]``), never compared with another.
"""
from __future__ import annotations

import math

import pandas as pd

from ..schema import POINT
from .loops_latency import LEGEND
from .samples import SERVICE_P99, bucket, estimate, metrics_of, run_samples
from .uncertainty import CompareError, ratio_of, verdict

Pairs = list[tuple[str, str]]   # (a target's name in A, one's in B)


def parse_pairs(texts: list[str] | None) -> Pairs:
    """``["pg=pg16"]`` → ``[("pg", "pg16")]``; CompareError (one line) for another form."""
    out = []
    for t in texts or []:
        a, eq, b = str(t).partition("=")
        if not eq or not a.strip() or not b.strip():
            raise CompareError(f"--pair {t!r}: give A's target and B's, NAME_A=NAME_B (pg=pg16)")
        out.append((a.strip(), b.strip()))
    return out


def only_config(results: dict, config: str | None) -> dict:
    """The results of one configuration (cnf) only; all of them when ``config`` is None.
    CompareError naming the configurations there are when it has no run."""
    if config is None:
        return results
    runs = results["runs"]
    keep = set(runs.loc[runs["config"] == config, "run_id"])
    if not keep:
        raise CompareError(f"no runs of configuration {config!r} (there are: "
                           f"{', '.join(sorted(set(map(str, runs['config']))))})")
    return {k: (v[v["run_id"].isin(keep)] if isinstance(v, pd.DataFrame) and "run_id" in v else v)
            for k, v in results.items()}


def _targets(s: pd.DataFrame) -> dict[str, str]:
    """{target (the configuration): its name} of a table of run samples."""
    names = s["config"].astype(str) if "config" in s else s["target"].str.split(" (", n=1, regex=False).str[0]
    return dict(zip(s["target"], names))


def target_pairs(sa: pd.DataFrame, sb: pd.DataFrame, pairs: Pairs | None = None) -> list[tuple[str, str]]:
    """[(A's target, B's target)]: the pairs named, and the same configuration for the
    targets they do not name; a CompareError in one line when none pairs or a pair names
    a target a side lacks."""
    ta, tb = _targets(sa), _targets(sb)
    if pairs:
        out = []
        for na, nb in pairs:
            a = [t for t, n in ta.items() if n == na]
            b = [t for t, n in tb.items() if n == nb]
            for side, name, found, there in (("A", na, a, ta), ("B", nb, b, tb)):
                if not found:
                    raise CompareError(f"--pair {na}={nb}: {side} has no target {name!r} "
                                       f"(it has: {', '.join(sorted(set(there.values())))})")
            out += [(x, y) for x in a for y in b]
        named_a, named_b = {x for x, _ in out}, {y for _, y in out}   # the rest: by configuration
        return out + [(t, t) for t in ta if t in tb and t not in named_a and t not in named_b]
    same = [(t, t) for t in ta if t in tb]
    if not same:
        hint = f"{next(iter(ta.values()))}={next(iter(tb.values()))}" if ta and tb else "A=B"
        raise CompareError(f"no target of B is a DBMS configuration of A (A: {'; '.join(ta)} — "
                           f"B: {'; '.join(tb)}): name the targets to pair, --pair {hint}")
    return same


def matched_points(sa: pd.DataFrame, sb: pd.DataFrame, pairs: Pairs | None = None) -> list[tuple[tuple, tuple]]:
    """[((key, runs of A), (key, runs of B))] for each pair of targets
    (:func:`target_pairs`): the points both have; the only one of each when each has one."""
    out = []
    for ta, tb in target_pairs(sa, sb, pairs):
        ga = dict(list(sa[sa["target"] == ta].groupby(POINT)))
        gb = dict(list(sb[sb["target"] == tb].groupby(POINT)))
        rest = {k[1:]: k for k in gb}
        same = [((k, ga[k]), (rest[k[1:]], gb[rest[k[1:]]])) for k in ga if k[1:] in rest]
        if not same and len(ga) == 1 and len(gb) == 1:
            same = [(next(iter(ga.items())), next(iter(gb.items())))]
        out += same
    return out


def unpaired(sa: pd.DataFrame, matched: list) -> list[str]:
    """Lines naming A's targets that no point of B was compared with."""
    done = {ka[0] for (ka, _), _ in matched}
    return [f"{t}: no point of B pairs with it (same configuration, or --pair)"
            for t in dict.fromkeys(sa["target"]) if t not in done]


def compare(res_a: dict, res_b: dict, pairs: Pairs | None = None) -> pd.DataFrame:
    """For each pair of matched points, each metric's figures in A and B, the ratio B/A
    with its 95% interval, how the intervals were had, and a verdict: ``better``/
    ``worse`` (in the metric's own sense) or ``not significant`` when the interval spans
    1. A bucketed percentile's ratio spans its buckets (``bucket_a``/``bucket_b``)."""
    sa, sb = run_samples(res_a), run_samples(res_b)
    if not len(sa) or not len(sb):
        return pd.DataFrame()
    metrics = list(dict.fromkeys([*metrics_of(sa), *metrics_of(sb)]))
    matched = matched_points(sa, sb, pairs)
    rows = []
    for (ka, ga), (kb, gb) in matched:
        for metric in metrics:
            a, b = estimate(ga, metric), estimate(gb, metric)
            if a is None or b is None:
                continue
            r, lo, hi = ratio_of(a, b)
            ba, bb = bucket(ga, metric), bucket(gb, metric)
            if ba or bb:   # a bucket's ratio is known only as far as its bounds
                (a_lo, a_hi), (b_lo, b_hi) = ba or (a.value, a.value), bb or (b.value, b.value)
                lo, hi = b_lo / a_hi if a_hi else math.nan, b_hi / a_lo if a_lo else math.nan
            rows.append({**dict(zip(POINT, ka)), **{f"{c}_b": v for c, v in zip(POINT, kb)},
                         "metric": metric, "a": a.value, "b": b.value, "n_a": a.n, "n_b": b.n,
                         "interval_a": a.label(), "interval_b": b.label(),
                         "bucket_a": _bucket_text(ba), "bucket_b": _bucket_text(bb),
                         "ratio": r, "ci_low": lo, "ci_high": hi, "verdict": verdict(metric, r, lo, hi)})
    out = pd.DataFrame(rows)
    out.attrs["unpaired"] = unpaired(sa, matched)
    return out


def _bucket_text(b) -> str:
    return f"[{b[0]:g}, {b[1]:g}]" if b else ""


def format_compare(df: pd.DataFrame, name_a: str, name_b: str) -> str:
    if not len(df):
        return f"(no point of {name_b} matches one of {name_a})"
    tw = max(len(_point(p, q)) for p, q in zip(df["target"], df["target_b"]))
    pw = max((len(_point(p, q)) for p, q in zip(df["point"], df["point_b"])), default=0)
    head = f"{'point':<{pw}} " if pw else ""
    hows = "; ".join(sorted(set(df["interval_a"]) | set(df["interval_b"])))
    lines = [f"B/A: A = {name_a}, B = {name_b}; intervals: {hows}",
             f"{'target':<{tw}} {'threads':>7} {'rate':>8} {head}{'metric':<26} {'A':>12} {'B':>12} "
             f"{'B/A':>7} {'95% CI':>17}  verdict"]
    if df["metric"].str.endswith("_p99_us").any():
        lines.insert(1, LEGEND)
    if df["metric"].str.endswith(SERVICE_P99).any():
        lines.insert(1, "paced: <op>_p99_us is from the intended start (coordinated omission "
                        "corrected), <op>_service_p99_us the service time beside it")
    for r in df.itertuples():
        pt = f"{_point(r.point, r.point_b):<{pw}} " if pw else ""
        ci = "" if math.isnan(r.ci_low) else f"{r.ci_low:.3f} – {r.ci_high:.3f}"
        flag = "".join(f" ({side}: bucket {b} µs)" for side, b in (("A", r.bucket_a), ("B", r.bucket_b)) if b)
        lines.append(f"{_point(r.target, r.target_b):<{tw}} {_point(r.threads, r.threads_b):>7} "
                     f"{_point(r.target_ops_per_s, r.target_ops_per_s_b):>8} {pt}{r.metric:<26} "
                     f"{r.a:>12.5g} {r.b:>12.5g} {r.ratio:>7.3f} {ci:>17}  {r.verdict}{flag}")
    return "\n".join(lines + [f"not compared: {u}" for u in df.attrs.get("unpaired", [])])


def _point(a, b) -> str:
    def one(v):
        if isinstance(v, str):
            return v
        return "-" if pd.isna(v) else f"{float(v):.0f}"
    return one(a) if one(a) == one(b) else f"{one(a)} / {one(b)}"


__all__ = ["Pairs", "compare", "format_compare", "matched_points", "only_config", "parse_pairs",
           "target_pairs"]
