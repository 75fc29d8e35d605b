"""The tidy tables in the middle of benchlib: their columns, units and dtypes.

Everything that produces results (our driver, an importer of another tool's output)
writes these tables; everything that consumes results (summaries, plots, notebooks)
reads only these. A column a source cannot give stays empty (NA) — never a made-up 0.

Conventions
-----------
- Latencies are microseconds (``*_us``), as YCSB reports them.
- ``second`` is the whole second since the step started (0-based): row ``second=3``
  covers [3 s, 4 s) of the step.
- Operation names follow YCSB (``READ``, ``UPDATE``, ``INSERT``, ``SCAN``,
  ``READ-MODIFY-WRITE``); latency measured from the intended start time of a paced
  operation (coordinated-omission corrected) is the operation ``Intended-<OP>``, as
  YCSB names it with ``measurement.interval=both``.
- Steps are named as in the seed: ``l.pre`` (load), ``l.post`` (index), ``r.L1``,
  ``r.L2`` … (run loops).
"""
from __future__ import annotations

import pandas as pd

# Format history of run folders (meta.json "format_version"):
# 1 - first format: meta.json + steps/latency/intervals/hw Parquet + histograms + ycsb.txt
FORMAT_VERSION = 1

INTENDED_PREFIX = "Intended-"   # latency from the intended start (paced runs)
BATCH_SUFFIX = "-BATCH"         # a batched op (INSERT-BATCH); its records count under INSERT
TOTAL_OP = "TOTAL"              # all operations of a step, as a tool prints them

STEPS = {
    "run_id": "string",
    "step": "string",          # l.pre | l.post | r.L1 ...
    "phase": "string",         # load | index | run
    "loop": "Int64",           # 1..n for run loops, NA otherwise
    "started": "datetime64[ns, UTC]",
    "ended": "datetime64[ns, UTC]",
    "secs": "float64",
    "ops": "Int64",
    "errors": "Int64",
    "ops_per_s": "float64",
    "threads": "Int64",        # client threads in all processes
    "processes": "Int64",
    "target_ops_per_s": "float64",  # NA when unthrottled
    "status": "string",        # ok | failed | interrupted
}

LATENCY = {
    "run_id": "string",
    "step": "string",
    "op": "string",
    "count": "Int64",
    "errors": "Int64",
    "mean_us": "float64",
    "min_us": "float64",
    "p50_us": "float64",
    "p90_us": "float64",
    "p95_us": "float64",
    "p99_us": "float64",
    "p999_us": "float64",
    "max_us": "float64",
    "hdr": "string",           # base64 compressed HdrHistogram (empty for imports without one)
}

INTERVALS = {
    "run_id": "string",
    "step": "string",
    "second": "Int64",
    "op": "string",
    "ops": "Int64",
    "errors": "Int64",
    "mean_us": "float64",
    "p99_us": "float64",
    "max_us": "float64",
    "intended_mean_us": "float64",
    "intended_p99_us": "float64",
    "intended_max_us": "float64",
}

HW = {
    "run_id": "string",
    "step": "string",
    "second": "Int64",
    "ts": "datetime64[ns, UTC]",
    "cpu_user": "float64",      # % of all CPUs, as vmstat us
    "cpu_sys": "float64",       # % as vmstat sy
    "cpu_iowait": "float64",    # % as vmstat wa
    "cpu_idle": "float64",      # % as vmstat id
    "ctx_switches": "float64",  # context switches per second (vmstat cs)
    "disk_reads": "float64",    # reads per second (iostat r/s, all disks)
    "disk_writes": "float64",   # writes per second (iostat w/s)
    "disk_read_kb": "float64",  # KB read per second (iostat rkB/s)
    "disk_write_kb": "float64", # KB written per second (iostat wkB/s)
    "dbms_cpu_s": "float64",    # CPU seconds the DBMS server used in this sample
    "dbms_rss_gb": "float64",   # resident set of the DBMS server (all its processes), GB
    "dbms_vsz_gb": "float64",   # virtual size of the DBMS server, GB
    "client_cpu_s": "float64",  # CPU seconds the benchmark clients used in this sample
    "db_size_gb": "float64",    # database size, GB
}

TABLES = {"steps": STEPS, "latency": LATENCY, "intervals": INTERVALS, "hw": HW}

# tables a workload writes besides those (Workload.extra_tables); read on request only
RETURNS = {                    # how each operation ended, per step (LinkBench's retries …)
    "run_id": "string",
    "step": "string",
    "op": "string",
    "status": "string",        # OK | NOT_FOUND | ERROR | RETRY | EMPTY
    "count": "Int64",
}
EXTRA_TABLES = {"returns": RETURNS}


def empty(table: str) -> pd.DataFrame:
    """An empty DataFrame with the table's columns and dtypes."""
    cols = TABLES[table] if table in TABLES else EXTRA_TABLES[table]
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in cols.items()})


def conform(table: str, df: pd.DataFrame | None) -> pd.DataFrame:
    """Return ``df`` with exactly the table's columns (missing ones as NA) and dtypes.

    Extra columns are kept after the declared ones, so an importer may carry a figure
    of its source that has no place in the schema yet.
    """
    cols = TABLES[table] if table in TABLES else EXTRA_TABLES[table]
    if df is None or len(df) == 0:
        out = empty(table)
        if df is not None:
            for c in df.columns:
                if c not in out:
                    out[c] = pd.Series(dtype=df[c].dtype)
        return out
    # column by column into a new frame: no copy of a column that has its dtype
    # already, and no consolidation of the float columns into one block (a copy of
    # every figure of a million-row table)
    out = {}
    for c, t in cols.items():
        if c not in df:
            # float columns take NaN: pandas 3 refuses pd.NA in a float64 Series
            col = pd.Series(float("nan") if t == "float64" else pd.NA, index=df.index, dtype=t)
        elif t.startswith("datetime64"):
            col = pd.to_datetime(df[c], utc=True)
        else:
            col = df[c].astype(t)
        out[c] = col.array
    for c in df.columns:
        if c not in cols:
            out[c] = df[c].array
    return pd.DataFrame(out, copy=False)


def conform_hw(df: pd.DataFrame | None) -> pd.DataFrame:
    """``conform("hw", df)``, with the missing float columns added as NaN
    first: conform's ``pd.Series(pd.NA, dtype="float64")`` raises on pandas 3."""
    if df is not None and len(df):
        df = df.copy()
        for c, t in HW.items():
            if c not in df and t == "float64":
                df[c] = float("nan")
    return conform("hw", df)
