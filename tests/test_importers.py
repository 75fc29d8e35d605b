"""Golden tests of the importers on the real outputs in tests/data (copied from
shared/samples): every figure a tool prints comes back unchanged in the tables.
pgbench 13/14/17 and YCSB variants the samples lack are hand-made snippets written
after the tools' own format strings."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchlib import measure
from benchlib.importers import (
    ImportFormatError,
    detect_kind,
    import_output,
    read_output,
)
from benchlib.registries import UnknownName
from benchlib.store.folders import ResultsError, load_results, read_meta

DATA = Path(__file__).parent / "data"
Y, LB, PG, SB = DATA / "ycsb", DATA / "linkbench", DATA / "pgbench", DATA / "sysbench"
PG_OUT = PG / "pgbench_c4_j2_T30_P1_r_latlimit5.stdout.log"
PG_ERR = PG / "pgbench_c4_j2_T30_P1_r_latlimit5.stderr.log"
SB_OUT = SB / "sysbench_oltp_rw_pgsql_run_T20.stdout.log"


def row(df, **match):
    sel = np.ones(len(df), bool)
    for k, v in match.items():
        sel &= (df[k] == v).to_numpy()
    assert sel.sum() == 1, f"{match}: {sel.sum()} rows"
    return df[sel].iloc[0]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


# ----------------------------------------------------------------- YCSB

def test_ycsb_load_histogram():
    imp = read_output("ycsb", [Y / "pg-load-t4-hist.out", Y / "pg-load-t4-hist.err"])
    s = imp.steps.iloc[0]
    assert (s.step, s.phase, s.secs, s.ops, s.errors) == ("l.pre", "load", 23.252, 100000, 0)
    assert s.ops_per_s == 4300.70531567177 and s.threads == 4
    assert s.started == pd.Timestamp("2026-11-22 02:36:33.676", tz="UTC")
    ins = row(imp.latency, op="INSERT")
    assert (ins["count"], ins.errors, ins.mean_us, ins.min_us, ins.max_us) == (100000, 0, 876.79293, 144, 156578)
    assert (ins.p95_us, ins.p99_us, ins.variance_us2) == (2000, 5000, 2957079.5245120153)
    assert (ins.p99_lo_us, ins.p99_hi_us) == (5000, 6000)   # a 1 ms bucket, YCSB prints its lower end
    assert json.loads(ins.returns) == {"OK": 100000}
    cl = row(imp.latency, op="CLEANUP")
    assert (cl["count"], cl.mean_us, cl.min_us, cl.max_us, cl.p99_us) == (4, 3524.5, 976, 7071, 7000)
    assert imp.meta["gc"]["TOTAL_GCs"]["Count"] == 9 and imp.meta["tool_version"] == "0.18.0-SNAPSHOT"
    assert imp.meta["command_line"].endswith("-load")
    iv = imp.intervals
    tot = iv[iv.op == "TOTAL"]
    assert tot.ops.sum() == 100000 and len(tot) == 24
    # "2 sec: 829 operations … [INSERT AverageLatency(us)=3919.44]": the second [1, 2)
    assert row(tot, second=1).ops == 829 and row(tot, second=1).ops_per_s == 829.83
    assert row(iv, op="INSERT", second=1).mean_us == 3919.44
    assert np.isnan(row(iv, op="INSERT", second=1).ops)  # histogram status lines give no count
    assert row(iv, op="CLEANUP", second=23).mean_us == 3524.5


def test_ycsb_run_histogram():
    imp = read_output("ycsb", [Y / "pg-runa-t4-hist.out", Y / "pg-runa-t4-hist.err"])
    s = imp.steps.iloc[0]
    assert (s.step, s.phase, s.loop, s.secs, s.ops) == ("r.L1", "run", 1, 15.839, 100000)
    r = row(imp.latency, op="READ")
    assert (r["count"], r.mean_us, r.min_us, r.max_us, r.p95_us, r.p99_us) == (
        49995, 238.42232223222322, 28, 41385, 0, 1000)
    u = row(imp.latency, op="UPDATE")
    assert (u["count"], u.mean_us, u.p95_us, u.p99_us, u.errors) == (50005, 950.7747825217479, 2000, 5000, 0)
    assert row(imp.intervals, op="UPDATE", second=0).mean_us == 4522.35


def test_ycsb_hdrhistogram_with_logs():
    files = [Y / "pg-runa-t4-hdr.out", Y / "pg-runa-t4-hdr.err", Y / "hdr/pg-runa-t4-hdr-READ.hdr",
             Y / "hdr/pg-runa-t4-hdr-UPDATE.hdr"]
    imp = read_output("ycsb", files)
    r = row(imp.latency, op="READ")
    assert (r["count"], r.mean_us, r.min_us, r.max_us) == (49929, 247.71751887680506, 27, 72511)
    assert (r.p50_us, r.p95_us, r.p99_us) == (164, 599, 1624)
    u = row(imp.latency, op="UPDATE")
    assert (u["count"], u.mean_us, u.min_us, u.max_us, u.p50_us, u.p95_us, u.p99_us) == (
        50071, 940.2356054402748, 168, 73343, 669, 2403, 5347)
    cl = row(imp.latency, op="CLEANUP")
    assert (cl["count"], cl.p50_us, cl.p99_us) == (4, 819, 6071)
    # the merged interval logs are the whole run's histogram
    h = measure.decode(r.hdr)
    assert h.get_total_count() == 49929 and h.get_max_value() == 72511
    iv = imp.intervals
    # hdrhistogram's status Count is per interval (Recorder.getIntervalHistogram)
    assert iv[iv.op == "READ"].ops.sum() == 49929 and iv[iv.op == "UPDATE"].ops.sum() == 50071
    first = row(iv, op="READ", second=0)   # [READ: Count=122, Max=53567, Min=264, Avg=3546.75, 50=1622, …
    assert (first.ops, first.max_us, first.min_us, first.mean_us, first.p50_us, first.p90_us, first.p99_us,
            first.p999_us) == (122, 53567, 264, 3546.75, 1622, 7303, 21071, 53567)
    last = row(iv, op="UPDATE", second=15)
    assert (last.ops, last.p99_us, last.max_us) == (3202, 3033, 5715)
    assert row(iv, op="TOTAL", second=0).ops == 235


def test_ycsb_hdr_logs_alone_give_the_same_intervals():
    imp = read_output("ycsb", [Y / "hdr/pg-runa-t4-hdr-READ.hdr", Y / "hdr/pg-runa-t4-hdr-UPDATE.hdr"])
    full = read_output("ycsb", [Y / "pg-runa-t4-hdr.out", Y / "pg-runa-t4-hdr.err"]).intervals
    iv = imp.intervals
    for op in ("READ", "UPDATE"):
        a = iv[(iv.op == op) & (iv.ops > 0)].set_index("second")
        b = full[full.op == op].set_index("second")
        assert list(a.ops) == list(b.ops)
        # the same Java HdrHistogram percentiles YCSB printed in its status lines
        assert list(a.p99_us) == list(b.p99_us) and list(a.max_us) == list(b.max_us)
    assert row(imp.latency, op="READ")["count"] == 49929


def test_ycsb_timeseries():
    imp = read_output("ycsb", [Y / "pg-runa-t4-ts.out", Y / "pg-runa-t4-ts.err"])
    assert imp.meta["measurementtype"] == "timeseries"
    iv = imp.intervals
    rd = iv[iv.op == "READ"].sort_values("second")
    assert len(rd) == 18 and rd.iloc[0].mean_us == 563.9469570072586 and rd.iloc[17].mean_us == 132.0448979591837
    assert (rd.interval_s == 1.0).all()
    assert row(iv, op="UPDATE", second=3).mean_us == 1640.3890784982934
    # status lines are printed to both streams: each counted once
    assert iv[iv.op == "TOTAL"].ops.sum() == 100000
    r = row(imp.latency, op="READ")
    assert (r["count"], r.mean_us, r.min_us, r.max_us) == (49974, 254.2027854484332, 26, 36284)


def test_go_ycsb():
    files = [Y / "go-ycsb/goycsb-pg-runa-t4-interval1.out", Y / "go-ycsb/goycsb-pg-runa-t4-interval1.err"]
    assert detect_kind(files[0]) == "go-ycsb"
    for kind in ("go-ycsb", "ycsb", "auto"):
        imp = read_output(kind, files)
        s = imp.steps.iloc[0]
        assert (s.step, s.ops, s.ops_per_s, s.errors) == ("r.L1", 50000, 11930.5, 0)
        assert s.secs == pytest.approx(4.195974368)
        r = row(imp.latency, op="READ")
        assert (r["count"], r.mean_us, r.min_us, r.max_us, r.p50_us, r.p90_us, r.p95_us, r.p99_us,
                r.p999_us, r.p9999_us) == (25016, 161, 27, 5011, 132, 297, 366, 566, 1475, 3603)
        u = row(imp.latency, op="UPDATE")
        assert (u["count"], u.p99_us, u.max_us) == (24984, 1174, 9799)
        iv = imp.intervals
        # go-ycsb's periodic rows are cumulative: intervals are their differences
        assert row(iv, op="READ", second=1).ops == 11862 - 5552
        assert iv[iv.op == "READ"].ops.sum() == 25016 and iv[iv.op == "TOTAL"].ops.sum() == 50000
        assert imp.meta["source"] == "go-ycsb"


def test_ycsb_load_and_run_become_two_steps(tmp_path):
    files = [Y / f for f in ("pg-runa-t4-hdr.out", "pg-runa-t4-hdr.err", "pg-load-t4-hist.out",
                             "pg-load-t4-hist.err", "hdr/pg-runa-t4-hdr-READ.hdr", "hdr/pg-runa-t4-hdr-UPDATE.hdr")]
    imp = read_output("ycsb", files)
    assert list(imp.steps.step) == ["l.pre", "r.L1"]
    assert set(imp.latency[imp.latency.step == "l.pre"].op) == {"INSERT", "CLEANUP"}
    assert row(imp.latency, op="READ", step="r.L1").hdr  # the logs went to the run, not the load


INTENDED_ERR = """\
Command line: -db site.ycsb.BasicDB -P workloads/workloada -p measurement.interval=both -target 100 -threads 2 -s -t
YCSB Client 0.17.0
2026-11-22 02:38:49:305 0 sec: 0 operations; est completion in 0 second 
2026-11-22 02:38:50:305 1 sec: 100 operations; 100 current ops/sec; est completion in 9 seconds \
[READ: Count=50, Max=900, Min=100, Avg=300.5, 90=700, 99=890, 99.9=900, 99.99=900] \
[Intended-READ: Count=50, Max=1900, Min=150, Avg=400.25, 90=900, 99=1500, 99.9=1900, 99.99=1900] 
2026-11-22 02:38:51:305 2 sec: 100 operations; 0 current ops/sec; est completion in 9 seconds \
[READ: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0, 99=0, 99.9=0, 99.99=0] 
mylabel 2026-11-22 02:38:52:305 3 sec: 150 operations; 50 current ops/sec; est completion in 9 seconds \
[READ: Count=50, Max=800, Min=100, Avg=300, 90=700, 99=790, 99.9=800, 99.99=800] 
"""
INTENDED_OUT = """\
[OVERALL], RunTime(ms), 3000
[OVERALL], Throughput(ops/sec), 50.0
[READ], Operations, 149
[READ], AverageLatency(us), 300.3
[READ], 99thPercentileLatency(us), 890
[READ], Return=OK, 149
[READ], Return=ERROR, 1
[READ-FAILED], Operations, 1
[READ-FAILED], AverageLatency(us), 50.0
[Intended-READ], Operations, 150
[Intended-READ], AverageLatency(us), 400.0
"""


def test_ycsb_intended_empty_interval_label_and_errors(tmp_path):
    imp = read_output("ycsb", [write(tmp_path, "x.out", INTENDED_OUT), write(tmp_path, "x.err", INTENDED_ERR)])
    s = imp.steps.iloc[0]
    assert (s.target_ops_per_s, s.threads, s.errors, s.ops) == (100, 2, 1, 150)
    r = row(imp.latency, op="READ")
    assert (r["count"], r.errors) == (150, 1)     # Return=OK + Return=ERROR; errors = not OK
    assert row(imp.latency, op="Intended-READ").mean_us == 400.0
    iv = imp.intervals
    r0 = row(iv, op="READ", second=0)
    assert (r0.mean_us, r0.p99_us, r0.intended_mean_us, r0.intended_p99_us, r0.intended_max_us) == (
        300.5, 890, 400.25, 1500, 1900)
    assert np.isnan(r0.p50_us)                     # YCSB before 0.18 prints no 50=
    empty = row(iv, op="READ", second=1)
    assert empty.ops == 0 and empty[["mean_us", "min_us", "max_us", "p99_us"]].isna().all()
    assert row(iv, op="READ", second=2).ops == 50  # a labelled status line (-l mylabel)
    assert "Intended-READ" not in set(iv.op)


RAW_OUT = """\
Raw data measurement: will output to stdout.
2026-11-22 02:38:49:000 0 sec: 0 operations; est completion in 0 second 
2026-11-22 02:38:50:000 1 sec: 2 operations; 2 current ops/sec; READ count: 2, average latency(us): 150.00 
2026-11-22 02:38:51:000 2 sec: 3 operations; 1 current ops/sec; READ count: 1, average latency(us): 200.00 
READ latency raw data: op, timestamp(ms), latency(us)
READ,1795315129100,100
READ,1795315129900,200
READ,1795315130500,200
[READ], Total Operations, 3
[READ], Below is a summary of latency in microseconds:, -1
[READ], Average, 166.66666666666666
[READ], Min, 100
[READ], Max, 200
[READ], p1, 100
[READ], p99, 200
[READ], Return=OK, 3
[OVERALL], RunTime(ms), 2000
[OVERALL], Throughput(ops/sec), 1.5
"""


def test_ycsb_raw(tmp_path):
    imp = read_output("ycsb", [write(tmp_path, "raw.out", RAW_OUT)])
    r = row(imp.latency, op="READ")
    assert (r["count"], r.mean_us, r.min_us, r.max_us, r.p1_us, r.p99_us) == (3, 166.66666666666666, 100, 200,
                                                                               100, 200)
    assert measure.decode(r.hdr).get_total_count() == 3
    iv = imp.intervals
    assert (row(iv, op="READ", second=0).ops, row(iv, op="READ", second=0).mean_us) == (2, 150)
    assert row(iv, op="READ", second=1).max_us == 200
    assert imp.meta["measurementtype"] == "raw"


@pytest.mark.parametrize("bad, line, what", [
    ("[READ], AverageLatency(us), fast\n", 2, "a number"),
    ("2026-11-22 02:38:50:305 1 sec: 100 operations; 100 current ops/sec; [READ: Count=5x, Max=1]\n", 2,
     "status blocks"),
    ("READ latency raw data: op, timestamp(ms), latency(us)\nREAD,17953151291OO,100\n", 3, "raw data line"),
])
def test_ycsb_malformed_lines_name_file_and_line(tmp_path, bad, line, what):
    p = write(tmp_path, "bad.out", "[OVERALL], RunTime(ms), 3000\n" + bad)
    with pytest.raises(ImportFormatError) as e:
        read_output("ycsb", [p])
    assert e.value.lineno == line and what in str(e.value) and "bad.out" in str(e.value)
    assert "\n" not in str(e.value)


def test_ycsb_mixed_status_lines_of_two_runs_are_refused(tmp_path):
    a = (Y / "pg-runa-t4-hist.err").read_text()
    b = (Y / "pg-load-t4-hist.err").read_text()
    with pytest.raises(ImportFormatError, match="growing operation count"):
        read_output("ycsb", [write(tmp_path, "two.err", a + b.replace("2026-11-22 02:36", "2026-11-22 02:37"))])


# ----------------------------------------------------------------- LinkBench

def test_linkbench_load():
    imp = read_output("linkbench", [LB / "pgsql_load.stdout.log"])
    s = imp.steps.iloc[0]
    assert (s.step, s.phase, s.secs, s.ops_per_s, s.status) == ("l.pre", "load", 104.9, 46707, "ok")
    assert s.ops == 100000 + 4597662 + 200000 and (s.nodes, s.links, s.counts) == (100000, 4597662, 200000)
    assert (s.links_per_s, s.link_count_per_s, s.threads) == (43846, 45753, 3)
    lk = row(imp.latency, op="LOAD_LINKS_BULK")   # p99 = [87,88]ms  max = 635.768ms  mean = 23.853ms
    assert (lk["count"], lk.p99_us, lk.p99_lo_us, lk.p99_hi_us) == (4491, 88000, 87000, 88000)
    assert (lk.max_us, lk.mean_us, lk.p25_lo_us, lk.p50_us) == (635768, 23853, 13000, 19000)
    nd = row(imp.latency, op="LOAD_NODE_BULK")
    assert (nd["count"], nd.p95_lo_us, nd.p95_hi_us) == (98, 100000, 200000)
    assert not imp.latency.op.str.endswith("_NLINKS").any()
    tot = imp.intervals[imp.intervals.op == "TOTAL"]
    assert tot.ops.sum() == 4597662 + 200000        # the progress lines count links and counts


def test_linkbench_request_log_and_csvs():
    imp = read_output("linkbench", [LB / "pgsql_request.stdout.log", LB / "pgsql_request_final_stats.csv",
                                    LB / "pgsql_request_stream_stats.csv"])
    s = imp.steps.iloc[0]
    assert (s.step, s.phase, s.ops, s.ops_per_s, s.threads) == ("r.L1", "run", 315672, 5169, 2)
    # "in 61 seconds" is rounded down: the time that gives the log's own rate, 5169 (not 5175)
    assert s.secs == pytest.approx(315672 / 5169) and 61 <= s.secs < 62
    assert imp.meta["workload"] == "linkbench" and imp.meta["threads"] == 2
    r = imp.extra["returns"].set_index(["op", "status"])["count"]   # 856 add_to_upd, 1554 upd_to_add
    assert (r[("ADD_LINK", "RETRY")], r[("UPDATE_LINK", "RETRY")]) == (856, 1554)
    assert r[("ADD_LINK", "OK")] == 16983 - 856
    lat = imp.latency
    assert lat["count"].sum() == 315672
    g = row(lat, op="GET_NODE")   # GET_NODE count = 139112 … p99 = [1,2]ms  max = 129.835ms  mean = 0.157ms
    assert (g["count"], g.p99_us, g.p99_lo_us, g.p99_hi_us, g.max_us, g.mean_us) == (139112, 2000, 1000, 2000,
                                                                                     129835, 157)
    assert (g.p25_lo_us, g.p25_hi_us, g.p95_us) == (0, 100, 600) and g.errors == 0
    assert pd.isna(g.get("min_us")) and pd.isna(g.get("p90_us"))  # not printed: NA
    assert np.isnan(row(lat, op="DELETE_LINK").errors)   # no per-thread statistics for it
    iv = imp.intervals
    # the stream CSV's sampleDuration_us is in ms: 20000 is a 20 s window
    assert row(iv, op="GET_NODE", second=1).interval_s == pytest.approx(20.001)
    assert iv[iv.op == "GET_NODE"].ops.sum() == 139112
    two = row(iv, op="GET_NODE", second=1)        # two threads: ops added, p99 only as a range
    assert two.ops == 11499 + 11367 and np.isnan(two.p99_us) and (two.p99_lo_us, two.p99_hi_us) == (3945, 4126)
    one = row(iv, op="GET_LINKS_LIST", second=61)
    assert (one.ops, one.p99_us) == (1, 488)
    assert not iv.op.isin(["RANGE_SIZE"]).any()


def test_linkbench_csvs_alone():
    imp = read_output("linkbench", [LB / "pgsql_request_final_stats.csv", LB / "pgsql_request_stream_stats.csv"])
    g = row(imp.latency, op="GET_NODE")
    assert (g["count"], g.max_us, g.mean_us, g.p99_us) == (139112, 129840, 160, 2000)
    assert imp.steps.iloc[0].step == "r.L1" and imp.latency["count"].sum() == 315672


def test_linkbench_load_and_request_together():
    imp = read_output("auto", [LB / "pgsql_request.stdout.log", LB / "pgsql_load.stdout.log"])
    assert list(imp.steps.step) == ["l.pre", "r.L1"]


def test_linkbench_bad_csv(tmp_path):
    text = (LB / "pgsql_request_stream_stats.csv").read_text().replace("0,1795315600,MULTIGET_LINK,3157",
                                                                       "0,17953156x0,MULTIGET_LINK,3157")
    with pytest.raises(ImportFormatError) as e:
        read_output("linkbench", [write(tmp_path, "s.csv", text)])
    assert e.value.lineno == 2 and "timestamp" in str(e.value)


# ----------------------------------------------------------------- pgbench

def test_pgbench_15():
    imp = read_output("pgbench", [PG_OUT, PG_ERR])
    s = imp.steps.iloc[0]
    assert (s.step, s.ops, s.errors, s.ops_per_s, s.threads) == ("r.L1", 37097, 0, 1236.051851, 4)
    assert s.secs == pytest.approx(37097 / 1236.051851)
    tx = row(imp.latency, op="TX")
    assert (tx["count"], tx.errors, tx.mean_us, tx.stddev_us) == (37097, 0, 3231, 6386)
    assert (tx.late, tx.latency_limit_ms, tx.connection_ms) == (6426, 5.0, 15.982)
    assert imp.meta["tool_version"] == "15.18" and imp.meta["pgbench"]["jobs"] == 2
    st = imp.meta["statements"]
    assert len(st) == 11 and st[-1] == {"script": 1, "statement": "END;", "mean_us": 1590.0, "failures": 0}
    iv = imp.intervals
    assert len(iv) == 30 and (iv.op == "TX").all()
    first = row(iv, second=0)   # progress: 1.0 s, 1257.9 tps, lat 3.113 ms stddev 2.719, 0 failed
    assert (first.ops_per_s, first.mean_us, first.stddev_us, first.errors, first.ops) == (1257.9, 3113, 2719, 0, 1258)
    late = row(iv, second=26)   # progress: 27.2 s, 841.1 tps: the thread was late, 1.2 s
    assert late.interval_s == pytest.approx(1.2) and late.ops == round(841.1 * 1.2)


PG13_OUT = """\
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 1
duration: 3 s
number of transactions actually processed: 290
number of transactions skipped: 4 (1.361 %)
number of transactions above the 10.0 ms latency limit: 7/290 (2.414 %)
latency average = 2.345 ms
latency stddev = 1.234 ms
rate limit schedule lag: avg 0.123 (max 4.567) ms
tps = 96.123456 (including connections establishing)
tps = 96.654321 (excluding connections establishing)
statement latencies in milliseconds:
         0.002  \\set aid random(1, 100000 * :scale)
         1.234  BEGIN;
