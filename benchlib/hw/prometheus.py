"""The database host's hw rows from Prometheus: one ``query_range`` per figure over a
step's window, at the scrape interval's resolution (``hw.prometheus.step_s``, 1 s).

Every query is evaluated on a grid ``t0 = start, t1 = t0 + step …`` up to one step past
the end, so the last interval holds what the step did until its end. A row covers
``[t_k, t_k+1)`` (``second`` = k × step since the window's start, ``ts`` = its end,
as the live sampler's) and is made from the two readings that bound it, by the
column's kind in :data:`QUERIES`:

- ``cpu``: a counter of CPU seconds in some modes, in % of the ``cpu_total`` query's
  increase (vmstat's us/sy/wa/id, as the live sampler's);
- ``rate``: a counter's increase per second (context switches, disk operations; bytes
  scaled to KiB);
- ``delta``: a counter's increase (the server processes' CPU seconds);
- ``gauge``: the reading at the row's end (RSS, VSZ, database size; bytes scaled to GB).

Counters are read raw, not through ``rate()``: their differences add up over a step
exactly, and no extrapolation enters a 1-s window. ``$instance`` in a query is
``hw.prometheus.instance``, ``$disks`` a regex of whole disks (the live sampler's
:func:`~benchlib.hw.disks.is_whole_disk`), ``$process_group`` process-exporter's group
of the server (its program names), ``$datname`` the database; ``hw.prometheus.labels``
sets any of them, ``hw.prometheus.queries`` replaces any query (Kubernetes: cAdvisor's
``container_cpu_usage_seconds_total{pod=…}`` for ``dbms_cpu_s`` …). A figure whose query
finds no series stays blank.
"""
from __future__ import annotations

import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone

import pandas as pd

from .processes import GB

_NODE = 'instance="$instance"'
# hw column -> (PromQL, kind, scale); the server's own figures come from its target too
QUERIES: dict[str, tuple[str, str, float]] = {
    "cpu_total": (f"sum(node_cpu_seconds_total{{{_NODE}}})", "counter", 1.0),
    "cpu_user": (f'sum(node_cpu_seconds_total{{{_NODE},mode=~"user|nice"}})', "cpu", 1.0),
    "cpu_sys": (f'sum(node_cpu_seconds_total{{{_NODE},mode=~"system|irq|softirq"}})', "cpu", 1.0),
    "cpu_iowait": (f'sum(node_cpu_seconds_total{{{_NODE},mode="iowait"}})', "cpu", 1.0),
    "cpu_idle": (f'sum(node_cpu_seconds_total{{{_NODE},mode="idle"}})', "cpu", 1.0),
    "ctx_switches": (f"sum(node_context_switches_total{{{_NODE}}})", "rate", 1.0),
    "disk_reads": (f'sum(node_disk_reads_completed_total{{{_NODE},device=~"$disks"}})', "rate", 1.0),
    "disk_writes": (f'sum(node_disk_writes_completed_total{{{_NODE},device=~"$disks"}})', "rate", 1.0),
    "disk_read_kb": (f'sum(node_disk_read_bytes_total{{{_NODE},device=~"$disks"}})', "rate", 1 / 1024),
    "disk_write_kb": (f'sum(node_disk_written_bytes_total{{{_NODE},device=~"$disks"}})', "rate", 1 / 1024),
    "dbms_cpu_s": ('sum(namedprocess_namegroup_cpu_seconds_total{groupname=~"$process_group"})', "delta", 1.0),
    "dbms_rss_gb": ('sum(namedprocess_namegroup_memory_bytes{groupname=~"$process_group",memtype="resident"})',
                    "gauge", 1 / GB),
    "dbms_vsz_gb": ('sum(namedprocess_namegroup_memory_bytes{groupname=~"$process_group",memtype="virtual"})',
                    "gauge", 1 / GB),
    "db_size_gb": ("", "gauge", 1 / GB),     # the target's (postgres_exporter, mysqld_exporter …)
}
WHOLE_DISKS = r"(s|v|xv|h)d[a-z]+|nvme[0-9]+n[0-9]+|mmcblk[0-9]+"


