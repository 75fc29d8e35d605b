"""Response time per step: p99, max and mean of each operation in milliseconds (``rt``).

The seed's ``l.rt`` names a triple per operation from a short code — ``n9 nx nm`` are
the p99, max and mean of Node inserts, ``l9 lx lm`` Link inserts, ``c9 cx cm`` Count
inserts — and its transaction line names the p99 of the main transactions ``un gn ul
gl``. Operations get such codes here (:data:`SHORT`): LinkBench's with the seed's
letters, YCSB's ``rd up in sc rmw de``, a batched op ``<code>b`` (``INSERT-BATCH`` →
``inb``: the latency of the whole multi-row insert, which is what the seed's load
rt shows). An operation without a code keeps its name: ``OP.p99 OP.max OP.mean``.

Columns are the union of the operations over all rows, in one fixed order
(LinkBench's, then YCSB's, then by name), so the lines of one workload line up —
in one summary and between summaries — and an operation a run did not do is blank.

Latencies are the ``latency`` table's (merged HdrHistograms), service time by
default; ``intended=True`` takes the ``Intended-<OP>`` rows instead (latency from the
intended start of a paced operation, coordinated-omission corrected).
"""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..schema import BATCH_SUFFIX, INTENDED_PREFIX, is_batch, is_failed, unit_op
from .stepstats import ID_COLS, step_stats, table

US_PER_MS = 1000.0

SHORT = {
    # LinkBench load (the seed's l.rt)
    "LOAD_NODE_BULK": "n", "LOAD_LINKS_BULK": "l", "LOAD_COUNTS_BULK": "c",
    # LinkBench requests (the seed's transaction line: un gn ul gl)
    "UPDATE_NODE": "un", "GET_NODE": "gn", "UPDATE_LINK": "ul", "GET_LINKS_LIST": "gl",
    "ADD_NODE": "an", "DELETE_NODE": "dn", "ADD_LINK": "al", "DELETE_LINK": "dl",
    "COUNT_LINK": "cl", "MULTIGET_LINK": "ml",
    # YCSB
    "READ": "rd", "UPDATE": "up", "INSERT": "in", "SCAN": "sc", "READ-MODIFY-WRITE": "rmw",
    "DELETE": "de",
}
# the seed's order for LinkBench; its four main transactions
LINKBENCH_ORDER = ["LOAD_NODE_BULK", "LOAD_LINKS_BULK", "LOAD_COUNTS_BULK",
                   "UPDATE_NODE", "GET_NODE", "UPDATE_LINK", "GET_LINKS_LIST",
                   "ADD_NODE", "DELETE_NODE", "ADD_LINK", "DELETE_LINK", "COUNT_LINK",
                   "MULTIGET_LINK"]
LINKBENCH_MAIN = ["UPDATE_NODE", "GET_NODE", "UPDATE_LINK", "GET_LINKS_LIST"]
YCSB_ORDER = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE"]
CANONICAL = LINKBENCH_ORDER + YCSB_ORDER
MAIN_OPS_MAX = 5   # all of a five-op mix (kv, YCSB): the same columns whatever the dice gave


def short_name(op: str) -> str | None:
    """The short code of an operation (``GET_NODE`` → ``gn``), None when it has none."""
    if op in SHORT:
        return SHORT[op]
    if op.endswith(BATCH_SUFFIX) and op[:-len(BATCH_SUFFIX)] in SHORT:
        return SHORT[op[:-len(BATCH_SUFFIX)]] + "b"
    return None


def triple(op: str) -> tuple[str, str, str]:
    """Column names of an operation's p99, max and mean: ``n9 nx nm`` or ``OP.p99 …``."""
    s = short_name(op)
    if s:
        return f"{s}9", f"{s}x", f"{s}m"
    return f"{op}.p99", f"{op}.max", f"{op}.mean"


def p99_name(op: str) -> str:
    """Column name of an operation's p99 in the transaction line: ``gn`` or ``OP``."""
    return short_name(op) or op


def op_latency(results: dict, *, intended: bool = False) -> pd.DataFrame:
    """The latency rows of real operations (no ``Intended-`` rows unless ``intended``,
    then those with the prefix removed), with numeric counts."""
    lat = table(results, "latency")
    if len(lat) == 0:
        return lat
    ops = lat["op"].astype("object").fillna("")
    is_intended = ops.str.startswith(INTENDED_PREFIX)
    lat = lat[is_intended if intended else ~is_intended].copy()
    lat["op"] = lat["op"].astype("object").str.removeprefix(INTENDED_PREFIX)
    lat["count"] = pd.to_numeric(lat["count"], errors="coerce")
    return lat