"""
PG13_ERR = """\
starting vacuum...end.
progress: 1.0 s, 98.0 tps, lat 2.400 ms stddev 1.100, lag 0.100 ms, 1 skipped
progress: 2.0 s, 95.0 tps, lat 2.300 ms stddev 1.200, lag 0.200 ms, 2 skipped
progress: 3.0 s, 97.0 tps, lat 2.335 ms stddev 1.400, lag 0.070 ms, 1 skipped
"""
PG14_OUT = PG13_OUT.replace(
    "tps = 96.123456 (including connections establishing)\ntps = 96.654321 (excluding connections establishing)",
    "initial connection time = 3.456 ms\ntps = 96.654321 (without initial connection time)")


@pytest.mark.parametrize("out", [PG13_OUT, PG14_OUT], ids=["13", "14"])
def test_pgbench_13_14_rate_limit(tmp_path, out):
    imp = read_output("pgbench", [write(tmp_path, "o.log", out), write(tmp_path, "e.log", PG13_ERR)])
    s = imp.steps.iloc[0]
    assert (s.ops, s.ops_per_s) == (290, 96.654321) and pd.isna(s.errors)   # no failures before 15
    tx = row(imp.latency, op="TX")
    assert (tx.mean_us, tx.stddev_us, tx.lag_mean_us, tx.lag_max_us) == (2345, 1234, 123, 4567)
    assert (tx.late, tx.skipped, tx.latency_limit_ms) == (7, 4, 10.0)
    assert imp.meta["statements"][1] == {"script": 1, "statement": "BEGIN;", "mean_us": 1234.0}
    iv = imp.intervals
    assert list(iv.lag_us) == [100, 200, 70] and list(iv.skipped) == [1, 2, 1] and "errors" not in iv


PG17_OUT = """\
pgbench (17.2)
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: prepared
number of clients: 8
number of threads: 2
maximum number of tries: 3
duration: 10 s
number of transactions actually processed: 5000
number of failed transactions: 12 (0.239%)
number of serialization failures: 10 (0.199%)
number of deadlock failures: 2 (0.040%)
number of transactions retried: 40 (0.797%)
total number of retries: 45
latency average = 15.678 ms
latency stddev = 9.876 ms
initial connection time = 20.123 ms
tps = 499.876543 (without initial connection time)
statement latencies in milliseconds, failures and retries:
         0.003           0           0  \\set aid random(1, 100000 * :scale)
        10.000          12          45  UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
