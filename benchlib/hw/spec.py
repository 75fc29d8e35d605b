"""The experiment's ``hw:`` section: where the database host's figures come from.

::

    hw:
      dbms: local            # local | dask | prometheus | none, or a list of them
      remote: false          # true: the sampler on this host never reads the server
      prometheus:            # for dbms: prometheus (and `benchlib import prometheus`)
        url: http://db-host:9090
        instance: db-host:9100          # node_exporter's instance label
        queries: {dbms_cpu_s: 'sum(...)'}   # hw column -> PromQL, over the shipped ones

``local`` is today's sampler: the server's processes found on the controller's host
(a loopback URL), its disks and CPU those of that host. ``dask``: benchlib's sampler
run by a Dask worker on the database host (``--resources dbms=1``, or the worker named
``dask.dbms_worker``). ``prometheus``: one ``query_range`` per query after each step
(:mod:`benchlib.hw.prometheus`). A list measures with each (to compare them); the step
lines take the DBMS figures from a ``dbms`` host's rows before the controller's.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DBMS_SOURCES = ("local", "dask", "prometheus", "none")


class PrometheusSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)   # durations: finite (params' rule)
    url: str = Field(pattern=r"^https?://[A-Za-z0-9_.\-\[\]:]+(/.*)?$")
    instance: str = Field(min_length=1)       # node_exporter's target as Prometheus labels it
    step_s: float = Field(1.0, gt=0, le=60)   # query_range resolution (the scrape interval)
    timeout_s: float = Field(10.0, gt=0, le=3600)
    queries: dict[str, str] = Field(default_factory=dict)   # hw column -> PromQL
    labels: dict[str, str] = Field(default_factory=dict)    # $name in the queries -> value

    @field_validator("queries")
    @classmethod
    def _columns(cls, v: dict) -> dict:
        from .prometheus import QUERIES
        bad = sorted(set(v) - set(QUERIES))
        if bad:
            raise ValueError(f"{bad[0]!r} is not a column Prometheus can give "
                             f"(one of: {', '.join(QUERIES)})")
        return v


class HwSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dbms: list[str] = Field(default_factory=lambda: ["local"])
    remote: bool = False           # the server is another host's: the local sampler may not read it
    prometheus: PrometheusSpec | None = None

    @field_validator("dbms", mode="before")
    @classmethod
    def _list(cls, v):
        v = [v] if isinstance(v, str) else v
        bad = [s for s in v or [] if s not in DBMS_SOURCES]
        if bad:
            raise ValueError(f"dbms: {bad[0]!r}: one of {', '.join(DBMS_SOURCES)}")
        return list(v or [])

    @model_validator(mode="after")
    def _prometheus(self):
        if "prometheus" in self.dbms and self.prometheus is None:
            raise ValueError("dbms: prometheus needs a prometheus: {url:, instance:} section")
        return self

    def local_reads_dbms(self) -> bool:
        """Whether the controller's sampler may count the server's processes and size."""
        return "local" in self.dbms and not self.remote
