"""The C scanner behind the YCSB importer's speed gives exactly what its regular
expressions give: on the real samples and the bench's generated output (where it
must answer), and on mutated samples (where it may step aside, never differ)."""
from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pandas as pd
import pytest
from test_importers_fuzz import mutate

from benchlib.importers import linescan
from benchlib.importers.base import ImportFormatError
from benchlib.importers.text import FileText
from benchlib.importers.ycsb_status import scan_status
from benchlib.importers.ycsb_summary import scan_summary

ROOT = Path(__file__).resolve().parents[1]
Y = ROOT / "tests" / "data" / "ycsb"
SAMPLES = sorted(p for p in Y.glob("pg-*") if p.suffix in (".out", ".err"))


def _bench_output(tmp_path: Path, status: str, lines: int = 3000) -> Path:
    spec = importlib.util.spec_from_file_location("bench_import", ROOT / "bench" / "bench_import.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path / f"bench-{status}.out"
    bench.generate(path, lines, status)
    return path


def _both(path: Path, data: bytes | None = None):
    """(what the C scanner gives, what the regular expressions give) for a file;
    an ImportFormatError stands for itself."""
    out = []
    for fast in (True, False):
        src = FileText(path, path.read_bytes() if data is None else data)
        if not fast:
            src.ascii = False   # the regular expressions read it
        try:
            out.append((scan_status(path, src), scan_summary(path, src)))
        except ImportFormatError as e:
            out.append(str(e))
    return out


def _same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, str):
        assert a == b
        return
    (heads_a, blocks_a), (summary_a, ts_a, _) = a
    (heads_b, blocks_b), (summary_b, ts_b, _) = b
    for x, y in ((heads_a, heads_b), (ts_a, ts_b), (blocks_a, blocks_b)):
        assert (x is None) == (y is None)
        if x is not None:
            cols = list(dict.fromkeys([*x.columns, *y.columns]))   # a figure no block has may be absent
            pd.testing.assert_frame_equal(x.reindex(columns=cols), y.reindex(columns=cols), check_exact=True)
    assert summary_a == summary_b


def test_the_scanner_is_built():
    # pip builds it wherever there is a C compiler; CI has one, so a missing build is a bug
    assert linescan.AVAILABLE, "benchlib.importers._linescan was not built (no C compiler at install?)"


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_are_cut_from_the_bytes(path):
    data = FileText.read(path).data
    assert linescan.status_frames(data) is not None and linescan.summary_rows(data) is not None
    fast, regex = _both(path)
    _same(fast, regex)


@pytest.mark.parametrize("split", [False, True], ids=["whole", "halves"])
@pytest.mark.parametrize("status", ["avg", "hdr"])
def test_bench_output_is_cut_from_the_bytes(tmp_path, status, split, monkeypatch):
    if split:   # scanned in two halves, as a large file is
        monkeypatch.setattr(linescan, "_SPLIT_BYTES", 1000)
    fast, regex = _both(_bench_output(tmp_path, status))
    _same(fast, regex)
    assert len(fast[0][0]) == 1000 and len(fast[0][1]) == 2000 and len(fast[1][1]) == 2000


def test_mutated_files_read_alike(tmp_path, monkeypatch):
    monkeypatch.setattr(linescan, "_SPLIT_BYTES", 4096)   # the samples' larger files in halves
    rng = random.Random(20261123)
    files = SAMPLES + [_bench_output(tmp_path, "avg", 300), _bench_output(tmp_path, "hdr", 300)]
    for case in range(200):
        path = files[rng.randrange(len(files))]
        how, data = mutate(rng, path.read_bytes(), (Y / "pg-load-t4-hist.err").read_bytes())
        fast, regex = _both(path, data)
        try:
            _same(fast, regex)
        except AssertionError as e:
            raise AssertionError(f"case {case}: {how} of {path.name}") from e


