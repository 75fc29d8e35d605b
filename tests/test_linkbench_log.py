"""linkbench.log: a benchlib run in the Java client's log format, read back by
``benchlib import linkbench`` with the run's own counts; the maintained client's
config files (config/ of mdcallag/linkbench, host/port/user aside) accepted as they are;
the Java client's latency buckets."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from benchlib import load_results, run_experiment
from benchlib.importers import import_output
from benchlib.params import validate
from benchlib.workloads.linkbench.latencystats import bucket_bounds, bucket_of
from benchlib.workloads.linkbench.properties import from_properties, read_config

DATA = Path(__file__).parent / "data" / "linkbench"
SMALL = str(DATA / "Distribution_small.dat")


def test_java_buckets():
    """LatencyStats: 0.1 ms buckets below 1 ms, 1 ms to 100 ms, 100 ms to 1 s, then 1 s."""
    us = np.array([0, 99, 100, 999, 1000, 1999, 99_999, 100_000, 999_999, 1_000_000, 10**8])
    b = bucket_of(us)
    assert [bucket_bounds(int(x)) for x in b] == [
        (0, 100), (0, 100), (100, 200), (900, 1000), (1000, 2000), (1000, 2000),
        (99_000, 100_000), (100_000, 200_000), (900_000, 1_000_000), (1_000_000, 2_000_000),
        (10_000_000, 100_000_000)]


def test_linkbench_log_imports_back_with_the_runs_counts(tmp_path, capsys):
    exp = validate({"experiment": "lblog", "workload": "linkbench",
                    "properties": {"maxid1": 2001, "loaders": 1, "data_file": SMALL,
                                   "req_progress_interval": 500, "load_progress_interval": 500},
                    "targets": [{"name": "s", "url": "sqlite"}], "load": {"batch_size": 256},
                    "run": {"threads": [2], "processes": 1, "loops": 1, "loop_secs": 1.0,
                            "status_interval_s": 60}, "seed": 3}, "test")
    res = run_experiment(exp, tmp_path / "d", progress=False)
    (run_id,) = res.runs
    rd = tmp_path / "d" / "lblog" / run_id
    own = load_results(rd)
    log = (rd / "linkbench.log").read_text()
    assert re.search(r"^INFO \S+ \S+ \[main\]: LOAD PHASE COMPLETED\. Loaded 2000 nodes", log, re.M)
    assert re.search(r"\[main\]: GET_NODE count = \d+  p25 = \[[\d.]+,[\d.]+\]ms .* threads = 2$",
                     log, re.M)
    assert re.search(r"requests finished: .* secs elapsed", log)
    imp = import_output("linkbench", [rd / "linkbench.log"], into=tmp_path / "imp")
    theirs = load_results(imp)
    osteps, isteps = (t["steps"].set_index("step") for t in (own, theirs))
    assert list(isteps.index) == ["l.pre", "r.L1"]
    for step in ("l.pre", "r.L1"):
        assert isteps.loc[step, "ops"] == osteps.loc[step, "ops"]
        ol, il = (t["latency"][t["latency"]["step"] == step].set_index("op")
                  for t in (own, theirs))
        ol = ol[(ol["count"] > 0) & ~ol.index.str.startswith("Intended-")]
        assert (il["count"] == ol["count"].reindex(il.index)).all() and set(il.index) == set(ol.index)
        assert (il["p99_us"] <= il["max_us"]).all()
    assert isteps.loc["r.L1", "threads"] == 2
    # the requesters' own counts (ThreadID = i total requests …, RANGE_SIZE) read back, and
    # they agree with the run's tables: requests its ops, GET_LINKS_LIST its calls, found
    # at least a link per MULTIGET_LINK that returned OK, not found one per EMPTY
    import json
    back = json.loads((imp / "meta.json").read_text())["steps"]["r.L1"]["requesters"]
    assert [b["thread"] for b in back] == [0, 1]
    lat = own["latency"][own["latency"]["step"] == "r.L1"].set_index("op")["count"]
    rets = own["returns"][own["returns"]["step"] == "r.L1"].set_index(["op", "status"])["count"]
    assert sum(b["requests"] for b in back) == osteps.loc["r.L1", "ops"]
    assert sum(b["get_links_list"] for b in back) == sum(b["range_size_calls"] for b in back) \
        == lat["GET_LINKS_LIST"]
    assert sum(b["found"] for b in back) >= rets.get(("MULTIGET_LINK", "OK"), 0)
    assert sum(b["not_found"] for b in back) >= rets.get(("MULTIGET_LINK", "EMPTY"), 0)
    assert all(b["range_size_max"] <= 10000 for b in back)   # range_limit at most
    # the line shapes of the Java client's logs (numbers aside): benchlib's has them all
    # but those it has no counterpart for, and the patterns a script greps them with
    java = {_shape(x) for f in ("pgsql_load.stdout.log", "pgsql_request.stdout.log")
            for x in (DATA / f).read_text().splitlines()} - {None}
    ours = {_shape(x) for x in log.splitlines()}
    assert java - ours <= NOT_PRINTED, sorted(java - ours - NOT_PRINTED)
    for pat in GREPS:
        assert re.search(pat, log, re.M) and re.search(pat, (DATA / "pgsql_request.stdout.log").read_text()
                                                       + (DATA / "pgsql_load.stdout.log").read_text(), re.M), pat
    # the load's totals counted: the graph's links (the index step counts linktable's rows)
    done = re.search(r"LOAD PHASE COMPLETED\. Loaded (\d+) nodes .*?, (\d+) links .*?, (\d+) counts", log)
    assert [int(x) for x in done.groups()] == [2000, osteps.loc["l.post", "ops"], 2 * 2000]
    assert "Load mode fast" in log
    # the buckets: the imported p50's bucket holds the run's own p50 (give or take the
    # rank rules': Java's floor, HdrHistogram's nearest)
    run_own = own["latency"][(own["latency"]["step"] == "r.L1")].set_index("op")
    run_imp = theirs["latency"][(theirs["latency"]["step"] == "r.L1")].set_index("op")
    for op in run_imp.index:
        b_own = int(bucket_of([run_own.loc[op, "p50_us"]])[0])
        b_imp = int(bucket_of([run_imp.loc[op, "p50_lo_us"]])[0])
        assert abs(b_own - b_imp) <= 1, (op, run_own.loc[op, "p50_us"], run_imp.loc[op, "p50_lo_us"])
    # the real Java run (shared samples) and benchlib's: the same point (2 requesters)
    from benchlib.cli import main
    import_output("linkbench", [DATA / "pgsql_request.stdout.log"], into=tmp_path / "java" / "pg")
    capsys.readouterr()
    # Java's run on PostgreSQL and benchlib's on SQLite: two DBMSs, paired only when told
    assert main(["compare", str(tmp_path / "java"), str(tmp_path / "d" / "lblog")]) == 2
    assert "--pair pg=s" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "java"), str(tmp_path / "d" / "lblog"), "--pair", "pg=s"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\s2\s+0 ops_per_s\s", out, re.M) and "no point" not in out, out
    # Java's bucketed percentiles are flagged as buckets, never read as their upper bound
    assert re.search(r"_p99_us .*\(A: bucket \[\d+, \d+\] µs\)", out), out
    orets = own["returns"] if "returns" in own else None
    ir = theirs["returns"].set_index(["op", "status"])["count"]
    if orets is not None:
        o = orets[orets["step"] == "r.L1"].set_index(["op", "status"])["count"]
        assert ir.get(("ADD_LINK", "RETRY"), 0) == o.get(("ADD_LINK", "RETRY"), 0)
        assert ir.get(("UPDATE_LINK", "RETRY"), 0) == o.get(("UPDATE_LINK", "RETRY"), 0)


# Java's lines this run has no occasion for: it is a YAML of inline properties (no config
# file), skips no phase, ends before progressfreq's 300 s (no "Requester #i n/N requests
# done"); test_linkbench_javalines.py has a run that prints all the request log's
NOT_PRINTED = {"Config file: config/LinkConfigPgsqlLocal.properties",
               "Loading real distribution data from /tmp/linkbench/config/Distribution.dat",
               "Requester #N N/N requests done", "Skipping load data per the cmdline arg",
               "Skipping request phase per the cmdline arg",
               "Will generate graph nodes during loading",
               "Workload config file: /tmp/linkbench/config/FBWorkloadSmall.properties",
               # an operation with no call in a display's window: benchlib displays the whole loop
               "ThreadID = N OP totalops = N totalErrors = N ops = N sampleDuration = Nms samples = N"}
GREPS = [r"REQUEST PHASE COMPLETED\. \d+ requests done in \d+ seconds\. Requests/second = \d+$",
         # a fast load's line (this run's) says so after Java's fields: "(mode fast: …)"
         r"LOAD PHASE COMPLETED\. Loaded \d+ nodes .* (\d+) Links/s, \d+ \(link\+count\)/s, "
         r"\d+ \(link\+count\+node\)/s(?: \(mode fast: [^)]*\))?$",
         r"\[Thread-\d+\]: \d+/\d+ id1s \([\d.]+%\) at [\d.]+ /sec\. \d+ links at ",
         r"ThreadID = \d+ total requests = \d+ requests/second = \d+ found = \d+ not found = \d+ "
         r"history queries = \d+/\d+$",
         r"ThreadID = \d+ RANGE_SIZE totalOps = \d+ .* mean = [\d.]+ min = \d+ .* 99% = \d+ max = \d+$",
         r"Graph Link total retry: \d+ add, \d+ update, ", r"Graph Link max retry: ",
         r"Graph Node total retry: \d+ add, \d+ add_bulk, ", r"Graph Node max retry: ",
         r"Graph Link other: \d+ add_to_upd, \d+ upd_to_add, \d+ commit_failed$",
         r"Requester #\d+: time limit of \d+s elapsed, shutting down\.$",
         r"\]: Requester thread #\d+ started: will do \d+ ops after \d+ second warmup$",
         r"Starting loader thread  #\d+ loading nodes$", r"Loading of nodes \[\d+,\d+\) done$"]


def _shape(line: str) -> str | None:
    """A log4j line's message, its numbers N and its operation OP."""
    m = re.match(r"^(?:[A-Z]+ )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*\]: (.*)$", line)
    if not m:
        return None
    msg = re.sub(r" \(mode fast: [^)]*\)$", "", m.group(1).strip())   # a fast load's, after Java's line
    msg = re.sub(r"-?\d+(?:\.\d+)?", "N", msg)
    return re.sub(r"^(ThreadID = N )?[A-Z_]+ (count = |total[Oo]ps = )", r"\1OP \2", msg)


