"""Reading another tool's output files into a run folder: recognizing the tool, calling
its importer (:mod:`benchlib.registries.importers`), cleaning the tables, attaching hardware logs."""
from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..inputfiles import InputFileError, check_regular
from ..registries import importers as registry
from ..registries.core import UnknownName
from . import coordinates
from .base import Imported, ImportFormatError, constant_str


def detect_kind(path: str | Path) -> str:
    """The kind of an output file, from what it says (not from its name)."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            head = f.read(65536).decode("utf-8", "replace")
    except OSError as e:
        raise ImportFormatError(path, None, f"cannot read: {e.strerror or e}") from None
    kind = registry.detect(head, path.suffix)
    if kind is None:
        raise ImportFormatError(path, None, "expected the output of one of: " + ", ".join(registry.kinds()))
    return kind


def _importer(kind: str, paths: list[Path]) -> registry.Importer:
    if kind not in registry.IMPORTERS:
        raise UnknownName("importer kind", kind, [*registry.kinds(), "auto"])
    return registry.importer(kind)


def _auto_kind(paths: list[Path]) -> str:
    kinds = set()
    for p in paths:
        if p.exists() and p.stat().st_size == 0:
            continue  # an empty stderr says nothing about its tool
        kinds.add(detect_kind(p))
    if not kinds:
        raise ImportFormatError(paths[0], None, "expected output, found only empty files")
    kind = registry.one_kind(kinds)   # ycsb's importer tells go-ycsb's files apart itself
    if kind is None:
        raise ImportFormatError(paths[0], None, f"expected the output of one tool, found {sorted(kinds)}")
    return kind


def read_output(kind: str, paths: list) -> Imported:
    """Parse the files of one tool into tables (without run_id); writes nothing."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise ImportFormatError("<no files>", None, "expected at least one output file")
    if kind == "auto":
        kind = _auto_kind(paths)
    imp = _importer(kind, paths).function()(paths)
    imp.meta.setdefault("source", kind)
    for table in ("steps", "latency", "intervals", "hw"):
        setattr(imp, table, _clean(getattr(imp, table), table))
    return imp


def _clean(df: pd.DataFrame | None, table: str) -> pd.DataFrame | None:
    """No infinities (a tool's "Infinity" rate of a zero-length run is no figure),
    whole numbers where the schema counts (a rate × interval is rounded)."""
    if df is None or not len(df):
        return df
    from .. import schema
    floats = [c for c in df.columns if pd.api.types.is_float_dtype(df[c].dtype)]
    if any(np.isinf(df[c].to_numpy()).any() for c in floats):
        df = df.copy()
        df[floats] = df[floats].mask(np.isinf(df[floats].to_numpy()))
    for c, t in schema.TABLES[table].items():
        if t != "Int64" or c not in df:
            continue
        col = df[c]
        if not pd.api.types.is_numeric_dtype(col.dtype):
            col = pd.to_numeric(col, errors="coerce")
        if pd.api.types.is_float_dtype(col.dtype) and _fractions(col.to_numpy()):
            col = col.round()
        if col is not df[c]:
            df[c] = col
    return df


def _fractions(v: np.ndarray) -> bool:
    """Whether a value that is not NaN has a fraction."""
    with np.errstate(invalid="ignore"):
        return bool((((v % 1) != 0) & ~np.isnan(v)).any())


# ----------------------------------------------------------------- the run folder

def _check_encoding(path: Path, head: bytes) -> None:
    """Tools print ASCII/UTF-8; a UTF-16 copy (a Windows editor, PowerShell's >) or a
    binary file is named as such instead of failing on its first line."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(head) > 1 and head[1:2] == b"\x00"):
        raise ImportFormatError(path, None, "the file is UTF-16 text: convert it to UTF-8 "
                                "(iconv -f UTF-16 -t UTF-8) and import that")
    if b"\x00" in head:
        raise ImportFormatError(path, None, "a binary file, not a tool's text output")


def check_complete(path: Path) -> None:
    """A text output that ends in the middle of a line was cut short (a killed tool, a
    full disk, a partial copy): its last figure may be cut in the middle of a number, so
    it is refused, naming the line, rather than read as a smaller number. Tools end
    every line they print."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            if size == 0:
                return
            _check_encoding(path, f.read(4096))
            f.seek(max(0, size - 1))
            if f.read(1) == b"\n":
                return
            f.seek(0)
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return  # read_output names a file it cannot open
    if path.suffix in (".hdr", ".csv") and lines == 0:
        return
    raise ImportFormatError(path, lines + 1, "the file ends in the middle of a line: cut "
                            "short? (every tool ends its lines; import a complete file)")


