"""The database on another host (issue 24): hw rows per host, role and source; the DBMS
figures from the DBMS host's rows only; a sampler on that host through Dask; Prometheus
over each step's window. Real parts only: the machine's PostgreSQL, a LocalCluster
worker with ``dbms=1`` standing for the database host, and a real Prometheus with its
exporters (tests/prometheus_stack.py; skipped, saying why, where they are missing)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT, small_experiment

from benchlib import load_results, run_experiment
from benchlib.params import ParameterError, validate
from benchlib.summaries import eff_op, summarize
from benchlib.summaries.experiment import experiment_summary
from benchlib.summaries.hwroles import one_source


@pytest.fixture(scope="module")
def prom(pg_url, tmp_path_factory):
    import prometheus_stack
    if why := prometheus_stack.missing():
        pytest.skip(f"Prometheus: {why}")
    stack = prometheus_stack.start(tmp_path_factory.mktemp("prom"), pg_url + "?sslmode=disable")
    yield stack
    stack.stop()


def _run(url, data_dir, name, hw, secs=3, **over):
    props = {"recordcount": 20000, "operationcount": 10**9, "readproportion": 0.5,
             "updateproportion": 0.5, "requestdistribution": "zipfian",
             "table": f"ycsb_remote_{name}_{os.getpid()}"}
    exp = validate(small_experiment(name, url, properties=props, hw=hw,
                                    run={"loop_secs": secs, "threads": [2]}, **over), "t")
    res = run_experiment(exp, data_dir, progress=False)
    assert res.ok, res.runs
    return load_results(data_dir / name)


def _step(eff: pd.DataFrame, step: str = "r.L1") -> pd.Series:
    return eff[eff["step"] == step].iloc[0]


@pytest.mark.postgres
def test_remote_server_no_client_figure_under_dbms_columns(pg_own_db, data_dir):
    # this host named otherwise (localhost, not 127.0.0.1) and the sampler told it is remote
    url = pg_own_db.replace("127.0.0.1", "localhost")
    t = _run(url, data_dir, "rmt", {"remote": True})
    hw = t["hw"]
    assert set(hw["role"]) == {"client"} and set(hw["source"]) == {"local"}
    assert hw["dbms_cpu_s"].isna().all() and hw["db_size_gb"].isna().all()
    assert hw["client_cpu_s"].sum() > 0          # the client host's own figures are kept
    row = _step(eff_op(t))
    for col in ("dsecpq", "dsec", "cpupi", "rpi", "rkbpi", "wkbpi", "cspi", "dbgb"):
        assert pd.isna(row[col]), col            # never the client host's under a DBMS heading
    assert row["csec"] > 0
    assert "hw: DBMS columns blank" in summarize(t, "eff.op")
    tests = experiment_summary(t).tests
    assert any(not ok and "no source sampled the database host" in msg for ok, msg in tests)


@pytest.mark.postgres
def test_old_hw_rows_get_role_and_source_on_read(pg_own_db, data_dir):
    t = _run(pg_own_db, data_dir, "old", {})
    run_dir = data_dir / "old" / t["runs"]["run_id"].iat[0]
    hw = pd.read_parquet(run_dir / "hw.parquet").drop(columns=["role", "source"])
    hw.to_parquet(run_dir / "hw.parquet")        # a folder from before the two columns
    again = load_results(data_dir / "old")
    assert set(again["hw"]["role"]) == {"both"} and set(again["hw"]["source"]) == {"local"}
    assert "hw:" not in summarize(again, "eff.op")    # the local case needs no legend
    a, b = _step(eff_op(t)), _step(eff_op(again))
    assert a["dsecpq"] == pytest.approx(b["dsecpq"]) and a["cpupi"] == pytest.approx(b["cpupi"])


@pytest.mark.postgres
def test_dask_sampler_on_the_dbms_host_with_the_local_executor(pg_own_db, data_dir):
    t = _run(pg_own_db, data_dir, "dsk", {"dbms": "dask", "remote": True})
    hw = t["hw"]
    dbms = hw[hw["role"] == "dbms"]
    assert set(dbms["source"]) == {"dask"} and set(dbms["step"]) == {"l.pre", "r.L1"}
    assert dbms["dbms_cpu_s"].sum() > 0.1 and dbms["db_size_gb"].notna().any()
    assert hw[hw["role"] == "client"]["dbms_cpu_s"].isna().all()   # the controller was told: remote
    row = _step(eff_op(t))
    assert row["dsecpq"] > 0 and row["cpupi"] > 0 and row["dbgb"] > 0
    assert "(dask; dsec: processes); client CPU from" in summarize(t, "eff.op")   # the legend: not the local case


def test_prometheus_needs_its_section():
    with pytest.raises(ParameterError, match="prometheus"):
        validate(small_experiment("p", "sqlite:///x.db", hw={"dbms": "prometheus"}), "t")
    with pytest.raises(ParameterError, match="one of local, dask, prometheus"):
        validate(small_experiment("p", "sqlite:///x.db", hw={"dbms": "ssh"}), "t")
    with pytest.raises(ParameterError, match="not a column Prometheus can give"):
        validate(small_experiment("p", "sqlite:///x.db", hw={"dbms": "prometheus", "prometheus": {
            "url": "http://h:9090", "instance": "h:9100", "queries": {"cpu_percent": "x"}}}), "t")
    exp = validate(small_experiment("p", "sqlite:///x.db", hw={"dbms": ["dask", "prometheus"], "prometheus": {
        "url": "http://h:9090", "instance": "h:9100"}}), "t")
    assert exp.hw.dbms == ["dask", "prometheus"] and not exp.hw.local_reads_dbms()


def test_shipped_queries_fill_their_labels():
    from benchlib.hw import prometheus
    from benchlib.hw.spec import PrometheusSpec
    from benchlib.targets.postgres import PostgresTarget
    spec = PrometheusSpec(url="http://h:9090", instance="db:9100", labels={"datname": "bench"})
    q = prometheus.queries(spec, PostgresTarget.prometheus_queries, {"process_group": "postgres", "datname": "x", "port": "5432"})
    assert set(q) == set(prometheus.QUERIES)
    assert not any("$" in v for v in q.values())
    assert 'datname="bench"' in q["db_size_gb"] and 'instance="db:9100"' in q["disk_write_kb"]
    assert prometheus.host_of(spec) == "db"


def test_unreachable_prometheus_is_one_line_before_anything_runs(tmp_path):
    exp = small_experiment("unr", "sqlite:///" + str(tmp_path / "x.db"),
                           hw={"dbms": "prometheus", "prometheus": {"url": "http://127.0.0.1:1",
                                                                    "instance": "db:9100"}})
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(exp))
    p = subprocess.run([sys.executable, "-m", "benchlib.cli", "run", str(tmp_path / "e.yaml"),
                        "--data-dir", str(tmp_path / "data")], capture_output=True, text=True,
                       cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Prometheus" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "data" / "unr").exists() or not any((tmp_path / "data" / "unr").glob("*/meta.json"))


@pytest.mark.postgres
def test_three_sources_agree(pg_own_db, data_dir, prom, capsys):
    """One run measured at once by the local sampler, a Dask sampler worker and Prometheus."""
    hw = {"dbms": ["local", "dask", "prometheus"],
          "prometheus": {"url": prom.url, "instance": prom.instance,
                         "queries": {"dbms_vsz_gb": "sum(no_such_series_here)"}}}
    t = _run(pg_own_db, data_dir, "three", hw, secs=12)
    warned = [x for x in capsys.readouterr().out.splitlines() if "no series" in x]
    assert len(warned) == 1 and "dbms_vsz_gb" in warned[0]      # once per run, not per step
    prom_rows = t["hw"][t["hw"]["source"] == "prometheus"]
    assert prom_rows["dbms_vsz_gb"].isna().all() and prom_rows["dbms_rss_gb"].notna().any()
    assert set(t["hw"]["source"]) == {"local", "dask", "prometheus"}
    rows = {s: _step(eff_op(one_source(t, s))) for s in ("local", "dask", "prometheus")}
    # the disks are the host's, written by whatever else runs there too: two sources whose
    # seconds start at other moments may each count, at either end of the step, one
    # second the other does not — the bound is the step's own busiest second at each end
    hw = t["hw"][t["hw"]["step"] == "r.L1"]
    secs = hw[hw["source"] == "local"]["disk_write_kb"]
    edge_wkbpi = 2 * float(hw["disk_write_kb"].max()) / (rows["local"]["ips"] * len(secs))
    for s in ("dask", "prometheus"):
        for col, tol in (("dsecpq", 0.10), ("cpupi", 0.10)):
            assert rows[s][col] == pytest.approx(rows["local"][col], rel=tol), (s, col, rows)
        assert abs(rows[s]["wkbpi"] - rows["local"]["wkbpi"]) <= 0.15 * rows["local"]["wkbpi"] + edge_wkbpi, \
            (s, edge_wkbpi, rows)
        assert abs(rows[s]["dbgb"] - rows["local"]["dbgb"]) <= 0.01, (s, rows)   # 2 decimals
    # after the fact: the same windows asked again through `benchlib import prometheus`
    runs = data_dir / "three"
    p = subprocess.run([sys.executable, "-m", "benchlib.cli", "import", "prometheus", str(runs), "--url", prom.url,
                        "--instance", prom.instance], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert "attached Prometheus" in p.stdout
    again = load_results(runs)
    assert (again["hw"]["source"] == "prometheus").sum() == (t["hw"]["source"] == "prometheus").sum()
    imported = _step(eff_op(one_source(again, "prometheus")))
    for col in ("dsecpq", "cpupi", "wkbpi", "dbgb"):
        assert imported[col] == pytest.approx(rows["prometheus"][col], rel=0.02), col


def test_import_prometheus_bad_input_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "benchlib.cli", "import", "prometheus", str(tmp_path)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "--url" in p.stderr


@pytest.mark.postgres
def test_dask_executor_keeps_drivers_off_the_dbms_worker(pg_own_db, data_dir, tmp_path):
    """A scheduler with two driver workers and a `dask worker --resources dbms=1` (the
    database host's): the drivers run on the two, the sampler on the third."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed (extra: dask)")
    from benchlib.run.dask_executor import DaskExecutor
    ex = DaskExecutor.connect(None, workers=2)
    log = open(tmp_path / "worker.log", "wb")
    w = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", ex.cluster.scheduler_address,
                          "--resources", "dbms=1", "--nthreads", "1", "--no-dashboard", "--name", "db"],
                         stdout=log, stderr=log, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        ex.client.wait_for_workers(3, timeout=60)
        info = ex.client.sync(ex.client.scheduler.identity, n_workers=-1)["workers"]
        db = [a for a, i in info.items() if str(i.get("name")) == "db"]
        t = _run(pg_own_db, data_dir, "dex", {"dbms": "dask", "remote": True}, executor="dask",
                 dask={"scheduler": ex.cluster.scheduler_address},
                 load={"threads": 2, "processes": [2]})
    finally:
        w.terminate()
        w.wait(timeout=30)
        ex.close()
    drivers = t["drivers"]
    dbms = t["hw"][t["hw"]["role"] == "dbms"]
    assert len(drivers) and set(dbms["source"]) == {"dask"} and dbms["dbms_cpu_s"].sum() > 0
    assert drivers["worker"].nunique() == 2
    assert db and db[0] not in set(drivers["worker"].astype(str))


