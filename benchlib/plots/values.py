"""From the tidy tables to plot points: the values and the run parameters plots use."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .. import measure
from ..points import workload_point
from ..summaries import eff_op, eff_sec
from ..summaries.formatting import to_float
from ..summaries.loops_latency import loops_percentile
from ..summaries.metainfo import run_metas
from ..summaries.response import op_latency
from ..summaries.stepstats import step_stats

DPI = 100
UNTHROTTLED = "unthrottled"
KEYS = ["experiment", "run_id"]


@dataclass(frozen=True)
class Value:
    label: str            # axis and colour-bar label, with the unit
    source: str           # steps | latency | eff.op | eff.sec
    column: str
    cmap: str = "rocket_r"  # dark = high; throughput uses viridis (bright = high)


VALUES = {
    "ops_per_s": Value("throughput (ops/s)", "steps", "rate", "viridis"),
    **{c: Value(f"{n} latency (µs)", "latency", c) for c, n in [
        ("mean_us", "mean"), ("p50_us", "p50"), ("p90_us", "p90"), ("p95_us", "p95"),
        ("p99_us", "p99"), ("p999_us", "p99.9"), ("max_us", "max")]},
    "cpu_per_op": Value("host CPU per operation (µs)", "eff.op", "cpupi"),
    "dbms_cpu_us_per_op": Value("DBMS CPU per operation (µs)", "eff.op", "dsecpq"),
    "client_cpu_us_per_op": Value("client CPU per operation (µs)", "eff.op", "csecpq"),
    "read_kb_per_op": Value("KB read per operation", "eff.op", "rkbpi"),
    "write_kb_per_op": Value("KB written per operation", "eff.op", "wkbpi"),
    "cs_per_op": Value("context switches per operation", "eff.op", "cspi"),
    "cpu_pct": Value("CPU utilization (% of all CPUs)", "eff.sec", "cpups", "viridis"),
    "dbms_rss_gb": Value("DBMS RSS at step end (GB)", "eff.sec", "rss"),
}
PARAM_LABELS = {
    "threads": "client threads", "processes": "client processes",
    "load_processes": "loader processes", "target_ops_per_s": "target (ops/s)",
    "load_target_ops_per_s": "load target (ops/s)", "batch_size": "batch size (rows)",
    "repetition": "repetition", "config": "configuration", "experiment": "experiment",
}


def value_spec(value: str) -> Value:
    """The :class:`Value` of a name of :data:`VALUES` or of an eff.op/eff.sec column."""
    if value in VALUES:
        return VALUES[value]
    for kind, cols in (("eff.op", _EFF_OP_COLS), ("eff.sec", _EFF_SEC_COLS)):
        if value in cols:
            return Value(value, kind, value)
    raise ValueError(f"unknown value {value!r} (known: {', '.join(VALUES)}, or an eff.op/"
                     f"eff.sec column: {', '.join(_EFF_OP_COLS + _EFF_SEC_COLS)})")


_EFF_OP_COLS = ["rpi", "rkbpi", "wkbpi", "cspi", "cpupi", "csecpq", "dsecpq", "csec", "dsec", "dbgb"]
_EFF_SEC_COLS = ["rps", "rmbps", "wmbps", "csps", "cpups", "cutil", "dutil", "vsz", "rss"]


# ---------------------------------------------------------------- tables → points

def run_parameters(results: dict) -> pd.DataFrame:
    """One row per run: ``experiment run_id`` and every parameter (see the module doc)."""
    rows = []
    for m in run_metas(results):
        row = {k: v for k, v in m.items() if v is None or isinstance(v, (str, int, float, bool))}
        if isinstance(m.get("dbms"), dict):
            row["dbms"] = m["dbms"].get("name")
        if isinstance(m.get("host"), dict):
            row["cores"] = m["host"].get("cores")
        params = m.get("parameters") if isinstance(m.get("parameters"), dict) else {}
        short: dict[str, list] = {}
        for sect in ("load", "index", "run"):
            for k, v in (params.get(sect) or {}).items():
                if isinstance(v, (str, int, float, bool)):
                    row[f"{sect}.{k}"] = v
                    short.setdefault(k, []).append(v)
        # a workload property wins over a section's short name (ybio's batch_size is
        # its own; the load's stays load.batch_size)
        props = {**(params.get("properties") or {}), **(m.get("workload_properties") or {})}
        for k, v in props.items():
            v = to_float(v, v)   # a number if it is one, else as it was
            row.setdefault(k, v)
            if k.endswith("proportion") and isinstance(v, float):
                row.setdefault(f"pct_{k.removesuffix('proportion')}", v * 100)
        for k, vs in short.items():
            if len(vs) == 1:
                row.setdefault(k, vs[0])
        row["point"] = workload_point(m)   # its values of the matrix's own axes (points.py)
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in KEYS:
        if k not in df:
            df[k] = None
    return _from_steps(df.drop_duplicates(KEYS).reset_index(drop=True), results.get("steps"))


def _from_steps(df: pd.DataFrame, steps: pd.DataFrame | None) -> pd.DataFrame:
    """Threads and target ops/s a run's meta does not give (an imported run: the tool's
    command line said them) from its run loops' steps."""
    if steps is None or not len(steps) or not len(df) or "phase" not in steps:
        return df
    run = steps[steps["phase"].astype("object") == "run"]
    keys = [k for k in KEYS if k in run]
    for col in ("threads", "target_ops_per_s"):
        if col not in run:
            continue
        found = pd.to_numeric(run[col], errors="coerce").groupby([run[k].astype("object") for k in keys]).max()
        looked_up = pd.Series([found.get(tuple(r) if len(keys) > 1 else r[0])
                               for r in df[keys].itertuples(index=False)], index=df.index, dtype="float64")
        df[col] = df[col].where(df[col].notna(), looked_up) if col in df else looked_up
    return df