def import_output(kind: str, paths: list, into: str | Path, name: str | None = None,
                  hw: list | None = None) -> Path:
    """Import a tool's output files into the run folder ``into`` (written atomically).

    Parameters
    ----------
    kind : one of :func:`benchlib.registries.importers.kinds`, or ``"auto"`` to tell it from the files.
    paths : the output files of one run (stdout, stderr, CSVs, .hdr logs); files of a
        load and of run loops may be given together and become steps ``l.pre``,
        ``r.L1``, ``r.L2`` … (YCSB, LinkBench).
    into : the run folder to create, ``data/<experiment>/<run>``; it must not exist.
    name : run_id and ``config`` in meta.json; the folder name when not given.
    hw : vmstat/iostat/mpstat/ps logs sampled beside the run (:mod:`.hwlogs`).

    Returns the run folder. Raises :class:`ImportFormatError` for a file that is not
    what the importer expects; nothing is written then.
    """
    from ..store import folders as results

    into = Path(into)
    if into.exists():
        raise results.ResultsError(f"{into}: already exists (import into a new folder)")
    paths = [Path(p) for p in paths]
    for p in [*paths, *map(Path, hw or [])]:
        try:   # not /dev/zero, a folder or a FIFO
            check_regular(p, "file to import")
        except FileNotFoundError:
            raise ImportFormatError(p, None, "no such file") from None
        except InputFileError as e:
            raise ImportFormatError(p, None, e.why) from None
        check_complete(p)
    run_id = name or into.name
    streamer = _streamer(kind, paths)
    if streamer is None:
        return _write(read_output(kind, paths), into, run_id, name, paths, hw)
    made = not into.parent.exists()
    into.parent.mkdir(parents=True, exist_ok=True)
    stream_dir = Path(tempfile.mkdtemp(prefix=f".{into.name}.", dir=into.parent))
    try:
        imp = streamer.read_streamed(paths[0], run_id, stream_dir) or read_output(kind, paths)
        return _write(imp, into, run_id, name, paths, hw)
    finally:
        shutil.rmtree(stream_dir, ignore_errors=True)
        if made and not into.exists():   # a failed import leaves no folder
            with contextlib.suppress(OSError):
                into.parent.rmdir()


def _streamer(kind: str, paths: list[Path]):
    """The module that reads these files in pieces, their intervals written as they are
    made (a long YCSB file: :mod:`.ycsb_stream`), or None to read them whole."""
    if kind == "auto":
        streamers = [i for i in map(registry.importer, registry.kinds()) if i.streamer]
        if not any(i.streamer_module().applies(paths) for i in streamers):
            return None   # no file is long: no need to read them to tell the tool
        kind = _auto_kind(paths)
    mod = registry.importer(kind).streamer_module() if kind in registry.IMPORTERS else None
    return mod if mod is not None and mod.applies(paths) else None


def _write(imp: Imported, into: Path, run_id: str, name: str | None, paths: list[Path], hw: list | None) -> Path:
    from ..store import folders as results

    steps = imp.steps if imp.steps is not None else pd.DataFrame()
    if not _operations(imp):
        raise ImportFormatError(paths[0], None, "no operation in the output (no count of operations, "
                                "no latency, no interval): a run that did nothing, or not its output")
    hw_table = _hw_table(hw, steps) if hw else imp.hw
    meta = {
        "run_id": run_id,
        "experiment": into.parent.name,
        "config": name or into.name,
        "status": "ok",
        "files": [p.name for p in paths] + [Path(h).name for h in (hw or [])],
        **imp.meta,
    }
    coordinates.fill(meta, steps)   # threads, target, workload properties: a point like ours
    if len(steps) and "started" in steps and steps["started"].notna().any():
        meta.setdefault("started", pd.Timestamp(steps["started"].min()).isoformat())
        meta.setdefault("ended", pd.Timestamp(steps["ended"].max()).isoformat()
                        if steps["ended"].notna().any() else None)
    tables = {"steps": steps, "latency": imp.latency, "intervals": imp.intervals, "hw": hw_table, **imp.extra}
    for tname, df in tables.items():
        if df is not None and len(df):
            tables[tname] = df.assign(run_id=constant_str(run_id, len(df)))
    return results.write_run(into, meta, files=imp.files, **tables)


def _operations(imp: Imported) -> float:
    """How many operations (or failed ones) the tables count, all told: 0 is no run."""
    counted = [(imp.steps, ("ops", "errors")), (imp.latency, ("count", "errors")),
               (imp.intervals, ("ops", "errors"))]
    return sum(float(pd.to_numeric(df[c], errors="coerce").fillna(0).clip(lower=0).sum())
               for df, cols in counted if df is not None and len(df) for c in cols if c in df)


def _hw_table(hw_paths: list, steps: pd.DataFrame) -> pd.DataFrame | None:
    """Hardware samples with the step they fall in and their second within it.

    By time when the samples and the steps both have times (samples outside every
    step are dropped); otherwise by sample order: the n-th sample is second n of the
    first step, continuing into the next step after ``secs`` samples.
    """
    from . import hwlogs  # written beside this package; imported only when asked for

    frames = [hwlogs.read_hw_log(Path(p)) for p in hw_paths]
    df = hwlogs.merge_hw_logs(frames)
    if df is None or not len(df) or not len(steps):
        return df
    df = df.reset_index(drop=True).copy()
    has_ts = "ts" in df and df["ts"].notna().all()
    timed = has_ts and "started" in steps and steps["started"].notna().all() \
        and steps["ended"].notna().all()
    step_col = pd.Series(pd.NA, index=df.index, dtype="string")
    second = pd.Series(pd.NA, index=df.index, dtype="Int64")
    if timed:
        # a sample's ts is when the tool printed it, the end of its second: place it by
        # the middle of that second
        mid = pd.to_datetime(df["ts"], utc=True) - pd.Timedelta(milliseconds=500)
        for _, s in steps.iterrows():
            start, end = pd.Timestamp(s["started"]), pd.Timestamp(s["ended"])
            inside = (mid >= start) & (mid < end)
            step_col[inside] = s["step"]
            second[inside] = ((mid[inside] - start).dt.total_seconds() // 1).astype("Int64")
        df = df.assign(step=step_col, second=second)
        return df[df["step"].notna()].reset_index(drop=True)
    pos = 0
    for i, (_, s) in enumerate(steps.iterrows()):
        n = len(df) - pos if i == len(steps) - 1 or pd.isna(s["secs"]) else round(s["secs"])
        idx = df.index[pos:pos + n]
        step_col[idx] = s["step"]
        second[idx] = np.arange(len(idx))
        pos += n
    return df.assign(step=step_col, second=second)


__all__ = ["ImportFormatError", "Imported", "detect_kind", "import_output", "read_output"]
