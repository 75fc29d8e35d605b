"""The tidy tables in the middle of benchlib: their columns, units and dtypes.

Everything that produces results (our driver, an importer of another tool's output)
writes these tables; everything that consumes results (summaries, plots, notebooks)
reads only these. A column a source cannot give stays empty (NA) — never a made-up 0.

Conventions
-----------
- Latencies are microseconds (``*_us``), as YCSB reports them.
- ``second`` is the whole second since the step started (0-based): row ``second=3``
  covers [3 s, 4 s) of the step.
- Operation names follow YCSB (``READ``, ``UPDATE``, ``INSERT``, ``SCAN``,
  ``READ-MODIFY-WRITE``); latency measured from the intended start time of a paced
  operation (coordinated-omission corrected) is the operation ``Intended-<OP>``, as
  YCSB names it with ``measurement.interval=both``.
- Steps are named as in the seed: ``l.pre`` (load), ``l.post`` (index), ``r.L1``,
  ``r.L2`` … (run loops).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from . import points
from .extra_tables import DRIVERS, EXTRA_TABLES, GAUGES, RETURNS  # noqa: F401 - schema.DRIVERS …

if TYPE_CHECKING:  # pandas is imported where a table is built: client processes need only names
    import pandas as pd

# Format history of run folders (meta.json "format_version"):
# 1 - first format: meta.json + steps/latency/intervals/hw Parquet + histograms + ycsb.txt
# 2 - intervals carry interval_s, their length (a step's last second is partial); read
#     from a version-1 folder, it is 1 s but for each step's last second (from its secs)
FORMAT_VERSION = 2

# ---------------------------------------------------------------- op and step vocabulary

# (vocabulary.py; schema.phase_of, schema.INTENDED_PREFIX … as every caller names them)
from .vocabulary import (  # noqa: E402,F401
    BATCH_SUFFIX, COMPLETED, COMPLETED_NAMES, EMPTY, ERROR, FAILED_SUFFIXES, INTENDED_PREFIX, NOT_ERROR_NAMES,
    NOT_ERRORS, NOT_FOUND, OK, PHASES, RETRY, STATUS_NAMES, TOTAL_OP, failed_of, intended, is_batch, is_failed,
    is_intended, loop_of, phase_of, step_name, unit_op)


# ---------------------------------------------------------------- run meta (meta.json)

# the coordinates of a point of the matrix: runs at one point are repetitions (points.py);
# ``target`` is the DBMS configuration (points.target_point): two targets, two points
POINT = ["target", "threads", "target_ops_per_s", "point"]

class RunMeta(BaseModel):
    """A run folder's ``meta.json``: what the runner writes, what every importer fills
    (leaving unknown what its source does not say), what summaries read.

    Keys a source adds beyond these (an importer's ``tool_version``, ``command_line`` …)
    are kept (``extra="allow"``). Dict-like access (``meta["status"]``, ``meta.get``,
    ``update``, ``items``) stays for the callers written against the plain dict; new
    code reads attributes (``meta.status``).
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    format_version: int = FORMAT_VERSION
    benchlib_version: str | None = None
    source: str = "benchlib"            # benchlib, or the tool an importer read (ycsb, pgbench …)
    run_id: str | None = None
    experiment: str | None = None
    config: str | None = None           # the seeds' cnf: the target configuration's name
    status: str = "running"             # running | ok | degraded | failed | interrupted
    error: str | None = None            # one line when not ok
    pid: int | None = None              # the benchmark process while running (killed-run check)
    hostname: str | None = None
    started: str | None = None          # ISO 8601, UTC
    ended: str | None = None
    workload: str | None = None
    workload_properties: dict[str, str] = {}
    matrix_properties: list[str] = []   # the workload's matrix properties the experiment sweeps
    target: dict[str, Any] | str | None = None   # {"name", "url" (password masked), "kind"}
    threads: int | None = None
    processes: int | None = None
    load_processes: int | None = None
    load_processes_auto: int | None = None   # load.processes auto on its host and target (loaders.py)
    target_ops_per_s: float | None = None
    load_target_ops_per_s: float | None = None
    repetition: int | None = None
    seed: int | None = None
    seed_rule: str | None = None        # seeds.RULE; None: older runs (every step drew seed + g)
    planned: list[str] = []             # the step names planned, in order
    parameters: dict[str, Any] | None = None     # the resolved experiment (URLs masked)
    host: dict[str, Any] | None = None
    dbms: dict[str, Any] | None = None  # {"name", "version"}
    # the run loops' hot path (run.driver): python, or c-libpq (the C loop over libpq);
    # "c-libpq+python" when the clients differed; None before a run loop ran
    driver_path: str | None = None
    resumptions: list[dict[str, Any]] = []   # each rerun that kept finished steps: at, pid, kept, from, keys_skipped

    @property
    def workload_point(self) -> str:
        """The run's values of its workload's matrix properties, its ``point`` in POINT."""
        return points.workload_point(self)

    # --- dict-like access, for the callers that read meta.json as a dict
    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        try:
            return (self.__pydantic_extra__ or {})[key]
        except KeyError:
            raise KeyError(key) from None

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def get(self, key: str, default: Any = None) -> Any:
        value = self[key] if key in self.keys() else None
        return default if value is None else value

    def keys(self) -> list[str]:
        """The keys that have a value: the declared ones set, and every extra one."""
        return [k for k in type(self).model_fields if getattr(self, k) is not None] + \
            list(self.__pydantic_extra__ or {})

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self[k]) for k in self.keys()]

    def update(self, other: dict | None = None, **values: Any) -> None:
        for k, v in {**(other or {}), **values}.items():
            self[k] = v

    def setdefault(self, key: str, value: Any) -> Any:
        if self.get(key) is None:
            self[key] = value
        return self[key]

    def to_dict(self) -> dict:
        """The JSON form written to meta.json."""
        return self.model_dump(mode="json")


