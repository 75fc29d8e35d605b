"""Short steps: no made-up zeros (issue 14 §1). The quickstart's load, of 2,000 records
here, takes a fraction of a sampler tick (10,000 took 2.0 s beside a second suite at load
17: not short there); its client CPU (the clients' own getrusage) and its
DBMS CPU and memory (SQLite runs in the clients) are still measured."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchlib import cli, load_results
from benchlib.summaries import eff_op, eff_sec, experiment_summary

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_quickstart_steps_have_their_cpu_and_no_failed_test(tmp_path, capsys):
    assert cli.main(["run", str(ROOT / "parameters" / "quickstart.yaml"), "-p", "run.loop_secs=1",
                     "-p", "index.enabled=true", "-p", "recordcount=2000",
                     "--data-dir", str(tmp_path), "--no-progress"]) == 0
    res = load_results(tmp_path / "quickstart")
    op = eff_op(res)
    assert len(op) == 2 * 4                         # 2 runs × (l.pre, l.post, r.L1, r.L2)
    index = op[op["step"] == "l.post"]
    assert (index["csec"] == 0).all() and (index["dsec"] > 0).all()   # built by SQLite in the controller
    op = op[op["step"] != "l.post"]
    assert (op["secs"] > 0).all() and (op["csec"] > 0).all() and (op["csecpq"] > 0).all(), op
    assert (op["dsec"] == op["csec"]).all()         # SQLite's engine is the clients
    load = op[op["step"] == "l.pre"]
    assert (load["ips"] * load["secs"]).round().eq(2000).all()   # the records asked for
    assert (load["secs"] < 1).all()                 # shorter than a tick, and measured all the same
    sec = eff_sec(res)
    sec = sec[sec["step"] != "l.post"]   # no client process at the index: its memory is blank
    assert (sec["rss"] > 0).all() and (sec["vsz"] > 0).all()
    assert "TEST failed" not in experiment_summary(res).text
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    i = lines.index("       l.pre.eff.op")
    header, row = lines[i + 1].split(), lines[i + 2].split()
    assert float(row[header.index("csec")]) > 0     # printed with decimals, not a 0
