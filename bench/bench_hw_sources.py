"""What each source of the database host's figures costs (issue 24), over N seconds
against this machine's PostgreSQL, each source alone in turn, as % of one core:

- local: benchlib's sampler in the controller (postmaster tree, database size every 5 s);
- dask: the same sampler in a Dask worker (a LocalCluster worker with dbms=1 standing
  for the database host): the worker process's CPU there (its sampler threads, and the
  worker's own event loop), and the controller's (its Dask client) here;
- prometheus: the controller's CPU for one step's queries (14 query_range calls over the
  window), and on the database host Prometheus and the three exporters scraped at 1 s.

    PYTHONPATH=. .venv/bin/python bench/bench_hw_sources.py [--seconds 30]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
PG = "postgresql://postgres@127.0.0.1:5432/test"


def _cpu(pids) -> float:
    total = 0.0
    for p in pids:
        try:
            t = psutil.Process(p).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def local(secs: float) -> dict:
    from benchlib.targets.postgres import PostgresTarget
    from benchlib.hw.sampler import Sampler
    t = PostgresTarget("pg", PG)
    t.start()
    me = os.getpid()
    c0 = _cpu([me])
    s = Sampler(1.0, dbms_pids=t.dbms_pids, db_size_bytes=t.db_size_bytes).start(None, None)
    time.sleep(secs)
    s.stop()
    t.stop()
    return {"controller %": 100 * (_cpu([me]) - c0) / secs, "sampler threads %": 100 * s.cost_cpu_s / secs}


def dask(secs: float) -> dict:
    from benchlib.run.remote_sampler import DaskDbmsSampler
    exp = SimpleNamespace(dask=SimpleNamespace(dbms_worker=None, scheduler=None))
    d = DaskDbmsSampler.open(exp, None)
    wpid = d.client.run(os.getpid)[d.worker]
    me = os.getpid()
    time.sleep(3)
    c0, w0 = _cpu([me]), _cpu([wpid])
    d.start("bench", "r.L1", {"port": 5432, "names": ["postgres"], "target": ("pg", PG, {})})
    time.sleep(secs)
    d.stop()
    out = {"controller %": 100 * (_cpu([me]) - c0) / secs, "DBMS host worker %": 100 * (_cpu([wpid]) - w0) / secs,
           "sampler threads %": 100 * d.cost_cpu_s / secs}
    d.close()
    return out


def prometheus(secs: float) -> dict:
    import prometheus_stack
    from benchlib.hw import prometheus as P
    from benchlib.hw.spec import PrometheusSpec
    from benchlib.targets.postgres import PostgresTarget
    st = prometheus_stack.start(Path(tempfile.mkdtemp()), PG + "?sslmode=disable")
    try:
        pids = [p.pid for p in st.procs]
        spec = PrometheusSpec(url=st.url, instance=st.instance)
        e0, t0 = _cpu(pids), datetime.now(timezone.utc)
        time.sleep(secs)
        e1, t1 = _cpu(pids), datetime.now(timezone.utc)
        time.sleep(2)
        c0, w0 = time.process_time(), time.perf_counter()
        P.fetch(spec, t0, t1, PostgresTarget.prometheus_queries, {"process_group": "postgres", "datname": "test"})
        c1, w1 = time.process_time(), time.perf_counter()
        return {"controller per step, CPU ms": 1000 * (c1 - c0), "per step, wall ms": 1000 * (w1 - w0),
                "DBMS host: Prometheus + exporters %": 100 * (e1 - e0) / secs}
    finally:
        st.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()
    for name, fn in (("local", local), ("dask", dask), ("prometheus", prometheus)):
        r = fn(a.seconds)
        print(f"{name:<11} load {os.getloadavg()[0]:.1f}  " + "  ".join(f"{k} {v:.2f}" for k, v in r.items()),
              flush=True)


if __name__ == "__main__":
    main()
