"""Prometheus' HTTP API as benchlib asks it: raw samples of a series selector over a
window (a range vector, ``selector[Ns]`` at the window's end: every sample as scraped,
with its own timestamp, never a value carried over a gap by the lookback), instant
queries, and the scrape interval of each target (``/api/v1/targets``).

Every failure is a :class:`PrometheusError` of one line: an address that does not
answer, an answer that is not Prometheus' API (a web page, another service), an error
Prometheus gives (a bad query).
"""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

import numpy as np


class PrometheusError(Exception):
    """Prometheus cannot be asked (unreachable, not Prometheus, an error answer); one line."""


@dataclass
class Series:
    """One series' raw samples: its labels, timestamps (s since the epoch), values."""
    labels: dict
    t: np.ndarray
    v: np.ndarray


def _not_prometheus(spec, status: int, ctype: str, body: bytes) -> PrometheusError:
    what = (ctype.split(";")[0].strip() or "no content type")
    head = re.sub(r"\s+", " ", body[:60].decode("utf-8", "replace")).strip()
    return PrometheusError(f"{spec.url} does not answer as Prometheus' API (HTTP {status}, {what}"
                           f"{': ' + repr(head) if head else ''}): hw.prometheus.url is the server "
                           "Prometheus listens on (http://prom-host:9090), not an exporter or a proxy's page")


def get(spec, path: str, params: dict) -> dict | list:
    """The ``data`` of a successful answer to ``path`` (``/api/v1/…``)."""
    url = spec.url.rstrip("/") + path + "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=spec.timeout_s) as r:
            status, ctype, raw = r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        status, ctype, raw = e.code, e.headers.get("Content-Type", "") if e.headers else "", e.read()
    except (OSError, ValueError) as e:
        raise PrometheusError(f"Prometheus {spec.url} cannot be reached ({getattr(e, 'reason', e)})") from None
    try:
        body = json.loads(raw)
    except ValueError:
        raise _not_prometheus(spec, status, ctype, raw) from None
    if not isinstance(body, dict) or "status" not in body:
        raise _not_prometheus(spec, status, ctype, raw)
    if body.get("status") != "success":
        raise PrometheusError(f"Prometheus {spec.url}: {body.get('errorType')}: {body.get('error')}")
    return body.get("data")


def check(spec) -> None:
    """One query: PrometheusError (one line) when Prometheus does not answer."""
    data = get(spec, "/api/v1/query", {"query": "vector(1)"})
    if not isinstance(data, dict) or "resultType" not in data:
        raise PrometheusError(f"{spec.url} does not answer as Prometheus' API (no resultType in its answer)")


def parse_matrix(data: dict) -> list[Series]:
    """A ``matrix`` answer's series (as ``get`` returns its data)."""
    out = []
    for r in (data or {}).get("result") or []:
        vals = r.get("values") or []
        t = np.array([float(x) for x, _ in vals], dtype="float64")
        v = np.array([float(y) for _, y in vals], dtype="float64")
        out.append(Series(dict(r.get("metric") or {}), t, v))
    return out


def raw_data(spec, selector: str, start: float, end: float) -> dict:
    """The answer (``data``) holding every sample of ``selector``'s series in
    ``(start, end]``, as scraped: :func:`parse_matrix` reads it."""
    secs = max(1, int(np.ceil(end - start)))
    return get(spec, "/api/v1/query", {"query": f"{selector}[{secs}s]", "time": f"{end:.3f}"})


def instant(spec, query: str, at: float | None = None) -> list[dict]:
    """An instant query's result (``metric`` and ``value`` of each series)."""
    params = {"query": query} | ({"time": f"{at:.3f}"} if at is not None else {})
    data = get(spec, "/api/v1/query", params)
    return list((data or {}).get("result") or [])


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def duration_s(text: str) -> float | None:
    """Prometheus' duration (``15s``, ``1m30s``, ``500ms``) in seconds; None if not one."""
    parts = _DURATION.findall(text or "")
    return sum(float(n) * _UNIT_S[u] for n, u in parts) if parts else None


def parse_targets(data: dict) -> dict[str, float]:
    """instance label -> its scrape interval in seconds, of the active targets."""
    out = {}
    for t in (data or {}).get("activeTargets") or []:
        inst = (t.get("labels") or {}).get("instance")
        s = duration_s(t.get("scrapeInterval") or "")
        if inst and s:
            out[inst] = max(s, out.get(inst, 0.0))
    return out


def _epoch(text: str) -> float | None:
    """RFC 3339 (``2026-11-28T03:54:48.659894038Z``, nanoseconds) in s since the epoch."""
    from datetime import datetime
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", text or "")
    if not m:
        return None
    frac = (m.group(2) or ".0")[:7]
    return datetime.fromisoformat(m.group(1) + frac + (m.group(3).replace("Z", "+00:00"))).timestamp()


def parse_scrapes(data: dict) -> dict[str, float]:
    """instance -> when its last scrape that answered ended (s since the epoch); a target
    that is down is left out (nothing to wait for)."""
    out = {}
    for t in (data or {}).get("activeTargets") or []:
        inst = (t.get("labels") or {}).get("instance")
        at = _epoch(t.get("lastScrape") or "")
        if inst and at is not None and t.get("health") == "up":
            out[inst] = at + float(t.get("lastScrapeDuration") or 0.0)
    return out


def targets(spec) -> dict:
    """``/api/v1/targets`` (active ones); {} when it cannot be had."""
    try:
        return get(spec, "/api/v1/targets", {"state": "active"}) or {}
    except PrometheusError:
        return {}


def scrape_intervals(spec) -> dict[str, float]:
    """instance -> scrape interval (s) as Prometheus says; {} when it cannot say."""
    return parse_targets(targets(spec))
