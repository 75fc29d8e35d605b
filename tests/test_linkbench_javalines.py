"""linkbench.log has every kind of line the Java client's request log has: the line
shapes (numbers, timestamps and paths as placeholders, log4j's level/time/thread prefix
stripped, an operation's name as OP) of the maintained client's stdout log of a request
phase (tests/data/linkbench/pgsql_request.stdout.log, the shared sample) are a subset of
those of a benchlib request-only run on PostgreSQL, none excepted, with
the values the run counted: each requester's totals, its RANGE_SIZE (the links its
GET_LINKS_LIST calls returned), its progress and windows, agreeing with the run's tables.
The load's lines are the load's own (test_linkbench_log, test_linkbench_progress)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchlib import cli, load_results
from benchlib.importers import import_output

DATA = Path(__file__).parent / "data" / "linkbench"
SMALL = str(DATA / "Distribution_small.dat")

def shape(line: str) -> str | None:
    """A log4j line's message with its numbers N, its paths PATH and its operation OP."""
    m = re.match(r"^(?:[A-Z]+ )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*\]: (.*)$", line)
    if not m:
        return None
    msg = re.sub(r"(?<=\s)(?:/|config/)\S*", "PATH", m.group(1).strip())
    msg = re.sub(r"-?\d+(?:\.\d+)?", "N", msg)
    return re.sub(r"^(ThreadID = N )?[A-Z_]+ (count = |total[Oo]ps = )", r"\1OP \2", msg)


def _config(tmp_path: Path) -> Path:
    """A LinkBench home: config/ with a config naming its workload file, as Java's."""
    conf = tmp_path / "linkbench" / "config"
    conf.mkdir(parents=True)
    # DELETE_NODE's share 0: Java's displays print it all the same, "totalops = 0 … samples = 0"
    (conf / "Workload.properties").write_text(
        "addlink = 9\ndeletelink = 3\nupdatelink = 8\ncountlink = 5\ngetlink = 12\n"
        "getlinklist = 20\ngetnode = 33\naddnode = 3\nupdatenode = 7\ndeletenode = 0\n"
        f"data_file = {SMALL}\n")
    cfg = conf / "LinkConfigPgsql.properties"
    cfg.write_text("workload_file = config/Workload.properties\n"
                   "linkstore = com.facebook.LinkBench.LinkStorePgsql\nmaxid1 = 2001\nloaders = 1\n"
                   "requesters = 8\nmaxtime = 2\nprogressfreq = 0.5\ndisplayfreq = 0.5\n"
                   "req_progress_interval = 500\n")
    return cfg