def _rank(op: str) -> tuple:
    """Sort key: LinkBench's order, then YCSB's, then by name; a batch after its op."""
    base = op.removesuffix(BATCH_SUFFIX)
    rank = CANONICAL.index(base) if base in CANONICAL else len(CANONICAL)
    return (rank, base if rank == len(CANONICAL) else "", op.endswith(BATCH_SUFFIX), op)


def op_order(lat: pd.DataFrame) -> list[str]:
    """The operations of ``lat`` in one fixed order for every line and every summary
    (LinkBench's, then YCSB's READ UPDATE INSERT SCAN READ-MODIFY-WRITE DELETE, then
    by name) — not by frequency, which would swap a 50/50 mix's columns between runs."""
    if len(lat) == 0:
        return []
    return sorted(set(lat["op"].astype("object")), key=_rank)


def main_ops(results: dict, *, intended: bool = False) -> list[str]:
    """The operations whose p99 the transaction line shows: the seed's ``un gn ul gl``
    (UPDATE_NODE GET_NODE UPDATE_LINK GET_LINKS_LIST) for LinkBench, else the most
    frequent operations of the run loops, at most five, in :func:`op_order`'s order.
    Where a workload counts units inside calls (ybio's rows in ``READ-BATCH``), the
    call: its latency is the one a client waits for."""
    lat = op_latency(results, intended=intended)
    if len(lat) == 0:
        return []
    run = lat[lat["step"].astype("object").str.startswith("r.")]
    ops = set(run["op"].astype("object"))
    if ops & set(LINKBENCH_MAIN):
        return [o for o in LINKBENCH_MAIN if o in ops]
    # as bool: an empty frame's map is of object dtype, which [] would take for column names
    batched = {unit_op(o) for o in ops if is_batch(o)}
    run = run[~run["op"].astype("object").map(lambda o: o in batched or is_failed(o)).astype(bool)]
    counts = run.groupby(run["op"].astype("object"))["count"].sum(min_count=1).fillna(0)
    top = sorted(counts.index, key=lambda o: (-counts[o], o))[:MAIN_OPS_MAX]
    return sorted(top, key=_rank)


def _keys(frame: pd.DataFrame, lat: pd.DataFrame) -> list[str]:
    keys = ["run_id", "step"]
    if "experiment" in lat and frame["experiment"].notna().any():
        keys.insert(0, "experiment")
    return keys


def latency_wide(results: dict, ops: list[str], stats: dict[str, Callable[[str], str]],
                 frame: pd.DataFrame, *, intended: bool = False) -> pd.DataFrame:
    """``frame`` (rows of step_stats) with one column per (op, stat) in ms.

    ``stats`` maps a latency column (``p99_us``) to a function of the op giving the
    new column's name.
    """
    lat = op_latency(results, intended=intended)
    out = frame.copy()
    if len(lat) == 0 or not ops:
        return out
    keys = _keys(frame, lat)
    lat = lat[lat["op"].isin(ops)].copy()
    for k in keys:
        lat[k] = lat[k].astype("object")
    index = pd.MultiIndex.from_frame(frame[keys].astype("object"))
    for op in ops:
        one = lat[lat["op"] == op].drop_duplicates(keys, keep="last").set_index(keys)
        for col, name in stats.items():
            values = pd.to_numeric(one[col], errors="coerce") / US_PER_MS
            out[name(op)] = values.reindex(index).to_numpy(dtype="float64")
    return out


def response_times(results: dict, *, intended: bool = False) -> pd.DataFrame:
    """Response time per step and run (the seed's ``l.rt``), milliseconds.

    Columns ``experiment config run_id step phase``, ``ips secs`` (as eff.op), then a
    ``p99 max mean`` triple per operation named as in the module docstring
    (``n9 nx nm``, ``rd9 rdx rdm``, ``OP.p99 OP.max OP.mean``), then ``cnf``.
    """
    st = step_stats(results)
    ops = op_order(op_latency(results, intended=intended))
    base = st[ID_COLS].copy()
    base["ips"] = st["rate"]
    base["secs"] = st["secs"]
    wide = latency_wide(results, ops, {
        "p99_us": lambda op: triple(op)[0],   # p99 response time, ms
        "max_us": lambda op: triple(op)[1],   # max response time, ms
        "mean_us": lambda op: triple(op)[2],  # mean response time, ms
    }, base, intended=intended)
    wide["cnf"] = st["cnf"]
    return wide
