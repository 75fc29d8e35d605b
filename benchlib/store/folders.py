"""Run folders: writing them atomically, reading them back into the tidy tables.

A run folder ``data/<experiment>/<run>/`` holds

- ``meta.json``      format version, benchlib version, status, resolved parameters,
                     host and DBMS facts, start/end times (passwords masked);
- ``steps.parquet``, ``latency.parquet``, ``intervals.parquet``, ``hw.parquet``
                     the tidy tables of :mod:`benchlib.schema`;
- ``intervals.jsonl`` a line per completed second while it runs; ``.steps/`` its finished steps (:mod:`.parts`)

Every file is written to a temporary name and renamed (no reader sees half a table),
its owner's alone (0600; what a web server serves is for all: ``reports.html.publish``).
A folder whose meta says ``running`` with its process gone was killed (:func:`recover_run`).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from .. import points, schema
from ..errors import ResultsError
from ..hw.roles import upgrade_hw
from ..version import __version__
from . import parts, runcache
from .upgrade import upgrade_intervals, upgrade_meta

META = "meta.json"
INTERVAL_LOG = "intervals.jsonl"
TABLE_NAMES = tuple(schema.TABLES)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    if isinstance(obj, schema.RunMeta):
        obj = obj.to_dict()
    _atomic_write_bytes(Path(path), json.dumps(obj, indent=2, default=str).encode())


def write_table(run_dir: Path, name: str, df: pd.DataFrame | None) -> Path:
    """Write one table as Parquet, atomically: a tidy table conformed to its schema, a
    workload's own table (ybio's ``benchruns``) as it is."""
    if name in schema.TABLES or (name in schema.EXTRA_TABLES and df is not None):
        df = schema.conform(name, df)
    elif df is None:
        df = pd.DataFrame()
    path = Path(run_dir) / f"{name}.parquet"
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".parquet", dir=run_dir)
    os.close(fd)
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
        # dictionaries for the strings (run_id, step, op: a few values each) only: a
        # column of figures has too many values for one, and trying costs time
        strings = [f.name for f in table.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        pq.write_table(table, tmp, use_dictionary=strings)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: Path, text: str) -> None:
    _atomic_write_bytes(Path(path), text.encode())


def base_meta(run_id: str, experiment: str, **fields: Any) -> schema.RunMeta:
    """The meta of a run starting now in this process (status running)."""
    return to_run_meta(dict(
        format_version=schema.FORMAT_VERSION, benchlib_version=__version__, run_id=run_id,
        experiment=experiment, status="running", pid=os.getpid(), hostname=socket.gethostname(),
        started=utcnow().isoformat(), ended=None, **fields), "meta")


def to_run_meta(meta: dict | schema.RunMeta, where: Any) -> schema.RunMeta:
    """``meta`` as the typed model; ResultsError naming ``where`` and the key when a
    value has the wrong type."""
    if isinstance(meta, schema.RunMeta):
        return meta
    try:
        return schema.RunMeta.model_validate(meta)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ResultsError(f"{where}: {key}: {err['msg']}") from None


def write_run(run_dir: Path | str, meta: dict | schema.RunMeta, *, overwrite: bool = False,
              text_files: dict[str, str] | None = None, files: dict[str, Path] | None = None,
              **tables: pd.DataFrame | None) -> Path:
    """Write a whole run folder at once (importers use this).

    The folder is built under a temporary name beside ``run_dir`` and renamed into
    place at the end, so a failure leaves nothing behind. ``tables`` are any of
    steps, latency, intervals, hw (a table not given is written empty), or one of
    :data:`schema.EXTRA_TABLES` (written when given). ``files``: tables already written
    as Parquet (a long import's intervals), moved in by name.
    """
    run_dir = Path(run_dir)
    unknown = (set(tables) | set(files or {})) - set(TABLE_NAMES) - set(schema.EXTRA_TABLES)
    if unknown:
        raise ValueError(f"unknown tables {sorted(unknown)}")
    if run_dir.exists() and not overwrite:
        raise ResultsError(f"{run_dir}: already exists (use another name, or overwrite)")
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.", dir=run_dir.parent))
    try:
        for name, path in (files or {}).items():
            os.replace(path, tmp / f"{name}.parquet")
        for name in TABLE_NAMES:
            if name not in (files or {}):
                write_table(tmp, name, tables.get(name))
        for name in set(tables) - set(TABLE_NAMES):
            if tables[name] is not None:
                write_table(tmp, name, tables[name])
        for fname, text in (text_files or {}).items():
            write_text(tmp / fname, text)
        meta = {"format_version": schema.FORMAT_VERSION, "status": "ok", **dict(meta)}
        write_json(tmp / META, to_run_meta(meta, run_dir / META))
        if run_dir.exists():
            shutil.rmtree(run_dir)
        os.replace(tmp, run_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return run_dir


# ---------------------------------------------------------------- reading

def read_meta(run_dir: Path | str) -> schema.RunMeta:
    """A run folder's meta.json, brought up to the current format, as the typed model
    (which also answers ``meta["key"]`` and ``meta.get``)."""
    path = Path(run_dir) / META
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise ResultsError(f"{run_dir}: not a run folder (no {META})") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not valid JSON (line {e.lineno}): {e.msg}") from None
    return to_run_meta(upgrade_meta(meta, path), path)


def interval_log_lines(path: Path):
    """An interval log's rows, a line (a list) at a time, up to a killed run's last line
    cut short."""
    with contextlib.suppress(FileNotFoundError), Path(path).open() as f:
        for line in f:
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                return


def read_interval_log(run_dir: Path) -> pd.DataFrame:
    """The intervals a running (or killed) run has flushed so far."""
    rows = [r for line in interval_log_lines(Path(run_dir) / INTERVAL_LOG) for r in line]
    return schema.conform("intervals", pd.DataFrame(rows) if rows else None)


def read_table(run_dir: Path | str, name: str) -> pd.DataFrame:
    run_dir = Path(run_dir)
    path = run_dir / f"{name}.parquet"
    if name not in schema.TABLES and not path.exists():  # a workload's own table
        return pd.DataFrame()
    if path.exists():
        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError, pa.ArrowException) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ResultsError(f"{path}: cannot be read ({first})") from None
        return schema.conform(name, df) if name in schema.TABLES else df
    if name == "intervals":
        return read_interval_log(run_dir)
    return parts.read_hw(run_dir) if name == "hw" else schema.empty(name)   # a killed run's


def extra_table_names(run_dir: Path | str) -> list[str]:
    """The tables of a run folder beside the tidy ones (a workload's own: ybio's
    ``benchruns``)."""
    return sorted(p.stem for p in Path(run_dir).glob("*.parquet")
                  if p.stem not in schema.TABLES and not p.name.startswith("."))


def is_run_dir(path: Path) -> bool:
    return (Path(path) / META).is_file()


def find_runs(path: Path | str) -> list[Path]:
    """Run folders at ``path``: itself, or those below it (experiment or data dir)."""
    path = Path(path)
    if not path.exists():
        raise ResultsError(f"{path}: no such folder")
    if not path.is_dir():
        raise ResultsError(f"{path}: a file; give a run folder, an experiment's or a data folder")
    if is_run_dir(path):
        return [path]
    # folders whose name starts with "." (.attempts, temporary writes) are not results
    return sorted(p.parent for p in path.rglob(META)
                  if not any(part.startswith(".") for part in p.parent.relative_to(path).parts))


def load_results(path: Path | str, tables: Iterable[str] = TABLE_NAMES,
                 statuses: Iterable[str] | None = None,
                 extra_tables: bool = True) -> dict[str, pd.DataFrame]:
    """Load the tidy tables of a run, an experiment or a data folder.

    Returns ``{"runs": DataFrame of meta, "steps": ..., "latency": ..., ...}``;
    each table carries ``experiment`` and ``config`` columns for grouping. The runs
    table has a few meta fields, each run's ``path`` and its whole meta.json as a
    dict in column ``meta`` (what the summaries read: they open no file). With
    ``extra_tables`` the workloads' own tables the run folders hold (ybio's
    ``benchruns``) come too, under their names.

    A run folder that cannot be read (a truncated meta.json or table, a finished run
    without its steps) is left out with one line on stderr naming it and the file;
    the others are loaded. Only when nothing could be read is that an error.
    """
    tables = tuple(tables)
    out: dict[str, list[pd.DataFrame]] = {t: [] for t in tables}
    runs, broken = [], []
    for rd in find_runs(path):
        own = tuple(t for t in extra_table_names(rd) if t not in tables) if extra_tables else ()
        try:
            meta, frames = runcache.read(_read_run, rd, tables + own, statuses)
        except ResultsError as e:
            broken.append(str(e))
            print(f"benchlib: skipped run {rd.name}: {e}", file=sys.stderr)
            continue
        if meta is None:
            continue
        runs.append({**run_row(rd, meta), "meta": meta.to_dict()})   # the JSON form, as documented
        for t, df in frames.items():
            out.setdefault(t, [])
            if len(df):
                out[t].append(df.assign(experiment=meta.get("experiment"), config=meta.get("config")))
    if broken and not runs:
        raise ResultsError(f"{path}: no run could be read ({broken[0]})")
    result = {"runs": pd.DataFrame(runs)}
    for t, dfs in out.items():
        if dfs:
            result[t] = pd.concat(dfs, ignore_index=True)
        else:
            result[t] = schema.empty(t) if t in schema.TABLES else pd.DataFrame()
    return result


def _read_run(rd: Path, tables: tuple, statuses) -> tuple[schema.RunMeta | None, dict]:
    meta = recover_run(rd) if looks_abandoned(rd) else read_meta(rd)
    if statuses is not None and meta.get("status") not in set(statuses):
        return None, {}
    if meta.get("status") in ("ok", "degraded") and meta.get("source", "benchlib") == "benchlib" \
            and not (rd / "steps.parquet").exists():
        raise ResultsError(f"{rd / 'steps.parquet'}: missing from a finished run")
    out = {t: read_table(rd, t) for t in tables}
    if "hw" in out:   # rows from before the hw table had role and source
        out["hw"] = upgrade_hw(out["hw"], {meta.get("run_id"): (meta.get("host") or {}).get("hostname")})
    if "intervals" in out and int(meta.get("format_version") or 1) < 2:
        steps = out["steps"] if "steps" in out else read_table(rd, "steps")
        out["intervals"] = upgrade_intervals(out["intervals"], steps)
    return meta, out


def run_row(run_dir: Path, meta: dict | schema.RunMeta) -> dict:
    return {
        "run_id": meta.get("run_id"),
        "experiment": meta.get("experiment"),
        "config": meta.get("config"),
        "status": meta.get("status"),
        "workload": meta.get("workload"),
        "target": points.target_point(meta),     # its DBMS configuration: name (DBMS version; options)
        "dbms": (meta.get("dbms") or {}).get("name"),
        "dbms_version": (meta.get("dbms") or {}).get("version"),
        "threads": meta.get("threads"), "target_ops_per_s": meta.get("target_ops_per_s"),
        "point": points.workload_point(meta),   # the run's coordinates: schema.POINT
        "repetition": meta.get("repetition"),
        "started": meta.get("started"),
        "ended": meta.get("ended"),
        "source": meta.get("source", "benchlib"),
        "path": str(run_dir),
    }


# ---------------------------------------------------------------- killed runs

def _pid_alive(pid: int | None, hostname: str | None) -> bool:
    if not pid or (hostname and hostname != socket.gethostname()):
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def looks_abandoned(run_dir: Path) -> bool:
    """A run whose meta says running but whose process is gone (killed)."""
    try:
        meta = read_meta(run_dir)
    except ResultsError:
        return False
    return meta.get("status") == "running" and not _pid_alive(meta.get("pid"), meta.get("hostname"))


def recover_run(run_dir: Path | str) -> dict:
    """Mark a run whose process died interrupted, keeping every completed interval."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    if meta.get("status") != "running" or _pid_alive(meta.get("pid"), meta.get("hostname")):
        return meta
    if not (run_dir / "intervals.parquet").exists():
        write_table(run_dir, "intervals", read_interval_log(run_dir))
    meta["status"] = "interrupted"     # its finished steps are kept: a rerun resumes it
    meta["error"] = meta.get("error") or parts.killed_error(run_dir, meta)
    meta["ended"] = meta.get("ended") or utcnow().isoformat()
    write_json(run_dir / META, meta)
    return meta