STEPS = {
    "run_id": "string",
    "step": "string",          # l.pre | l.post | r.L1 ...
    "phase": "string",         # load | index | run
    "loop": "Int64",           # 1..n for run loops, NA otherwise
    "started": "datetime64[ns, UTC]",
    "ended": "datetime64[ns, UTC]",
    "secs": "float64",
    "ops": "Int64",
    "errors": "Int64",         # not OK (NOT_FOUND too); the failed ones among them:
    "failed": "Int64",         # operations that failed (ERROR): never in ops or ops_per_s
    "ops_per_s": "float64",
    "threads": "Int64", "processes": "Int64",   # client threads in all processes; processes
    "target_ops_per_s": "float64",  # NA when unthrottled
    "status": "string",        # ok | degraded | failed | interrupted (docs/reliability.md "Run status")
    "reconnects": "Int64",     # connections the clients lost and reopened (an outage)
    "outage_s": "float64",     # how long the step was out for them (run/outage.py); 0 without
    "pid": "Int64",            # the benchlib process that ran it (a resumed run: several)
    # measured by the step itself at its start and end (any length of step), where the
    # hw table's 1-s samples are too coarse: the clients' getrusage; for a DBMS that runs
    # in the clients (SQLite) its CPU and memory are theirs. NA elsewhere.
    "client_cpu_s": "float64",
    "dbms_cpu_s": "float64",   # the DBMS's CPU over the step: whose, dbms_attribution says
    "dbms_rss_gb": "float64",
    "dbms_vsz_gb": "float64",
    # a server this host sees, read at the step's start and end (hw/sampler.py): which
    # work dbms_cpu_s counts — sessions (the run's own connections' backends), database
    # (the threads of every connection to the run's database), process (the server's one
    # process), server (all the server's processes: its sessions could not be told apart)
    "dbms_attribution": "string",
    "dbms_server_cpu_s": "float64",  # all the server's processes (every database's work)
    "dbms_sessions": "Int64",        # the sessions counted in dbms_cpu_s
    "dbms_read_kb": "float64",       # their storage I/O (/proc/<pid>/io), KiB
    "dbms_write_kb": "float64",
    "other_db_commits": "Int64",     # transactions the server's other databases committed
    # where dbms_server_cpu_s comes from: cgroup (the server's cgroup, its exited processes'
    # CPU included: hw/cgroup.py) or processes (its processes' CPU summed)
    "dbms_cpu_from": "string",
    # the share (0..1) of the step the database host's samples covered (Prometheus: each
    # figure's known rows, hw/promseries.py): the DBMS CPU's, and the least of its other
    # figures' (host CPU, disk, switches, RSS, size); NA where no such source ran
    "dbms_cpu_coverage": "float64",
    "hw_coverage": "float64",
}

LATENCY = {
    "run_id": "string",
    "step": "string",
    "op": "string",
    "count": "Int64",
    "errors": "Int64",
    "mean_us": "float64",
    "min_us": "float64",
    "p50_us": "float64",
    "p90_us": "float64",
    "p95_us": "float64",
    "p99_us": "float64",
    "p999_us": "float64",
    "max_us": "float64",
    "hdr": "string",           # base64 compressed HdrHistogram (empty for imports without one)
}

