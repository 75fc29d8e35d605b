"""The overview's one-line summaries: the transaction-phase line per run loop and the
load-phase line (linkbench-overview.md).

Transaction phase — ``tps r/t rkb/t wkb/t Mcpu/t size rss <p99 of the main ops>
r/s rMB/s wMB/s cpu engine``:

    tps     operations (transactions) per second over the loop = ops / secs
    r/t     storage reads per operation = mean(disk_reads/s) / tps
    rkb/t   KB read per operation = mean(disk_read_kb/s) / tps
    wkb/t   KB written per operation = mean(disk_write_kb/s) / tps
    Mcpu/t  CPU per operation = cpu / tps × 1,000,000 (the seed's "constant": its
            line 3868 tps, cpu 31.5 → 8154 and its load line 29810 ips, cpu 39.1 →
            1311 both give 1e6; the same figure as eff.op's cpupi)
    size    database size at the end of the loop, GB (printed 3.0g)
    rss     DBMS resident size at the end of the loop, GB
    un gn ul gl / rd up …  p99 response time of the main operations, ms
            (LinkBench's UPDATE_NODE GET_NODE UPDATE_LINK GET_LINKS_LIST, else the
            most frequent operations of the run loops, at most five); for a paced
            loop (a target rate: ``Intended-`` rows) from the intended start,
            coordinated omission corrected, with the service time beside it in
            ``rd.s up.s …`` — both, as YCSB's measurement.interval=both prints them
    r/s     storage reads per second = mean(disk_reads/s)
    rMB/s   MB read per second = mean(disk_read_kb/s) / 1000
    wMB/s   MB written per second = mean(disk_write_kb/s) / 1000
            (MB = 1000 KB here: the seed's run line 1.41 KB/t × 3868 t/s prints 5.4,
            its load line 1.33 × 29810 prints 39.6 — with 1024 they would be 5.3 and
            38.7. The eff.sec lines of the other seed file use 1024; each format
            keeps its seed's unit.)
    cpu     CPU utilization, % = mean(cpu_user + cpu_sys) (vmstat us + sy)
    engine  the configuration (the seed's cnf)

Load phase — ``ips r/i rkb/i wkb/i Mcpu/i size rss wMB/s cpu engine``: the same
figures for the load (and index) step; the frame keeps them in the same columns
(``tps`` holds the step's ips) and the text prints the load header.
"""
from __future__ import annotations

import pandas as pd

from .response import latency_wide, main_ops, p99_name
from .stepstats import ID_COLS, positive, step_stats

KB_PER_MB = 1000   # the overview lines' MB (see the module docstring)
MCPU = 1e6         # Mcpu/t = cpu / tps × 1e6


def run_lines(results: dict, *, intended: bool = False) -> pd.DataFrame:
    """The transaction-phase line of every run loop and the load-phase line of every
    load/index step, one row per step and run.

    Columns ``experiment config run_id step phase``, ``tps r/t rkb/t wkb/t Mcpu/t
    size rss``, one p99 column (ms) per main operation, ``r/s rMB/s wMB/s cpu
    engine`` (see the module docstring). The p99 columns are NaN for load/index
    rows, whose line does not have them.
    """
    st = step_stats(results)
    tps = positive(st["rate"])
    out = st[ID_COLS].copy()
    out["tps"] = st["rate"]                            # tps = ops / secs
    out["r/t"] = st["reads_ps"] / tps                  # r/t = mean(disk_reads/s) / tps
    out["rkb/t"] = st["read_kbps"] / tps               # rkb/t = mean(disk_read_kb/s) / tps
    out["wkb/t"] = st["write_kbps"] / tps              # wkb/t = mean(disk_write_kb/s) / tps
    out["Mcpu/t"] = st["cpu_pct"] / tps * MCPU         # Mcpu/t = cpu / tps × 1e6
    out["size"] = st["db_gb"]                          # size = db_size_gb at loop end
    out["rss"] = st["rss_gb"]                          # rss = dbms_rss_gb at loop end
    ops = main_ops(results, intended=intended)
    out = latency_wide(results, ops, {"p99_us": p99_name}, out, intended=intended)
    if not intended:
        out = _paced_p99s(results, ops, out)
    for op in ops:  # the load-phase line has no p99 columns
        for c in (p99_name(op), p99_name(op) + SERVICE):
            if c in out:
                out.loc[out["phase"] != "run", c] = float("nan")
    out["r/s"] = st["reads_ps"]                        # r/s = mean(disk_reads/s)
    out["rMB/s"] = st["read_kbps"] / KB_PER_MB         # rMB/s = mean(disk_read_kb/s) / 1000
    out["wMB/s"] = st["write_kbps"] / KB_PER_MB        # wMB/s = mean(disk_write_kb/s) / 1000
    out["cpu"] = st["cpu_pct"]                         # cpu = mean(cpu_user + cpu_sys), %
    out["engine"] = st["cnf"]
    return out


SERVICE = ".s"   # a paced loop's service-time p99 column beside its intended one: rd.s


def _paced_p99s(results: dict, ops: list[str], out: pd.DataFrame) -> pd.DataFrame:
    """A paced loop's p99 columns from the intended start, the service time beside each
    (``rd`` and ``rd.s``); an unpaced loop's as they are (its ``.s`` blank)."""
    paced = latency_wide(results, ops, {"p99_us": p99_name}, out[[c for c in out if c in ID_COLS]],
                         intended=True)
    cols = []
    for op in ops:
        name = p99_name(op)
        if name not in out or name not in paced or not paced[name].notna().any():
            cols.append(name)
            continue
        service = out[name]
        out[name] = paced[name].where(paced[name].notna(), service)
        out[name + SERVICE] = service.where(paced[name].notna())
        cols += [name, name + SERVICE]
    rest = [c for c in out if c not in cols]
    at = rest.index("rss") + 1
    return out[rest[:at] + cols + rest[at:]]
