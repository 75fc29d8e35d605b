"""bench/bench_linkbench_java.py's own reading: the Java client's stdout into figures (the
real request log of shared/samples/linkbench, copied into tests/data/linkbench), the
newest jar of each dependency in a ~/.m2-shaped folder, the "Java absent" line, and the
per-pair table's ratios and medians. Nothing here runs Java or a database."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import bench_linkbench_java as B  # noqa: E402
import linkbench_java_client as J  # noqa: E402

LOG = ROOT / "tests" / "data" / "linkbench" / "pgsql_request.stdout.log"


def test_request_figures_of_the_real_log():
    f = J.request_figures(LOG.read_text())
    assert f == {"requests": 315672, "java_secs": 61.0, "java_rps": 5169.0, "requesters": 2}


def test_request_figures_want_the_summary_line():
    text = "\n".join(LOG.read_text().splitlines()[:20])
    with pytest.raises(ValueError, match="REQUEST PHASE COMPLETED"):
        J.request_figures(text)


def test_the_span_is_first_start_to_last_requester_end():
    lines = LOG.read_text().splitlines()
    starts = [ln for ln in lines if J.STARTED.search(ln)]
    ends = [ln for ln in lines if J.STOPPED.search(ln)]
    assert len(starts) == 2
    assert [e.split("[")[1].split("]")[0] for e in ends] == ["Thread-0", "Thread-1", "main"]


def test_newest_jar_of_each_dependency(tmp_path):
    for v in ("42.2.9", "42.10.1", "42.7.13"):
        d = tmp_path / "org/postgresql/postgresql" / v
        d.mkdir(parents=True)
        (d / f"postgresql-{v}.jar").write_bytes(b"")
    (tmp_path / "org/postgresql/postgresql/43.0.0").mkdir()   # a folder without its jar
    assert J.m2_jar("org/postgresql", "postgresql", tmp_path).name == "postgresql-42.10.1.jar"
    with pytest.raises(J.JavaAbsent, match=r"^Java absent: no commons-cli jar"):
        J.dependencies(tmp_path)


def test_no_checkout_is_java_absent(tmp_path):
    with pytest.raises(J.JavaAbsent, match=r"^Java absent: no LinkBench checkout"):
        J.home(str(tmp_path))


def test_command_overrides_with_d():
    cmd = J.command(Path("lb.jar"), [Path("pg.jar")], "config/LinkConfigPgsql.properties",
                    {"port": "5432/db?x", "requesters": 16})
    assert cmd[:3] == ["java", "-cp", "lb.jar:pg.jar"]
    assert cmd[-4:] == ["-D", "port=5432/db?x", "-D", "requesters=16"]
    assert "-r" in cmd


def _fig(ops, secs, cpu_s, total):
    return {"ops": ops, "secs": secs, "cpu_s": cpu_s, "total_cpu_s": total}


def test_table_ratios_and_medians():
    rows = [{"requesters": 2, "pair": i, "first": "Java", "loadavg": "3.0",
             "java": _fig(1000 * s, s, 0.1 * s, 0.2 * s),
             "benchlib": _fig(900 * s * k, s, 0.108 * s * k, 0.27 * s * k)}
            for i, (s, k) in enumerate([(10, 1.0), (10, 1.2), (10, 0.8)], 1)]
    out = B.table(rows).splitlines()
    assert len(out) == 2 + 3 + 1
    # pair 1: 900 vs 1000 req/s = 0.90; 120 vs 100 µs/req = 1.20
    assert "| 1,000 | 900 | 0.90 | 100 / 120 | 1.20 | 200 / 300 |" in out[2]
    assert "| 1,000 | 1,080 | 1.08 |" in out[3]
    assert out[-1].startswith("| 2 | **median** |") and "**0.90**" in out[-1] and "**1.20**" in out[-1]
