"""``benchlib import prometheus RUN --url … --instance …``: a database host's metrics from
Prometheus attached to run folders after the fact, by each step's window.

Each step of each run folder under RUN gets the rows :func:`benchlib.hw.prometheus.fetch`
makes over its window — the live sampler's seconds when the folder has them, else the
step's ``started`` … ``ended`` — with role ``dbms`` and source ``prometheus``; rows of
an earlier import are replaced. The queries are the shipped ones, the run's target
family's (its database size), and ``--query COLUMN=PROMQL`` over them; ``$datname``
is the database of the run's target URL. An imported YCSB or LinkBench run thus gets
its server-side lines too (its steps need their start and end times).
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from ..hw import prometheus
from ..hw.roles import DBMS, tag
from ..hw.spec import PrometheusSpec
from ..store import folders


def _spec(url: str, instance: str, queries: dict[str, str]) -> PrometheusSpec:
    from pydantic import ValidationError
    try:
        return PrometheusSpec(url=url, instance=instance, queries=queries)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise folders.ResultsError(f"prometheus {where}: {err['msg']}") from None


def _target(meta) -> SimpleNamespace:
    """The run's target as far as the queries need it: its family's queries and labels."""
    t = meta.get("target") or {}
    queries, names, port = {}, (), None
    try:
        from ..registries.targets import target_class
        cls = target_class(t.get("kind") or "")
        queries, names, port = cls.prometheus_queries, cls.server_names, cls.default_port
    except (ImportError, ValueError, KeyError):
        pass
    url = t.get("url") or ""
    return SimpleNamespace(url=url, server_names=names, prometheus_queries=queries, default_port=port,
                           server_marks=lambda: _port_mark(url, port))


def _port_mark(url: str, default: int | None) -> list[str]:
    from urllib.parse import urlsplit
    try:
        port = urlsplit(url).port or default
    except ValueError:
        port = default
    return [f":{port}"] if port else []


def attach(path: str | Path, url: str, instance: str, queries: dict[str, str] | None = None,
           out=sys.stdout) -> list[Path]:
    """Attach Prometheus' rows to every run folder at ``path``; the folders done."""
    from ..run.hwsources import fetch_prometheus
    spec = _spec(url, instance, queries or {})
    try:
        prometheus.check(spec)
    except prometheus.PrometheusError as e:
        raise folders.ResultsError(str(e)) from None
    done, warned = [], set()
    for rd in folders.find_runs(path):
        meta = folders.read_meta(rd)
        target = _target(meta)
        steps, hw = folders.read_table(rd, "steps"), folders.read_table(rd, "hw")
        hw = hw[hw["source"].astype("object") != "prometheus"] if len(hw) else hw
        frames = [hw] if len(hw) else []
        for step, started, ended in zip(steps["step"], steps["started"], steps["ended"]):
            if pd.isna(started) or pd.isna(ended):
                print(f"{rd.name} {step}: no start and end time, nothing to query", file=out)
                continue
            own = hw[(hw["step"].astype("object") == step) & (hw["source"].astype("object") == "local")] \
                if len(hw) else None
            got = fetch_prometheus(spec, target, *prometheus.window(own, started.to_pydatetime(),
                                                                    ended.to_pydatetime()), wait=False)
            if got.missing and tuple(got.missing) not in warned:
                warned.add(tuple(got.missing))
                print(f"warning: Prometheus has no series for {', '.join(got.missing)}: blank", file=out)
            for line in got.lines:
                if line not in warned:
                    warned.add(line)
                    print(f"warning: {rd.name} {step}: {line}", file=out)
            df = got.rows
            df.insert(0, "run_id", meta.get("run_id"))
            df.insert(1, "step", step)
            df.insert(2, "host", prometheus.host_of(spec))
            frames.append(tag(df, DBMS, "prometheus"))
        folders.write_table(rd, "hw", pd.concat(frames, ignore_index=True) if frames else None)
        done.append(rd)
    return done