INTERVALS = {
    "run_id": "string",
    "step": "string",
    "second": "Int64",          # where the interval starts, s since the step's start
    "interval_s": "float64",    # its length: 1 s, a step's last one shorter (ops / this = rate)
    "op": "string",
    "ops": "Int64",
    "errors": "Int64",
    "mean_us": "float64",
    "p99_us": "float64",
    "max_us": "float64",
    "intended_mean_us": "float64",
    "intended_p99_us": "float64",
    "intended_max_us": "float64",
}

HW = {
    "run_id": "string",
    "step": "string",
    "host": "string",           # the host sampled (the controller's, or a Dask worker's)
    "role": "string",           # what runs there: client | dbms | both (HW_ROLES)
    "source": "string",         # who sampled it: local | dask | prometheus (HW_SOURCES)
    "second": "Int64",
    "ts": "datetime64[ns, UTC]",
    "cpu_user": "float64",      # % of all CPUs, as vmstat us
    "cpu_sys": "float64",       # % as vmstat sy
    "cpu_iowait": "float64",    # % as vmstat wa
    "cpu_idle": "float64",      # % as vmstat id
    "ctx_switches": "float64",  # context switches per second (vmstat cs)
    "disk_reads": "float64",    # reads per second (iostat r/s, all disks)
    "disk_writes": "float64",   # writes per second (iostat w/s)
    "disk_read_kb": "float64",  # KB read per second (iostat rkB/s)
    "disk_write_kb": "float64", # KB written per second (iostat wkB/s)
    "dbms_cpu_s": "float64",    # CPU seconds the DBMS server used in this sample
    "dbms_rss_gb": "float64",   # resident set of the DBMS server (all its processes), GB
    "dbms_vsz_gb": "float64",   # virtual size of the DBMS server, GB
    "client_cpu_s": "float64",  # CPU seconds the benchmark clients used in this sample
    "db_size_gb": "float64",    # database size, GB
    "dbms_cpu_from": "string",  # dbms_cpu_s's source: cgroup | processes | process-exporter | cAdvisor
}

HW_ROLES, HW_SOURCES = ("client", "dbms", "both"), ("local", "dask", "prometheus")
TABLES = {"steps": STEPS, "latency": LATENCY, "intervals": INTERVALS, "hw": HW}

# EXTRA_TABLES (returns, gauges, drivers): the tables a workload or a tool writes besides
# those, read on request only; in extra_tables.py


def empty(table: str) -> pd.DataFrame:
    """An empty DataFrame with the table's columns and dtypes (a copy of one made once
    per table: making it column by column costs a conform of a small table most of its time)."""
    return _empty(table).copy()


@functools.lru_cache(maxsize=None)
def _empty(table: str) -> pd.DataFrame:
    import pandas as pd
    cols = TABLES[table] if table in TABLES else EXTRA_TABLES[table]
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in cols.items()})


def conform(table: str, df: pd.DataFrame | None) -> pd.DataFrame:
    """Return ``df`` with exactly the table's columns (missing ones as NA) and dtypes.

    Extra columns are kept after the declared ones, so an importer may carry a figure
    of its source that has no place in the schema yet.
    """
    import pandas as pd
    cols = TABLES[table] if table in TABLES else EXTRA_TABLES[table]
    if df is None or len(df) == 0:
        out = empty(table)
        if df is not None:
            for c in df.columns:
                if c not in out:
                    out[c] = pd.Series(dtype=df[c].dtype)
        return out
    # column by column into a new frame: no copy of a column that has its dtype
    # already, and no consolidation of the float columns into one block (a copy of
    # every figure of a million-row table)
    out = {}
    for c, t in cols.items():
        if c not in df:
            # float columns take NaN: pandas 3 refuses pd.NA in a float64 Series
            col = pd.Series(float("nan") if t == "float64" else pd.NA, index=df.index, dtype=t)
        elif t.startswith("datetime64"):
            col = pd.to_datetime(df[c], utc=True)
        else:
            col = df[c].astype(t)
        out[c] = col.array
    for c in df.columns:
        if c not in cols:
            out[c] = df[c].array
    return pd.DataFrame(out, copy=False)


def conform_hw(df: pd.DataFrame | None) -> pd.DataFrame:
    """``conform("hw", df)``, with the missing float columns added as NaN
    first: conform's ``pd.Series(pd.NA, dtype="float64")`` raises on pandas 3."""
    if df is not None and len(df):
        df = df.copy()
        for c, t in HW.items():
            if c not in df and t == "float64":
                df[c] = float("nan")
    return conform("hw", df)