class PrometheusError(Exception):
    """Prometheus cannot be asked (unreachable, an error answer); one line."""


def queries(spec, target_queries: dict[str, str] | None = None,
            labels: dict[str, str] | None = None) -> dict[str, str]:
    """column -> PromQL as it is sent: shipped, the target's, the spec's; labels filled."""
    q = {c: p for c, (p, _, _) in QUERIES.items()}
    q.update(target_queries or {})
    q.update(spec.queries)
    values = {"instance": spec.instance, "disks": WHOLE_DISKS, **(labels or {}), **spec.labels}
    fill = re.compile(r"\$([a-z_]+)")
    return {c: fill.sub(lambda m: values.get(m.group(1), m.group(0)), p) for c, p in q.items() if p}


def _get(spec, path: str, params: dict) -> dict:
    url = spec.url.rstrip("/") + path + "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=spec.timeout_s) as r:
            body = json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            body = json.loads(e.read())
        except ValueError:
            raise PrometheusError(f"Prometheus {spec.url}: HTTP {e.code}") from None
    except (OSError, ValueError) as e:
        raise PrometheusError(f"Prometheus {spec.url} cannot be reached ({getattr(e, 'reason', e)})") from None
    if body.get("status") != "success":
        raise PrometheusError(f"Prometheus {spec.url}: {body.get('errorType')}: {body.get('error')}")
    return body["data"]


def check(spec) -> None:
    """One query: PrometheusError (one line) when Prometheus does not answer."""
    _get(spec, "/api/v1/query", {"query": "vector(1)"})


def _series(spec, query: str, start: float, end: float) -> pd.Series | None:
    """The query's value at each grid point (series summed); None: no series."""
    data = _get(spec, "/api/v1/query_range", {"query": query, "start": f"{start:.3f}",
                                              "end": f"{end:.3f}", "step": f"{spec.step_s:g}"})
    if not data.get("result"):
        return None
    out = None
    for r in data["result"]:
        s = pd.Series({round((float(t) - start) / spec.step_s): float(v) for t, v in r["values"]})
        out = s if out is None else out.add(s, fill_value=0.0)
    return out


def fetch(spec, start: datetime, end: datetime, target_queries: dict[str, str] | None = None,
          labels: dict[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``[start, end]`` (see the module docstring) and the columns whose
    query found no series (blank)."""
    t0, t1 = start.timestamp(), end.timestamp()
    n = max(1, math.ceil((t1 - t0) / spec.step_s - 1e-6))
    raw, missing = {}, []
    for col, q in queries(spec, target_queries, labels).items():
        s = _series(spec, q, t0, t0 + n * spec.step_s)
        if s is None:
            missing.append(col)
        else:
            raw[col] = s.reindex(range(n + 1))
    idx = pd.RangeIndex(n)
    out = pd.DataFrame({"second": [math.floor(k * spec.step_s + 1e-9) for k in idx],
                        "ts": [datetime.fromtimestamp(t0 + (k + 1) * spec.step_s, timezone.utc) for k in idx]})
    total = _diff(raw.get("cpu_total"), n)
    for col, s in raw.items():
        kind, scale = QUERIES[col][1:] if col in QUERIES else ("gauge", 1.0)
        d = _diff(s, n)
        if kind == "cpu":
            out[col] = 100 * d / total.where(total > 0) if total is not None else float("nan")
        elif kind == "rate":
            out[col] = d * scale / spec.step_s
        elif kind == "delta":
            out[col] = d * scale
        elif kind == "gauge":
            out[col] = s.iloc[1:].to_numpy() * scale
    return out, [c for c in missing if c != "cpu_total"]


def _diff(s: pd.Series | None, n: int) -> pd.Series | None:
    """Increase over each interval; a counter that went back (a restart) is blank."""
    if s is None:
        return None
    d = pd.Series(s.to_numpy()[1:] - s.to_numpy()[:-1], index=range(n))
    return d.where(d >= 0)


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
