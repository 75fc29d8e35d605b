"""The database host's hw rows from Prometheus: each figure's raw samples over a step's
window, differenced per series (:mod:`.promseries`), cut at the step's own seconds.

Each figure is a series selector (:data:`QUERIES`; a ``sum(…)`` around one is read as
the selector: benchlib sums the per-series differences itself), asked as a range vector
(every sample as scraped, :func:`.promapi.raw_data`) — never ``query_range``, whose
lookback carries the last value over a gap for five minutes, so that a gap read as "no
change". The column's kind:

- ``cpu``: a counter of CPU seconds in some modes, in % of the ``cpu_total`` counter's
  increase (vmstat's us/sy/wa/id, as the live sampler's);
- ``rate``: a counter's increase per second (context switches, disk operations; bytes
  scaled to KiB);
- ``delta``: a counter's increase (the server processes' CPU seconds);
- ``gauge``: the value at the row's end (RSS, VSZ, database size; bytes scaled to GB).

Every query is scoped to the database host: node_exporter's by ``instance="$instance"``
(``hw.prometheus.instance``), every other by ``$host`` — ``hw.prometheus.match`` (a label
matcher: ``job="db-0"``) or else the instance's host with any port — added to any
selector that names neither ``instance`` nor ``job``; ``$disks`` is a regex of whole
disks (the live sampler's), ``$datname`` the database, ``$port`` the server's port,
``$process_group`` process-exporter's group of the server (:func:`process_group`: the
group named after the server's data directory or port, else its program's name, said in
a line), ``$cgroup`` the server's cgroup (``/benchlib/pg-123-0``: the one benchlib made
for a server it started, ``hw.dbms_cgroup``'s, the one the server runs in).
``hw.prometheus.labels`` sets any of them, ``hw.prometheus.queries`` replaces any query.
A figure whose query finds no series stays blank.

``dbms_cpu_s`` comes from the server's cgroup where Prometheus has a series of it
(:data:`CGROUP_CPU`: cAdvisor's, selected by the cgroup's ``id``; on Kubernetes
``hw.prometheus.labels.cgroup`` names the pod's, or ``hw.prometheus.queries.dbms_cpu_s``
selects it by ``pod``/``container``): a cgroup's counter keeps the CPU of processes that
exited — backends shorter than a scrape, which process-exporter's group loses; else from
process-exporter's group. ``dbms_cpu_from`` says which.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from . import promapi, promseries
from .processes import GB
from .promapi import PrometheusError, check  # noqa: F401 - the module's API, as before

_NODE = 'instance="$instance"'
# hw column -> (series selector, kind, scale); the server's own figures come from its target too
QUERIES: dict[str, tuple[str, str, float]] = {
    "cpu_total": (f"node_cpu_seconds_total{{{_NODE}}}", "counter", 1.0),
    "cpu_user": (f'node_cpu_seconds_total{{{_NODE},mode=~"user|nice"}}', "cpu", 1.0),
    "cpu_sys": (f'node_cpu_seconds_total{{{_NODE},mode=~"system|irq|softirq"}}', "cpu", 1.0),
    "cpu_iowait": (f'node_cpu_seconds_total{{{_NODE},mode="iowait"}}', "cpu", 1.0),
    "cpu_idle": (f'node_cpu_seconds_total{{{_NODE},mode="idle"}}', "cpu", 1.0),
    "ctx_switches": (f"node_context_switches_total{{{_NODE}}}", "rate", 1.0),
    "disk_reads": (f'node_disk_reads_completed_total{{{_NODE},device=~"$disks"}}', "rate", 1.0),
    "disk_writes": (f'node_disk_writes_completed_total{{{_NODE},device=~"$disks"}}', "rate", 1.0),
    "disk_read_kb": (f'node_disk_read_bytes_total{{{_NODE},device=~"$disks"}}', "rate", 1 / 1024),
    "disk_write_kb": (f'node_disk_written_bytes_total{{{_NODE},device=~"$disks"}}', "rate", 1 / 1024),
    "dbms_cpu_s": ('namedprocess_namegroup_cpu_seconds_total{groupname=~"$process_group"}', "delta", 1.0),
    "dbms_rss_gb": ('namedprocess_namegroup_memory_bytes{groupname=~"$process_group",memtype="resident"}',
                    "gauge", 1 / GB),
    "dbms_vsz_gb": ('namedprocess_namegroup_memory_bytes{groupname=~"$process_group",memtype="virtual"}',
                    "gauge", 1 / GB),
    "db_size_gb": ("", "gauge", 1 / GB),     # the target's (postgres_exporter, mysqld_exporter …)
}
# the server's cgroup's CPU seconds (cAdvisor: every cgroup of the host by its path, ``id``;
# cpu="total": the sum, not the per-CPU series some versions add)
CGROUP_CPU = 'container_cpu_usage_seconds_total{id="$cgroup",cpu="total"}'
WHOLE_DISKS = r"(s|v|xv|h)d[a-z]+|nvme[0-9]+n[0-9]+|mmcblk[0-9]+"
# the exporters the shipped queries name, by the metric's prefix; another's is its job
EXPORTERS = {"node": "node_exporter", "namedprocess": "process-exporter", "container": "cAdvisor"}

_SEL = r"[A-Za-z_:][A-Za-z0-9_:]*\s*(?:\{[^{}]*\})?"
_SUM = re.compile(rf"^\s*sum\s*(?:(?:by|without)\s*\([^()]*\)\s*)?\(\s*({_SEL})\s*\)\s*$")
_BARE = re.compile(rf"^\s*({_SEL})\s*$")
_SCOPED = re.compile(r"[{,]\s*(instance|job)\s*(=|!=|=~|!~)")


def selector_of(query: str) -> str | None:
    """The series selector of ``query`` (itself, or inside one ``sum(…)``); None if other."""
    m = _BARE.match(query) or _SUM.match(query)
    return m.group(1).strip() if m else None


def scoped(selector: str, matcher: str) -> str:
    """``selector`` with ``matcher`` added, unless it names its instance or job already."""
    if not matcher or _SCOPED.search(selector):
        return selector
    if "{" not in selector:
        return f"{selector}{{{matcher}}}"
    name, rest = selector.split("{", 1)
    rest = rest.strip()
    return f"{name}{{{matcher}{'' if rest.startswith('}') else ','}{rest}"


def promql_re(text: str) -> str:
    """``text`` as a regex matching itself, written inside a PromQL string."""
    return re.escape(text).replace("\\", "\\\\")


def host_matcher(spec) -> str:
    """The label matcher of the database host's exporters (hw.prometheus.match, else the
    instance's host with any port)."""
    if getattr(spec, "match", None):
        return spec.match
    return f'instance=~"{promql_re(host_of(spec))}(:[0-9]+)?"'