@pytest.mark.postgres
def test_request_log_has_javas_line_kinds_with_the_runs_counts(pg_own_db, tmp_path, capsys):
    cfg = _config(tmp_path)
    d = tmp_path / "d"
    common = [str(cfg), "-p", "requesters=2", "--target", pg_own_db, "--data-dir", str(d), "--no-progress"]
    assert cli.main(["run", *common, "-p", "run.skip=true"]) == 0        # Java's -l
    assert cli.main(["run", *common, "-p", "load.skip=true", "--force"]) == 0   # Java's -r
    rd = max((p for p in (d / cfg.stem).iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    tables = load_results(rd)
    assert list(tables["steps"]["step"]) == ["r.L1"]
    log = (rd / "linkbench.log").read_text()
    java = {shape(x) for x in (DATA / "pgsql_request.stdout.log").read_text().splitlines()} - {None}
    ours = {shape(x) for x in log.splitlines()}
    assert java <= ours, sorted(java - ours)
    # the master seed the requesters' streams derive from: the run's (meta.json), and one
    # ID2Chooser warning per requester, as LinkBenchDriver and LinkBenchRequest print them
    seed = json.loads((rd / "meta.json").read_text())["seed"]
    assert f"[main]: Using random seed {seed} since request_random_seed not specified\n" in log
    assert log.count("[main]: ID2Chooser run with neverChange=false\n") == 2
    assert f"[main]: Config file: {cfg.resolve()}" in log
    assert f"[main]: Workload config file: {(cfg.parent / 'Workload.properties').resolve()}" in log
    assert f"[main]: Loading real distribution data from {SMALL}" in log

    # the values: each requester's, from its own lines, against the run's tables
    steps = tables["steps"].set_index("step")
    lat = tables["latency"].query("step == 'r.L1'").set_index("op")["count"]
    totals = {int(i): (int(n), int(h), int(g)) for i, n, h, g in re.findall(
        r"ThreadID = (\d+) total requests = (\d+) requests/second = \d+ found = \d+ not found = \d+ "
        r"history queries = (\d+)/(\d+)$", log, re.M)}
    assert sorted(totals) == [0, 1]
    assert sum(n for n, _, _ in totals.values()) == steps.loc["r.L1", "ops"]

    def last(thread: int, op: str) -> re.Match:
        (*_, m) = re.finditer(rf"ThreadID = {thread} {op} total[Oo]ps = (\d+) totalErrors = (\d+) ops = (\d+) "
                              r"sampleDuration = (\d+)ms samples = (\d+)(?: mean = ([\d.]+) min = (\d+) .* "
                              r"max = (\d+))?$", log, re.M)
        return m
    for i, (_, history, lists) in totals.items():
        gl, rs = last(i, "GET_LINKS_LIST"), last(i, "RANGE_SIZE")
        assert int(gl[1]) == int(rs[1]) == lists and history <= lists   # a size per GET_LINKS_LIST call
        assert last(i, "DELETE_NODE").group(0).startswith(f"ThreadID = {i} DELETE_NODE totalops = 0 ")
    assert sum(int(last(i, "GET_LINKS_LIST")[1]) for i in totals) == lat["GET_LINKS_LIST"]
    sizes = [(int(m[1]), float(m[2]), int(m[3])) for m in re.finditer(
        r"RANGE_SIZE totalOps = \d+ totalErrors = 0 ops = (\d+) sampleDuration = \d+ms samples = \d+ "
        r"mean = ([\d.]+) min = \d+ .* max = (\d+)$", log, re.M)]
    assert sizes and max(s[2] for s in sizes) <= 10000   # range_limit
    assert max(s[2] for s in sizes) > 1                   # lists of several links: sizes measured, not 0/1
    # each requester's progress lines count up to its total
    for i, (n, _, _) in totals.items():
        done = [int(x) for x in re.findall(rf"Requester #{i} (\d+)/\d+ requests done$", log, re.M)]
        assert done and done == sorted(done) and done[-1] <= n
    # REQUEST PHASE COMPLETED recomputed from steps.parquet
    ops, ms = int(steps.loc["r.L1", "ops"]), int(steps.loc["r.L1", "secs"] * 1000)
    assert f"REQUEST PHASE COMPLETED. {ops} requests done in {ms // 1000} seconds. " \
           f"Requests/second = {1000 * ops // ms}" in log

    # benchlib import linkbench reads it: the same requests, the requesters' counts
    imp = import_output("linkbench", [rd / "linkbench.log"], into=tmp_path / "imp")
    assert load_results(imp)["steps"].set_index("step").loc["r.L1", "ops"] == ops
    back = json.loads((imp / "meta.json").read_text())["steps"]["r.L1"]["requesters"]
    assert [(b["thread"], b["requests"], b["range_size_calls"]) for b in back] == \
        [(i, n, g) for i, (n, _, g) in sorted(totals.items())]


def test_a_requesters_warmup_is_neither_counted_nor_kept():
    """LinkBenchRequest's warmup: its requests are warmupRequests, not requestsDone, their
    statistics not recorded (RANGE_SIZE neither); the windows and progress start at its
    end. Requests every 10 ms for 3 s, 1 s of warmup, a GET_LINKS_LIST of 3 links every 5th."""
    from benchlib.workloads.linkbench.reqstats import RequesterStats
    s = RequesterStats(0, 1, progress_s=0.5, display_s=1.0, warmup_s=1.0)
    ms = 1_000_000
    for k in range(300):
        t0 = s.perf0 + k * 10 * ms
        op = "GET_LINKS_LIST" if k % 5 == 0 else "GET_NODE"
        if op == "GET_LINKS_LIST":
            s.links_list(3, False)
        s.done(op, t0, t0 + ms // 10, False)
    d = s.as_dict()
    # the request ending at 1.0001 s is the warmup's last (Java flips after the request)
    assert d["warmed"][1] == 101 and d["requests"] == 199
    assert d["range_size_calls"] == d["get_links_list"] == len(range(105, 300, 5))
    assert [len(lines) for _, lines in d["windows"]] == [10, 10]   # at 2.0001 s and the last request
    first, last = (dict(ln.split(" ", 4)[3:5] for ln in lines) for _, lines in d["windows"])
    assert re.match(r"totalOps = 20 totalErrors = 0 ops = 20 sampleDuration = 1000ms samples = 20 "
                    r"mean = 3 min = 3 ", first["RANGE_SIZE"]), first["RANGE_SIZE"]
    assert re.match(r"totalops = 0 .* samples = 0$", first["DELETE_NODE"])
    assert re.match(r"totalOps = 39 totalErrors = 0 ops = 19 ", last["RANGE_SIZE"])
    assert [n for _, n in d["progress"]] == sorted(n for _, n in d["progress"]) and d["progress"][0][1] > 0


@pytest.mark.postgres
def test_a_configured_request_random_seed_is_the_requests_seed(pg_own_db, tmp_path):
    """request_random_seed, as LinkBenchDriver's createMasterRNG: the requesters' streams
    derive from it, not from the run's seed, and the log says so. One requester, 400
    requests: the mix's draws come from its stream alone, so two runs (each with its own
    run seed) on one request_random_seed do the same operations, and a third on another
    does not."""
    cfg = _config(tmp_path)
    d = tmp_path / "d"

    def run(*extra: str) -> tuple[dict, str, int]:
        common = [str(cfg), "-p", "requesters=1", "-p", "requests=400", "-p", "maxtime=600",
                  "--target", pg_own_db, "--data-dir", str(d), "--no-progress", "--force", *extra]
        assert cli.main(["run", *common]) == 0
        rd = max((p for p in (d / cfg.stem).iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
        lat = load_results(rd)["latency"].query("step == 'r.L1'").set_index("op")["count"]
        log = (rd / "linkbench.log").read_text()
        return lat.to_dict(), log, json.loads((rd / "meta.json").read_text())["seed"]

    assert cli.main(["run", str(cfg), "-p", "run.skip=true", "--target", pg_own_db,
                     "--data-dir", str(d), "--no-progress"]) == 0
    skip = ["-p", "load.skip=true"]
    a, log_a, seed_a = run(*skip, "-p", "request_random_seed=-961006157731")
    b, log_b, seed_b = run(*skip, "-p", "request_random_seed=-961006157731")
    c, log_c, _ = run(*skip, "-p", "request_random_seed=12345")
    assert seed_a != seed_b   # two run seeds, one request stream
    assert a == b and a != c and sum(a.values()) == 400
    for log, n in ((log_a, "-961006157731"), (log_b, "-961006157731"), (log_c, "12345")):
        assert f"[main]: Using configured random seed request_random_seed={n}\n" in log
        assert "since request_random_seed not specified" not in log


def test_maxtime_is_the_loops_time_after_its_warmup():
    """LinkBenchRequest: endTime = start + warmup_time + maxtime (maxTime "not including
    warmup time"), the progress lines' time limit maxtime: the loop runs both. No server:
    the steps as planned."""
    from test_linkbench import lb_experiment

    from benchlib.params import plan, validate
    from benchlib.workloads.linkbench.log import time_limit
    exp_d = lb_experiment("lbwarm", "postgresql://127.0.0.1/none",
                          {"maxtime": 5, "warmup_time": 2, "request_random_seed": 99})
    del exp_d["run"]["loop_secs"]
    exp = validate(exp_d, "test")
    spec = plan(exp)[0]
    wl = exp.workload_class()({**exp.workload_properties(), **spec.workload_point})
    (r1, _) = [s for s in wl.steps(exp, spec) if s.phase == "run"]
    assert (r1.loop_secs, r1.warmup_secs, time_limit(wl.p, r1)) == (7, 2, 5)
    assert r1.seed == 99   # its streams' master seed (run/tasks.py)


@pytest.mark.postgres
def test_warmup_requests_are_not_in_request_phase_completed(pg_own_db, tmp_path):
    """LinkBenchDriver's REQUEST PHASE COMPLETED: the requesters' requestsDone (a warmup
    request is a warmupRequest, not one of them) over the time after the warmup; the
    step's own ops and seconds (steps.parquet) hold the warmup's too."""
    cfg = _config(tmp_path)
    d = tmp_path / "d"
    common = [str(cfg), "-p", "requesters=1", "-p", "maxtime=2", "-p", "warmup_time=1",
              "--target", pg_own_db, "--data-dir", str(d), "--no-progress"]
    assert cli.main(["run", *common, "-p", "run.skip=true"]) == 0
    assert cli.main(["run", *common, "-p", "load.skip=true", "--force"]) == 0
    rd = max((p for p in (d / cfg.stem).iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    step = load_results(rd)["steps"].set_index("step").loc["r.L1"]
    log = (rd / "linkbench.log").read_text()
    (done,) = [int(x) for x in re.findall(r"ThreadID = 0 total requests = (\d+) ", log)]
    warmed = int(re.search(r"Requester #0 warmup finished  after (\d+) warmup requests", log)[1])
    assert 0 < done < step["ops"] and warmed > 0 and step["secs"] >= 3
    ms = int((step["secs"] - 1) * 1000)
    assert f"REQUEST PHASE COMPLETED. {done} requests done in {ms // 1000} seconds. " \
           f"Requests/second = {1000 * done // ms}" in log
