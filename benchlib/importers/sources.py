"""Where an import has the same op's per-second rows from several sources (YCSB:
raw measurements, timeseries rows, status lines' HDR blocks, HDR interval logs, the
status lines' averages), each op's rows come from the finest source that has them."""
from __future__ import annotations

import pandas as pd

from ..schema import INTENDED_PREFIX


def _merge_intended(df: pd.DataFrame) -> pd.DataFrame:
    if df is None or not len(df):
        return df
    it = df["op"].str.startswith(INTENDED_PREFIX)
    if not it.any():
        return df
    i = df[it].assign(op=lambda d: d["op"].str[len(INTENDED_PREFIX):])
    i = i[["second", "op", "mean_us", "p99_us", "max_us"]].rename(
        columns={"mean_us": "intended_mean_us", "p99_us": "intended_p99_us", "max_us": "intended_max_us"})
    return df[~it].merge(i, on=["second", "op"], how="outer")


def op_source(rank: int, rows: pd.DataFrame | None) -> tuple:
    ops = set(rows["op"].unique()) if rows is not None and len(rows) else set()
    return rank, ops, lambda keep: rows if keep is None or keep >= ops else rows[rows["op"].isin(keep).to_numpy()]


def pick_sources(sources: list[tuple]) -> tuple[list[pd.DataFrame], set[str]]:
    """The rows of each op from the source of the lowest rank that has it (with its
    ``Intended-OP`` rows merged in), a frame per source. ``sources`` are ``(rank, ops,
    rows)``: ``rows(ops)`` makes the rows of those ops, ``rows(None)`` all. A source
    none of whose ops is kept adds nothing, not even its columns. Also returns the
    ops of the rows picked."""
    def merged(op):
        return op.removeprefix(INTENDED_PREFIX)

    best: dict[str, int] = {}
    for rank, ops, _ in sources:
        for op in map(merged, ops):
            best[op] = min(best.get(op, rank), rank)
    picked = []
    for rank, ops, rows in sources:
        if not ops:
            continue
        mine = {op for op in map(merged, ops) if best[op] == rank}
        if not mine:
            continue
        if any(op.startswith(INTENDED_PREFIX) for op in ops):   # merge first: rows change op
            df = _merge_intended(rows(None))
            picked.append(df[df["op"].isin(mine).to_numpy()])
        else:
            picked.append(rows(mine))
    return picked, set(best)
