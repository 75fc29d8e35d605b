"""ybio's own tables (``YbioWorkload.summary_tables``: ``summaries.own_tables("ybio")``),
from its ``benchruns`` table (one row per run loop, all its sessions): the rows with
numeric figures, and the seed's query over them.
"""
from __future__ import annotations

import pandas as pd


def benchruns(results: dict) -> pd.DataFrame:
    """The benchruns rows of ``results`` with numeric figures (empty when none)."""
    df = results.get("benchruns")
    if df is None or len(df) == 0:
        return pd.DataFrame(columns=["config", "batch_size", "pct_update", "riops"])
    df = df.copy()
    for c in ("batch_size", "pct_update", "riops", "sessions"):
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    if "config" not in df:
        df["config"] = "run"
    return df



def benchruns_table(results: dict) -> pd.DataFrame:
    """The seed's query over benchruns: duration, riops, pct_scratch, coverage first."""
    df = benchruns(results)
    if not len(df):
        return df
    first = ["config", "batch_size", "pct_update", "duration_s", "riops", "coverage", "num_batches",
             "num_rows", "num_updated", "sessions", "index_only", "prepared", "errors"]
    cols = [c for c in first if c in df]
    out = df.sort_values([c for c in ("config", "pct_update", "batch_size") if c in df])[cols]
    out["riops"] = out["riops"].round()
    return out.reset_index(drop=True)