@pytest.mark.postgres
def test_dask_sampler_streams_rows_and_keeps_them_when_its_worker_is_lost(pg_url, tmp_path):
    """Rows come as they are taken; a `dask worker` killed mid-step leaves what it sent."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed (extra: dask)")
    from distributed import Client, LocalCluster

    from benchlib.run.remote_sampler import DaskDbmsSampler, StreamedOnly
    cluster = LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=":0")
    client = Client(cluster)
    log = open(tmp_path / "worker.log", "wb")
    w = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                          "--resources", "dbms=1", "--nthreads", "1", "--no-dashboard", "--no-nanny"],
                         stdout=log, stderr=log, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        client.wait_for_workers(1, timeout=60)
        exp = SimpleNamespace(dask=SimpleNamespace(dbms_worker=None, scheduler=cluster.scheduler_address))
        s = DaskDbmsSampler.open(exp, SimpleNamespace(client=client))
        s.start("r", "r.L1", {"port": 5432, "names": ["postgres"], "target": None})
        deadline = time.monotonic() + 30
        while len(s.receive()) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(s.streamed) >= 2                    # during the step, not at its end
        w.kill()
        w.wait(timeout=30)
        # the scheduler (this process's) tries the dead worker's port until its connect
        # timeout, 30 s by default, before the call fails: 2 s here, the same failure
        import dask
        with dask.config.set({"distributed.comm.timeouts.connect": "2s"}), \
                pytest.raises(StreamedOnly) as lost:
            s.stop()
        assert len(lost.value.rows) >= 2 and lost.value.rows["dbms_cpu_s"].notna().any()
    finally:
        if w.poll() is None:
            w.kill()
        client.close()
        cluster.close()


def _cluster_cpu_s(postmaster: int) -> float:
    """The cluster's CPU seconds from /proc: its processes' and the postmaster's reaped children's."""
    import psutil
    pm = psutil.Process(postmaster)
    total = sum(c.user + c.system for c in [pm.cpu_times()])
    for p in pm.children(recursive=True):
        try:
            c = p.cpu_times()
            total += c.user + c.system
        except psutil.Error:
            pass
    c = pm.cpu_times()
    return total + c.children_user + c.children_system


@pytest.mark.postgres
def test_prometheus_faults_on_the_real_stack(pg_own_db, prom):
    """Issue 38 on the real stack: process-exporter killed and restarted mid-step, a second
    postgres_exporter of the same cluster scraped beside the first: each figure within 10 %
    of /proc or blank with a line saying why; the size counted once; no row 0 where the host
    worked."""
    import threading
    from datetime import datetime, timezone

    import psycopg

    from benchlib.hw.processes import GB
    from benchlib.hw.spec import PrometheusSpec
    from benchlib.run.hwsources import fetch_prometheus
    from benchlib.targets.postgres import PostgresTarget
    prom.add_job("postgres2", ["prometheus-postgres-exporter", "--web.listen-address=127.0.0.1:{port}",
                               "--disable-settings-metrics"])
    target = PostgresTarget("t", pg_own_db)
    target.start()
    stop = threading.Event()

    def busy():
        with psycopg.connect(pg_own_db, autocommit=True) as c:
            while not stop.is_set():
                c.execute("SELECT sum(i) FROM generate_series(1, 300000) i")

    worker = threading.Thread(target=busy, daemon=True)
    try:
        worker.start()
        time.sleep(2)
        start, before = datetime.now(timezone.utc), _cluster_cpu_s(target._postmaster)
        time.sleep(3)
        prom.restart(1, 2.0)                  # process-exporter: killed, back 2 s later
        time.sleep(5)
        end, after = datetime.now(timezone.utc), _cluster_cpu_s(target._postmaster)
        got = fetch_prometheus(PrometheusSpec(url=prom.url, instance=prom.instance), target, start, end)
        size = target.db_size_bytes() / GB
    finally:
        stop.set()
        worker.join(timeout=30)
        target.stop()
    rows, why = got.rows, " | ".join(got.lines)
    dsec = rows["dbms_cpu_s"].sum(min_count=1)
    if pd.isna(dsec):
        assert "dbms_cpu_s: process-exporter" in why and "blank" in why, why
    else:
        assert dsec == pytest.approx(after - before, rel=0.10), why
    assert (rows["cpu_user"] > 0).all() and (rows["ctx_switches"] > 0).all()
    assert rows["db_size_gb"].iloc[-1] == pytest.approx(size, rel=0.05), why     # once, not twice
    assert "process-exporter's group" not in why      # the cluster's own group, by its data directory
    from benchlib.hw.prometheus import short_loops
    spec = PrometheusSpec(url=prom.url, instance=prom.instance)
    assert short_loops(spec, 12) is None and "run.loop_secs: 2 or more" in short_loops(spec, 1.5)


def _cgroup_usage_s(path) -> float:
    """The cgroup's CPU seconds as the kernel counts them (v1 cpuacct.usage, v2 cpu.stat)."""
    if (path / "cpuacct.usage").is_file():
        return int((path / "cpuacct.usage").read_text()) / 1e9
    return next(int(x.split()[1]) for x in (path / "cpu.stat").read_text().splitlines()
                if x.startswith("usage_usec ")) / 1e6


