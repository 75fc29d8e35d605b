"""Each DBMS configuration against a base: ``benchlib summary --kind configs``.

The table the seeds' authors publish (the LinkBench seed's: the same workload release
after release, config after config, each as a ratio to the first): per run loop
(``r.L1`` …, and ``r.*``, the runs' loops together — the figure ``compare`` and the
headline print — where there are several) and point (client count, target rate, the
workload's matrix values), each configuration's

    tps           throughput (ops/s; rows/s for a batched workload)
    <op>_p99      each main call's p99 (:mod:`.loops_latency`'s one rule)
    cpu/o         CPU µs per operation, clients + the DBMS's (:mod:`.samples`)
    io/o          KB read + written per operation (the disk's)
    r/o  rkb/o  wkb/o  cs/o   storage reads, KB read, KB written, context switches per
                  operation: the seed's ``eff.op`` ``rpi rkbpi wkbpi cspi`` over the loop
    size          database size at the loop's end, GB (``dbgb``)

as the ratio of its mean to the base's with the 95% interval of the ratio (log scale,
Welch: :func:`.uncertainty.ratio_ci`) and ``~`` where the interval spans 1 — the
against-base comparison (:mod:`.against_base`) itself, with the seed's per-operation
figures added. The base: ``base=`` (``--base NAME``), else the experiment's ``base:``
key, else the first configuration. A configuration is one target of one experiment
(``pg-v16-shared_buffers1GB``): two targets are two series, never averaged; two
experiments' configurations of one name are ``experiment/config``.
"""
from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from .against_base import ALL_LOOPS, BASE_METRICS, NOT_SIGNIFICANT, against_base, cell
from .efficiency import eff_op
from .loops_latency import LEGEND
from .samples import RUN_KEY, run_samples
from .uncertainty import CompareError

# the seed's per-operation figures (eff.op's columns), set against the base beside the rest
EFF = {"reads_per_op": "rpi", "read_kb_per_op": "rkbpi", "write_kb_per_op": "wkbpi", "cs_per_op": "cspi"}
SIZE = "size_gb"
METRICS = {**BASE_METRICS, **dict.fromkeys([*EFF, SIZE], "lower")}
SHORT = {"ops_per_s": "tps", "cpu_us_per_op": "cpu/o", "io_kb_per_op": "io/o", "reads_per_op": "r/o",
         "read_kb_per_op": "rkb/o", "write_kb_per_op": "wkb/o", "cs_per_op": "cs/o", SIZE: "size"}
POINT_COLS = ["step", "threads", "target_ops_per_s", "point"]


class Config(NamedTuple):
    """One configuration: its label in the table, its experiment and its name (cnf)."""
    label: str
    experiment: str
    config: str


def configurations(results: dict) -> list[Config]:
    """The configurations of ``results``, experiment by experiment (in the order they
    started), each experiment's in its targets' order (as the YAML lists them)."""
    runs = results["runs"]
    if not len(runs):
        return []
    runs = runs.assign(experiment=runs["experiment"].astype("object").fillna("").astype(str),
                       config=runs["config"].astype("object").fillna("").astype(str))
    runs = runs.sort_values("started") if "started" in runs else runs
    order = {}
    for e, c, meta in zip(runs["experiment"], runs["config"], runs.get("meta", [{}] * len(runs))):
        names = [t.get("name") for t in _params(meta).get("targets") or [] if isinstance(t, dict)]
        order.setdefault((e, c), (list(dict.fromkeys(runs["experiment"])).index(e),
                                  names.index(c) if c in names else len(names), len(order)))
    keys = sorted(order, key=order.get)
    many = len({e for e, _ in keys}) > 1
    return [Config(f"{e}/{c}" if many else c, e, c) for e, c in keys]


def _params(meta) -> dict:
    p = meta.get("parameters") if isinstance(meta, dict) else None
    return p if isinstance(p, dict) else {}