def queries(spec, target_queries: dict[str, str] | None = None,
            labels: dict[str, str] | None = None) -> dict[str, str]:
    """column -> series selector as it is sent: shipped, the target's, the spec's; labels
    filled, scoped to the host."""
    q = {c: p for c, (p, _, _) in QUERIES.items()}
    q.update(target_queries or {})
    q.update(spec.queries)
    out = {}
    for c, p in q.items():
        if sel := _filled(spec, p, labels):
            out[c] = sel
    return out


def _filled(spec, query: str, labels: dict[str, str] | None) -> str | None:
    """``query``'s selector, its ``$labels`` filled, scoped to the host; None if none."""
    values = {"instance": spec.instance, "disks": WHOLE_DISKS, **(labels or {}), **spec.labels}
    sel = selector_of(re.sub(r"\$([a-z_]+)", lambda m: values.get(m.group(1), m.group(0)), query)) if query else None
    return scoped(sel, host_matcher(spec)) if sel else None


def cgroup_cpu(spec, labels: dict[str, str], lo: float, hi: float) -> tuple[str, dict] | None:
    """The server's cgroup CPU series (:data:`CGROUP_CPU`) and Prometheus' answer, when
    its cgroup is known (``$cgroup``), ``dbms_cpu_s`` is not the user's own query and a
    series of it has samples in ``[lo, hi]``; else None (process-exporter's group counts)."""
    if "dbms_cpu_s" in spec.queries or not (spec.labels.get("cgroup") or labels.get("cgroup")):
        return None
    sel = _filled(spec, CGROUP_CPU, labels)
    try:
        data = promapi.raw_data(spec, sel, lo, hi)
    except PrometheusError:
        return None
    return (sel, data) if any(len(s.t) for s in promapi.parse_matrix(data)) else None


def process_group(spec, hints: list[str], names: list[str], at: float) -> tuple[str | None, str | None]:
    """process-exporter's group of the server on the host (:func:`choose_group` among the
    host's groups) as a regex, and a line to say; (None, None) when it cannot be asked."""
    try:
        found = promapi.instant(spec, "count by (groupname) (namedprocess_namegroup_num_procs"
                                      f"{{{host_matcher(spec)}}})", at)
    except PrometheusError:
        return None, None
    return choose_group(sorted({r["metric"].get("groupname", "") for r in found} - {""}), hints, names)