def test_number_arrow_refuses_is_one_line_error(tmp_path):
    from benchlib.importers import ImportFormatError, read_output
    f = tmp_path / "run.out"
    f.write_text("[OVERALL], RunTime(ms), 1_000\n[OVERALL], Throughput(ops/sec), 10.0\n")
    with pytest.raises(ImportFormatError) as e:
        read_output("ycsb", [f])
    assert str(e.value).startswith(f"{f}:1:") and "\n" not in str(e.value)


def test_go_ycsb_beside_an_hdr_log_is_no_crash(tmp_path):
    import shutil

    from conftest import DATA

    from benchlib.importers import read_output
    go = tmp_path / "goycsb-run.out"
    shutil.copy(DATA / "ycsb" / "go-ycsb" / "goycsb-pg-runa-t4-interval1.out", go)
    hdr = tmp_path / "goycsb-run-READ.hdr"
    shutil.copy(DATA / "ycsb" / "hdr" / "pg-runa-t4-hdr-READ.hdr", hdr)
    # the .hdr log shares the run's stem; go-ycsb output has no such logs, so it is read
    # as the go-ycsb output alone (a TypeError from mixing the two was the bug)
    both, alone = read_output("ycsb", [go, hdr]), read_output("ycsb", [go])
    assert both.meta["source"] == "go-ycsb" and list(both.steps["step"]) == ["r.L1"]
    for table in ("steps", "latency", "intervals"):
        pd.testing.assert_frame_equal(getattr(both, table), getattr(alone, table))


# ---------------------------------------------------------------- the scanner's own edges

def _status_file(tmp_path: Path, values: list[str], stamps: list[str] | None = None) -> Path:
    """A status file whose hdrhistogram blocks carry ``values`` (9 a block)."""
    lines = []
    for k in range(0, len(values), 9):
        v = (values[k:k + 9] + ["1"] * 9)[:9]
        stamp = stamps[k // 9] if stamps else f"2026-11-22 02:38:{10 + k // 9 % 50:02d}:123"
        lines.append(f"{stamp} {k // 9 + 1} sec: {100 * (k // 9 + 1)} operations; 100 current ops/sec; "
                     f"est completion in 1 hour [READ: Count={v[0]}, Max={v[1]}, Min={v[2]}, Avg={v[3]}, "
                     f"50={v[4]}, 90={v[5]}, 99={v[6]}, 99.9={v[7]}, 99.99={v[8]}]")
    path = tmp_path / "status.err"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_numbers_are_read_as_arrow_reads_them(tmp_path):
    """Every value the scanner takes equals Arrow's cast of its text (correctly
    rounded, Java's 17-digit doubles, exponents); the forms it does not take it leaves
    to the regular expressions, which give the same."""
    rng = random.Random(11)
    values = ["0", "007", "9223372036854775807", "123456789012345", "1234567890123456", "NaN", "-5", "-0",
              "563.9428571428571", "0.1", "2.5E-4", "1e5", "1.7976931348623157E308", "4.9E-324", "1e400",
              "9007199254740993", "0.30000000000000004", "123.456e+2"]
    for _ in range(300):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 19)))
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 17)))
        values += [digits, f"{digits[:rng.randint(1, len(digits))]}.{frac}", repr(rng.uniform(0, 10 ** rng.randint(0, 9)))]
    path = _status_file(tmp_path, values)
    assert linescan.status_frames(path.read_bytes()) is not None   # all of these forms are its own
    fast, regex = _both(path)
    _same(fast, regex)
    for odd in ([".5"], ["5."], ["+1"], ["inf"], ["Infinity"], ["1_000"], ["0x10"], ["1e"], ["--1"]):
        path = _status_file(tmp_path, odd * 9)
        assert linescan.status_frames(path.read_bytes()) is None    # not its forms: the regex decides
        fast, regex = _both(path)
        _same(fast, regex)


