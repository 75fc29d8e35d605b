"""One row per test step: the step's own figures joined with its hardware aggregates.

Every one-line summary (eff.op, eff.sec, the run lines, the experiment's CPU tables)
is a few divisions over this frame, so the aggregation rules live here once:

- a *rate* of the hw table (``disk_reads``, ``disk_read_kb``, ``ctx_switches``,
  ``cpu_user + cpu_sys`` …, each per second in its 1-s sample) is the **mean over the
  step's samples** — the seed: "all of the rates are the average over the entire test
  step";
- a *CPU-seconds* figure (``client_cpu_s``, ``dbms_cpu_s``) is the **sum over the
  step's samples**;
- a *size* (``db_size_gb``, ``dbms_rss_gb``, ``dbms_vsz_gb``) is the **last sample of
  the step** — the seed: "size - database size in GB at test end", "rss - mysqld RSS
  size in GB at test end".

A figure the source lacks stays NaN: a sum is ``sum(min_count=1)``, never a made-up 0,
so a remote server with no visible process or an import without hw prints blank.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .. import schema
from ..measure import throughput
from .hwroles import CLIENT_AGGREGATES, legend, split_rows

ID_COLS = ["experiment", "config", "run_id", "step", "phase"]
PHASE_ORDER = {phase: i for i, phase in enumerate(schema.PHASES)}  # load, index, run

# hw aggregate columns of step_stats(), with the rule that makes each
_HW_MEANS = {                       # mean over the step's 1-s samples (per second)
    "reads_ps": "disk_reads",       # storage reads /s (iostat r/s)
    "read_kbps": "disk_read_kb",    # KB read /s (iostat rkB/s)
    "write_kbps": "disk_write_kb",  # KB written /s (iostat wkB/s)
    "cs_ps": "ctx_switches",        # context switches /s (vmstat cs)
}
_HW_SUMS = {                        # sum over the step's samples (CPU seconds)
    "csec": "client_cpu_s",         # benchmark clients
    "dsec": "dbms_cpu_s",           # DBMS server processes
}
_HW_MAX = {                         # busiest sample (1-s samples: CPU s per s = CPUs busy)
    "csec_max": "client_cpu_s",
    "dsec_max": "dbms_cpu_s",
    "rss_max_gb": "dbms_rss_gb",
}
_HW_LAST = {                        # value at the end of the step (last sample that has it)
    "db_gb": "db_size_gb",
    "rss_gb": "dbms_rss_gb",
    "vsz_gb": "dbms_vsz_gb",
}
HW_AGGREGATES = ["n_hw", *_HW_MEANS, "cpu_pct", *_HW_SUMS, *_HW_MAX, *_HW_LAST]


def step_sort_key(step: str, phase: str | None = None) -> tuple:
    """Seed order: l.pre, l.post, r.L1, r.L2 … r.L10 (numerically), then anything else."""
    phase = phase if isinstance(phase, str) else schema.phase_of(step)
    m = re.search(r"(\d+)$", str(step))
    return (PHASE_ORDER.get(phase, 3), int(m.group(1)) if m else 0, str(step))


def table(results: dict, name: str) -> pd.DataFrame:
    """A table of ``results``, empty (not missing) when absent."""
    from .. import schema
    df = results.get(name)
    if df is None:
        return schema.empty(name) if name in schema.TABLES else pd.DataFrame()
    return df


def controller_hw(results: dict, hw: pd.DataFrame) -> pd.DataFrame:
    """The hw rows of each run's controlling host (its meta's hostname; rows with no
    host: imports), which the step's lines describe. Other hosts' rows (the Dask
    workers' that ran drivers) are theirs: the experiment summary shows them per host."""
    if len(hw) == 0 or "host" not in hw or hw["host"].isna().all():
        return hw
    runs, given = table(results, "runs"), results.get("meta")
    metas = [*(runs["meta"] if "meta" in runs else []), *(given.values() if isinstance(given, dict) else [])]
    own = {m.get("run_id"): (m.get("host") or {}).get("hostname") for m in metas if isinstance(m, dict)}
    keep = [pd.isna(h) or own.get(r) in (None, h) for r, h in zip(hw["run_id"], hw["host"])]
    return hw[keep]


def hw_legend(results: dict) -> str | None:
    """Where the step lines' hardware figures come from, when not the local case."""
    hw = table(results, "hw")
    return legend(*split_rows(results, hw, controller_hw), table(results, "steps")) if len(hw) else None


def _keys(*frames: pd.DataFrame) -> list[str]:
    """The join keys all frames have: run_id, step, and experiment when everywhere."""
    keys = ["run_id", "step"]
    if all("experiment" in f.columns for f in frames):
        keys.insert(0, "experiment")
    return keys


def hw_aggregates(hw: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The per-step aggregates of the hw table (see the module docstring), by ``keys``."""
    if hw is None or len(hw) == 0:
        return pd.DataFrame(columns=[*keys, *HW_AGGREGATES])
    order = [k for k in (*keys, "second") if k in hw.columns]
    hw = hw.sort_values(order, kind="stable")
    used = {*_HW_MEANS.values(), *_HW_SUMS.values(), *_HW_MAX.values(), *_HW_LAST.values(),
            "cpu_user", "cpu_sys"}
    num = pd.DataFrame({c: pd.to_numeric(hw[c], errors="coerce").astype("float64")
                        if c in hw else np.nan for c in sorted(used)}, index=hw.index)
    # cpups = mean(cpu_user + cpu_sys): vmstat us + sy, % of all CPUs
    num["cpu"] = num["cpu_user"] + num["cpu_sys"]
    g = num.groupby([hw[k].astype("object") for k in keys], sort=False, dropna=False)
    out = {"n_hw": g.size()}
    for name, col in _HW_MEANS.items():
        out[name] = g[col].mean()
    out["cpu_pct"] = g["cpu"].mean()
    for name, col in _HW_SUMS.items():
        out[name] = g[col].sum(min_count=1)
    for name, col in _HW_MAX.items():
        out[name] = g[col].max()
    for name, col in _HW_LAST.items():
        out[name] = g[col].last()  # GroupBy.last skips NaN: the last sample that has it
    agg = pd.DataFrame(out)
    for c in agg.columns:
        agg[c] = agg[c].astype("float64")
    return agg.reset_index()


def _config_map(results: dict) -> dict:
    runs = table(results, "runs")
    if len(runs) and "run_id" in runs and "config" in runs:
        return {r: c for r, c in zip(runs["run_id"], runs["config"]) if isinstance(c, str)}
    return {}


def cnf_names(frame: pd.DataFrame) -> pd.Series:
    """The seed's ``cnf`` per row: the configuration's name, the run_id without one.

    When a configuration has several runs in the frame (thread counts, targets,
    repetitions of one matrix), its lines could not be told apart by the config
    alone, so they show the run_id (which starts with the config in benchlib's run
    naming; otherwise ``config:run_id``).
    """
    config = frame["config"].astype("object")
    run_id = frame["run_id"].astype("object")
    runs_per_cfg = pd.Series(run_id.values, index=config.values).groupby(level=0).nunique()
    out = []
    for c, r in zip(config, run_id):
        if not isinstance(c, str) or not c:
            out.append(str(r))
        elif runs_per_cfg.get(c, 1) > 1:
            out.append(str(r) if str(r).startswith(c) else f"{c}:{r}")
        else:
            out.append(c)
    return pd.Series(out, index=frame.index, dtype="object")


# where a caller that makes several summaries of the same tables keeps their step_stats
# (summaries.step_lines: four line formats and the attribution lines of one step)
STATS_KEY = "_step_stats"


def with_step_stats(results: dict) -> dict:
    """``results`` and, under :data:`STATS_KEY`, its step_stats, computed once for every
    summary made of it (each would compute the same frame again: the most of a step's
    lines' time)."""
    return {**results, STATS_KEY: step_stats(results)}


def step_stats(results: dict) -> pd.DataFrame:
    """One row per step of ``results`` (load_results' dict), in seed step order.

    Columns: ``experiment config run_id step phase cnf``, the step's ``secs ops
    errors rate`` (rate = ops / secs, operations per second), ``status threads
    processes target`` and the hw aggregates ``n_hw reads_ps read_kbps write_kbps
    cs_ps cpu_pct csec dsec csec_max dsec_max rss_max_gb db_gb rss_gb vsz_gb`` (units
    in the names: per second, KB, %, CPU seconds, GB).
    """
    if isinstance(results.get(STATS_KEY), pd.DataFrame):
        return results[STATS_KEY].copy()
    steps = table(results, "steps").copy()
    if len(steps) == 0:
        return pd.DataFrame(columns=[*ID_COLS, "cnf", "secs", "ops", "errors", "rate",
                                     *HW_AGGREGATES, "attribution", "dsec_all", "other_commits"])
    if "experiment" not in steps:
        steps["experiment"] = pd.NA
    if "config" not in steps:
        steps["config"] = steps["run_id"].map(_config_map(results))
    phase = steps["phase"] if "phase" in steps else pd.Series(pd.NA, index=steps.index)
    steps["phase"] = [p if isinstance(p, str) and p else schema.phase_of(s)
                      for p, s in zip(phase, steps["step"])]
    hw, client_hw = split_rows(results, table(results, "hw"), controller_hw)
    keys = _keys(steps, hw) if len(hw) else ["run_id", "step"]
    agg = _with_clients(hw_aggregates(hw, keys), hw_aggregates(client_hw, keys), keys)
    for k in keys:  # join keys as plain objects on both sides (string vs object dtypes)
        steps[k] = steps[k].astype("object")
        agg[k] = agg[k].astype("object")
    df = steps.merge(agg, on=keys, how="left")
    secs = pd.to_numeric(df["secs"], errors="coerce").astype("float64")
    ops = pd.to_numeric(df["ops"], errors="coerce").astype("float64")
    given = pd.to_numeric(df.get("ops_per_s"), errors="coerce").astype("float64")
    # rate = ops / secs: the step's average operation rate (seed: "ips - inserts/second")
    rate = throughput(ops, secs).fillna(given)
    out = df[ID_COLS].copy()
    out["cnf"] = cnf_names(df)
    out["secs"] = secs
    out["ops"] = ops.fillna(rate * secs)
    out["errors"] = pd.to_numeric(df.get("errors"), errors="coerce").astype("float64")
    out["rate"] = rate
    for c in ("status", "threads", "processes", "target_ops_per_s", "loop"):
        out[c] = df.get(c, pd.NA)
    # whose work dsec counts, the server-wide figure beside it, the other databases' commits
    out["attribution"] = df.get("dbms_attribution", pd.NA)
    out["dsec_all"] = pd.to_numeric(df.get("dbms_server_cpu_s", np.nan), errors="coerce")
    out["cpu_from"] = df.get("dbms_cpu_from", pd.NA)
    out["other_commits"] = pd.to_numeric(df.get("other_db_commits", np.nan), errors="coerce")
    for c in HW_AGGREGATES:
        out[c] = pd.to_numeric(df[c], errors="coerce").astype("float64") if c in df else np.nan
    _prefer_step_figures(out, df)
    order = sorted(range(len(out)), key=lambda i: step_sort_key(out["step"].iat[i],
                                                                 out["phase"].iat[i]))
    return out.iloc[order].reset_index(drop=True)


def _with_clients(agg: pd.DataFrame, clients: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The DBMS rows' aggregates with the client CPU of the client hosts' rows, and
    their database size (read over SQL) where the DBMS rows have none."""
    if not len(clients):
        return agg
    c = clients[[*keys, *CLIENT_AGGREGATES, "db_gb"]].rename(columns={"db_gb": "client_db_gb"})
    for k in keys:
        agg[k], c[k] = agg[k].astype("object"), c[k].astype("object")
    out = agg.drop(columns=list(CLIENT_AGGREGATES)).merge(c, on=keys, how="outer")
    out["db_gb"] = out["db_gb"].fillna(out.pop("client_db_gb"))
    return out


# figures a step measures itself (steps table) over the hw table's aggregates: the
# clients' getrusage is exact for any step, the 1-s samples miss what a step shorter
# than a tick (or a process that lived between two ticks) used
_STEP_FIGURES = {"csec": "client_cpu_s", "dsec": "dbms_cpu_s"}
_STEP_FALLBACKS = {"rss_gb": "dbms_rss_gb", "vsz_gb": "dbms_vsz_gb"}


def _prefer_step_figures(out: pd.DataFrame, df: pd.DataFrame) -> None:
    for agg, col in _STEP_FIGURES.items():
        if col in df:
            own = pd.to_numeric(df[col], errors="coerce").astype("float64")
            out[agg] = own.where(own.notna(), out[agg])
    for agg, col in _STEP_FALLBACKS.items():
        if col in df:
            own = pd.to_numeric(df[col], errors="coerce").astype("float64")
            out[agg] = out[agg].where(out[agg].notna(), own)


def positive(s: pd.Series) -> pd.Series:
    """``s`` where > 0, else NaN: a divisor that makes a per-op figure blank, not inf."""
    s = pd.to_numeric(s, errors="coerce").astype("float64")
    return s.where(s > 0)


def select(results: dict, run_id: str | None = None, step: str | None = None) -> dict:
    """``results`` with every table cut to one run and/or one step."""
    out = {}
    for name, df in results.items():
        if not isinstance(df, pd.DataFrame):
            out[name] = df
            continue
        mask = pd.Series(True, index=df.index)
        if run_id is not None and "run_id" in df:
            mask &= df["run_id"].astype("object") == run_id
        if step is not None and "step" in df:
            mask &= df["step"].astype("object") == step
        out[name] = df[mask].reset_index(drop=True)
    return out
