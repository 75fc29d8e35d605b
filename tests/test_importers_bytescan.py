"""The byte scanners behind the YCSB importer's speed give exactly what its regular
expressions give: on the real samples and the bench's generated output (where they
must answer), and on mutated samples (where they may step aside, never differ)."""
from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_importers_fuzz import mutate

from benchlib.importers.base import ImportFormatError
from benchlib.importers.bytescan import CONTROL, DIGIT, SPACE, ByteClass, Lines
from benchlib.importers.text import FileText
from benchlib.importers.ycsb_status import scan_status
from benchlib.importers.ycsb_status_bytes import scan_plain
from benchlib.importers.ycsb_summary import _rows_of_lines, scan_summary

ROOT = Path(__file__).resolve().parents[1]
Y = ROOT / "tests" / "data" / "ycsb"
SAMPLES = sorted(p for p in Y.glob("pg-*") if p.suffix in (".out", ".err"))
CLASSES = [DIGIT, SPACE, CONTROL, ~DIGIT, ~(SPACE | CONTROL | ByteClass(b"[]:")), ByteClass(b".NE"),
           ~ByteClass(b" \n")]


def _bench_output(tmp_path: Path, status: str, lines: int = 3000) -> Path:
    spec = importlib.util.spec_from_file_location("bench_import", ROOT / "bench" / "bench_import.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tmp_path / f"bench-{status}.out"
    bench.generate(path, lines, status)
    return path


def _both(path: Path, data: bytes | None = None):
    """(what the byte scanners give, what the regular expressions give) for a file;
    an ImportFormatError stands for itself."""
    out = []
    for fast in (True, False):
        src = FileText(path, path.read_bytes() if data is None else data)
        if not fast:
            src._lines = None   # no line index: the regular expressions read it
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
    (heads_a, blocks_a), (summary_a, ts_a) = a
    (heads_b, blocks_b), (summary_b, ts_b) = b
    for x, y in ((heads_a, heads_b), (ts_a, ts_b), (blocks_a, blocks_b)):
        assert (x is None) == (y is None)
        if x is not None:
            cols = list(dict.fromkeys([*x.columns, *y.columns]))   # a figure no block has may be absent
            pd.testing.assert_frame_equal(x.reindex(columns=cols), y.reindex(columns=cols), check_exact=True)
    assert summary_a == summary_b


def test_primitives_agree_with_plain_python():
    rng = random.Random(7)
    alphabet = b"0123456789 .:[]=,NE\n\t\x1cabcXYZ-\x00\x7f"
    for _ in range(150):
        data = bytes(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 7, 8, 9, 63, 64, 65, 300])))
        lines = Lines(data)
        n = len(data)
        pos = np.array([rng.randint(0, n + 2) for _ in range(40)], np.int64)
        end = np.minimum(n, pos + np.array([rng.randint(-2, 30) for _ in range(40)]))
        assert list(lines.at(pos)) == [data[p] if p < n else 0 for p in pos]
        for text in (b"0", b" sec: ", b"[]", b"abc def gh ijklmn"):
            want = [p + len(text) <= e and data[p:p + len(text)] == text for p, e in zip(pos, end)]
            assert list(lines.literal(pos, end, text)) == want
        for cls in CLASSES:
            member = cls(np.frombuffer(bytes(range(128)), np.uint8))
            flags = cls.flags(np.frombuffer(bytes(range(128)), np.uint64))
            assert [bool(int(flags[k // 8]) >> (8 * (k % 8) + 7) & 1) for k in range(128)] == list(member)
            stop = lines.run(pos, end, cls, 64)
            want = []
            for p, e in zip(pos, end):
                q = p
                while q < e and member[data[q]]:
                    q += 1
                want.append(max(q, p))
            assert list(stop) == want
        got = lines.number(pos, end)
        for p, e, (q, v) in zip(pos, end, zip(*got)):
            text = data[p:e] if e > p else b""
            digits = text[:len(text) - len(text.lstrip(b"0123456789"))]
            assert q == p + len(digits) and v == (float(digits) if digits else 0.0)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_are_cut_from_the_bytes(path):
    src = FileText.read(path)
    assert scan_plain(src.lines) is not None and _rows_of_lines(src.lines) is not None
    fast, regex = _both(path)
    _same(fast, regex)


@pytest.mark.parametrize("status", ["avg", "hdr"])
def test_bench_output_is_cut_from_the_bytes(tmp_path, status):
    fast, regex = _both(_bench_output(tmp_path, status))
    _same(fast, regex)
    assert len(fast[0][0]) == 1000 and len(fast[0][1]) == 2000 and len(fast[1][1]) == 2000


def test_mutated_files_read_alike(tmp_path):
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
    with pytest.raises(ImportFormatError):
        read_output("ycsb", [f])


def test_go_ycsb_beside_an_hdr_log_is_no_crash(tmp_path):
    from conftest import DATA
    import shutil
    from benchlib.importers import ImportFormatError, read_output
    go = tmp_path / "goycsb-run.out"
    shutil.copy(DATA / "ycsb" / "go-ycsb" / "goycsb-pg-runa-t4-interval1.out", go)
    hdr = tmp_path / "goycsb-run-READ.hdr"
    shutil.copy(DATA / "ycsb" / "hdr" / "pg-runa-t4-hdr-READ.hdr", hdr)
    try:
        read_output("ycsb", [go, hdr])
    except ImportFormatError:
        pass  # a clear one-line refusal is fine; a TypeError is not
