"""A step's rows from Prometheus (issue 38), on answers a real Prometheus gave: the tests'
stack (tests/prometheus_stack.py: node, process and postgres exporters, 1-s scrape) with
pgbench on the machine's PostgreSQL, a fault injected, each window's range-vector answers
recorded with the cluster's CPU seconds read from /proc beside them (``truth``: its
processes' and the postmaster's reaped children's, every 0.2 s) into
tests/data/prometheus/. What each file holds is its ``fault``."""
from __future__ import annotations

import http.server
import json
import threading

import numpy as np
import pytest
from conftest import ROOT

from benchlib.hw import promapi, prometheus, promseries
from benchlib.hw.promapi import Series
from benchlib.hw.spec import HwSpec, PrometheusSpec

DATA = ROOT / "tests" / "data" / "prometheus"


def _replay(name: str, **over):
    d = json.loads((DATA / f"{name}.json").read_text())
    d.update(over)
    answers = {c: (a["selector"], a["data"]) for c, a in d["answers"].items()}
    got = prometheus.assemble(answers, d["t0"], d["t1"], d["step"], d["intervals"], d["iv"])
    tr = np.array(d["truth"])
    edges = d["t0"] + d["step"] * np.arange(len(got.rows) + 1)
    truth = float(np.interp(edges[-1], tr[:, 0], tr[:, 1]) - np.interp(edges[0], tr[:, 0], tr[:, 1]))
    return got, truth


def test_prometheus_restarted_mid_step_differences_across_the_gap():
    got, truth = _replay("prometheus_restart")    # Prometheus down 5 s of a 22-s step
    r = got.rows
    assert got.coverage["dbms_cpu_s"] == 1.0       # the counters went on: the gap is measured
    assert r["dbms_cpu_s"].sum() == pytest.approx(truth, rel=0.05)
    for col in ("cpu_user", "ctx_switches", "disk_write_kb", "dbms_cpu_s"):
        assert r[col].notna().all() and (r[col] > 0).all(), col    # no row of the gap reads 0
    # a gauge has no sample in the gap: those rows blank, the value at the step's end kept
    assert r["dbms_rss_gb"].isna().any() and r["dbms_rss_gb"].iloc[-1] > 0
    assert any("dbms_rss_gb: process-exporter" in x and "% covered" in x for x in got.lines)


def test_exporter_restarted_mid_step_is_blank_with_a_line():
    got, truth = _replay("exporter_restart")      # process-exporter down 4 s of a 15-s step
    assert truth > 1
    assert got.rows["dbms_cpu_s"].isna().all()    # a reset after a gap: what it held is lost
    line = next(x for x in got.lines if x.startswith("dbms_cpu_s"))
    assert "process-exporter" in line and "3–9 s" in line and "(60 % covered): blank" in line
    assert got.rows["cpu_user"].notna().all()     # node_exporter's figures are whole
    assert got.rows["dbms_rss_gb"].iloc[-1] > 0   # it was back before the step's end
    longer, truth = _replay("exporter_restart_long_step")   # the same gap in a 50-s step
    assert 0.85 < longer.coverage["dbms_cpu_s"] < 0.9 and longer.rows["dbms_cpu_s"].isna().all()
    with pytest.MonkeyPatch.context() as mp:      # at 85 %, what the samples cover is counted
        mp.setattr(promseries, "MIN_COVERAGE", 0.85)
        part, _ = _replay("exporter_restart_long_step")
    assert part.rows["dbms_cpu_s"].sum() == pytest.approx(truth, rel=0.15)
    assert part.rows["dbms_cpu_s"].isna().sum() == 6 and (part.rows["dbms_cpu_s"].dropna() > 0).all()


def test_a_second_exporter_of_the_same_is_counted_once():
    got, truth = _replay("second_exporters")
    r = got.rows
    assert r["dbms_cpu_s"].sum() == pytest.approx(truth, rel=0.10)     # not twice
    size = json.loads((DATA / "second_exporters.json").read_text())["answers"]["db_size_gb"]["data"]["result"]
    assert len(size) == 2 and r["db_size_gb"].iloc[-1] * 2**30 == pytest.approx(float(size[0]["values"][-1][1]),
                                                                               rel=0.01)
    assert sum("as from another instance: one counted" in x for x in got.lines) == 4


