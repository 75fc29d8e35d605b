"""The tables a workload or a tool writes besides the four of :mod:`benchlib.schema`
(steps, latency, intervals, hw): their columns and dtypes. A workload's own
(``Workload.extra_tables``) and the drivers table are read on request only
(``load_results`` names them, ``benchlib show --table``); :func:`benchlib.schema.conform`
and :func:`~benchlib.schema.empty` take them by name as they take the four.
"""
from __future__ import annotations

RETURNS = {                    # how each operation ended, per step (LinkBench's retries …)
    "run_id": "string",
    "step": "string",
    "op": "string",
    "status": "string",        # OK | NOT_FOUND | ERROR | RETRY | EMPTY
    "count": "Int64",
}
GAUGES = {                     # what a tool samples of its own client, per interval: not operations
    "run_id": "string",        # (YCSB's measurement.trackjvm: THREAD_COUNT, USED_MEM_MB,
    "step": "string",          # SYS_LOAD_AVG, GCS, GCS_TIME, as its status lines print them)
    "second": "Int64",
    "interval_s": "float64",
    "gauge": "string",
    "samples": "Int64",        # readings in the interval (YCSB: one per status interval)
    "mean": "float64",
    "min": "float64",
    "max": "float64",
    "p50": "float64",
    "p90": "float64",
    "p99": "float64",
    "p999": "float64",
    "p9999": "float64",
}
DRIVERS = {                    # one row per client process of a step: where it ran, what it did
    "run_id": "string",
    "step": "string",
    "client": "Int64",         # its index in the step (its threads follow the previous ones')
    "executor": "string",      # local | dask
    "host": "string",
    "worker": "string",        # the Dask worker's address; blank for a local process
    "pid": "Int64",
    "threads": "Int64",
    "ops": "Int64",            # its operations (batched ones counted as their records)
    "errors": "Int64",
    "cpu_s": "float64",        # its own CPU over the step (getrusage)
    "rss_gb": "float64",       # its resident size at the end, GB = 2**30 bytes
    "voluntary_switches": "Int64",    # its threads' context switches over the step (getrusage):
    "involuntary_switches": "Int64",  # waits that slept, and preemptions
    "error": "string",         # why it failed or was lost; blank when it finished
}
EXTRA_TABLES = {"returns": RETURNS, "gauges": GAUGES, "drivers": DRIVERS}