"""
PG17_ERR = """\
progress: 1795315600.500 s, 480.0 tps, lat 16.000 ms stddev 9.000, 1 failed, 4 retried, 5 retries
progress: 1795315601.500 s, 520.0 tps, lat 15.000 ms stddev 8.000, 0 failed, 3 retried, 3 retries
"""


def test_pgbench_17_failures_retries_timestamps(tmp_path):
    imp = read_output("auto", [write(tmp_path, "o.log", PG17_OUT), write(tmp_path, "e.log", PG17_ERR)])
    s = imp.steps.iloc[0]
    assert (s.ops, s.errors, s.ops_per_s) == (5000, 12, 499.876543)
    assert s.started == pd.Timestamp(1795315599.5, unit="s", tz="UTC")
    tx = row(imp.latency, op="TX")
    assert (tx["count"], tx.errors, tx.retried, tx.retries, tx.serialization_failures) == (5012, 12, 40, 45, 10)
    assert imp.meta["statements"][1]["retries"] == 45 and imp.meta["tool_version"] == "17.2"
    iv = imp.intervals
    assert list(iv.second) == [0, 1] and list(iv.errors) == [1, 0] and list(iv.retried) == [4, 3]


def test_pgbench_malformed(tmp_path):
    p = write(tmp_path, "e.log", "progress: 1.0 s, 98.0 tps, lat 2.400 ms stdev 1.100\n")
    with pytest.raises(ImportFormatError) as e:
        read_output("pgbench", [p])
    assert e.value.lineno == 1 and "progress" in str(e.value)


# ----------------------------------------------------------------- sysbench

def test_sysbench():
    imp = read_output("sysbench", [SB_OUT])
    s = imp.steps.iloc[0]
    assert (s.step, s.ops, s.ops_per_s, s.secs, s.errors, s.threads, s.queries) == (
        "r.L1", 5229, 261.25, 20.0143, 0, 1, 104580)
    tx = row(imp.latency, op="TX")
    assert (tx["count"], tx.min_us, tx.mean_us, tx.max_us, tx.p95_us, tx.sum_us) == (
        5229, 1060, 3820, 71820, 7980, 19987720)
    h = measure.decode(tx.hdr)
    assert h.get_total_count() == 5229 == tx.histogram_count
    assert tx.p99_us > tx.p95_us > tx.p50_us > tx.min_us
    m = imp.meta["sysbench"]
    assert (m["SQL statistics: queries read"], m["SQL statistics: queries write"],
            m["SQL statistics: queries other"]) == (73206, 20916, 10458)
    assert imp.meta["tool_version"] == "1.0.20"
    iv = imp.intervals
    assert len(iv) == 20
    first = row(iv, second=0)   # [ 1s ] thds: 1 tps: 313.29 qps: 6284.68 (r/w/o: 4399.97/1257.13/627.57)
    assert (first.ops_per_s, first.qps, first.reads_per_s, first.p95_us, first.ops) == (
        313.29, 6284.68, 4399.97, 6550, 313)
    assert abs(iv.ops.sum() - 5229) < 20


def test_sysbench_bucket_percentile_is_sysbenchs_own():
    from benchlib.importers.sysbench import _percentiles
    rows = []
    for line in SB_OUT.read_text().split("Latency histogram")[1].splitlines()[2:]:
        if "|" not in line:
            break
        v, rest = line.split("|")
        rows.append((float(v), int(rest.split()[-1])))
    assert _percentiles(rows, [95])["p95_us"] == pytest.approx(7985)   # sysbench printed 7.98


# ----------------------------------------------------------------- the run folder

def test_import_output_writes_a_run_folder(tmp_path):
    into = tmp_path / "data" / "ycsb-pg" / "hdr-run"
    out = import_output("auto", [Y / "pg-runa-t4-hdr.out", Y / "pg-runa-t4-hdr.err"], into)
    assert out == into
    meta = read_meta(into)
    assert (meta["source"], meta["experiment"], meta["config"], meta["run_id"], meta["status"]) == (
        "ycsb", "ycsb-pg", "hdr-run", "hdr-run", "ok")
    assert meta["tool_version"] == "0.18.0-SNAPSHOT" and "-p measurementtype=hdrhistogram" in meta["command_line"]
    assert meta["files"] == ["pg-runa-t4-hdr.out", "pg-runa-t4-hdr.err"]
    res = load_results(into)
    assert (res["latency"].run_id == "hdr-run").all() and set(res["latency"].step) == {"r.L1"}
    assert res["steps"].iloc[0].ops == 100000
    named = import_output("ycsb", [Y / "pg-load-t4-hist.out"], tmp_path / "data" / "ycsb-pg" / "x", name="load-a")
    assert read_meta(named)["run_id"] == "load-a" == read_meta(named)["config"]


def test_import_output_leaves_nothing_on_error(tmp_path):
    bad = write(tmp_path, "bad.out", "[OVERALL], RunTime(ms), 3000\n[READ], Operations, many\n")
    exp = tmp_path / "exp"
    with pytest.raises(ImportFormatError):
        import_output("ycsb", [bad], exp / "run")
    assert not exp.exists() or not any(exp.iterdir())
    import_output("sysbench", [SB_OUT], exp / "run")
    with pytest.raises(ResultsError):
        import_output("sysbench", [SB_OUT], exp / "run")


def test_import_output_with_hw_logs(tmp_path):
    pytest.importorskip("benchlib.importers.hwlogs")
    out = import_output("linkbench", [LB / "pgsql_request.stdout.log"], tmp_path / "e" / "r",
                        hw=[LB / "hw/pgsql_request_vmstat_1s.log", LB / "hw/pgsql_request_mpstat_1s.log"])
    hw = load_results(out)["hw"]
    assert len(hw) and (hw.step == "r.L1").all() and hw.second.is_monotonic_increasing
    assert hw.cpu_user.notna().all()


@pytest.mark.parametrize("path, kind", [
    (Y / "pg-load-t4-hist.out", "ycsb"), (Y / "pg-runa-t4-hist.err", "ycsb"),
    (Y / "hdr/pg-runa-t4-hdr-READ.hdr", "ycsb"), (Y / "go-ycsb/goycsb-pg-runa-t4-interval1.out", "go-ycsb"),
    (LB / "pgsql_load.stdout.log", "linkbench"), (LB / "pgsql_request_final_stats.csv", "linkbench"),
    (LB / "pgsql_request_stream_stats.csv", "linkbench"), (PG_OUT, "pgbench"), (PG_ERR, "pgbench"),
    (SB_OUT, "sysbench")])
def test_detect_kind(path, kind):
    assert detect_kind(path) == kind


def test_unknown_kind_and_other_tools_file(tmp_path):
    with pytest.raises(UnknownName, match="unknown importer kind .tpcc."):
        read_output("tpcc", [SB_OUT])
    for kind, f in (("pgbench", SB_OUT), ("sysbench", PG_OUT), ("linkbench", PG_ERR), ("ycsb", SB_OUT)):
        with pytest.raises(ImportFormatError):
            read_output(kind, [f])


GO_ERRORS = """\
***************** properties *****************
"command"="run"
"threadcount"="2"
**********************************************
READ   - Takes(s): 1.0, Count: 100, OPS: 100.0, Avg(us): 150, Min(us): 20, Max(us): 900, 99th(us): 800
TOTAL  - Takes(s): 1.0, Count: 100, OPS: 100.0, Avg(us): 150, Min(us): 20, Max(us): 900, 99th(us): 800
READ   - Takes(s): 2.0, Count: 180, OPS: 90.0, Avg(us): 160, Min(us): 20, Max(us): 950, 99th(us): 810
READ_ERROR - Takes(s): 0.5, Count: 3, OPS: 6.0, Avg(us): 50, Min(us): 40, Max(us): 70, 99th(us): 70
TOTAL  - Takes(s): 2.0, Count: 183, OPS: 91.5, Avg(us): 158, Min(us): 20, Max(us): 950, 99th(us): 810
**********************************************
Run finished, takes 2.5s
READ   - Takes(s): 2.5, Count: 200, OPS: 80.0, Avg(us): 160, Min(us): 20, Max(us): 990, 99th(us): 820
READ_ERROR - Takes(s): 1.0, Count: 4, OPS: 4.0, Avg(us): 55, Min(us): 40, Max(us): 80, 99th(us): 80
TOTAL  - Takes(s): 2.5, Count: 204, OPS: 81.6, Avg(us): 158, Min(us): 20, Max(us): 990, 99th(us): 820
"""


def test_go_ycsb_error_rows(tmp_path):
    imp = read_output("go-ycsb", [write(tmp_path, "go.out", GO_ERRORS)])
    s = imp.steps.iloc[0]
    assert (s.ops, s.errors, s.secs, s.threads) == (204, 4, 2.5, 2)
    r = row(imp.latency, op="READ")
    assert (r["count"], r.errors, r.max_us, r.p99_us) == (204, 4, 990, 820)
    iv = imp.intervals
    assert list(iv[iv.op == "READ"].ops) == [100, 80, 20] and list(iv[iv.op == "READ"].errors) == [0, 3, 1]
    assert list(iv[iv.op == "READ"].second) == [0, 1, 2]


def test_ycsb_raw_file_alone(tmp_path):
    text = "READ latency raw data: op, timestamp(ms), latency(us)\nREAD,1795315129100,100\nREAD,1795315130500,300\n"
    imp = read_output("ycsb", [write(tmp_path, "raw.txt", text)])
    r = row(imp.latency, op="READ")
    assert (r["count"], r.min_us, r.max_us) == (2, 100, 300)
    assert list(imp.intervals.ops) == [1, 1] and list(imp.intervals.second) == [0, 1]


def test_status_line_with_infinite_rate_imports_with_the_rate_blank(tmp_path):
    """YCSB's StatusThread prints "∞ current ops/sec" for an interval too short to
    divide by (YCSB 0.17/0.18): the line imports, its rate blank, its counts kept."""
    inf = DATA / "ycsb" / "status-infinity.err"
    assert "∞ current ops/sec" in inf.read_text()
    got = import_output("ycsb", [inf], tmp_path / "inf")
    iv = load_results(got)["intervals"]
    total = iv[iv["op"] == "TOTAL"].set_index("second")
    assert len(total) == 6
    assert np.isnan(total.loc[1, "ops_per_s"])           # the ∞ line's second (0-based)
    assert total.loc[1, "ops"] == 2334 - 221             # its operations are kept
    assert total["ops_per_s"].notna().sum() == 5


def test_failed_operations_are_errors_with_their_own_latencies(tmp_path):
    """YCSB's summary of a load whose inserts all failed: [INSERT] Operations 0 with
    figures of nothing (Min = Long.MAX_VALUE, Max 0), Return=ERROR 962, and the failed
    operations' latencies in [INSERT-FAILED]."""
    got = import_output("ycsb", [DATA / "ycsb" / "load-failed-inserts.out"], tmp_path / "f")
    lat = load_results(got)["latency"].set_index("op")
    ins = lat.loc["INSERT"]
    assert ins["count"] == 962 and ins["errors"] == 962          # 0 successes, 962 errors
    for c in ("mean_us", "min_us", "max_us", "p95_us", "p99_us"):
        assert np.isnan(ins[c]), c                                # none timed: blank, not 0
    failed = lat.loc["INSERT-FAILED"]
    assert failed["count"] == 962 and failed["mean_us"] == 1187.4 and failed["p99_us"] == 4259
    steps = load_results(got)["steps"]
    assert steps["errors"].iloc[0] == 962