def _maintained(tmp_path: Path, name: str) -> Path:
    """The maintained client's config/ (data/linkbench/config: its files, host, port and
    user changed) copied under a LinkBench home."""
    home = tmp_path / "linkbench"
    (home / "config").mkdir(parents=True)
    for f in (DATA / "config").iterdir():
        (home / "config" / f.name).write_bytes(f.read_bytes())
    return home / "config" / name


@pytest.mark.parametrize("name", ["LinkConfigPgsql.properties", "LinkConfigMysql.properties",
                                  "LinkConfigRocksDb.properties",
                                  "LinkConfigMongoDbBasic.properties"])
def test_the_maintained_configs_are_accepted_as_they_are(tmp_path, name):
    props = read_config(_maintained(tmp_path, name))
    p = from_properties(props)
    assert (p.dbprefix, p.dbcount, p.maxid1, p.getnode) == ("linkdb", 1, 10000001, 43.9869)
    assert p.progressfreq == 300 and p.req_progress_interval == 10000
    assert p.datagen["node_add_datagen_uniqueness"] == "0.63"
    assert "password" not in props and "url" not in props


def test_unknown_keys_and_several_databases_are_one_line():
    with pytest.raises(ValueError, match=r"^dbprefx: not a LinkBench property \(did you mean dbprefix\?\)$"):
        from_properties({"dbprefx": "x"})
    with pytest.raises(ValueError, match=r"^dbcount: benchlib runs LinkBench on one database"):
        from_properties({"dbcount": 2})
    with pytest.raises(ValueError, match="link_add_datagen_uniqueness"):
        from_properties({"link_add_datagen_uniqueness": 2})



def test_requests_under_loop_secs_are_no_count_the_log_claims():
    """``requests`` is each requester's count only where the loop ends at it: with
    ``run.loop_secs`` the seconds win (its step has no ops_total), and the requester
    lines must not say "will do 2500 ops" over a loop that did 358,440."""
    from test_linkbench import lb_experiment

    from benchlib.params import plan
    from benchlib.workloads.linkbench.log import requests_total
    for loop_secs, total in ((None, 5000), (3, None)):
        exp_d = lb_experiment("lbreq", "sqlite", {"requests": 2500})
        exp_d["run"]["loop_secs"] = loop_secs
        exp = validate({**exp_d, "run": {k: v for k, v in exp_d["run"].items() if v is not None}}, "test")
        spec = plan(exp)[0]
        wl = exp.workload_class()({**exp.workload_properties(), **spec.workload_point})
        (r1, _) = [s for s in wl.steps(exp, spec) if s.phase == "run"]
        assert requests_total(r1) == total, (loop_secs, r1.ops_total)