def base_of(results: dict, configs: list[Config], base: str | None = None) -> Config:
    """The base: ``base`` (a label or a configuration's name), else the first
    experiment's ``base:`` key, else the first configuration; CompareError (one line)
    when ``base`` names none."""
    if base is None:
        runs = results["runs"]
        first = runs[runs["experiment"].astype(str) == configs[0].experiment]
        base = next((_params(m).get("base") for m in first.get("meta", []) if _params(m).get("base")), None)
        if base is None:
            return configs[0]
    found = [c for c in configs if base in (c.label, c.config)]
    if len(found) != 1:
        what = "no" if not found else "more than one"
        raise CompareError(f"--base {base}: {what} configuration of that name (there are: "
                           f"{', '.join(c.label for c in configs)})")
    return found[0]


def _workloads(results: dict) -> dict[Config, str]:
    """{configuration: the workload its runs ran}."""
    runs = results["runs"]
    if "workload" not in runs:
        return {}
    out = {}
    for e, c, w in zip(runs["experiment"].astype(str), runs["config"].astype(str), runs["workload"]):
        out.setdefault((e, c), str(w) if isinstance(w, str) else "")
    return {c: out.get((c.experiment, c.config), "") for c in configurations(results)}


def one_config(results: dict, c: Config) -> dict:
    """``results`` of the runs of one configuration of one experiment."""
    runs = results["runs"]
    keep = runs[(runs["experiment"].astype(str) == c.experiment) & (runs["config"].astype(str) == c.config)]
    ids = set(zip(keep["experiment"].astype(str), keep["run_id"].astype(str)))
    out = {}
    for k, v in results.items():
        if isinstance(v, pd.DataFrame) and "run_id" in v:
            exp = v["experiment"].astype(str) if "experiment" in v else pd.Series(c.experiment, index=v.index)
            v = v[[key in ids for key in zip(exp, v["run_id"].astype(str))]]
        out[k] = v
    return out


def samples_with_eff(results: dict) -> pd.DataFrame:
    """:func:`.samples.run_samples` with each run's seed figures over its run loops:
    reads, KB read and written, context switches per operation (each loop's weighted by
    its operations) and the database size at its last loop's end."""
    s = run_samples(results)
    if not len(s):
        return s
    e = eff_op(results)
    e = e[e["phase"] == "run"].assign(ops=lambda d: d["ips"] * d["secs"])
    rows = []
    for key, g in e.groupby([c for c in RUN_KEY if c in e], dropna=False):
        w = g["ops"].where(g["ops"] > 0)
        row = dict(zip([c for c in RUN_KEY if c in e], key if isinstance(key, tuple) else (key,)))
        for name, col in EFF.items():
            ok = g[col].notna() & w.notna()
            row[name] = float((g[col] * w)[ok].sum() / w[ok].sum()) if ok.any() else float("nan")
        row[SIZE] = float(g["dbgb"].dropna().iloc[-1]) if g["dbgb"].notna().any() else float("nan")
        rows.append(row)
    if not rows:
        return s
    extra = pd.DataFrame(rows)
    keys = [c for c in RUN_KEY if c in extra and c in s]
    for k in keys:
        extra[k], s[k] = extra[k].astype(str), s[k].astype(str)
    return s.merge(extra, on=keys, how="left")


def configs_frame(results: dict, base: str | None = None) -> pd.DataFrame:
    """One row per configuration, step, point and metric (:func:`.against_base.against_base`'s
    columns, ``config`` the configuration's label) and ``base_config``; the base has no
    rows of its own (its figures are the ``base`` column). CompareError with fewer than
    two configurations."""
    configs = configurations(results)
    if len(configs) < 2:
        raise CompareError(f"{len(configs)} configuration{'s' if len(configs) != 1 else ''} "
                           "here: nothing to set against a base (benchlib compare BASE B C … "
                           "sets experiments against one)")
    b = base_of(results, configs, base)
    ran = _workloads(results)
    apart = [c for c in configs if c != b and ran.get(c, "") != ran.get(b, "")]
    others = [c for c in configs if c != b and c not in apart]
    df = against_base(one_config(results, b), [(c.label, one_config(results, c)) for c in others],
                      pairs=[(b.config, c.config) for c in others], samples=samples_with_eff,
                      metrics=METRICS, all_loops=True)
    unpaired = df.attrs.get("unpaired", []) + [   # a ratio of two workloads' figures means nothing
        f"{c.label}: ran {ran.get(c) or '?'}, the base {ran.get(b) or '?'}" for c in apart]
    if len(df):
        df = df.assign(base_config=b.label, experiment=df["config"].map({c.label: c.experiment for c in others}))
    df.attrs["unpaired"], df.attrs["base"] = unpaired, b.label
    return df


