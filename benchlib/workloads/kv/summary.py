"""kv's own tables (``KvWorkload.summary_tables``: ``summaries.own_tables("kv")``): the
key-value mix's table, op/s and µs/op side by side, per operation and system.

The seed reads a single client's op/s as latency and writes both: "31119 op/s =
32.13us". :func:`kv_table` gives, for every run loop of every run, one row per
operation and one ``ALL`` row:

- ``ops_per_s``: the loop's operations per second (``ALL``), or that operation's
  share of them (count / seconds);
- ``us_per_op``: 1e6 × clients / op/s, the time each client spends per operation —
  with one client the seed's 1e6 / op/s (``ALL`` only: an operation's share of a mix
  has no such figure; its ``mean_us`` is measured);
- ``share_pct``: the operation's share of the loop's operations (the measured mix);
- ``mean_us``, ``p99_us``: measured per operation;
- ``hit_pct``: of an operation that looks a key up (READ, UPDATE, DELETE), the share
  that found it; a miss (EMPTY: a key a remove took away) is an outcome, not an error
  (``errors`` counts what failed).

:func:`kv_compare` puts systems (``config``) side by side per operation, and
:func:`kv_lines` prints the seed's lines.
"""
from __future__ import annotations

import pandas as pd

from ...schema import INTENDED_PREFIX

ALL = "ALL"
OP_ORDER = ["READ", "INSERT", "DELETE", "UPDATE", "SCAN", ALL]
LOOKUPS = ("READ", "UPDATE", "DELETE")      # ops that find their key or miss it


def kv_table(results: dict) -> pd.DataFrame:
    """One row per (config, run, run loop, op); see the module doc."""
    steps = results["steps"]
    steps = steps[steps["phase"] == "run"]
    lat = results["latency"]
    lat = lat[~lat["op"].astype(str).str.startswith(INTENDED_PREFIX)]
    hits = _hits(results.get("returns"))
    rows = []
    for _, s in steps.iterrows():
        mine = lat[(lat["run_id"] == s["run_id"]) & (lat["step"] == s["step"])]
        secs, total = float(s["secs"] or 0), int(mine["count"].sum())
        threads = int(s["threads"]) if pd.notna(s["threads"]) else 1
        base = {"config": s.get("config"), "run_id": s["run_id"], "step": s["step"],
                "threads": threads}
        for _, m in mine.iterrows():
            n = int(m["count"])
            rows.append({**base, "op": m["op"], "count": n, "errors": int(m["errors"] or 0),
                         "share_pct": 100.0 * n / total if total else None,
                         "ops_per_s": n / secs if secs else None, "us_per_op": None,
                         "mean_us": m["mean_us"], "p99_us": m["p99_us"],
                         "hit_pct": hits.get((s["run_id"], s["step"], m["op"]))})
        ops_s = total / secs if secs else None
        rows.append({**base, "op": ALL, "count": total, "errors": int(mine["errors"].sum()),
                     "share_pct": 100.0 if total else None, "ops_per_s": ops_s,
                     "us_per_op": 1e6 * threads / ops_s if ops_s else None,
                     "mean_us": _weighted_mean(mine), "p99_us": None})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["op"] = pd.Categorical(df["op"], [o for o in OP_ORDER] +
                              sorted(set(df["op"]) - set(OP_ORDER)), ordered=True)
    return df.sort_values(["config", "run_id", "step", "op"]).reset_index(drop=True)


def _hits(returns: pd.DataFrame | None) -> dict:
    """{(run_id, step, op): % of OK among OK + EMPTY} for ops that had a miss or may have."""
    if returns is None or returns.empty:
        return {}
    r = returns[returns["status"].isin(["OK", "EMPTY"])]
    wide = r.pivot_table(index=["run_id", "step", "op"], columns="status", values="count",
                         aggfunc="sum", fill_value=0, observed=True)
    ok = wide.get("OK", 0)
    empty = wide["EMPTY"] if "EMPTY" in wide else ok * 0
    pct = 100.0 * ok / (ok + empty)
    lookups = [i for i in pct.index if i[2] in LOOKUPS]
    return {i: float(pct[i]) for i in lookups}


def _weighted_mean(lat: pd.DataFrame):
    n = lat["count"].sum()
    return float((lat["mean_us"] * lat["count"]).sum() / n) if n else None


def kv_compare(results: dict) -> pd.DataFrame:
    """Systems side by side: per (step, threads, op) the op/s and µs/op of each config
    (µs/op of an op row is its measured mean, as the seed's single-op runs have it)."""
    t = kv_table(results)
    if t.empty:
        return t
    t = t.assign(us=t["us_per_op"].where(t["op"] == ALL, t["mean_us"]))
    wide = t.pivot_table(index=["step", "threads", "op"], columns="config",
                         values=["ops_per_s", "us"], aggfunc="mean", observed=True)
    wide.columns = [f"{cfg} {'op/s' if v == 'ops_per_s' else 'us/op'}" for v, cfg in wide.columns]
    order = sorted(wide.columns, key=lambda c: (c.rsplit(" ", 1)[0], c.endswith("us/op")))
    return wide[order]


def kv_lines(results: dict) -> str:
    """The seed's lines: ``<config> <step> t<threads> ALL: 31119 op/s = 32.13us``, then
    per operation its measured mean and p99 and its share of the loop's operations."""
    t = kv_table(results)
    out = []
    for _, r in t.iterrows():
        head = f"{r['config']} {r['step']} t{r['threads']} {r['op']}:"
        if r["op"] == ALL and pd.notna(r["ops_per_s"]):
            out.append(f"{head} {r['ops_per_s']:.0f} op/s = {r['us_per_op']:.2f}us")
        elif r["op"] != ALL:
            hit = f", {r['hit_pct']:.1f}% hits" if pd.notna(r.get("hit_pct")) else ""
            out.append(f"{head} mean {r['mean_us']:.2f}us, p99 {r['p99_us']:.0f}us, "
                       f"{r['share_pct']:.1f}% of ops{hit}")
    return "\n".join(out)