def test_dates_are_read_as_arrow_reads_them(tmp_path):
    stamps = ["2024-02-29 23:59:59:999", "2026-12-31 00:00:00:000", "1970-01-01 00:00:00:001",
              "2000-02-29 12:00:00:500", "2099-06-15 07:08:09:010"]
    path = _status_file(tmp_path, ["1"] * 9 * len(stamps), stamps)
    heads, _ = linescan.status_frames(path.read_bytes())
    assert [t.isoformat(timespec="milliseconds") for t in heads["when"]] == [
        s[:10] + "T" + s[11:19] + "." + s[20:] + "+00:00" for s in stamps]
    _same(*_both(path))
    for bad in ("2023-02-29 00:00:00:000", "2026-13-01 00:00:00:000", "2026-11-22 24:00:00:000",
                "1899-12-31 00:00:00:000", "2026-11-31 00:00:00:000"):
        path = _status_file(tmp_path, ["1"] * 9, [bad])
        assert linescan.status_frames(path.read_bytes()) is None
        _same(*_both(path))   # both: the same one-line error, or the same rows


@pytest.mark.parametrize("t, fits", [("123456789012345", True), ("1234567890123456", True),
                                     ("123456789012345678901", False)])   # > 2^63 ms
def test_long_timeseries_times_read_alike_or_fail_in_one_line(tmp_path, t, fits):
    path = tmp_path / "run.out"
    path.write_text(f"[OVERALL], RunTime(ms), 1000\n[READ], Operations, 5\n[READ], 1000, 2.5\n[READ], {t}, 3.5\n")
    fast, regex = _both(path)
    _same(fast, regex)
    if fits:   # read exactly, as an integer of milliseconds
        assert fast[1][1]["t_ms"].tolist() == [1000, int(t)]
    else:
        assert "run.out:4: expected a time in milliseconds" in fast and "\n" not in fast


@pytest.mark.parametrize("ops", ["999999999999999", "9999999999999999", "12345678901234567890"])
def test_long_operation_counts_read_alike(tmp_path, ops):
    path = tmp_path / "status.err"
    path.write_text(f"2026-11-22 02:38:10:123 1 sec: 100 operations; 100 current ops/sec; [READ: Count=1, Max=2, "
                    f"Min=1, Avg=1.5, 90=2, 99=2, 99.9=2, 99.99=2]\n"
                    f"2026-11-22 02:38:11:123 2 sec: {ops} operations; 100 current ops/sec; [READ: Count=1, "
                    f"Max=2, Min=1, Avg=1.5, 90=2, 99=2, 99.9=2, 99.99=2]\n")
    _same(*_both(path))


@pytest.mark.parametrize("stem", ["pg-load-t4-hist", "pg-runa-t4-hist", "pg-runa-t4-hdr", "pg-runa-t4-ts"])
def test_without_the_scanner_the_import_is_the_same(stem, monkeypatch):
    """A machine without a C compiler installs benchlib without the scanner: the regular
    expressions then give the very same tables."""
    from benchlib.importers import read_output
    paths = [Y / f"{stem}.out", Y / f"{stem}.err"]
    fast = read_output("ycsb", paths)
    monkeypatch.setattr(linescan, "_linescan", None)
    slow = read_output("ycsb", paths)
    assert fast.meta == slow.meta
    for table in ("steps", "latency", "intervals"):
        pd.testing.assert_frame_equal(getattr(fast, table), getattr(slow, table), check_exact=True)


def test_status_blocks_without_50_as_ycsb_017_prints_them(tmp_path):
    import re
    path = tmp_path / "run.err"
    path.write_bytes(re.sub(rb" 50=[^,\]]+,", b"", (Y / "pg-runa-t4-hdr.err").read_bytes()))
    heads, blocks = linescan.status_frames(path.read_bytes())
    assert blocks["p50"].isna().all() and blocks["p99"].notna().any()
    _same(*_both(path))
