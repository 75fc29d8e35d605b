"""A long YCSB output is read in pieces (:mod:`benchlib.importers.ycsb_stream`): its
tables must be the whole-file import's, row for row. Pieces of a few KB over the real
outputs in tests/data make every piece boundary fall somewhere inside a run."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from benchlib.importers import import_output, linescan, ycsb_stream
from benchlib.store.folders import load_results

DATA = Path(__file__).parent / "data" / "ycsb"
TABLES = ["steps", "latency", "intervals", "gauges"]

pytestmark = pytest.mark.skipif(not linescan.AVAILABLE, reason="the C scanner is not built: no file is read in pieces")


def _import(tmp_path: Path, monkeypatch, src: Path, name: str, piece_bytes: int | None):
    if piece_bytes:
        monkeypatch.setattr(ycsb_stream, "STREAM_FROM_BYTES", 1)
        monkeypatch.setattr(ycsb_stream, "CHUNK_BYTES", piece_bytes)
    else:
        monkeypatch.setattr(ycsb_stream, "STREAM_FROM_BYTES", 1 << 62)
    got = import_output("ycsb", [src], tmp_path / "exp" / name, name="run")
    return got, load_results(got, tables=[t for t in TABLES if (got / f"{t}.parquet").exists()])


def _same(a: pd.DataFrame, b: pd.DataFrame, keys: list[str]) -> None:
    assert sorted(a.columns) == sorted(b.columns)
    a = a[sorted(a.columns)].sort_values(keys, ignore_index=True)
    b = b[sorted(b.columns)].sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("sample", ["pg-runa-t4-hdr.err", "load-jvm-failed.err", "status-infinity.err",
                                    "pg-runa-t4-hist.err", "combined"])
def test_pieces_give_the_whole_files_tables(tmp_path, monkeypatch, sample):
    if sample == "combined":   # stderr and stdout in one file (2>&1): status lines, then the summary
        src = tmp_path / "combined.log"
        src.write_bytes((DATA / "pg-runa-t4-hdr.err").read_bytes() + (DATA / "pg-runa-t4-hdr.out").read_bytes())
    else:
        src = DATA / sample
    whole_dir, whole = _import(tmp_path, monkeypatch, src, "whole", None)
    for piece in (4096, 1500):
        got_dir, got = _import(tmp_path, monkeypatch, src, f"pieces{piece}", piece)
        # "∞ current ops/sec" is not ASCII: that file is read whole, with the same tables
        streamed = json.loads((got_dir / "meta.json").read_text()).get("streamed")
        assert streamed is (None if sample == "status-infinity.err" else True)
        assert set(got) == set(whole)
        _same(got["steps"], whole["steps"], ["step"])
        _same(got["latency"], whole["latency"], ["op"])
        _same(got["intervals"], whole["intervals"], ["second", "op"])
        if "gauges" in whole:
            _same(got["gauges"], whole["gauges"], ["second", "gauge"])


def test_a_file_not_of_that_shape_is_read_whole(tmp_path, monkeypatch):
    """Timeseries rows (a -s timeseries run's stdout) are not read in pieces: the
    whole-file import reads them, and says nothing of pieces."""
    got, res = _import(tmp_path, monkeypatch, DATA / "pg-runa-t4-ts.out", "ts", 4096)
    assert "streamed" not in json.loads((got / "meta.json").read_text())
    assert len(res["intervals"])


def test_a_bad_line_is_named_as_the_whole_file_import_names_it(tmp_path, monkeypatch):
    text = (DATA / "pg-runa-t4-hdr.err").read_text().splitlines()
    i = next(k for k, line in enumerate(text) if " sec: " in line and "[READ" in line) + 5
    text[i] = text[i].replace("Count=", "Count=x", 1)
    bad = tmp_path / "bad.err"
    bad.write_text("\n".join(text) + "\n")
    from benchlib.importers import ImportFormatError
    with pytest.raises(ImportFormatError) as e:
        _import(tmp_path, monkeypatch, bad, "bad", 2048)
    assert f"bad.err:{i + 1}" in str(e.value)
    assert not (tmp_path / "exp").exists()   # no piece left behind, nor the folder made for it