def test_a_15_s_scrape_under_1_s_rows_is_spread_never_0():
    got, truth = _replay("scrape_15s")       # Prometheus' default interval, a 40-s step
    r = got.rows
    assert len(r) == 40 and got.coverage["dbms_cpu_s"] == 1.0 and not got.lines
    assert r["dbms_cpu_s"].sum() == pytest.approx(truth, rel=0.10)
    for col in ("dbms_cpu_s", "cpu_user", "ctx_switches", "disk_write_kb"):
        assert (r[col] > 0).all(), col       # each 1-s row between two scrapes holds its share


def test_a_step_shorter_than_two_scrapes_is_blank_saying_the_fix():
    d = json.loads((DATA / "second_exporters.json").read_text())
    got, _ = _replay("second_exporters", iv=15.0, t1=d["t0"] + 12)
    assert got.rows.drop(columns=["second", "ts"]).isna().all().all()
    line = got.lines[-1]
    assert "under two scrapes of 15 s" in line and "run.loop_secs" in line and "scrape_interval" in line


def _s(t, v, **labels):
    return Series(labels, np.array(t, float), np.array(v, float))


def test_counter_rows_reset_new_series_and_gaps():
    edges = np.arange(0.0, 7.0)
    # a reset without a gap counts from 0: 3 -> 1 is +1, never -2
    inc, st = promseries.counter_rows(_s([-0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5], [0, 1, 2, 3, 1, 2, 3, 4]), edges, 1.0)
    assert (st == 1).all() and inc.sum() == pytest.approx(1 + 1 + 1 + 1 + 1 + 1) and (inc >= 0).all()
    # a series that appears mid-step counts from its first sample, not from 0
    inc, st = promseries.counter_rows(_s([2.5, 3.5, 4.5, 5.5, 6.5], [100, 101, 102, 103, 104]), edges, 1.0)
    assert inc.sum() == pytest.approx(3.5) and list(st[:2]) == [0, 0]
    # a gap without a reset (Prometheus down): the difference spread over the rows it spans
    inc, st = promseries.counter_rows(_s([-0.5, 0.5, 4.5, 5.5, 6.5], [0, 1, 5, 6, 7]), edges, 1.0)
    assert (st == 1).all() and np.allclose(inc, 1.0)
    # a gap that ends in a reset (the exporter restarted): unknown, not 0
    vals, ok, cover = promseries.figure_rows([_s([-0.5, 0.5, 4.5, 5.5, 6.5], [5, 6, 1, 2, 3])], edges,
                                             "counter", {}, 1.0)
    assert np.isnan(vals).all() and list(ok) == [False] * 5 + [True] and cover < 0.9
    assert promseries.describe_gaps(ok, 1.0) == "0–5 s"
    # the last sample before the step's end: the last row unknown (never its last value again)
    vals, ok, _ = promseries.figure_rows([_s(np.arange(-0.5, 5.0), np.arange(6.0))], edges, "counter", {}, 1.0)
    assert not ok[-1]


def test_gauge_at_step_end_needs_a_sample_there():
    edges = np.arange(0.0, 6.0)
    rss = _s([-0.5, 0.5, 1.5, 2.5], [1, 2, 3, 4])     # the exporter died at 3 s
    vals, ok, cover = promseries.figure_rows([rss], edges, "gauge", {}, 1.0)
    assert np.isnan(vals).all() and not ok[-1]        # not "4 at the step's end"
    rss = _s([-0.5, 0.5, 1.5, 4.5, 5.2], [1, 2, 3, 4, 5])
    vals, ok, cover = promseries.figure_rows([rss], edges, "gauge", {}, 1.0)
    assert vals[-1] == 5 and np.isnan(vals[2]) and cover == pytest.approx(0.8)


def test_every_query_is_scoped_to_the_host():
    from benchlib.targets.postgres import PostgresTarget
    spec = PrometheusSpec(url="http://h:9090", instance="db.x:9100")
    q = prometheus.queries(spec, PostgresTarget.prometheus_queries,
                           {"process_group": "pg", "datname": "bench", "port": "5433"})
    assert all('instance="db.x:9100"' in v or 'instance=~"db\\\\.x(:[0-9]+)?"' in v for v in q.values()), q
    assert q["db_size_gb"] == ('pg_database_size_bytes{instance=~"db\\\\.x(:[0-9]+)?",datname="bench",'
                               'server=~"(.*:5433)?"}')
    spec = PrometheusSpec(url="http://h:9090", instance="db:9100", match='job="db-0"',
                          queries={"dbms_cpu_s": 'sum(container_cpu_usage_seconds_total{pod="db-0"})',
                                   "db_size_gb": 'pg_database_size_bytes{instance="db:9187"}'})
    q = prometheus.queries(spec, {}, {})
    assert q["dbms_cpu_s"] == 'container_cpu_usage_seconds_total{job="db-0",pod="db-0"}'
    assert q["db_size_gb"] == 'pg_database_size_bytes{instance="db:9187"}'    # its own scope kept


