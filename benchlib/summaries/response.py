"""Response time per step: p99, max and mean of each operation in milliseconds (``rt``).

The seed's ``l.rt`` names a triple per operation from a short code — ``n9 nx nm`` are
the p99, max and mean of Node inserts, ``l9 lx lm`` Link inserts, ``c9 cx cm`` Count
inserts — and its transaction line names the p99 of the main transactions ``un gn ul
gl``. Operations get such codes from their workload (``Workload.op_codes``): LinkBench's
with the seed's letters, YCSB's ``rd up in sc rmw de``, a batched op ``<code>b`` (``INSERT-BATCH`` →
``inb``: the latency of the whole multi-row insert, which is what the seed's load
rt shows). An operation without a code keeps its name: ``OP.p99 OP.max OP.mean``.

Columns are the union of the operations over all rows, in one fixed order (the
registered workloads' ``Workload.op_order``, then by name), so the lines of one workload line up —
in one summary and between summaries — and an operation a run did not do is blank.

Latencies are the ``latency`` table's (merged HdrHistograms), service time by
default; ``intended=True`` takes the ``Intended-<OP>`` rows instead (latency from the
intended start of a paced operation, coordinated-omission corrected).
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import pandas as pd

from ..schema import BATCH_SUFFIX, INTENDED_PREFIX, is_batch, is_failed, unit_op
from ..registries import workloads as workload_registry
from .stepstats import ID_COLS, step_stats, table

US_PER_MS = 1000.0
MAIN_OPS_MAX = 5   # all of a five-op mix (kv, YCSB): the same columns whatever the dice gave


@functools.lru_cache(maxsize=8)
def _declared(names: tuple[str, ...]) -> tuple[list[str], dict[str, str], list[tuple[str, ...]]]:
    """The registered workloads' op order, short codes and main ops (``Workload.op_order``,
    ``op_codes``, ``main_ops``), in the registry's order; a workload that cannot be
    imported declares nothing."""
    order: list[str] = []
    codes: dict[str, str] = {}
    mains: list[tuple[str, ...]] = []
    for name in names:
        try:
            cls = workload_registry.workload_class(name)
        except (ValueError, ImportError):
            continue
        order += [o for o in cls.op_order if o not in order]
        for op, code in cls.op_codes.items():
            codes.setdefault(op, code)
        if cls.main_ops:
            mains.append(tuple(cls.main_ops))
    return order, codes, mains


def declared() -> tuple[list[str], dict[str, str], list[tuple[str, ...]]]:
    return _declared(tuple(workload_registry.names()))


@functools.lru_cache(maxsize=8)
def _compound(names: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for name in names:
        try:
            out |= set(workload_registry.workload_class(name).compound_ops)
        except (ValueError, ImportError):
            continue
    return frozenset(out)


def compound_ops() -> frozenset[str]:
    """The registered workloads' compound ops (``Workload.compound_ops``: YCSB's
    read-modify-write), whose rows count operations, not returns of their own."""
    return _compound(tuple(workload_registry.names()))


def short_name(op: str) -> str | None:
    """The short code of an operation (``GET_NODE`` → ``gn``), None when it has none."""
    codes = declared()[1]
    if op in codes:
        return codes[op]
    if op.endswith(BATCH_SUFFIX) and op[:-len(BATCH_SUFFIX)] in codes:
        return codes[op[:-len(BATCH_SUFFIX)]] + "b"
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
    """Sort key: the workloads' declared orders, then by name; a batch after its op."""
    order = declared()[0]
    base = op.removesuffix(BATCH_SUFFIX)
    rank = order.index(base) if base in order else len(order)
    return (rank, base if rank == len(order) else "", op.endswith(BATCH_SUFFIX), op)


def op_order(lat: pd.DataFrame) -> list[str]:
    """The operations of ``lat`` in one fixed order for every line and every summary
    (the workloads' declared orders — YCSB's READ UPDATE INSERT SCAN READ-MODIFY-WRITE
    DELETE … —, then by name) — not by frequency, which would swap a 50/50 mix's columns
    between runs."""
    if len(lat) == 0:
        return []
    return sorted(set(lat["op"].astype("object")), key=_rank)


def main_ops(results: dict, *, intended: bool = False) -> list[str]:
    """The operations whose p99 the transaction line shows: a workload's declared
    ``main_ops`` (LinkBench's: the seed's ``un gn ul gl``), else the most
    frequent operations of the run loops, at most five, in :func:`op_order`'s order.
    Where a workload counts units inside calls (ybio's rows in ``READ-BATCH``), the
    call: its latency is the one a client waits for."""
    lat = op_latency(results, intended=intended)
    if len(lat) == 0:
        return []
    run = lat[lat["step"].astype("object").str.startswith("r.")]
    ops = set(run["op"].astype("object"))
    for main in declared()[2]:   # a workload's declared main ops (LinkBench's un gn ul gl)
        if ops & set(main):
            return [o for o in main if o in ops]
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
