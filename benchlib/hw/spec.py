"""The experiment's ``hw:`` section: where the database host's figures come from.

::

    hw:
      dbms: local            # local | dask | prometheus | none, or a list of them
      remote: false          # true: the sampler on this host never reads the server
      dbms_cgroup: /sys/fs/cgroup/system.slice/postgresql@16-main.service   # its CPU (local)
      prometheus:            # for dbms: prometheus (and `benchlib import prometheus`)
        url: http://db-host:9090
        instance: db-host:9100          # node_exporter's instance label
        match: 'job="db"'               # the host's other exporters (else the instance's host, any port)
        queries: {dbms_cpu_s: 'sum(...)'}   # hw column -> PromQL, over the shipped ones

``local`` is today's sampler: the server's processes found on the controller's host
(a loopback URL), its disks and CPU those of that host. ``dask``: benchlib's sampler
run by a Dask worker on the database host (``--resources dbms=1``, or the worker named
``dask.dbms_worker``). ``prometheus``: each figure's raw samples over the step's window,
asked after each step and differenced per series (:mod:`benchlib.hw.prometheus`). A list measures with each (to compare them); the step
lines take the DBMS figures from a ``dbms`` host's rows before the controller's.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DBMS_SOURCES = ("local", "dask", "prometheus", "none")


class PrometheusSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)   # durations: finite (params' rule)
    url: str = Field(pattern=r"^https?://[A-Za-z0-9_.\-\[\]:]+(/.*)?$")
    instance: str = Field(min_length=1)       # node_exporter's target as Prometheus labels it
    # the label matcher of the database host's other exporters (process, postgres …);
    # None: the instance's host with any port
    match: str | None = Field(None, pattern=r'^\s*[A-Za-z_]\w*\s*(=|!=|=~|!~)\s*"[^"]*"'
                                            r'(\s*,\s*[A-Za-z_]\w*\s*(=|!=|=~|!~)\s*"[^"]*")*\s*$')
    step_s: float = Field(1.0, gt=0, le=60)   # rows' length: the step's own seconds
    timeout_s: float = Field(10.0, gt=0, le=3600)
    queries: dict[str, str] = Field(default_factory=dict)   # hw column -> PromQL
    labels: dict[str, str] = Field(default_factory=dict)    # $name in the queries -> value

    @field_validator("queries")
    @classmethod
    def _columns(cls, v: dict) -> dict:
        from .prometheus import QUERIES, selector_of
        bad = sorted(set(v) - set(QUERIES))
        if bad:
            raise ValueError(f"{bad[0]!r} is not a column Prometheus can give "
                             f"(one of: {', '.join(QUERIES)})")
        for col, q in v.items():
            if selector_of(q) is None:
                raise ValueError(f"{col}: {q!r} is not a series selector (metric{{label=\"…\"}}, or "
                                 "sum(…) of one): benchlib differences each series' raw samples itself")
        return v


class HwSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dbms: list[str] = Field(default_factory=lambda: ["local"])
    remote: bool = False           # the server is another host's: the local sampler may not read it
    # the server's cgroup on this host, read by the local sampler as the DBMS's CPU (exited
    # processes' included); None: the one benchlib made, else the server's own (hw/cgroup.py)
    # (an absolute path here; that it is a cgroup on this host: checked before the run)
    dbms_cgroup: str | None = Field(None, pattern=r"^/")
    prometheus: PrometheusSpec | None = None

    @field_validator("dbms", mode="before")
    @classmethod
    def _list(cls, v):
        v = [v] if isinstance(v, str) else v
        bad = [s for s in v or [] if s not in DBMS_SOURCES]
        if bad:
            import difflib
            near = difflib.get_close_matches(str(bad[0]).lower(), DBMS_SOURCES, n=1, cutoff=0.5)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(f"dbms: {bad[0]!r}: one of {', '.join(DBMS_SOURCES)}{hint}")
        return list(v or [])

    @model_validator(mode="after")
    def _prometheus(self):
        if "prometheus" in self.dbms and self.prometheus is None:
            raise ValueError("dbms: prometheus needs a prometheus: {url:, instance:} section")
        return self

    def local_reads_dbms(self) -> bool:
        """Whether the controller's sampler may count the server's processes and size."""
        return "local" in self.dbms and not self.remote