def test_process_group_by_data_directory_not_by_name():
    groups = ["postgres", "postgres /srv/pg/a", "postgres /srv/pg/b"]
    assert prometheus.choose_group(groups, ["/srv/pg/b", ":5433"], ["postgres"]) == (
        "postgres\\\\ /srv/pg/b", None)
    group, line = prometheus.choose_group(["postgres"], ["/srv/pg/b"], ["postgres"])
    assert group == "postgres" and "named after the program alone" in line
    assert prometheus.choose_group(["redis-server"], [":5432"], ["postgres"])[0] is None


class _NotPrometheus(http.server.BaseHTTPRequestHandler):
    def do_GET(self):   # noqa: N802 - http.server's name
        body = b"<html><body>Grafana</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def test_a_url_that_is_not_prometheus_is_one_clear_line():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _NotPrometheus)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        spec = PrometheusSpec(url=f"http://127.0.0.1:{srv.server_port}", instance="db:9100")
        with pytest.raises(promapi.PrometheusError) as e:
            promapi.check(spec)
    finally:
        srv.shutdown()
    msg = str(e.value)
    assert "does not answer as Prometheus' API (HTTP 200, text/html" in msg and "\n" not in msg
    assert "Expecting value" not in msg


def test_scrape_intervals_and_a_misspelled_source():
    data = {"activeTargets": [{"labels": {"instance": "db:9100", "job": "node"}, "scrapeInterval": "15s"},
                              {"labels": {"instance": "db:9256", "job": "p"}, "scrapeInterval": "1m30s"}]}
    assert promapi.parse_targets(data) == {"db:9100": 15.0, "db:9256": 90.0}
    data["activeTargets"][0].update(health="up", lastScrape="2026-11-28T03:54:48.659894038Z",
                                    lastScrapeDuration=0.25)
    data["activeTargets"][1].update(health="down", lastScrape="2026-11-28T03:54:49Z")
    assert promapi.parse_scrapes(data) == {"db:9100": pytest.approx(1795838088.909894)}   # the one up
    with pytest.raises(ValueError, match="did you mean 'prometheus'"):
        HwSpec(dbms="promethus")
    with pytest.raises(ValueError, match="not a series selector"):
        PrometheusSpec(url="http://h:9090", instance="h:9100", queries={"dbms_cpu_s": "rate(x[1m])"})


def test_the_legend_names_a_source_only_for_the_figures_it_gave():
    import pandas as pd

    from benchlib.summaries.hwroles import legend
    rows = pd.DataFrame({"host": ["db", "db"], "role": ["dbms", "dbms"], "source": ["prometheus"] * 2,
                         "dbms_cpu_s": [np.nan, np.nan], "dbms_rss_gb": [np.nan, np.nan],
                         "dbms_vsz_gb": [np.nan, np.nan], "db_size_gb": [0.1, 0.1],
                         "cpu_user": [5.0, 6.0], "disk_reads": [1.0, 2.0], "ctx_switches": [10.0, 20.0]})
    line = legend(rows, rows.iloc[:0])
    assert line == ("hw: DBMS and its host's columns (dbgb cpu disk cs) from db (prometheus); "
                    "dsec rss vsz blank: no source gave them")
    both = pd.concat([rows, rows.assign(source="dask", dbms_cpu_s=1.0, dbms_rss_gb=1.0, dbms_vsz_gb=1.0)])
    assert legend(both, rows.iloc[:0]) == ("hw: DBMS and its host's columns (dsec rss vsz dbgb cpu disk cs) "
                                           "from db (dask), db (prometheus: dbgb cpu disk cs)")