@pytest.mark.postgres
def test_load_step_dbms_cpu_from_the_servers_cgroup_series(prom, tmp_path, capsys):
    """Issue 38, 1(c): a YCSB load (8 loader connections, gone when it ends) on a provisioned
    PostgreSQL that benchlib put in a cgroup of its own; Prometheus scrapes, beside the stack's
    exporters, a stand-in for cAdvisor (tests/cadvisor_standin.py: cAdvisor's metric and
    labels from the kernel's cgroup counters; no real cAdvisor runs here) and a
    process-exporter that groups this cluster by its data directory. The load step's
    dbms_cpu_s comes from the cgroup series (dbms_cpu_from cAdvisor), within 15 % of the
    cgroup's own counter read by this test over the step's rows; process-exporter's figure
    for the same window is still its own (printed beside)."""
    import json
    import threading

    import cadvisor_standin
    from test_cgroup import HAVE_CGROUP, HAVE_PG

    from benchlib.hw import prometheus
    from benchlib.hw.spec import HwSpec, PrometheusSpec
    from benchlib.run.hwsources import cgroup_label, fetch_prometheus
    from benchlib.targets.postgres_provisioned import ProvisionedPostgresTarget
    if HAVE_PG or HAVE_CGROUP:
        pytest.skip(HAVE_PG or HAVE_CGROUP)
    pg = ProvisionedPostgresTarget("cadv", "postgres-provisioned", {}, data_dir=tmp_path)
    pg.set_run_dir(tmp_path)
    standin = cadvisor_standin.StandIn()
    datadir = str(pg.pgdata.resolve())
    (tmp_path / "pe.yml").write_text(json.dumps({"process_names": [
        {"name": f"postgres {datadir}", "comm": ["postgres"], "cmdline": [re.escape(datadir) + r"(\s|$)"]}]}))
    readings, stop = [], threading.Event()

    def read_cgroup():        # the truth: the cgroup's counter, every 20 ms
        while not stop.wait(0.02):
            readings.append((time.time(), _cgroup_usage_s(pg.own_cgroup.path)))

    reader = threading.Thread(target=read_cgroup, daemon=True)
    try:    # Prometheus picks up the two jobs while the cluster starts
        prom.scrape("cadvisor", standin.port)
        prom.add_job("process_cadv", ["prometheus-process-exporter", "-config.path", str(tmp_path / "pe.yml"),
                                      "-threads=false", "-web.listen-address", "127.0.0.1:{port}"])
        pg.start()
        assert pg.own_cgroup is not None
        prom.scraped("cadvisor")
        prom.scraped("process_cadv")
        reader.start()
        spec = {"url": prom.url, "instance": prom.instance}
        # the load must span several 1-s scrapes (a step shorter than two is blank, by
        # design): 100,000 records took ~5 s on a busy machine, ~1 s on an idle one, so
        # the records grow until the load step's rows span 4 s
        for records in (100_000, 400_000, 1_600_000):
            props = {"recordcount": records, "fieldcount": 2, "operationcount": 10**9,
                     "table": f"ycsb_cadv_{os.getpid()}"}
            exp = validate(small_experiment("cadv", pg.conninfo, properties=props, load={"threads": 8},
                                            hw={"dbms": ["prometheus"], "prometheus": spec},
                                            run={"loop_secs": 2, "threads": [1]}), "t")
            data = tmp_path / f"data-{records}"
            res = run_experiment(exp, data, progress=False)
            assert res.ok, res.runs
            t = load_results(data / "cadv")
            rows = t["hw"][(t["hw"]["source"] == "prometheus") & (t["hw"]["step"] == "l.pre")]
            if rows["ts"].max() - rows["ts"].min() >= pd.Timedelta(seconds=4):
                break
        start = rows["ts"].min().to_pydatetime() - pd.Timedelta(seconds=1)
        end = rows["ts"].max().to_pydatetime()
        pspec = PrometheusSpec(**spec)
        exporter = fetch_prometheus(pspec, pg, start, end, wait=False).rows     # as before: no cgroup known
        cg = cgroup_label(HwSpec(), pg)
        again = fetch_prometheus(pspec, pg, start, end, wait=False, cgroup=cg).rows
        own = PrometheusSpec(**spec, queries={"dbms_cpu_s": prometheus.QUERIES["dbms_cpu_s"][0]})
        mine = fetch_prometheus(own, pg, start, end, wait=False, cgroup=cg).rows       # the user's query wins
    finally:
        stop.set()
        prom.scrape("cadvisor", None)
        prom.scrape("process_cadv", None)
        standin.close()
        pg.stop()
    ts, v = zip(*readings)
    s0, s1 = start.timestamp(), end.timestamp()
    assert ts[0] < s0 and ts[-1] > s1
    truth = float(np.interp(s1, ts, v) - np.interp(s0, ts, v))
    got, pe = rows["dbms_cpu_s"].sum(min_count=1), exporter["dbms_cpu_s"].sum(min_count=1)
    with capsys.disabled():
        print(f"\nload step {s1 - s0:.0f} s: DBMS CPU truth (cgroup cpuacct) {truth:.3f} s, cAdvisor path "
              f"{got:.3f} s ({got / truth:.3f}x), process-exporter {pe:.3f} s ({pe / truth:.3f}x)")
    assert set(rows["dbms_cpu_from"].dropna()) == {"cAdvisor"}
    assert got == pytest.approx(truth, rel=0.15)
    assert again["dbms_cpu_s"].sum() == pytest.approx(got, rel=0.02)       # the same series, asked again
    # process-exporter's own figure, whatever it is: it counts live processes only, and the
    # load's backends, gone at its end, may take their CPU with them (0.0 s in a suite beside
    # another, where the load ran 0.5 s)
    assert set(exporter["dbms_cpu_from"].dropna()) == {"process-exporter"} and pe >= 0
    assert set(mine["dbms_cpu_from"].dropna()) == {"process-exporter"}
    assert mine["dbms_cpu_s"].sum() == pytest.approx(pe, rel=0.02)
