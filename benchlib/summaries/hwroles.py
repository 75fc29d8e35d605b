"""Which hw rows a step's lines read: the DBMS host's for the DBMS figures, the
client hosts' for the clients' CPU.

- DBMS figures (``dsec``, ``rss``, ``vsz``, ``dbgb``) and the host's own (CPU %,
  disk reads and writes, context switches: the seed's ``cpupi``, ``rpi``, ``wkbpi``
  … are the database host's) come from the rows of a host whose role is ``dbms`` —
  of the first source of :data:`SOURCE_ORDER` that has rows for the step — and else
  from the controller's host when it ran the server too (role ``both``, today's
  loopback case). A step with neither has those figures blank: a client host's CPU
  or disk never stands under a DBMS heading.
- Client CPU (``csec``) comes from the controller's host with role ``client`` or
  ``both`` (the steps table's getrusage of every driver is preferred anyway).
- ``dbgb`` read over SQL by the controller (a server on another host, not treated
  as remote) is the server's figure wherever it was asked: it fills a blank ``dbgb``.
"""
from __future__ import annotations

import pandas as pd

from ..hw.roles import BOTH, CLIENT_ROLES, DBMS, upgrade_hw

SOURCE_ORDER = ("dask", "prometheus", "local")
# the legend's names of the figures and the hw column that says a source gave each
LEGEND_FIGURES = {"dsec": "dbms_cpu_s", "rss": "dbms_rss_gb", "vsz": "dbms_vsz_gb", "dbgb": "db_size_gb",
                  "cpu": "cpu_user", "disk": "disk_reads", "cs": "ctx_switches"}
# the step aggregates that describe the DBMS host, and those of the client hosts
CLIENT_AGGREGATES = ("csec", "csec_max")


def _hostnames(results: dict) -> dict:
    runs, given = results.get("runs"), results.get("meta")
    metas = [*(runs["meta"] if runs is not None and "meta" in runs else []),
             *(given.values() if isinstance(given, dict) else [])]
    return {m.get("run_id"): (m.get("host") or {}).get("hostname") for m in metas if isinstance(m, dict)}


def split_rows(results: dict, hw: pd.DataFrame, controller_hw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows each step's DBMS figures come from, the client hosts' rows)."""
    if not len(hw):
        return hw, hw
    hw = upgrade_hw(hw, _hostnames(results))
    role, source = hw["role"].astype("object"), hw["source"].astype("object")
    own = controller_hw(results, hw)
    clients = own[own["role"].astype("object").isin(CLIENT_ROLES)]
    key = hw["run_id"].astype("object") + "\0" + hw["step"].astype("object")
    rank = source.map({s: i for i, s in enumerate(SOURCE_ORDER)}).fillna(len(SOURCE_ORDER))
    dedicated = role == DBMS
    best = rank[dedicated].groupby(key[dedicated]).min()
    take = dedicated & (rank == key.map(best))
    shared = (role == BOTH) & hw.index.isin(own.index) & ~key.isin(best.index)
    return hw[take | shared], clients


def one_source(results: dict, source: str) -> dict:
    """``results`` whose hw keeps the client rows and the DBMS rows of ``source``
    only: the step lines as that source alone measures them (to compare sources)."""
    hw = upgrade_hw(results["hw"], _hostnames(results))
    keep = (hw["source"].astype("object") == source) | (hw["role"].astype("object") == "client")
    if source != "local":   # the controller's rows then count its clients only
        hw = hw.assign(role=hw["role"].where(hw["source"].astype("object") != "local", "client"))
    return {**results, "hw": hw[keep].reset_index(drop=True)}


def blank_reasons(results: dict, st: pd.DataFrame) -> tuple[bool, str] | None:
    """The experiment summary's test of the DBMS figures: None when every sampled step
    with operations has them; else failed, saying which steps and why — no source of the
    database host, or one whose samples left the server's CPU blank (Prometheus: under
    90 % of the step covered, an exporter missing)."""
    hw = results.get("hw")
    if not len(st) or hw is None or not len(hw):
        return None
    sampled = set(zip(hw["run_id"].astype("object"), hw["step"].astype("object")))
    role = hw["role"].astype("object") if "role" in hw else pd.Series("", index=hw.index)
    dbms = hw[role == DBMS]
    watched = {(r, s): src for r, s, src in zip(dbms["run_id"].astype("object"), dbms["step"].astype("object"),
                                                dbms["source"].astype("object"))} if len(dbms) else {}
    gone = [(f"{r}/{s}", watched.get((r, s))) for r, s, o, d in zip(st["run_id"], st["step"], st["ops"], st["dsec"])
            if o > 0 and pd.isna(d) and (r, s) in sampled]
    if not gone:
        return None
    parts = []
    unseen = [g for g, src in gone if src is None]
    gaps = sorted({src for _, src in gone if src is not None})
    if unseen:
        parts.append(f"DBMS figures (dsec, cpupi, rpi, wkbpi …) blank for {', '.join(unseen[:6])}"
                     f"{' …' if len(unseen) > 6 else ''}: no source sampled the database host (a server "
                     "on another host, or hw.remote: true; hw.dbms: dask or prometheus gives them)")
    if gaps:
        seen = [g for g, src in gone if src is not None]
        parts.append(f"dsec blank for {', '.join(seen[:6])}{' …' if len(seen) > 6 else ''}: the database "
                     f"host's {', '.join(gaps)} samples covered too little of the step (an exporter missing: "
                     "the run's warnings say which, when)")
    return (False, "; ".join(parts))


def _cpu_from(g: pd.DataFrame) -> str:
    """``; dsec: cgroup`` — where a source's rows took the DBMS CPU, where they say."""
    said = sorted({str(v) for v in g["dbms_cpu_from"].dropna()}) if "dbms_cpu_from" in g else []
    return f"; dsec: {', '.join(said)}" if said else ""