def test_jvm_gauges_and_failed_operations_in_status_lines(tmp_path):
    """A load run with measurement.trackjvm=true whose inserts partly failed
    (hdrhistogram, -s): YCSB times its JVM's figures as if they were operations
    ([THREAD_COUNT: Count=1, …] in every status line after the first, and
    [THREAD_COUNT], Operations … in the summary) and the failed inserts apart
    ([INSERT-FAILED: Count=…]). The gauges are a table of their own, out of the
    latency and interval tables; the failures are errors of INSERT, kept with
    their own latencies."""
    err, out = DATA / "ycsb" / "load-jvm-failed.err", DATA / "ycsb" / "load-jvm-failed.out"
    got = import_output("ycsb", [err, out], tmp_path / "jvm")
    res = load_results(got, tables=["steps", "latency", "intervals", "gauges"])
    gauges_names = {"THREAD_COUNT", "USED_MEM_MB", "SYS_LOAD_AVG", "GCS", "GCS_TIME"}
    for t in ("latency", "intervals"):
        assert not gauges_names & set(res[t]["op"]), t
    g = res["gauges"]
    assert set(g["gauge"]) == gauges_names and set(g["step"]) == {"l.pre"}
    mem = g[g["gauge"] == "USED_MEM_MB"].set_index("second")
    assert list(mem["mean"]) == [41, 58, 77, 81.5] and list(mem["samples"]) == [1, 1, 1, 2]
    thr = g[g["gauge"] == "THREAD_COUNT"].set_index("second")
    assert thr.loc[3, "min"] == 8 and thr.loc[3, "max"] == 12
    # every figure the file prints of the gauges: the summary's in meta.json
    meta = json.loads((got / "meta.json").read_text())
    assert meta["jvm"]["MAX_MEM_USED"]["MBs"] == 83 and meta["jvm"]["MIN_THREADS"]["thread count"] == 8
    assert meta["jvm"]["THREAD_COUNT"]["Operations"] == 5

    iv = res["intervals"]
    ins = iv[iv["op"] == "INSERT"].set_index("second")
    failed = iv[iv["op"] == "INSERT-FAILED"].set_index("second")
    total = iv[iv["op"] == "TOTAL"].set_index("second")
    assert list(ins["errors"]) == [208, 0, 413, 0]
    assert (ins["ops"] == total["ops"]).all()                  # successes + failures, as YCSB counts
    assert failed.loc[2, "p99_us"] == 9951 and np.isnan(failed.loc[1, "mean_us"])   # Count=0: blank
    assert ins.loc[0, "mean_us"] == 712.4                       # the successes' own latency
    lat = res["latency"].set_index("op")
    assert lat.loc["INSERT", "errors"] == 621 == ins["errors"].sum()
    assert res["steps"]["errors"].iloc[0] == 621


def test_killed_run_latency_from_status_lines_weighs_successes(tmp_path):
    """No summary (the stderr alone, as a killed run leaves it): the latency table comes
    from the status lines; its count takes in the failures, its mean only the
    successes' own latencies, weighed by their number."""
    got = import_output("ycsb", [DATA / "ycsb" / "load-jvm-failed.err"], tmp_path / "k")
    ins = load_results(got)["latency"].set_index("op").loc["INSERT"]
    ok = {712.4: 5002, 591.03: 6667, 603.88: 6101, 577.1: 1609}
    assert ins["count"] == 20000 and ins["errors"] == 621
    assert ins["mean_us"] == pytest.approx(sum(m * n for m, n in ok.items()) / sum(ok.values()))
