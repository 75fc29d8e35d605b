"""LinkBench's progress lines on the terminal while a run goes (Workload.progress): the
Java client's ``N/M id1s …`` and ``N/M requests finished …`` lines and its
``ThreadID = …`` statistics, read by benchlib's own LinkBench importer's patterns,
whose counts are the steps' own and say what linkbench.log says; ``--no-progress``
prints none of them."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from benchlib import cli, load_results, run_experiment
from benchlib.importers.linkbench import _LOAD_PROGRESS, _REQ_PROGRESS, _THREAD, _TIME
from benchlib.params import validate

SMALL = str(Path(__file__).parent / "data" / "linkbench" / "Distribution_small.dat")
LINKS_EVERY, REQUESTS_EVERY = 700, 300


def _experiment(name: str) -> dict:
    return {"experiment": name, "workload": "linkbench",
            "properties": {"maxid1": 2001, "loaders": 1, "data_file": SMALL, "progressfreq": 0.001,
                           "displayfreq": 1000, "req_progress_interval": REQUESTS_EVERY,
                           "load_progress_interval": LINKS_EVERY},
            "targets": [{"name": "s", "url": "sqlite"}], "load": {"batch_size": 256},
            "run": {"threads": [2], "processes": 1, "loops": 1, "loop_secs": 1.5,
                    "status_interval_s": 0.001}, "seed": 4}


def _progress(text: str) -> tuple[list[int], list[str]]:
    """(links of each load progress line, each request progress line's message)."""
    links, requests = [], []
    for line in text.splitlines():
        m = _TIME.match(line)
        if m and (f := _LOAD_PROGRESS.search(m.group(3))):
            links.append(int(f.group(3)))
        elif m and _REQ_PROGRESS.search(m.group(3)):
            requests.append(m.group(3))
    return links, requests


def _stats(text: str) -> dict[str, list[tuple[int, int]]]:
    """Per operation, (totalOps, ops) of each statistics line."""
    out: dict[str, list] = {}
    for line in text.splitlines():
        m = _TIME.match(line)
        if m and (f := _THREAD.search(m.group(3))):
            out.setdefault(f.group(2), []).append((int(f.group(3)), int(f.group(5))))
    return out


def test_the_terminal_has_linkbench_progress_lines_with_the_steps_counts(tmp_path, capsys):
    res = run_experiment(validate(_experiment("lbprog"), "test"), tmp_path / "d")   # no terminal: no bar
    err = capsys.readouterr().err
    (run_id,) = res.runs
    rd = tmp_path / "d" / "lbprog" / run_id
    steps = load_results(rd)["steps"].set_index("step")
    assert (steps["status"] == "ok").all()
    assert "current ops/sec" not in err   # the workload's lines instead of the status lines
    links, requests = _progress(err)
    # the load, as LoadProgress: a line when an update (here a second) passes a multiple of
    # load_progress_interval — one, however many it passed — and one when the last id1 is
    # done, with all the links and counts written
    loaded = int(steps.loc["l.post", "ops"])   # the index step counts linktable's rows
    assert links and links == sorted(links) and links[-1] == loaded
    assert all(b // LINKS_EVERY > a // LINKS_EVERY for a, b in zip(links, links[1:-1]))
    last = [x for x in err.splitlines() if " id1s (" in x][-1]
    assert "2000/2000 id1s (100.0%)" in last and f" {2 * 2000} counts at" in last, last
    # the requests: every multiple of req_progress_interval, and (progressfreq, each
    # second) the count reached: the last is the loop's own
    done = [int(_REQ_PROGRESS.search(x).group(1)) for x in requests]
    ops = int(steps.loc["r.L1", "ops"])
    assert done == sorted(done) and done[-1] == ops
    assert set(range(REQUESTS_EVERY, ops + 1, REQUESTS_EVERY)) <= set(done)
    # the statistics (displayfreq beyond the step: at its end): each op's calls
    stats, lat = _stats(err), load_results(rd)["latency"]
    lat = lat[~lat["op"].str.startswith("Intended-") & (lat["count"] > 0)]
    assert set(stats) == set(lat["op"])
    for step, op, count in lat[["step", "op", "count"]].itertuples(index=False):
        assert stats[op][-1][0] == sum(n for _, n in stats[op]) == count, (step, op)
    # the terminal and linkbench.log say the same (times aside)
    file_links, file_requests = _progress((rd / "linkbench.log").read_text())
    assert file_requests == requests and file_links == links


def test_no_progress_prints_none_of_them(tmp_path, capsys):
    yaml = tmp_path / "lbquiet.yaml"
    exp = _experiment("lbquiet") | {"run": {"threads": [1], "processes": 1, "loops": 1,
                                             "loop_secs": 0.5, "status_interval_s": 0.001}}
    import yaml as pyyaml
    yaml.write_text(pyyaml.safe_dump(exp))
    assert cli.main(["run", str(yaml), "--data-dir", str(tmp_path / "d"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert _progress(err) == ([], []) and not _stats(err) and "current ops/sec" not in err, err


def test_statistics_keep_at_most_maxsamples_as_the_java_client():
    """SampledStats: every call counted, at most maxsamples latencies kept, a line the
    importer reads; the next display counts from there."""
    from benchlib.workloads.linkbench.log import MAXSAMPLES, Display
    d = Display(1.0)
    svc = np.arange(1, 3 * MAXSAMPLES + 1, dtype=float)
    rows = [{"second": 0, "op": "GET_NODE", "ops": len(svc), "_svc": svc, "_failed": 2}]
    ((at, line),) = d.second(rows, 1.0)
    f = _THREAD.search(line)
    assert f and at == 1.0 and f.group(2) == "GET_NODE"
    total, errors, ops, dur_ms, samples = (int(f.group(i)) for i in (3, 4, 5, 6, 7))
    assert (total, errors, ops, dur_ms, samples) == (len(svc), 2, len(svc), 1000, MAXSAMPLES)
    assert 1 <= int(f.group(9)) and int(f.group(16)) <= len(svc)   # min, max: values it saw
    assert d.second([], 1.5) == []   # not yet due
    ((_, line),) = d.second([{**rows[0], "_svc": svc[:5], "_failed": 0}], 2.0)
    f = _THREAD.search(line)
    assert (int(f.group(3)), int(f.group(5)), int(f.group(7))) == (len(svc) + 5, 5, 5)


def test_progressfreq_prints_the_count_reached_between_intervals():
    """A second past progressfreq with no multiple of req_progress_interval passed: a
    line at the count reached; a second that passes one: that line (and the count's)."""
    from benchlib.workloads.linkbench.log import Progress
    from benchlib.workloads.linkbench.properties import from_properties
    prog = Progress(from_properties({"progressfreq": 2, "req_progress_interval": 1000}), 5000, 10)
    assert prog.second(1.0, 1.0, 400) == []                      # before progressfreq, no multiple
    ((at, line),) = prog.second(2.0, 1.0, 400)
    assert at == 2.0 and line.startswith("800/5000 requests finished: 16.0% complete at 400.0 ops/sec")
    lines = prog.second(3.0, 1.0, 400)
    assert [x.split(" ", 1)[0] for _, x in lines] == ["1000/5000"] and lines[0][0] == 2.5
    assert [x.split(" ", 1)[0] for _, x in prog.second(4.0, 1.0, 400)] == ["1600/5000"]


def test_load_progress_is_the_id1s_done_at_each_update_as_linkbenchload():
    """LoadProgress.update: an update is a second that finished id1 chunks (wrote their
    counts); a line when its links passed a multiple of the interval since the previous
    update (one line) or the last id1 is done. The first chunk's giant node, written
    while the other loader finishes every other chunk, holds back its id1s, and no line
    comes while it is written alone (Java's: 95.9 % of the id1s at 10 s, then 100 %)."""
    from benchlib.workloads.linkbench.loadlog import LoadProgress
    from benchlib.workloads.linkbench.properties import from_properties
    prog = LoadProgress(from_properties({"maxid1": 10001, "load_progress_interval": 50000}))
    assert prog.update(1.0, 30000, 0) == []            # links, no chunk done: no update
    assert prog.update(2.0, 30000, 2048 * 2) == [(2.0, prog.line(2048, 2.0))]   # 60 000: passed 50 000
    assert prog.update(3.0, 30000, 2048 * 2) == []     # 90 000: passed none since
    ((at, line),) = prog.update(4.0, 30000, 2048 * 2)  # 120 000: passed 100 000
    assert line.startswith("6144/10000 id1s (61.4%) at 1536.0 /sec. 120000 links at 30000.0 /sec. "
                           "12288 counts at 3072.0 /sec. link+count at 33072.0 /sec.")
    for sec in range(5, 9):                            # the giant node alone: no chunk done
        assert prog.update(float(sec), 1_000_000, 0) == []
    ((at, line),) = prog.update(9.0, 10, (2048 + 1808) * 2)   # its chunk (and the last) done
    assert at == 9.0 and line.startswith("10000/10000 id1s (100.0%)") and " 4120010 links" in line
    assert prog.update(10.0, 0, 0) == []