def coverage_note(steps: pd.DataFrame | None, most: int = 4) -> str:
    """``; covered: r.L1 dsec 93 %, others 97 %`` for the steps whose figures real samples
    covered less than all of (the steps table's dbms_cpu_coverage, hw_coverage)."""
    if steps is None or not len(steps) or not {"dbms_cpu_coverage", "hw_coverage"} & set(steps.columns):
        return ""
    parts = []
    for _, r in steps.iterrows():
        d, o = r.get("dbms_cpu_coverage"), r.get("hw_coverage")
        bits = [f"{name} {100 * v:.0f} %" for name, v in (("dsec", d), ("others", o))
                if v is not None and pd.notna(v) and v < 1]
        if bits:
            parts.append(f"{r['step']} {' '.join(bits)}")
    more = f" (+{len(parts) - most} steps)" if len(parts) > most else ""
    return f"; covered: {', '.join(parts[:most])}{more}" if parts else ""


def legend(dbms: pd.DataFrame, clients: pd.DataFrame, steps: pd.DataFrame | None = None) -> str | None:
    """A line under the step lines saying where their hardware figures come from, when
    not from the one host that ran the server and the drivers (the local case): each
    source, the DBMS CPU's own (a cgroup, process-exporter …), and the steps whose figures
    samples covered less than all of."""
    if not len(dbms) and not len(clients):
        return None
    own = dbms[dbms["role"].astype("object") == DBMS] if len(dbms) else dbms
    if len(dbms) and not len(own):
        return None                   # the controller's host ran both: the local case
    hosts = ", ".join(sorted({str(c) for c in clients["host"].dropna()})) if len(clients) else ""
    client = f"; client CPU from {hosts}" if hosts else ""
    if not len(own):
        return (f"hw: DBMS columns blank: no source sampled the database host{client} "
                "(hw.dbms: dask or prometheus gives them)")
    groups = own.groupby([own["host"].astype("object"), own["source"].astype("object")], dropna=False, sort=True)
    given = {k: [n for n, c in LEGEND_FIGURES.items() if c in g and g[c].notna().any()] for k, g in groups}
    every = [n for n in LEGEND_FIGURES if any(n in v for v in given.values())]
    cpu = {k: _cpu_from(g) for k, g in groups}
    where = ", ".join(f"{h} ({s}{cpu[(h, s)]})" if v == every else f"{h} ({s}: {' '.join(v) or 'none'}{cpu[(h, s)]})"
                      for (h, s), v in given.items())
    blank = [n for n in LEGEND_FIGURES if n not in every]
    none = f"; {' '.join(blank)} blank: no source gave them" if blank else ""
    return f"hw: DBMS and its host's columns ({' '.join(every)}) from {where}{none}{client}{coverage_note(steps)}"