def column_name(metric: str) -> str:
    """A metric's column in the text table: tps, cpu/o … (the seed's short names), READ_p99."""
    return SHORT.get(metric, metric.removesuffix("_us"))


def _column_order(metric: str) -> tuple:
    """tps, the p99s, then the per-operation figures and size, as the seed's run line."""
    order = list(METRICS)
    if metric in order:
        return (0 if metric == "ops_per_s" else 2, order.index(metric), metric)
    return (1, 0, metric)


def _figure(v: float) -> str:
    """A base figure: whole above 1,000 (46,089), else 3 significant digits; blank if none."""
    if pd.isna(v):
        return ""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def configs_table(df: pd.DataFrame) -> pd.DataFrame:
    """The text table's frame: one row per step, point and configuration (the base's
    first, its own figures; the others' ratios with intervals, :func:`.against_base.cell`),
    one column per metric, ``cnf`` last as in the seed's lines."""
    if not len(df):
        return pd.DataFrame()
    metrics = sorted(dict.fromkeys(df["metric"]), key=_column_order)
    rows = []
    for key, g in df.groupby(POINT_COLS, sort=False):
        point = dict(zip(POINT_COLS, key))
        rows.append({**point, **{column_name(m): _figure(v) for m, v in
                                 g.drop_duplicates("metric").set_index("metric")["base"].items()},
                     "cnf": f"{g['base_config'].iloc[0]} (base)"})
        for name, h in g.groupby("config", sort=False):
            rows.append({**point, **{column_name(r["metric"]): cell(r) for _, r in h.iterrows()}, "cnf": name})
    out = pd.DataFrame(rows).fillna("")
    out = out[[*POINT_COLS, *[column_name(m) for m in metrics if column_name(m) in out], "cnf"]]
    out["target_ops_per_s"] = out["target_ops_per_s"].map(lambda v: f"{v:.0f}" if v else "max")
    out = out.rename(columns={"threads": "thr", "target_ops_per_s": "rate"})
    return out if (out["point"] != "").any() else out.drop(columns="point")


def configs_text(results: dict, base: str | None = None) -> str:
    """``summary --kind configs``: the legend, then :func:`configs_table`."""
    df = configs_frame(results, base)
    notes = [f"not compared: {u}" for u in df.attrs.get("unpaired", [])]
    if not len(df):
        return "\n".join([f"(no point of another configuration matches one of {df.attrs['base']})", *notes])
    head = [f"configs: each configuration against the base, {df.attrs['base']} (its own figures on its "
            f"line); the others: the ratio of their mean to the base's [its 95% interval], "
            f"{NOT_SIGNIFICANT} not significant (the interval spans 1); tps higher is better, the others lower",
            f"step {ALL_LOOPS}: the runs' loops together (as compare); {LEGEND}",
            "tps ops/s · p99 µs · cpu/o µs · io/o, rkb/o, wkb/o KB · r/o reads · cs/o context switches · size GB"]
    return "\n".join([*head, configs_table(df).to_string(index=False), *notes])


def relative_grid(df: pd.DataFrame, metric: str = "ops_per_s") -> pd.DataFrame:
    """What a heatmap of relative ``metric`` draws: one row per configuration and point,
    of the runs' loops together (the one run loop where there is one): ``config
    experiment threads target_ops_per_s point step ratio ci_low ci_high significant cell``."""
    cols = ["config", "experiment", "threads", "target_ops_per_s", "point", "step", "ratio", "ci_low",
            "ci_high", "significant"]
    d = df[df["metric"] == metric] if len(df) else pd.DataFrame(columns=cols)
    if len(d):
        d = d[d["step"] == (ALL_LOOPS if (d["step"] == ALL_LOOPS).any() else d["step"].iloc[0])]
    return d[cols].assign(cell=[cell(r) for _, r in d.iterrows()])