def _select_steps(df: pd.DataFrame, step) -> pd.DataFrame:
    """Rows of the selected steps: ``step`` None = the run loops (all steps when none)."""
    if len(df) == 0:
        return df
    if step is None:
        runs = df[df["phase"].astype("object") == "run"]
        return runs if len(runs) else df
    wanted = {step} if isinstance(step, str) else set(step)
    return df[df["step"].astype("object").isin(wanted)]


def _latency_points(results: dict, column: str, step, keys: list[str]) -> pd.DataFrame:
    """Per run (and op): the latency ``column`` of its selected steps by the one rule
    (:mod:`..summaries.loops_latency`: the loops merged); a paced step's from the intended
    start (what a client of the schedule waited), as the headline and ``compare`` give it."""
    lat = _paced_from_intended(op_latency(results), op_latency(results, intended=True))
    if len(lat) == 0:
        return pd.DataFrame(columns=[*keys, "op", "value"])
    if "phase" not in lat:
        lat = lat.assign(phase=["run" if str(s).startswith("r.") else "load" for s in lat["step"]])
    lat = _select_steps(lat, step)
    if "experiment" not in lat:
        lat = lat.assign(experiment=None)
    rows = []
    for key, g in lat.groupby([lat[k].astype("object") for k in (*keys, "op")],
                              sort=False, dropna=False):
        v, _ = loops_percentile(g, column)   # the one rule: the loops merged (summaries.loops_latency)
        rows.append({**dict(zip((*keys, "op"), key)), "value": v})
    return pd.DataFrame(rows, columns=[*keys, "op", "value"])


def _paced_from_intended(lat: pd.DataFrame, intended: pd.DataFrame) -> pd.DataFrame:
    """``lat`` with the rows of each (run, step, op) that has an intended-start row (a
    paced step) replaced by that row."""
    if not len(intended) or not len(lat):
        return lat
    k = [c for c in ("experiment", "run_id", "step", "op") if c in lat and c in intended]
    paced = set(intended[k].astype("object").itertuples(index=False, name=None))
    served = [key not in paced for key in lat[k].astype("object").itertuples(index=False, name=None)]
    return pd.concat([lat[served], intended], ignore_index=True)


