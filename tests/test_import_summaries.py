"""Summaries work on imported runs: LinkBench's request phase with the vmstat, iostat
and ps logs taken beside it gives the transaction-phase line of linkbench-overview.md."""
from __future__ import annotations

import subprocess
import sys

from conftest import DATA

from benchlib import load_results
from benchlib.importers import import_output
from benchlib.summaries import run_lines, summarize

HW = [DATA / "hwlogs" / f"pgsql_request_{n}" for n in
      ("vmstat_1s.log", "iostat_kx_1s.log", "ps_server_tree_pid3810_1s.log")]


def test_linkbench_transaction_line_from_imported_run(tmp_path):
    into = tmp_path / "lb" / "pgsql"
    import_output("linkbench", [DATA / "linkbench" / "pgsql_request.stdout.log"], into=into,
                  name="pg15", hw=HW)
    res = load_results(tmp_path / "lb")
    line = run_lines(res).set_index("step").loc["r.L1"]
    # the log's own rate (REQUEST PHASE COMPLETED … Requests/second = 5169), not 315672 / 61
    assert round(line["tps"]) == 5169
    # the seed's main operations: p99 of UPDATE_NODE, GET_NODE, UPDATE_LINK, GET_LINKS_LIST (ms)
    for col in ("un", "gn", "ul", "gl"):
        assert line[col] > 0
    # hardware from the logs: vmstat us+sy, iostat r/s, ps RSS of the server tree
    assert 0 < line["cpu"] <= 100 and line["r/s"] > 0 and line["rss"] > 0
    text = summarize(res, "run")
    header = text.splitlines()[1].split()
    assert header == ["tps", "r/t", "rkb/t", "wkb/t", "Mcpu/t", "size", "rss", "un", "gn", "ul",
                      "gl", "r/s", "rMB/s", "wMB/s", "cpu", "engine"]
    assert text.splitlines()[2].split()[-1] == "pg15"


def test_cli_import_then_summary(tmp_path):
    into = tmp_path / "y" / "run1"
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "import", "ycsb",
                        str(DATA / "ycsb" / "pg-runa-t4-hdr.out"), str(DATA / "ycsb" / "pg-runa-t4-hdr.err"),
                        "--into", str(into)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = subprocess.run([sys.executable, "-m", "benchlib.cli", "summary", str(tmp_path / "y"),
                        "--kind", "rt"], capture_output=True, text=True)
    assert s.returncode == 0 and "r.L1.rt" in s.stdout
    bad = tmp_path / "bad.out"
    bad.write_text("[OVERALL], RunTime(ms), 15847\n[OVERALL], Throughput(ops/sec), x\n")
    r = subprocess.run([sys.executable, "-m", "benchlib.cli", "import", "ycsb", str(bad), "--into",
                        str(tmp_path / "y" / "bad")], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "bad.out:2" in r.stderr
    assert not (tmp_path / "y" / "bad").exists()
