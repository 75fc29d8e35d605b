"""The catalog of runs: one row per run folder, in the table ``catalog_runs`` (older
catalogs called it ``benchruns``, the name of ybio's own table: renamed when opened).

A SQLAlchemy database (by default the SQLite file ``<data-dir>/catalog.sqlite``) so
that a team can point it at a shared PostgreSQL instead. It is an index for
listing and querying; the run folders stay the source of truth, and
:func:`rebuild` recreates it from them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import sqlalchemy as sa

from ..filemodes import create_private
from . import folders as results

metadata = sa.MetaData()
TABLE = "catalog_runs"
OLD_TABLE = "benchruns"   # the name before ybio's table took it
catalog_runs = sa.Table(
    TABLE, metadata,
    sa.Column("run_id", sa.String, primary_key=True),
    sa.Column("experiment", sa.String, primary_key=True),
    sa.Column("config", sa.String),
    sa.Column("status", sa.String),
    sa.Column("workload", sa.String),
    sa.Column("dbms", sa.String),
    sa.Column("dbms_version", sa.String),
    sa.Column("threads", sa.Integer),
    sa.Column("target_ops_per_s", sa.Float),
    sa.Column("repetition", sa.Integer),
    sa.Column("ops_per_s", sa.Float),
    sa.Column("started", sa.String),
    sa.Column("ended", sa.String),
    sa.Column("source", sa.String),
    sa.Column("path", sa.String),
)


CATALOG = "catalog.sqlite"


def engine_for(data_dir: Path | str, url: str | None = None) -> sa.Engine:
    if url is None:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        create_private(Path(data_dir) / CATALOG)   # 0600, its -wal and -shm alike
        # concurrent runs into one data dir: WAL, and wait for the other writer
        eng = sa.create_engine(f"sqlite:///{Path(data_dir) / CATALOG}",
                               connect_args={"timeout": 30})
        sa.event.listen(eng, "connect",
                        lambda conn, _: conn.execute("PRAGMA journal_mode=WAL"))
    else:
        eng = sa.create_engine(url)
    _rename_old_table(eng)
    metadata.create_all(eng)
    return eng


def _rename_old_table(eng: sa.Engine) -> None:
    """A catalog written before the rename keeps its rows: its table takes the new name."""
    names = set(sa.inspect(eng).get_table_names())
    if OLD_TABLE in names and TABLE not in names:
        cols = {c["name"] for c in sa.inspect(eng).get_columns(OLD_TABLE)}
        if {"run_id", "experiment", "path"} <= cols:   # the catalog's, not another table
            with eng.begin() as conn:
                conn.execute(sa.text(f"ALTER TABLE {OLD_TABLE} RENAME TO {TABLE}"))


def record(data_dir: Path | str, run_dir: Path, meta: dict, ops_per_s: float | None = None,
           url: str | None = None) -> None:
    """Index one run; a catalog that cannot be written costs no run: the folders are
    the truth, and ``benchlib list --rebuild`` makes the catalog anew from them."""
    row = results.run_row(run_dir, meta)
    row = {k: row.get(k) for k in catalog_runs.c.keys()}
    row["ops_per_s"] = ops_per_s
    try:
        eng = engine_for(data_dir, url)
        with eng.begin() as conn:
            conn.execute(catalog_runs.delete().where(
                (catalog_runs.c.run_id == row["run_id"]) & (catalog_runs.c.experiment == row["experiment"])))
            conn.execute(catalog_runs.insert().values(**row))
        eng.dispose()
    except sa.exc.SQLAlchemyError as e:
        print(f"benchlib: the catalog was not updated ({type(e.orig or e).__name__}); "
              f"run `benchlib list --rebuild --data-dir {data_dir}`", file=sys.stderr)


def rebuild(data_dir: Path | str, url: str | None = None) -> int:
    """Recreate the catalog from the run folders under ``data_dir``; a catalog file
    that is not a database is kept beside as ``catalog.sqlite.corrupt-<time>``."""
    if url is None:
        _set_aside_if_corrupt(Path(data_dir) / CATALOG)
    n = 0
    for rd in results.find_runs(data_dir):
        try:
            meta = results.read_meta(rd)
            steps = results.read_table(rd, "steps")
        except results.ResultsError as e:
            print(f"benchlib: skipped run {rd.name}: {e}", file=sys.stderr)
            continue
        run = steps[steps["phase"] == "run"]
        rate = float(run["ops"].sum() / run["secs"].sum()) if len(run) and run["secs"].sum() else None
        record(data_dir, rd, meta, rate, url)
        n += 1
    return n


def _rows_from_folders(data_dir: Path | str):
    """The catalog's rows read from the run folders themselves, nothing written."""
    import pandas as pd
    rows = []
    for rd in results.find_runs(data_dir):
        try:
            meta = results.read_meta(rd)
        except results.ResultsError as e:
            print(f"benchlib: skipped run {rd.name}: {e}", file=sys.stderr)
            continue
        row = results.run_row(rd, meta)
        rows.append({k: row.get(k) for k in catalog_runs.c.keys()})
    return pd.DataFrame(rows, columns=list(catalog_runs.c.keys())).sort_values("started", na_position="first")


def _set_aside_if_corrupt(path: Path) -> None:
    import sqlite3
    import time
    if not path.exists():
        return
    try:
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA schema_version").fetchone()
        return
    except sqlite3.OperationalError:   # cannot open or locked: a database all the same
        return
    except sqlite3.DatabaseError:
        pass
    aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    print(f"benchlib: {path} was not a database; kept as {aside.name}", file=sys.stderr)


def list_runs(data_dir: Path | str, url: str | None = None):
    """The catalog's rows; a run still ``running`` whose process is gone shows as
    ``abandoned`` (the next run of its experiment resumes it, or runs it again)."""
    import pandas as pd
    try:
        eng = engine_for(data_dir, url)
        with eng.connect() as conn:
            df = pd.read_sql(sa.select(catalog_runs).order_by(catalog_runs.c.started), conn)
        eng.dispose()
    except sa.exc.DatabaseError as e:
        if url is not None:
            raise results.ResultsError(
                f"{data_dir}: the catalog cannot be read ({type(e.orig or e).__name__}); "
                "`benchlib list --rebuild` makes it anew from the run folders") from None
        print(f"benchlib: the catalog of {data_dir} cannot be read ({type(e.orig or e).__name__}): "
              "listed from the run folders; `benchlib list --rebuild` makes it anew", file=sys.stderr)
        df = _rows_from_folders(data_dir)
    running = df["status"] == "running"
    if running.any():
        df.loc[running, "status"] = [_status_now(Path(p)) for p in df.loc[running, "path"]]
    return df


def _status_now(run_dir: Path) -> str:
    """A run the catalog lists as running: abandoned when its process is gone, else what
    its meta says now (a killed run read since is ``interrupted``)."""
    if not results.is_run_dir(run_dir):
        return "running"
    if results.looks_abandoned(run_dir):
        return "abandoned"
    try:
        return results.read_meta(run_dir).get("status") or "running"
    except results.ResultsError:
        return "running"