def choose_group(groups: list[str], hints: list[str], names: list[str]) -> tuple[str | None, str | None]:
    """The groups whose name holds the server's data directory or ``:port`` (``hints``),
    else those named one of ``names`` (the program: every cluster of the host, said in a
    line), as a PromQL regex; None and a line when none is the server's."""
    own = [g for g in groups if any(h and h in g for h in hints)]
    if own:
        return "|".join(promql_re(g) for g in own), None
    byname = [g for g in groups if g in names]
    if byname:
        return "|".join(promql_re(g) for g in byname), (
            f"process-exporter's group {byname[0]!r} is named after the program alone: every "
            f"{byname[0]} of the host counts in dsec and rss; name the group after the server's data "
            "directory or port (docs/hardware.md: Prometheus) or set hw.prometheus.labels.process_group")
    if not groups:
        return None, None
    return None, (f"process-exporter has no group of the server on the host (groups: {', '.join(groups)}): "
                  "dsec and rss blank; hw.prometheus.labels.process_group names it")


def wait_scrapes(spec, end: float, iv: float) -> None:
    """Until each of the host's targets that is up has a scrape after ``end`` stored (at
    most two intervals and 5 s past it): the last row's reading is a sample, not a gap."""
    deadline = end + 2 * iv + 5
    while time.time() < deadline:
        last = host_targets(spec, promapi.parse_scrapes(promapi.targets(spec)))
        if last and min(last.values()) >= end:
            return
        time.sleep(0.25)


def host_targets(spec, by_instance: dict[str, float]) -> dict[str, float]:
    """``by_instance`` (instance -> a figure of its target) of the database host's targets
    only (all when none is its)."""
    host = re.escape(host_of(spec)) + r"(:\d+)?"
    return {i: s for i, s in by_instance.items() if i == spec.instance or re.fullmatch(host, i)} or by_instance


def short_loops(spec, loop_secs: float | None) -> str | None:
    """One line when run loops of ``loop_secs`` are shorter than two of the host's scrapes."""
    iv = max(host_targets(spec, promapi.scrape_intervals(spec)).values(), default=0.0)
    if not loop_secs or loop_secs >= 2 * iv:
        return None
    return (f"hw.prometheus: run loops of {loop_secs:g} s are shorter than two scrapes of the database "
            f"host ({iv:g} s): their Prometheus figures will be blank; run.loop_secs: {2 * iv:g} or more, "
            f"or scrape_interval: {loop_secs / 2:g}s or less in prometheus.yml")


@dataclass
class Fetched:
    rows: pd.DataFrame
    missing: list[str]                          # columns with no series at all
    coverage: dict[str, float] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)   # why a figure is blank, a group's choice


def _exporter(sel: str, series: list) -> str:
    jobs = sorted({str(s.labels["job"]) for s in series if "job" in s.labels})
    return EXPORTERS.get(sel.split("_", 1)[0]) or (f"job {', '.join(jobs)}" if jobs else sel.split("{", 1)[0])


def fetch(spec, start: datetime, end: datetime, target_queries: dict[str, str] | None = None,
          labels: dict[str, str] | None = None, hints: list[str] | None = None,
          names: list[str] | None = None, wait: bool = True, keep: dict | None = None) -> Fetched:
    """The rows of ``[start, end]`` (see the module docstring); ``keep``: filled with what
    Prometheus answered (to record it for :func:`assemble`)."""
    step = spec.step_s
    t0, t1 = start.timestamp(), end.timestamp()
    n = max(1, math.ceil((t1 - t0) / step - 1e-6))
    edges = t0 + step * np.arange(n + 1)
    intervals = promapi.scrape_intervals(spec)
    iv = max(host_targets(spec, intervals).values(), default=step)
    if wait:
        wait_scrapes(spec, edges[-1], iv)
    labels = dict(labels or {})
    lines: list[str] = []
    if "process_group" not in spec.labels and (hints or names):
        group, line = process_group(spec, hints or [], names or [], edges[-1] + iv)
        labels["process_group"] = group or ""     # none of the server: matches no group
        if line:
            lines.append(line)
    lo, hi = edges[0] - 2 * iv - 1, edges[-1] + 2 * iv + 1
    chosen = queries(spec, target_queries, labels)
    cg = cgroup_cpu(spec, labels, lo, hi)
    answers = {col: cg if col == "dbms_cpu_s" and cg else (sel, promapi.raw_data(spec, sel, lo, hi))
               for col, sel in chosen.items()}
    if keep is not None:
        keep.update(t0=t0, t1=t1, step=step, intervals=intervals, iv=iv, answers=answers)
    got = assemble(answers, t0, t1, step, intervals, iv)
    got.lines[:0] = lines
    return got