def points(results: dict, value: str = "ops_per_s", *, step=None,
           per_step: bool = False) -> pd.DataFrame:
    """One row per run (and operation, for latency values; and step with ``per_step``)
    with ``value`` and the run's parameters. ``step``: None = the run loops, or a step
    name (``l.pre``) or a list of them."""
    spec = value_spec(value)
    keys = [*KEYS, "step"] if per_step else list(KEYS)
    if spec.source == "latency":
        vals = _latency_points(results, spec.column, step, keys)
    else:
        frame = step_stats(results) if spec.source == "steps" else \
            (eff_op if spec.source == "eff.op" else eff_sec)(results)
        frame = _select_steps(frame, step)
        by = [frame[k].astype("object") for k in keys]
        if spec.source == "steps":
            st = frame.assign(secs=pd.to_numeric(frame["secs"], errors="coerce"),
                              ops=pd.to_numeric(frame["ops"], errors="coerce"))
            g = st.groupby(by, sort=False, dropna=False)
            tot = g[["ops", "secs"]].sum(min_count=1)
            v = measure.throughput(tot["ops"], tot["secs"]).fillna(g["rate"].mean())
        else:
            col = pd.to_numeric(frame[spec.column], errors="coerce")
            v = col.groupby(by, sort=False, dropna=False).mean()
        vals = v.rename("value").reset_index()
        vals.columns = [*keys, "value"]
    params = run_parameters(results)
    for k in KEYS:
        vals[k] = vals[k].astype("object")
        params[k] = params[k].astype("object")
    out = vals.merge(params.drop(columns=[c for c in ("step",) if c in params]), on=KEYS,
                     how="left")
    if value == "cpu_per_op":  # cpupi × cores / 100 = host CPU µs per operation
        cores = pd.to_numeric(out.get("cores"), errors="coerce")
        out["value"] = pd.to_numeric(out["value"], errors="coerce") * cores / 100
    out["value"] = pd.to_numeric(out["value"], errors="coerce").astype("float64")
    return out


# ---------------------------------------------------------------- axes and units

NOT_AXES = {"experiment", "run_id", "path", "status", "source", "started", "ended", "workload", "point",
            "target", "dbms", "dbms_version", "format_version", "benchlib_version", "config"}
USUAL_AXES = ("threads", "target_ops_per_s", "batch_size", "pct_update", "processes")


def varying_parameters(results: dict) -> list[str]:
    """Run parameters that vary between the runs (heatmap axes), the usual ones first."""
    params = run_parameters(results)
    varying = [c for c in params.columns if c not in NOT_AXES and not c.startswith("_")
               and params[c].astype("object").map(str).nunique() > 1]
    usual = [c for c in USUAL_AXES if c in varying]
    return usual + [c for c in varying if c not in usual]


def heat_axes(results: dict, x: str | None = None, y: str | None = None) -> tuple[str, str]:
    """A heatmap's axes: those given, else the parameters the matrix varies (ybio's batch
    size × pct_update; threads × target rate where they vary), else threads × target."""
    varying = varying_parameters(results) if x is None or y is None else []
    x = x or next(iter(varying), "threads")
    y = y or next((v for v in varying if v != x), "target_ops_per_s" if x != "target_ops_per_s" else "threads")
    return x, y


def work_unit(results: dict, step=None) -> str:
    """What the throughput of the selected steps (None: the run loops) counts: "rows"
    where their calls are batches of units (ybio's READ-BATCH of batch_size rows: steps
    count the rows), else "ops"."""
    from ..schema import is_batch
    lat = results.get("latency")
    if lat is None or not len(lat):
        return "ops"
    names = lat["step"].astype("object").astype(str)
    mine = names.str.startswith("r.") if step is None else names.isin({step} if isinstance(step, str) else set(step))
    return "rows" if any(is_batch(str(o)) for o in lat.loc[mine.to_numpy(), "op"].dropna().unique()) else "ops"


def label_for(value: str, results: dict, step=None) -> str:
    """``value``'s label with its unit as the headline gives it (rows/s for a batched
    workload's throughput)."""
    label = value_spec(value).label
    return label.replace("(ops/s)", f"({work_unit(results, step)}/s)") if value == "ops_per_s" else label