def test_a_series_retired_while_its_exporter_answers_is_not_a_gap():
    edges = np.arange(0.0, 6.0)
    old = _s([-0.5, 0.5, 1.5, 2.5], [10, 11, 12, 13], instance="c:8080", container="a")
    new = _s([2.5, 3.5, 4.5, 5.5], [0, 1, 2, 3], instance="c:8080", container="b")   # a new pod
    vals, ok, cover = promseries.figure_rows([old, new], edges, "counter", {}, 1.0)
    assert ok.all() and cover == 1.0 and vals.sum() == pytest.approx(2.5 + 2.5)   # 10.5 -> 13, then 0 -> 2.5 from its first sample
    gone = _s([-0.5, 0.5, 1.5, 2.5], [10, 11, 12, 13], instance="c:8080")   # its exporter gone too
    vals, ok, _ = promseries.figure_rows([gone], edges, "counter", {}, 1.0)
    assert list(ok) == [True, True, False, False, False] and np.isnan(vals).all()


def test_a_step_left_blank_by_gaps_is_not_said_unsampled():
    import pandas as pd

    from benchlib.summaries.hwroles import blank_reasons
    hw = pd.DataFrame({"run_id": ["a", "a", "a"], "step": ["r.L1", "r.L1", "r.L2"],
                       "role": ["client", "dbms", "client"], "source": ["local", "prometheus", "local"]})
    st = pd.DataFrame({"run_id": ["a", "a"], "step": ["r.L1", "r.L2"], "ops": [10, 10], "dsec": [np.nan, np.nan]})
    ok, msg = blank_reasons({"hw": hw}, st)
    assert not ok and "blank for a/r.L2: no source sampled" in msg
    assert "dsec blank for a/r.L1: the database host's prometheus samples covered too little" in msg


def _size_answer(scale_second: float) -> dict:
    """The recorded size answer of two postgres_exporters of one cluster, without the
    ``server`` label newer exporters drop; the second's values scaled (another cluster's
    database of the same name, when not 1)."""
    d = json.loads((DATA / "second_exporters.json").read_text())
    a = d["answers"]["db_size_gb"]
    for k, r in enumerate(a["data"]["result"]):
        r["metric"].pop("server")
        if k == 1:
            r["values"] = [[t, str(float(v) * scale_second)] for t, v in r["values"]]
    return {"db_size_gb": (a["selector"], a["data"])}, d


def test_exporters_without_a_server_label_tell_clusters_apart_or_refuse():
    answers, d = _size_answer(1.0)          # one cluster scraped twice: one series, its size
    got = prometheus.assemble(answers, d["t0"], d["t1"], d["step"], d["intervals"], d["iv"])
    assert got.rows["db_size_gb"].iloc[-1] > 0
    assert not any("cannot be told" in x for x in got.lines)
    answers, d = _size_answer(1.5)          # two clusters' 'test': which is the target's?
    got = prometheus.assemble(answers, d["t0"], d["t1"], d["step"], d["intervals"], d["iv"])
    assert "db_size_gb" not in got.rows or got.rows["db_size_gb"].isna().all()
    line = next(x for x in got.lines if "cannot be told" in x)
    insts = sorted(r["metric"]["instance"] for r in answers["db_size_gb"][1]["result"])
    assert f'pg_database_size_bytes{{instance="{insts[0]}",datname="test"}}' in line and "\n" not in line


def test_coverage_is_stored_per_step_and_shown_in_the_legend():
    import pandas as pd

    from benchlib.run.hwsources import coverage_figures
    from benchlib.summaries.hwroles import legend
    got, _ = _replay("exporter_restart")      # process-exporter down 4 s of a 15-s step
    fig = coverage_figures(got.coverage)
    assert fig["dbms_cpu_coverage"] == pytest.approx(0.6) and 0 < fig["hw_coverage"] <= 1
    whole, _ = _replay("second_exporters")
    assert set(whole.rows["dbms_cpu_from"].dropna()) == {"process-exporter"}   # the legend's source
    rows = whole.rows.assign(host="db", role="dbms", source="prometheus")
    steps = pd.DataFrame({"step": ["r.L1", "r.L2"], "dbms_cpu_coverage": [0.6, 1.0], "hw_coverage": [1.0, 1.0]})
    line = legend(rows, rows.iloc[:0], steps)
    assert "db (prometheus; dsec: process-exporter)" in line and line.endswith("; covered: r.L1 dsec 60 %")
    assert "covered" not in legend(rows, rows.iloc[:0], steps.iloc[1:])


def test_a_small_database_prints_in_mb_not_0():
    from benchlib.summaries.formatting import db_gb
    assert db_gb(15 / 1024) == "15m" and db_gb(3.04) == "3.0" and db_gb(0) == "0.0"
