"""Hardware efficiency per step: per operation (``eff.op``) and per second (``eff.sec``).

The columns and formulas are the seed's legends (linkbench-result-formats.md), with
the units pinned by reproducing the seed's own example rows (tests/test_summaries.py):

eff.op — ``ips secs rpi rkbpi wkbpi cspi cpupi csecpq dsecpq csec dsec dbgb cnf``
    ips     operations per second over the step: ops / secs (inserts/s for the load,
            rows indexed/s for the index step, operations/s for run loops; the text
            calls it ``tps`` for run loops)
    secs    duration of the step, seconds
    rpi     storage reads per operation = mean(disk_reads/s) / ips
    rkbpi   KB read per operation = mean(disk_read_kb/s) / ips
    wkbpi   KB written per operation = mean(disk_write_kb/s) / ips
    cspi    context switches per operation = mean(ctx_switches/s) / ips
    cpupi   CPU per operation = cpups / ips × 1,000,000 (cpups = mean(us + sy) in %;
            comparable only between hosts with the same number of CPUs)
    csecpq  benchmark-client CPU per operation, **microseconds**: csec / ops × 1e6
    dsecpq  DBMS CPU per operation, microseconds: dsec / ops × 1e6
            (seed: dsec 15954 s / (30248 ips × 25147 s) × 1e6 = 21.0)
    csec    benchmark-client CPU seconds over the step: the client processes' own
            getrusage over the step (the steps table's client_cpu_s; Σ of the hw
            samples' client_cpu_s where a step lacks it: imports, older runs)
    dsec    DBMS CPU seconds over the step: the run's own work where the server says
            it (the steps table's dbms_cpu_s, read at the step's start and end: on
            PostgreSQL the backends of the run's connections, on MariaDB with
            performance_schema the threads of its database's connections, on Redis
            its process — ``dbms_attribution``), else all the server's processes
            (Σ hw dbms_cpu_s over the sampler's window: a remote sampler, older runs)

    Beside the seed's columns (the frame only, not the text line): ``dsec_all`` and
    ``dsecpq_all``, all the server's processes over the same window (every database's
    work), and ``attribution``, whose work dsec counts (sessions, database, process,
    server); summaries/attribution.py prints them under the lines where they differ.
    dbgb    database size at the end of the step, GB

eff.sec — ``ips secs rps rmbps wmbps csps cpups cutil dutil vsz rss cnf``
    rps     storage reads per second = mean(disk_reads/s)
    rmbps   MB read per second = mean(disk_read_kb/s) / 1024 (MB = 1024 KB, as
            iostat -m: the seed's rows only agree with 1024 — 0.522 KB/i × 30248 i/s
            = 15790 KB/s prints as 15, not 16)
    wmbps   MB written per second = mean(disk_write_kb/s) / 1024
    csps    context switches per second = mean(ctx_switches/s)
    cpups   CPU utilization, % = mean(cpu_user + cpu_sys) (vmstat us + sy)
    cutil   client CPUs busy = csec / secs
    dutil   DBMS CPUs busy = dsec / secs
    vsz     DBMS virtual size at the end of the step, GB
    rss     DBMS resident size at the end of the step, GB

A figure the source lacks is NaN in the frame and blank in the text, never 0: no
DBMS process visible (a remote server) blanks dsec, dsecpq, dutil, vsz and rss; a
run without hw blanks every hardware column.
"""
from __future__ import annotations

import pandas as pd

from .stepstats import ID_COLS, positive, step_stats

KB_PER_MB = 1024  # eff.sec's MB: pinned by the seed's rows (see the module docstring)
PER_MILLION = 1e6  # cpupi: "cpups/ips × 1M … so I can display the value as an integer"
US_PER_S = 1e6     # csecpq, dsecpq: CPU microseconds per operation


def eff_op(results: dict) -> pd.DataFrame:
    """Per-operation efficiency, one row per step and run (the seed's ``*.eff.op``).

    Columns ``experiment config run_id step phase`` then the seed's ``ips secs rpi
    rkbpi wkbpi cspi cpupi csecpq dsecpq csec dsec dbgb cnf`` (see the module
    docstring for each formula and unit); NaN where the source lacks the figure.
    """
    st = step_stats(results)
    ips = positive(st["rate"])          # a step without operations has no per-op figures
    ops = positive(st["ops"])
    out = st[ID_COLS].copy()
    out["ips"] = st["rate"]
    out["secs"] = st["secs"]
    out["rpi"] = st["reads_ps"] / ips             # rpi = mean(disk_reads/s) / ips
    out["rkbpi"] = st["read_kbps"] / ips          # rkbpi = mean(disk_read_kb/s) / ips
    out["wkbpi"] = st["write_kbps"] / ips         # wkbpi = mean(disk_write_kb/s) / ips
    out["cspi"] = st["cs_ps"] / ips               # cspi = mean(ctx_switches/s) / ips
    out["cpupi"] = st["cpu_pct"] / ips * PER_MILLION  # cpupi = cpups / ips × 1e6
    out["csecpq"] = st["csec"] / ops * US_PER_S   # csecpq = csec / ops × 1e6 (µs/op)
    out["dsecpq"] = st["dsec"] / ops * US_PER_S   # dsecpq = dsec / ops × 1e6 (µs/op)
    out["csec"] = st["csec"]                      # csec = Σ client_cpu_s over the step
    out["dsec"] = st["dsec"]                      # dsec = Σ dbms_cpu_s over the step
    out["dbgb"] = st["db_gb"]                     # dbgb = db_size_gb at step end
    out["cnf"] = st["cnf"]
    out["dsec_all"] = st["dsec_all"]              # all the server's processes, same window
    out["dsecpq_all"] = st["dsec_all"] / ops * US_PER_S
    out["attribution"] = st["attribution"]
    return out


def eff_sec(results: dict) -> pd.DataFrame:
    """Per-second efficiency, one row per step and run (the seed's ``*.eff.sec``).

    Columns ``experiment config run_id step phase`` then the seed's ``ips secs rps
    rmbps wmbps csps cpups cutil dutil vsz rss cnf`` (see the module docstring).
    """
    st = step_stats(results)
    secs = positive(st["secs"])
    out = st[ID_COLS].copy()
    out["ips"] = st["rate"]
    out["secs"] = st["secs"]
    out["rps"] = st["reads_ps"]                   # rps = mean(disk_reads/s)
    out["rmbps"] = st["read_kbps"] / KB_PER_MB    # rmbps = mean(disk_read_kb/s) / 1024
    out["wmbps"] = st["write_kbps"] / KB_PER_MB   # wmbps = mean(disk_write_kb/s) / 1024
    out["csps"] = st["cs_ps"]                     # csps = mean(ctx_switches/s)
    out["cpups"] = st["cpu_pct"]                  # cpups = mean(cpu_user + cpu_sys), %
    out["cutil"] = st["csec"] / secs              # cutil = csec / secs (client CPUs busy)
    out["dutil"] = st["dsec"] / secs              # dutil = dsec / secs (DBMS CPUs busy)
    out["vsz"] = st["vsz_gb"]                     # vsz = dbms_vsz_gb at step end, GB
    out["rss"] = st["rss_gb"]                     # rss = dbms_rss_gb at step end, GB
    out["cnf"] = st["cnf"]
    return out