def assemble(answers: dict[str, tuple[str, dict]], t0: float, t1: float, step: float,
             intervals: dict[str, float], iv: float) -> Fetched:
    """The rows of ``[t0, t1]`` from each column's selector and raw answer (the ``data``
    of a range-vector query): what :func:`fetch` asked, or a recorded answer."""
    n = max(1, math.ceil((t1 - t0) / step - 1e-6))
    edges = t0 + step * np.arange(n + 1)
    raw, missing, cover, lines, source = {}, [], {}, [], None
    for col, (sel, data) in answers.items():
        parsed = promapi.parse_matrix(data)
        if col == "db_size_gb" and (line := clusters_apart(sel, parsed)):
            lines.append(line)
            parsed = []                  # blank: the target's cluster cannot be told
        series, left = promseries.dedupe(parsed)
        if left:
            lines.append(f"{col}: the same series from {', '.join(left)} as from another instance: one counted")
        if not series:
            missing.append(col)
            continue
        kind = QUERIES[col][1] if col in QUERIES else "gauge"
        vals, ok, cover[col] = promseries.figure_rows(series, edges, "gauge" if kind == "gauge" else "counter",
                                                      intervals, iv)
        raw[col] = vals
        if col == "dbms_cpu_s":
            source = _exporter(sel, series)
        if cover[col] < 1 and col != "cpu_total":
            insts = ", ".join(sorted({str(s.labels.get("instance", "?")) for s in series}))
            blank = np.isnan(vals).all()
            lines.append(f"{col}: {_exporter(sel, series)} ({insts}) has no samples for "
                         f"{promseries.describe_gaps(ok, step)} of the step's {t1 - t0:.0f} s "
                         f"({100 * cover[col]:.0f} % covered){': blank' if blank else ''}")
    if t1 - t0 < 2 * iv:
        lines.append(f"the step lasted {t1 - t0:.1f} s, under two scrapes of {iv:g} s: its Prometheus "
                     f"figures are blank; run loops of at least {2 * iv:g} s (run.loop_secs) or scrape the "
                     f"database host every {max((t1 - t0) / 2, 0.5):g} s or less (scrape_interval)")
        raw = {c: np.full(n, np.nan) for c in raw}
    out = pd.DataFrame({"second": [math.floor(k * step + 1e-9) for k in range(n)],
                        "ts": [datetime.fromtimestamp(e, timezone.utc) for e in edges[1:]]})
    total = raw.get("cpu_total")
    for col, d in raw.items():
        kind, scale = QUERIES[col][1:] if col in QUERIES else ("gauge", 1.0)
        if kind == "cpu":
            out[col] = 100 * d / np.where(total > 0, total, np.nan) if total is not None else np.nan
        elif kind == "rate":
            out[col] = d * scale / step
        elif kind in ("delta", "gauge"):
            out[col] = d * scale
    if source and "dbms_cpu_s" in out:
        out["dbms_cpu_from"] = pd.array([source if v == v else None for v in out["dbms_cpu_s"]], dtype="string")
    return Fetched(out, [c for c in missing if c != "cpu_total"], cover, lines)


SAME_SIZE = 0.01    # two exporters' sizes of one database within 1 %: one cluster scraped twice


def clusters_apart(sel: str, series: list) -> str | None:
    """One line when the database's size comes from exporters of different instances
    with nothing that tells their clusters apart (postgres_exporter without its ``server``
    label, as newer versions give it) and sizes that differ: two clusters' databases of one name,
    not one cluster scraped twice; None otherwise."""
    by: dict[tuple, list] = {}
    for s in series:
        if len(s.v):
            by.setdefault(promseries.identity(s.labels), []).append(s)
    for group in by.values():
        insts = sorted({str(s.labels.get("instance", "?")) for s in group})
        if len(insts) < 2 or any("server" in s.labels for s in group):
            continue
        last = [float(s.v[-1]) for s in group]
        if max(last) > min(last) * (1 + SAME_SIZE):
            db = group[0].labels.get("datname", "the database")
            fix = f'{sel.split("{", 1)[0]}{{instance="{insts[0]}",datname="{db}"}}'
            return (f"db_size_gb: {_exporter(sel, group)} instances {', '.join(insts)} each give {db!r} with no "
                    f"label that names its cluster (a 'server' label, which newer exporters drop) and sizes "
                    f"that differ: two clusters, which is the target's cannot be told: blank; name its exporter "
                    f"by its instance: hw.prometheus.queries.db_size_gb: '{fix}'")
    return None


def window(local_rows: pd.DataFrame | None, started: datetime, ended: datetime) -> tuple[datetime, datetime]:
    """The window to query for a step: the live sampler's beside it when it ran (it
    starts before the clients spawn and stops after they ended: the same seconds as the
    other sources), else the step's own start and end."""
    if local_rows is None or not len(local_rows) or local_rows["ts"].isna().all():
        return started, ended
    ts = pd.to_datetime(local_rows["ts"], utc=True)
    return (ts.min() - pd.Timedelta(seconds=1)).to_pydatetime(), ts.max().to_pydatetime()


def host_of(spec) -> str:
    """The DBMS host's name as the instance label gives it (``db-host:9100`` -> ``db-host``)."""
    return spec.instance.rsplit(":", 1)[0] if re.search(r":\d+$", spec.instance) else spec.instance
